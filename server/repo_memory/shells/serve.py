"""`repo-memory serve`: the server process — stdio, the file watcher, and a bounded exit that commits what it owns.

A harness ends a server by closing its stdin, then SIGTERM, then SIGKILL a couple of seconds apart (the MCP SDK
client waits 2 s after each). At end of input the server stops the watcher and commits what it owns; a SIGTERM, SIGINT
or SIGHUP that arrives meanwhile (or first) gives that commit EXIT_BUDGET more seconds, then the process exits.
Whatever it could not commit in time stays in the durable pending list, and the next repo-memory process commits it;
nothing acknowledged is lost either way.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from types import FrameType

from repo_memory.config import Config
from repo_memory.core.store import Store

EXIT_BUDGET = 1.5  # seconds a signal leaves the exit commit: inside the 2 s a client gives between SIGTERM and SIGKILL
log = logging.getLogger("repo_memory")


class Lifetime:
    """Starts and ends one server process; `end` runs once, whichever comes first: end of input or a signal."""

    def __init__(self, store: Store):
        from repo_memory.shells.watch import Watcher

        self.store = store
        self.watcher = Watcher(store)
        self._ended = threading.Event()
        self._once = threading.Lock()

    def start(self) -> None:
        self.watcher.start()  # reconciles once, then re-indexes on every save
        self.watcher.supervise()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        # The handler runs on the main thread, which may hold a lock the commit needs: end on a thread of its own.
        log.info("%s received; committing what this server owns and exiting", signal.Signals(signum).name)
        threading.Thread(target=self._end_and_exit, name="repo-memory-exit", daemon=True).start()

    def _end_and_exit(self) -> None:
        self.end(EXIT_BUDGET)
        os._exit(0)  # the MCP loop may be blocked reading stdin; the work that matters is done

    def end(self, budget: float | None = None) -> None:
        """Stop the watcher, commit what this server owns (within `budget` seconds, or until done), close the index."""
        if self._once.acquire(blocking=False):
            self.watcher.stop()  # before the event loop closes: a late change notification has nowhere to go
            threading.Thread(target=self._close, name="repo-memory-close", daemon=True).start()
        if not self._ended.wait(budget):
            log.warning("exiting before the last memory commit finished; the next repo-memory process commits it")

    def _close(self) -> None:
        try:
            self.store.close(commit=True)
        finally:
            self._ended.set()


def run(root: str | None) -> None:
    """Serve MCP over stdio until the client goes away."""
    from repo_memory.shells import mcp  # the MCP SDK takes about a second to import; only serve needs it

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="repo-memory: %(message)s")
    store = Store(Config.load(root))
    lifetime = Lifetime(store)
    lifetime.start()
    try:
        mcp.build(store, lifetime.watcher).run("stdio")
    finally:
        lifetime.end()
