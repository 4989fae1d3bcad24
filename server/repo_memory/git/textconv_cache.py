"""git's cache of the experience logs as the diff driver renders them (init's `cachetextconv`), and keeping the raw
lines out of it.

git keeps one note per log version in refs/notes/textconv/repo-memory, holding the driver's output. Where `repo-memory`
is not on PATH (a GUI git client, a shell without the install, a server started by its full path) the driver falls
back to the raw lines, and git caches those too: the version would show raw ever after, wherever it is shown. A
failing driver is no way out (git then stops: "unable to read files to diff"), and without the cache every version a
`git log -p` compares costs a process. So our own git processes that render logs find repo-memory (`driver_path`), and
a note that holds the very bytes of the version it annotates, whose object id is then the version's own, is taken out
(`drop_raw`): the version is rendered again at its next diff. A file the driver passes through as it is (one that
holds no record: formats/transcript.textconv) gets such a note too; dropped, it comes back the same at its next diff.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
from pathlib import Path

from repo_memory.git.repo import Git

REF = "refs/notes/textconv/repo-memory"
COMMAND = "repo-memory"  # what the driver calls by name (layout.TEXTCONV)
_OBJECT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# The cache is this clone's bookkeeping, no person's work: its commit names repo-memory, as git's own names no one.
_IDENTITY = {"GIT_AUTHOR_NAME": "repo-memory", "GIT_AUTHOR_EMAIL": "repo-memory@localhost",
             "GIT_COMMITTER_NAME": "repo-memory", "GIT_COMMITTER_EMAIL": "repo-memory@localhost"}


def driver_path() -> str | None:
    """The PATH a git process of ours that renders logs runs with: this install's folder first when `repo-memory` is
    there (the process may have been started by its full path), else PATH as it is when it finds one; None when no
    `repo-memory` is to be found, and the driver could only print (and git cache) the raw lines."""
    here, path = Path(sys.executable).parent, os.environ.get("PATH", os.defpath)
    if (here / COMMAND).is_file():
        return f"{here}{os.pathsep}{path}"
    return path if shutil.which(COMMAND, path=path) else None


def drop_raw_in(root: Path, git_dir: Path, state_dir: Path) -> int:
    """`drop_raw` for the repository at `root`, the cache version last found clean noted in `state_dir`."""
    return drop_raw(Git(root, git_dir), state_dir / "textconv-checked")


def drop_raw(git: Git, checked: Path | None = None) -> int:
    """Take out of the cache each note that holds its log version's raw bytes (the fallback's output, cached); how many.
    `checked`: a file naming the cache's version last found clean, not looked through again (git writes a new version
    with each note it adds). A note git writes meanwhile wins, and the next call looks again."""
    head = git.run("log", "-1", "--format=%H%x00%s", REF, "--", check=False)
    if head.returncode != 0 or "\0" not in head.stdout:
        return 0  # no cache yet
    commit, subject = head.stdout.rstrip("\n").split("\0", 1)
    if checked is not None and _read(checked) == commit:
        return 0
    dropped, clean = _dropped(git, commit, subject)
    if checked is not None and clean:
        with contextlib.suppress(OSError):  # only a hint: without it the cache is looked through again
            checked.write_text(clean, encoding="utf-8")
    return dropped


def _dropped(git: Git, commit: str, subject: str) -> tuple[int, str]:
    """(how many raw notes cache version `commit` held that are now gone, the version then clean or '')."""
    listed = git.run("ls-tree", "-r", "-z", commit, check=False)
    kept, dropped = [], 0
    for entry in filter(None, listed.stdout.split("\0")):
        mode_type_note, _, path = entry.partition("\t")
        note, annotated = mode_type_note.split()[-1], path.replace("/", "")
        if not _OBJECT.fullmatch(annotated):
            return 0, ""  # not a cache git wrote: not ours to rewrite
        if note == annotated:
            dropped += 1
        else:  # flat: git reads notes at any fan-out and picks its own when it next writes
            kept.append(f"{mode_type_note}\t{annotated}\0")
    if listed.returncode != 0 or not dropped:
        return 0, commit if listed.returncode == 0 else ""
    tree = git.run("mktree", "-z", stdin="".join(kept), check=False)
    # The subject is git's validity check: it keeps the cache only while the subject is the driver's command.
    made = git.run("commit-tree", "--no-gpg-sign", tree.stdout.strip(), "-m", subject, env=_IDENTITY, check=False)
    if tree.returncode != 0 or made.returncode != 0:
        return 0, ""  # a cache that cannot be rewritten stays as git left it: it only renders some versions raw
    new = made.stdout.strip()
    moved = git.run("update-ref", "-m", "repo-memory: drop raw lines from the diff cache", REF, new, commit, check=False)
    return (dropped, new) if moved.returncode == 0 else (0, "")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""
