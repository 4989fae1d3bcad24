"""Whether a pending change's files are still what its writer left: a change noted `whole` (an agent's skill update:
SKILL.md and Codex's file beside it) is committed whole or not at all.

A person's `git stash` or checkout in the commit window takes part of it away (a stash takes SKILL.md back to HEAD's
version and leaves the untracked Codex file), and an edit may land over it. Committing what is there would commit half
the change, or a person's text as the writer's. So the sha256 of each file is noted with the change when it is made
pending, and the commit checks it under its lock: a change one of whose files differs waits, pending, and is committed
as its writer's once its files are back as written (`git stash pop`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path

from repo_memory.errors import UnsafePathError
from repo_memory.git.pending import Pending
from repo_memory.guards import disk

GONE = "-"  # the sha256 noted of a path its writer deleted


def sha256(root: Path, path: str) -> str:
    """The sha256 of the bytes of repository path `path` as they are now (GONE: no file; '': unreadable)."""
    try:
        return hashlib.sha256(disk.read_safely(root / path)).hexdigest()
    except FileNotFoundError:
        return GONE
    except (OSError, UnsafePathError):
        return ""


def noted(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """What a writer left at each of `paths`, to note with its change."""
    return {path: sha256(root, path) for path in paths}


def displaced(root: Path, entries: Sequence[Pending]) -> dict[str, str]:
    """The paths of the pending `entries` (oldest first) to keep out of a commit, with why: every path of a change one
    of whose files no longer holds what its latest write noted (a later write of a path it does hold supersedes it)."""
    latest = {e.path: e.sha256 for e in entries}
    off = {path: f"{path.rsplit('/', 1)[-1]} is not as repo-memory wrote it (a `git stash`, a checkout or an edit took "
           "the change away; `git stash pop` brings it back and it is committed then)"
           for path, sha in latest.items() if sha and sha256(root, path) != sha}
    held = dict(off)
    while True:  # a change is held whole: each path it wrote, and each change that wrote one of those
        changes = {e.change for e in entries if e.change and e.path in held}
        more = {e.path for e in entries if e.change in changes and e.path not in held}
        if not more:
            return held
        held.update({path: f"it is part of one change with {next(iter(off))}" for path in more})


def overtaken(root: Path, entries: Sequence[Pending]) -> set[Pending]:
    """The entries of `entries` whose change a later write not checked overtook (a person's accept of a skill whose file
    held more than the agent wrote): committed with it, but not named as theirs in its message."""
    latest = {e.path: e.sha256 for e in entries}
    changes = {e.change for e in entries if e.change and not latest[e.path] and sha256(root, e.path) != e.sha256}
    return {e for e in entries if e.change in changes}
