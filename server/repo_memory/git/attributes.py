"""Which attributes git applies to a path, and which line of an attributes file decides each, as git itself reads them.

git applies the last line that matches a path: a line a team appends after repo-memory's rules (a Windows team's
`* text=auto eol=crlf`) decides for memory files too, whatever the rules above it say. So what counts is what
`git check-attr` answers, never whether a rule's text is in the file.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from repo_memory.git import repo

SENTINEL = "repo-memory-sentinel"  # a value no line gives: a line after one giving it that changes it decides the attribute
# a line's pattern (quoted as git allows, or up to the first blank) and its attributes
LINE = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\S+)\s*(.*)')


def applied(root: Path, paths: Sequence[str], names: Sequence[str]) -> dict[str, dict[str, str]]:
    """What git applies in the work tree at `root` to each of `paths` (which need not exist): name -> 'set', 'unset',
    'unspecified' or its value; {} when git cannot say."""
    return _read(_git(root, ["check-attr", "-z", *names, "--", *paths], None))


def tracked(root: Path, names: Sequence[str]) -> dict[str, dict[str, str]]:
    """What git applies in the work tree at `root` to each file its index holds, as `applied` says; {} when git cannot
    say (paths go to git on its stdin: a repository's files outnumber what a command line holds)."""
    listed = _git(root, ["ls-files", "-z"], None)
    return _read(_git(root, ["check-attr", "--stdin", "-z", *names], None, stdin=listed)) if listed else {}


def ruled(lines: Sequence[str], paths: Sequence[str]) -> dict[str, dict[str, str]]:
    """What `lines` alone (an attributes file) set for each of `paths`: asked of git in a scratch repository, whose only
    attributes they are."""
    with tempfile.TemporaryDirectory(prefix="repo-memory-attributes-") as scratch:
        if _git(Path(scratch), ["init", "-q"]) is None:
            return {}
        Path(scratch, ".gitattributes").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        asked = b"".join(os.fsencode(path) + b"\0" for path in paths)  # on stdin: a repository's files outnumber argv
        return _read(_git(Path(scratch), ["check-attr", "--stdin", "-z", "-a"], stdin=asked))


def deciding(root: Path, git_dir: Path, files: Sequence[tuple[str, dict[int, str]]], paths: Sequence[str],
             names: Sequence[str]) -> list[dict[str, dict[str, int]]]:
    """For each of `files` (the folder under `root` its patterns are relative to, and its lines by index), the index of
    its last line that sets, unsets or unspecifies each of `names` for each of `paths` under that folder, as git reads
    it: directly, by `!name`, or through a macro (`[attr]` lines of the clone's top-level files and its global file,
    git's own `binary`). Not by the line's text: git is asked, once, in a scratch repository where each line sits alone
    in a folder of its own after a line giving every name a value no line gives; a line that changes it decides."""
    tops = ((".gitattributes", root / ".gitattributes"), (".git/info/attributes", git_dir / "info" / "attributes"))
    macros = {at: [line for line in _lines(path) if line.lstrip().startswith("[attr]")] for at, path in tops}
    own = _git(root, ["config", "--path", "core.attributesFile"], None)  # else git's default one, as in the clone
    asked: dict[str, tuple[int, int, str]] = {}
    decided: list[dict[str, dict[str, int]]] = [{} for _ in files]
    with tempfile.TemporaryDirectory(prefix="repo-memory-attributes-") as scratch:
        if _git(Path(scratch), ["init", "-q"]) is None:
            return decided
        for at, defined in macros.items():  # macros only where git allows them, ranked as in the clone
            Path(scratch, at).parent.mkdir(parents=True, exist_ok=True)
            Path(scratch, at).write_text("".join(f"{line}\n" for line in defined), encoding="utf-8")
        before = " ".join(f"{name}={SENTINEL}" for name in names)
        for f, (folder, lines) in enumerate(files):
            for n, line in lines.items():
                if not LINE.fullmatch(line) or line.lstrip().startswith(("#", "[attr]")):
                    continue
                alone = Path(scratch, f"{f}-{n}", folder)
                alone.mkdir(parents=True)
                (alone / ".gitattributes").write_text(f"* {before}\n{line}\n", encoding="utf-8")
                asked.update({f"{f}-{n}/{path}": (f, n, path) for path in paths if not folder or path.startswith(f"{folder}/")})
        args = ["-c", f"core.attributesFile={os.fsdecode(own).strip()}"] if own and own.strip() else []
        found = _read(_git(Path(scratch), [*args, "check-attr", "-z", *names, "--", *asked], None)) if asked else {}
    for where, attrs in found.items():
        f, n, path = asked[where]
        for name, value in attrs.items():
            if value != SENTINEL and n > decided[f].setdefault(path, {}).get(name, -1):
                decided[f][path][name] = n
    return decided


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _read(out: bytes | None) -> dict[str, dict[str, str]]:
    fields = os.fsdecode(out or b"").split("\0")
    found: dict[str, dict[str, str]] = {}
    for at in range(0, len(fields) - 2, 3):  # path NUL attribute NUL value NUL
        found.setdefault(fields[at], {})[fields[at + 1]] = fields[at + 2]
    return found


def _git(cwd: Path, args: list[str], global_file: str | None = "/dev/null", stdin: bytes = b"") -> bytes | None:
    # by default no global attributes file (in a scratch repository: its answer is the lines' alone)
    try:
        global_args = ["-c", f"core.attributesFile={global_file}"] if global_file else []
        return repo.run_at(cwd, *global_args, *args, timeout=30, stdin=stdin)
    except (OSError, subprocess.TimeoutExpired):
        return None
