"""Hearing the git operation that holds up a memory commit end, so the commit lands then rather than at its next retry.

While a rebase, merge, cherry-pick, revert, bisect or am is under way, HEAD is detached or another git process holds
the index lock, a memory commit waits (commit.py). A waiting commit is retried five commit windows later (10 s), so
memory stayed untracked for up to 10 s after the operation ended: long enough for `git add -A && git commit` to sweep
it into a code commit. Each of those ends with a change at the top of the worktree's own git dir (a linked worktree's is
`.git/worktrees/<name>`): `rebase-merge/` or `rebase-apply/` removed, MERGE_HEAD, CHERRY_PICK_HEAD, REVERT_HEAD or
BISECT_LOG deleted, HEAD rewritten (a branch checked out), index.lock removed or renamed. A watch on that folder
(inotify through watchdog, not recursive) is held only while a commit such an operation deferred waits; between
events it costs nothing. Its end brings one retry, however many events follow: a commit deferred for another reason
(signing failed, a refusing file system) is retried on its timer, or every `git status` would retry it (and could
ask for a gpg passphrase each time). A person's `git commit` (or merge, …; running.py) that holds a commit up ends
without a trace there, so while one runs the look is repeated every POLL seconds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repo_memory.git import running
from repo_memory.git.repo import IN_PROGRESS, Git

log = logging.getLogger("repo_memory")
ENDINGS = frozenset({*IN_PROGRESS, "HEAD", "index.lock"})  # the names whose change can end what holds a commit up
# How commit.py's deferrals for what `blocker` sees begin; its others (signing failed or stalled, the branch moving, a
# hook) and the Committer's (a refusing file system, a failed commit) end unseen here and are retried on a timer.
HELD_BY_GIT = ("HEAD is detached", *(f"{what} is in progress" for what in IN_PROGRESS.values()), running.HELD,
               "another git process holds .git/index.lock", "committed, but .git/index stayed locked")
POLL = 0.25  # seconds between looks while a person's git command (running.py) runs: its end leaves nothing to hear
# Of those, the deferrals for what ends by itself (a git command that runs, the index lock it holds): worth a process's
# wait once its server is gone (shells/finish.py). A rebase, merge, … left open, or a detached HEAD, waits for a person.
PASSING = (running.HELD, "another git process holds .git/index.lock", "committed, but .git/index stayed locked")


def blocker(git: Git) -> str:
    """What holds a memory commit on the branch up now: the operation under way ('a rebase', 'a detached HEAD'),
    'the index lock', or ''. Stats and one small read: cheap enough for every event."""
    return git.operation_in_progress(quick=True) or ("the index lock" if (git.git_dir / "index.lock").exists() else "")


def passing(deferred: str) -> bool:
    """Whether a commit was deferred for what ends by itself, without anyone's step: a git command that runs."""
    return deferred.startswith(PASSING)


def still_passing(git: Git) -> bool:
    """Whether what `blocker` sees now is such a thing (a git command running here, the index lock)."""
    held = blocker(git)
    return held.startswith(running.HELD) or held == "the index lock"


def held_by_git(deferred: str) -> bool:
    """Whether a commit was deferred for what `blocker` sees: a git operation, a detached HEAD, the index lock."""
    return deferred.startswith(HELD_BY_GIT)


class Ending:
    """Calls `over` once what held a commit up (`blocker`) is gone, once per `wait` (a commit deferred by it)."""

    def __init__(self, git: Git, over: Callable[[], None], delay: float = 0.1):
        self.git, self._over, self._delay = git, over, delay
        self._lock = threading.Lock()
        self._waiting = False
        self._observer: Any = None  # a watchdog Observer while waiting (imported then: most processes never wait)
        self._timer: threading.Timer | None = None

    def wait(self) -> None:
        """Watch the git dir (again, if the watch died) for a commit `held_by_git`. The first call since the last
        `over` looks at once: the operation may have ended between the commit's check and the watch."""
        with self._lock:
            first, self._waiting = not self._waiting, True
            if self._observer is None or not self._observer.is_alive():
                self._observer = self._watch()
        if first:
            self._heard()

    def _watch(self) -> Any:
        from watchdog.events import DirDeletedEvent, DirMovedEvent, FileDeletedEvent, FileMovedEvent
        from watchdog.observers import Observer

        observer = Observer()
        try:
            observer.schedule(_handler(self._heard), str(self.git.git_dir), recursive=False,
                              event_filter=[FileDeletedEvent, FileMovedEvent, DirDeletedEvent, DirMovedEvent])
            observer.daemon = True
            observer.start()
        except OSError as exc:  # the git dir is gone, or inotify's watches are used up: the 10 s retry still comes
            log.info("cannot watch %s for the end of a git operation (%s); the memory commit is retried on a timer",
                     self.git.git_dir, exc)
            return None
        return observer

    def _heard(self, delay: float | None = None) -> None:
        with self._lock:  # a look `delay` after an event, and none more often: a steady stream (an editor's `git status`
            if self._timer is not None:  # every few ms) must not put the look off for ever
                return
            self._timer = threading.Timer(self._delay if delay is None else delay, self._look)
            self._timer.daemon = True
            self._timer.start()

    def _look(self) -> None:
        with self._lock:
            self._timer = None
            waiting = self._waiting
        held = blocker(self.git) if waiting else ""
        if held.startswith(running.HELD):
            self._heard(POLL)
        if not waiting or held:
            return
        with self._lock:  # one retry per end: the events after it (the retry's own, `git status`) find nothing waiting
            over, self._waiting = self._waiting, False
        if over:
            self._over()

    def stop(self, idle: bool = False) -> None:
        """Stop watching: the process ends, or (`idle`) unless a commit waits for an operation to end (a `wait` since
        the last `over`): the retry `over` brought landed, or was deferred for another reason."""
        with self._lock:
            if idle and self._waiting:
                return
            observer, self._observer, self._waiting = self._observer, None, False
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if observer is not None:
            observer.stop()
            observer.join(timeout=5)


def _handler(heard: Callable[[], None]) -> Any:
    """A watchdog handler calling `heard` on a change to one of ENDINGS (watchdog is imported on first use)."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler

    class Endings(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            names = {Path(str(event.src_path)).name, Path(str(getattr(event, "dest_path", "") or "")).name}
            if names & ENDINGS:
                heard()

    return Endings()
