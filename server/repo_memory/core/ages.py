"""When a skill last changed, for recall's decay and the mirror's choice of skills.

git keeps no file times: a clone, a checkout or a reset writes every file with the time it ran, so read from its
mtime a skill nobody touched for a year was as new as yesterday's in a teammate's fresh clone. A skill file that holds
what memory's HEAD holds changed when the last commit that touched it was made (one `git log` walk over the skill
folders, kept per HEAD and carried forward when HEAD only moves ahead); a file with changes not committed yet, or
never committed, changed when its mtime says.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import PurePosixPath

from repo_memory.errors import GitError, UnsafePathError
from repo_memory.git import status
from repo_memory.git.committed import Committed
from repo_memory.guards import disk

log = logging.getLogger("repo_memory")

_NOW = object()  # "look memory's HEAD up now" (None already means an unborn branch)
HORIZON_DAYS = 3 * 365  # the walk goes back this far: older is old enough (recency is within 0.1% of its floor)


class SkillAges:
    """Skill file (repository-relative path) -> when it last changed, in nanoseconds since the epoch."""

    def __init__(self, committed: Committed, folders: tuple[str, ...]):
        self._committed = committed
        self._folders = tuple(f for f in folders if not PurePosixPath(f).is_absolute() and ".." not in PurePosixPath(f).parts)  # git's
        self._lock = threading.Lock()
        self._head: str | None = None
        self._commits: dict[str, int] = {}  # path -> commit time (s) of the last commit from self._head that changed it
        self._intact: dict[tuple[str, int, str | None], bool] = {}  # (path, mtime_ns, head) -> whether the file is HEAD's

    def changed_ns(self, rel: str, mtime_ns: int, head: str | None | object = _NOW) -> int:
        """When the skill file at `rel` (last written at `mtime_ns`) last changed (`head`: one `head()` for many calls)."""
        head = self._committed.head() if head is _NOW else head
        if not isinstance(head, str) or not self._holds_head(rel, mtime_ns, head):
            return mtime_ns
        return _committed_ns(self._at(head), rel, mtime_ns)

    def many(self, files: list[tuple[str, int]]) -> dict[str, int]:
        """`changed_ns` of many skill files (path, mtime_ns) at once: which of them differ from HEAD is asked of `git
        status` once instead of reading each file (a session's briefing looks at every active skill)."""
        head = self._committed.head()
        git = self._committed.git
        if head is None or git.private:  # private memory is not HEAD's: each file is compared with memory's commit
            return {rel: self.changed_ns(rel, mtime, head) for rel, mtime in files}
        try:
            differ = set(status.worktree(git, self._folders)[0])
        except GitError:
            return {rel: mtime for rel, mtime in files}
        commits = self._at(head)
        return {rel: mtime if rel in differ else _committed_ns(commits, rel, mtime) for rel, mtime in files}

    def _holds_head(self, rel: str, mtime_ns: int, head: str) -> bool:
        key = (rel, mtime_ns, head)
        with self._lock:
            known = self._intact.get(key)
        if known is not None:
            return known
        try:
            intact = self._committed.file(rel, disk.read_safely(self._committed.git.root / rel), head)
        except (OSError, UnsafePathError):
            intact = False
        with self._lock:
            if len(self._intact) > 4096:
                self._intact.clear()
            self._intact[key] = intact
        return intact

    def _at(self, head: str) -> dict[str, int]:
        """The last commit time of each skill file as of `head`: walked once, then only the commits HEAD moved ahead by."""
        with self._lock:
            if head == self._head:
                return self._commits
            known, since = dict(self._commits), self._head
        git = self._committed.git
        if not self._folders:
            return known
        try:
            if since is not None and git.run("merge-base", "--is-ancestor", since, head, check=False).returncode != 0:
                known, since = {}, None  # a reset, a rebase, a switch to another branch: walk again
            walked = git.run("-c", "core.quotePath=false", "log", "--no-renames", "--name-only", "--format=%x1e%ct",
                             f"--since={int(_horizon())}", f"{since}..{head}" if since else head,
                             "--", *self._folders).stdout
        except GitError as exc:  # not asked again until HEAD moves
            log.warning("could not read when skills last changed (their file times stand in): %s", exc)
            walked = ""
        newer: dict[str, int] = {}
        for block in walked.split("\x1e")[1:]:
            stamp, *paths = block.strip("\n").split("\n")
            for path in paths:
                if path:
                    newer.setdefault(path, int(stamp))  # newest first: the first commit seen is the last change
        with self._lock:
            self._head, self._commits = head, {**known, **newer}
            return self._commits


def _horizon() -> float:
    """The time (s) the walk goes back to."""
    return time.time() - HORIZON_DAYS * 86400


def _committed_ns(commits: dict[str, int], rel: str, mtime_ns: int) -> int:
    """When a file that holds HEAD's version changed: its last commit, or, committed before the horizon, no later than it."""
    return commits[rel] * 10**9 if rel in commits else min(mtime_ns, int(_horizon() * 1e9))
