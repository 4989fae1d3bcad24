"""What a skill folder holds as part of its reviewed version: the one walk that the review sha, `skill show` and MCP
`read`'s list, a redraft's commit, `reject`, the check of what a tool call changed and the Claude Code copy all take.

Every file and every link under the folder counts, hidden ones too (git commits them and a clone gets them), but
Codex's file of ours (core/codex_policy.py) and what git ignores and does not track (the `__pycache__` a run of the
skill's script leaves, matched by .gitignore: never committed, no clone gets it). A link counts as a link, as git keeps it: its target, never followed (a
link to a folder too). Names and targets are the bytes the file system gives (os.fsencode), UTF-8 or not.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from repo_memory.core import codex_policy
from repo_memory.git import as_stored
from repo_memory.git.committed import Committed
from repo_memory.guards import disk
from repo_memory.guards.terminal import visible

LINK = 0o120000  # a symbolic link's mode in git
EXECUTABLE = 0o100755  # an executable file's
CHUNK = 1 << 20


@dataclass(frozen=True)
class Entry:
    """One file or link of a skill folder: `rel` its path inside the folder (posix, undecodable bytes escaped)."""

    rel: str
    path: Path
    link: bool
    held_executable: bool | None = None  # git's index's word, where core.fileMode is false; None: the disk's bit

    def data(self) -> bytes:
        """What git holds of it: a file's bytes, a link's target."""
        return os.fsencode(os.readlink(self.path)) if self.link else disk.read_safely(self.path)

    def chunks(self) -> Iterator[bytes]:
        """What `data` gives, a file's in chunks: a large file beside SKILL.md is never held in memory whole."""
        if self.link:
            yield self.data()
            return
        with os.fdopen(disk.open_safely(self.path), "rb") as handle:
            while chunk := handle.read(CHUNK):
                yield chunk

    @property
    def executable(self) -> bool:
        """Whether git keeps it as an executable file (mode 100755, as `git add` gives a file its owner may run)."""
        if self.held_executable is not None:
            return self.held_executable
        return not self.link and bool(os.lstat(self.path).st_mode & stat.S_IXUSR)

    @property
    def shown(self) -> str:
        """How a person or an agent is told of it: its name (bytes that are no UTF-8, and controls, escaped), a link
        with its target."""
        name = _printable(self.rel)
        return f"{name} -> {_printable(os.readlink(self.path))}" if self.link else name


def walk(folder: Path, unfiltered: bool = False) -> list[Entry]:
    """Every file and link of skill `folder` that is part of its reviewed version, in the review sha's order (one
    `git check-ignore` for the folder); `unfiltered`: those git ignores too (a copy git ignores whole, core/mirror.py)."""
    ours, found = codex_policy.ours_in(folder), []
    for where, dirs, files in os.walk(folder):  # a link to a folder is listed among `dirs`, and not followed
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(where, d)))]:
            path = Path(where, name)
            if path not in ours:
                found.append(Entry(path.relative_to(folder).as_posix(), path, path.is_symlink()))
    if not unfiltered and (left_out := as_stored.ignored(folder, [entry.rel for entry in found])):
        found = [entry for entry in found if entry.rel not in left_out]
    if found and (held := as_stored.held_executables(folder)) is not None:
        found = [Entry(e.rel, e.path, e.link, not e.link and e.rel in held) for e in found]
    return sorted(found, key=lambda e: e.path)


def same_kind(entry: Entry, mode: int | None, links_kept: bool = True) -> bool:
    """Whether `entry` is of the kind and mode git holds (`mode`; None: not held, which its content tells) as `git
    status` sees it: where the checkout writes no links (core.symlinks false), a committed link is a file holding its target."""
    held_link = mode == LINK
    if mode is not None and not held_link and not entry.link and entry.executable != (mode == EXECUTABLE):
        return False  # a `chmod +x` is a change git commits
    return mode is None or entry.link == held_link or not links_kept and held_link and not entry.link


def held(committed: Committed, full: str, entry: Entry, modes: Mapping[str, int], head: str | None,
         links_kept: bool = True) -> bool:
    """Whether commit `head`, whose files under the skill have `modes` (Git.modes_at), holds `entry` (at `full` in the
    repository) as it is now, as `git status` sees it: its kind and its bytes."""
    return same_kind(entry, modes.get(full), links_kept) and committed.file(full, entry.data(), head)


def committable(full: str) -> bool:
    """Whether repository path `full` can go to git through the commit plumbing, whose paths are UTF-8 text."""
    try:
        full.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def same_name(a: str, b: str) -> bool:
    """Whether two file names are the same to a person: equal, or equal once both are NFC (macOS writes names
    decomposed, NFD; a person types them composed)."""
    return a == b or unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)


def spelt(folder: Path, inner: str) -> str | None:
    """`inner` (a path inside `folder`) as the disk spells it: each part that names nothing there replaced by the one
    entry of its folder with the same name under NFC; None when no entry, or more than one, is."""
    parts: list[str] = []
    for part in inner.split("/"):
        here = folder.joinpath(*parts)
        if not os.path.lexists(here / part):
            try:
                same = [entry for entry in os.listdir(here) if same_name(entry, part)]
            except OSError:  # not a folder, or gone: nothing is spelt so
                return None
            if len(same) != 1:
                return None
            part = same[0]
        parts.append(part)
    return "/".join(parts)


def _printable(text: str) -> str:
    """`text` (a name or a link's target) as a person reads it: bytes that are no UTF-8, and controls, escaped."""
    return visible(os.fsencode(text).decode("utf-8", "backslashreplace"), lines=False)



def regenerable(path: Path) -> bool:
    """Whether `path`, a file beside SKILL.md, is what Python writes again whenever the skill's script runs: its bytecode
    in `__pycache__` (PEP 3147), or macOS's .DS_Store. No person keeps work there (a folder some tool tagged as a cache
    may hold a person's file: not taken on trust), so a draft deleted on rejection takes what no commit holds of them."""
    if path.is_symlink() or not path.is_file():
        return False
    return path.name == ".DS_Store" or path.parent.name == "__pycache__" and path.suffix in (".pyc", ".pyo")
