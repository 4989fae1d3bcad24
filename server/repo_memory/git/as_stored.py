"""What git makes of files in a work tree, each question asked of one `git` process for a whole folder: which files
it ignores."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from repo_memory.git import repo

TIMEOUT = 30.0


def ignored(folder: Path, rels: Sequence[str]) -> set[str]:
    """Those of `rels` (paths inside `folder`) that git ignores: untracked ones its ignore rules match (a tracked file
    is never ignored). None are outside a git repository, or when git cannot say."""
    if not rels:
        return set()
    out = _git(folder, ["check-ignore", "--stdin", "-z"], b"".join(os.fsencode(rel) + b"\0" for rel in rels), ok=(0, 1))
    return {os.fsdecode(path) for path in (out or b"").split(b"\0") if path}


def _git(cwd: Path, args: list[str], stdin: bytes = b"", ok: tuple[int, ...] = (0,)) -> bytes | None:
    try:
        return repo.run_at(cwd, *args, stdin=stdin, ok=ok, timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None  # no git, or one that hangs: git's answer is not had
