"""Which attributes git applies to a path, and which lines of an attributes file match it, as git itself matches them.

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

PROBE = "repo-memory-probe-"  # an attribute no one sets: its line number tells which lines match a path
# a line's pattern (quoted as git allows, or up to the first blank) and its attributes
LINE = re.compile(r'\s*("(?:[^"\\]|\\.)*"|\S+)\s*(.*)')


def applied(root: Path, paths: Sequence[str], names: Sequence[str]) -> dict[str, dict[str, str]]:
    """What git applies in the work tree at `root` to each of `paths` (which need not exist): name -> 'set', 'unset',
    'unspecified' or its value; {} when git cannot say."""
    return _read(_git(root, ["check-attr", "-z", *names, "--", *paths], scratch=False))


def ruled(lines: Sequence[str], probed: Sequence[str], paths: Sequence[str]) -> tuple[dict[str, dict[str, str]], dict[str, set[int]]]:
    """What `lines` alone (an attributes file) set for each of `paths`, and for each path the indexes of the lines of
    `probed` whose pattern matches it: asked of git in a scratch repository, whose only attributes they are."""
    probes = [f"{match[1]} {PROBE}{n}" for n, line in enumerate(probed)
              if (match := LINE.fullmatch(line)) and not line.lstrip().startswith(("#", "[attr]"))]
    with tempfile.TemporaryDirectory(prefix="repo-memory-attributes-") as scratch:
        if _git(Path(scratch), ["init", "-q"]) is None:
            return {}, {}
        Path(scratch, ".gitattributes").write_text("".join(f"{line}\n" for line in [*lines, *probes]), encoding="utf-8")
        found = _read(_git(Path(scratch), ["check-attr", "-z", "-a", "--", *paths]))
    matched = {path: {int(name[len(PROBE):]) for name in attrs if name.startswith(PROBE)} for path, attrs in found.items()}
    return {path: {k: v for k, v in attrs.items() if not k.startswith(PROBE)} for path, attrs in found.items()}, matched


def touches(line: str, name: str) -> bool:
    """Whether attributes line `line` sets, unsets or unspecifies attribute `name` (directly, or by git's own macro
    `binary`, or the older `crlf` that stands for text)."""
    match = LINE.fullmatch(line)
    for token in (match[2].split() if match else []):
        bare = token.lstrip("-!").partition("=")[0]
        if bare == name or (bare == "binary" and name in ("text", "diff", "merge")) or (bare == "crlf" and name in ("text", "eol")):
            return True
    return False


def _read(out: bytes | None) -> dict[str, dict[str, str]]:
    fields = os.fsdecode(out or b"").split("\0")
    found: dict[str, dict[str, str]] = {}
    for at in range(0, len(fields) - 2, 3):  # path NUL attribute NUL value NUL
        found.setdefault(fields[at], {})[fields[at + 1]] = fields[at + 2]
    return found


def _git(cwd: Path, args: list[str], scratch: bool = True) -> bytes | None:
    # no global attributes file in a scratch repository: its answer is the lines' alone
    try:
        return repo.run_at(cwd, *(["-c", "core.attributesFile=/dev/null"] if scratch else []), *args, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
