"""Live re-index: filesystem events on the memory folders -> debounce -> one sync of the index.

Editors that save by writing a temp file and renaming it (vim, VS Code, JetBrains) produce a burst of events;
the burst becomes one sync. Temp, swap and backup files are ignored. The sync only reads files, so the
server's own writes cannot feed back into more writes; it compares content hashes, so they cost nothing.
A burst re-reads only the files it named when it can (Indexer.refresh): a hook appending to a log in another process
(every tool call) has the logs re-read, a skill edited by hand has its SKILL.md read; looking at every skill file cost
145 ms at 10k skills.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileClosedEvent, FileCreatedEvent, FileDeletedEvent,
                             FileModifiedEvent, FileMovedEvent, FileSystemEvent, FileSystemEventHandler)
from watchdog.observers import Observer
from watchdog.observers.api import ObservedWatch

from repo_memory.core.store import Store
from repo_memory.git import pending
from repo_memory.formats.skills import MIRROR_MARKER

log = logging.getLogger("repo_memory")
CHANGES = ("created", "modified", "moved", "deleted", "closed")
# The events asked of the kernel: changes only. Without a filter inotify also reports every open and every close
# without a write, so reads alone (our own re-index of 10k skills, a grep) overflowed its queue (bench/scale.py).
WATCHED = [FileCreatedEvent, FileModifiedEvent, FileMovedEvent, FileDeletedEvent, FileClosedEvent, DirCreatedEvent, DirDeletedEvent,
           DirMovedEvent]
KEPT = (".gitattributes", MIRROR_MARKER)  # dot files that matter: the marker says a skill folder is a generated mirror
SETTLE = 2.0  # seconds a read waits at most for the changes made before it to be in the index
COOKIE = ".repo-memory-heard-"  # settle's cookie folders in .agents/: a dot name, which every watcher ignores
TEMP_SUFFIXES = ("~", ".swp", ".swx", ".swo", ".tmp", ".part", "___jb_tmp___", "___jb_old___", ".crswap")


def ignorable(path: str) -> bool:
    """Editor and tool scratch files, which never hold memory."""
    name = Path(path).name
    return name.startswith((".#", "#")) or name == "4913" or name.endswith(TEMP_SUFFIXES) or (name.startswith(".") and name not in KEPT)


class Watcher(FileSystemEventHandler):
    """Watches the memory folders of a Store and keeps its index in step."""

    def __init__(self, store: Store, debounce: float = 0.05):
        self.store, self.debounce = store, debounce
        self.listeners: list[Callable[[], None]] = []  # called after each sync that may have changed skills or loops
        self.syncs = 0
        self._observer: Observer | None = None  # type: ignore[valid-type]
        self._timer: threading.Timer | None = None
        self._cond = threading.Condition()
        self._last_event = 0.0
        self._last_sync_started = 0.0
        self._syncing = False
        self._one_sync = threading.Lock()
        self._supervisor: threading.Event | None = None
        self._changed: set[str] = set()  # paths the events since the last sync named
        self.full_syncs = 0  # syncs that looked at every memory file, not the logs alone
        self._watches: list[ObservedWatch] = []
        self._awaited: dict[str, threading.Event] = {}  # cookie folders `settle` made -> told when the watcher hears of them
        self._cookies = itertools.count(1)
        self._cookie_folder: Path | None = store.root / ".agents"  # None once a cookie went unheard

    def start(self) -> None:
        """Watch every memory folder that exists, and the repository's top folder for one made or removed; reconcile
        once (events before now were not seen)."""
        observer = Observer()
        self._watches = [observer.schedule(self, str(path), recursive=True, event_filter=WATCHED) for path in self._folders()]
        tops = {Path(folder).parts[0] for folder in (".agents", *self.store.sources[1:])}
        observer.schedule(_Appearing(self, tops), str(self.store.root), recursive=False, event_filter=[DirCreatedEvent, DirDeletedEvent, DirMovedEvent])
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._sweep_cookies()
        self._sync(everything=True)

    def _sweep_cookies(self) -> None:
        """Remove the cookie folders of servers killed inside `settle` (empty folders: git never saw them)."""
        for cookie in (self.store.root / ".agents").glob(f"{COOKIE}*"):
            pid = cookie.name[len(COOKIE):].partition("-")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not pending.alive(int(pid)):
                try:
                    cookie.rmdir()
                except OSError:
                    pass

    def _folders(self) -> list[Path]:
        return [path for folder in (".agents", *self.store.sources[1:]) if (path := self.store.root / folder).is_dir()]

    def rewatch(self) -> None:
        """Watch the memory folders anew and look at every file: one was made, moved or removed at the top (a checkout of
        a branch without .agents/ and back took the folder, and its watch, away)."""
        observer = self._observer
        if observer is None or not observer.is_alive():  # stopped (the server is ending), or the supervisor restarts it
            return
        with self._cond:
            for watch in self._watches:
                try:
                    observer.unschedule(watch)
                except (KeyError, OSError):  # its folder is gone, and the watch with it
                    pass
            self._watches = [observer.schedule(self, str(path), recursive=True, event_filter=WATCHED) for path in self._folders()]
        self._sync(everything=True)

    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive()

    def stop(self) -> None:
        """Stop watching: the supervisor, the observer, a pending sync, and every listener (the event loop may be closing)."""
        self.listeners.clear()
        if self._supervisor is not None:
            self._supervisor.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
        with self._cond:
            if self._timer is not None:
                self._timer.cancel()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if self._awaited and event.event_type == "created" and (heard := self._awaited.get(str(event.src_path))) is not None:
            heard.set()
            return
        if event.event_type not in CHANGES or (event.is_directory and event.event_type == "modified"):
            return  # opened / closed-without-write come from reads, our own syncs included
        paths = [str(event.src_path), str(getattr(event, "dest_path", "") or "")]
        if all(not p or ignorable(p) for p in paths):
            return
        with self._cond:
            self._last_event = time.monotonic()
            self._changed.update(p for p in paths if p and not ignorable(p))  # a folder's path has every file looked at
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.debounce, self._sync)
            self._timer.daemon = True
            self._timer.start()

    def _sync(self, everything: bool = False) -> None:
        with self._one_sync:  # a timer can fire while the previous sync still runs; the second waits its turn
            self._sync_once(everything)

    def settle(self, timeout: float = SETTLE) -> bool:
        """Have the index hold every change made on disk before this call (a pull, a checkout, a hand edit made the
        moment before a read): wait (bounded) until the watcher has heard of them all, sync at once what they named
        instead of waiting out the debounce, and wait for a sync under way. True when nothing is left to sync.

        Heard of all: inotify reports a watch's events in order, so once the watcher hears of an empty folder this call
        made in .agents/ (the "cookie" file watchers such as watchman use; a folder, so that git never lists it), it
        has heard of every change made there before. Changes in other memory folders are heard as they come."""
        if not self.alive():
            return False
        self._hear_all(timeout)
        with self._cond:
            timer, self._timer = self._timer, None
            if timer is not None:
                timer.cancel()  # (one that fired already finds nothing left to read and returns)
        if timer is not None and self._one_sync.acquire(timeout=timeout):
            try:
                self._sync_once(everything=False)
            finally:
                self._one_sync.release()
        return self.wait_idle(timeout)

    def _hear_all(self, timeout: float) -> None:
        folder = self._cookie_folder
        if folder is None:
            return
        cookie = folder / f"{COOKIE}{os.getpid()}-{next(self._cookies)}"
        heard = threading.Event()
        self._awaited[str(cookie)] = heard
        try:
            os.mkdir(cookie, 0o700)
        except OSError:  # no .agents/ (nothing there to hear of), or a read-only one: changes are heard as they come
            self._awaited.pop(str(cookie), None)
            return
        try:
            if not heard.wait(timeout):  # the watch on .agents/ is not working (an inotify limit, say): stop waiting on it
                self._cookie_folder = None
                log.warning("the file watcher did not hear of %s within %g s; reads no longer wait for it", cookie, timeout)
        finally:
            self._awaited.pop(str(cookie), None)
            try:
                os.rmdir(cookie)
            except OSError:
                pass

    def _sync_once(self, everything: bool) -> None:
        with self._cond:
            self._timer = None
            if not everything and not self._changed:
                return  # a timer that fired while `settle` synced what it would have: nothing new to read
            self._syncing = True
            self._last_sync_started = time.monotonic()
            changed, self._changed = self._changed, set()
        looked = "all"
        try:
            looked = self.store.refresh(changed=None if everything or not changed else changed).looked
        except Exception as exc:  # noqa: BLE001 - the watcher thread must survive any single failed sync; the next event retries
            log.warning("re-index after a file change failed: %s", exc)
        finally:
            with self._cond:
                self._syncing = False
                self.syncs += 1
                self.full_syncs += looked == "all"
                self._cond.notify_all()
        for listener in [] if looked == "logs" else list(self.listeners):
            try:
                listener()
            except Exception as exc:  # noqa: BLE001 - as above: one listener's failure ends neither this sync nor the next
                log.warning("telling of a file change failed: %s", exc)

    def wait_idle(self, timeout: float) -> bool:
        """Block until every event seen so far has been synced (or `timeout` passes); True when idle."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._timer is not None or self._syncing or self._last_event >= self._last_sync_started:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def supervise(self, interval: float = 30.0, glance: float = 1.0) -> threading.Event:
        """Every `interval` seconds, restart a dead observer and reconcile files with the index (events can be lost,
        e.g. on inotify queue overflow); every `glance`, reconcile at once if another process put a new index file in
        place (the state folder deleted, then any command made an empty one). Set the returned event to stop."""
        stop = self._supervisor = threading.Event()
        index = self.store.config.index_path

        def inode() -> int:
            try:
                return index.stat().st_ino
            except OSError:
                return 0

        def loop() -> None:
            seen, waited = inode(), 0.0
            while not stop.wait(glance):
                waited += glance
                now = inode()
                if waited < interval and (now == seen or not now):
                    continue
                if not self.alive():
                    log.warning("the file watcher stopped; restarting it")
                    self.start()
                else:
                    self._sync(everything=True)
                seen, waited = inode(), 0.0

        threading.Thread(target=loop, name="repo-memory-watch-supervisor", daemon=True).start()
        return stop


class _Appearing(FileSystemEventHandler):
    """Hears a memory folder (`.agents`, `.claude`, ...) made, moved or removed at the repository's top, and has the
    Watcher watch anew once the burst of a checkout is over."""

    def __init__(self, watcher: Watcher, tops: set[str], debounce: float = 0.1):
        self._watcher, self._tops, self._debounce = watcher, tops, debounce
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def on_any_event(self, event: FileSystemEvent) -> None:
        names = {Path(str(event.src_path)).name, Path(str(getattr(event, "dest_path", "") or "")).name}
        if not event.is_directory or not names & self._tops:
            return
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self._debounce, self._watcher.rewatch)
            self._timer.daemon = True
            self._timer.start()

