"""What an MCP server serves: one repository's Store, its loop engine and write limiter, and change notifications.

The Store is opened at start when the server is told its repository, or runs inside one `repo-memory init` ran in; a
server started elsewhere (outside any repository, or in one init never ran in, as a dotfiles repository in $HOME) opens
it at the first request, in a repository the client names as one of its MCP roots, or in the working directory's when
the client names none, unless that one holds the home folder (serve.py's `_opener`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory.core.store import Store
from repo_memory.errors import UnsafePathError, WorkspaceError
from repo_memory.guards.ratelimit import WriteLimiter
from repo_memory.runner.engine import Engine

if TYPE_CHECKING:
    from repo_memory.shells.watch import Watcher

log = logging.getLogger("repo_memory")

Opener = Callable[[list[Path], str], "tuple[Store, Watcher | None]"]  # (the folders the client named as roots, why none)
Publish = Callable[[list[str], bool], None]  # (URIs that changed, whether the list of resources changed)


class Served:
    """What every tool call works on: the Store, its loop engine, the write limiter, and change notifications (sent
    through `publish`, which the MCP shell sets). Free of the MCP SDK, so the front serves calls with it too.

    A server that did not open its Store at start opens it at the first request, in the repository the client names as
    its MCP root (`opener` gets the folders it named, or none and why: it offers no roots, did not answer, named none)."""

    def __init__(self, store: Store | None, watcher: Watcher | None = None, opener: Opener | None = None, unusable: str = "",
                 opens_without_roots: bool = False):
        self.publish: Publish | None = None
        self._opener, self._lock = opener, threading.Lock()
        self.opens_without_roots = opens_without_roots  # `opener` serves a client offering no roots (the working directory's)
        self.unusable = unusable  # why the server's repository cannot be served (said on every call), or ''
        self.unanswered = ""  # why the client's roots are not known, when it was asked and did not answer (it is not asked again)
        self._refused: set[str] = set()  # loops not served because their file is linked (warned once each)
        self._store: Store | None = None
        self._watcher: Watcher | None = None
        self._client = ""  # the name the client gave itself (clientInfo): names the harness of records, as far as it can
        if store is not None:
            self._attach(store, watcher)

    def _attach(self, store: Store, watcher: Watcher | None) -> None:
        self._store, self.engine = store, Engine(store)
        if self._client:
            store.name_client(self._client)
        config = store.config
        self.limiter = WriteLimiter(config.writes_per_minute, config.write_bytes_per_minute, config.write_bytes_per_session)
        self._seen = self._state()
        self._watcher = watcher
        if watcher is not None:
            watcher.listeners.append(self.check)

    def name_client(self, name: str) -> None:
        """The client named itself (shells/clientinfo.py): the Store, now or once open, names its harness by it. Not under
        the lock `open` holds while it opens the Store (this runs on the thread that reads the client's lines): the
        name is set before the Store is looked at here, the Store before the name is looked at in `_attach`."""
        self._client = name
        if self._store is not None:
            self._store.name_client(name)

    @property
    def is_open(self) -> bool:
        return self._store is not None

    def take(self, tool: str, size: int) -> None:
        """Spend a write from the limiter (RateLimitedError when it is spent). Before the Store is open, the repository's
        limits are not known yet: the call opens it (or says why it cannot), and the limiter counts from then."""
        if self._store is not None:
            self.limiter.take(tool, size)

    def open(self, roots: list[Path], why: str = "") -> Store:
        """The Store, opened on first use when the server did not open one at start: in a repository holding one of the
        folders the client named as its roots, or when it named none (`why`), in the working directory's. Its index
        holds the changes on disk the watcher has heard of (a call made right after a pull reads what the pull brought)."""
        store = self._opened(roots, why)
        if self._watcher is not None:
            self._watcher.settle()
        return store

    def _opened(self, roots: list[Path], why: str) -> Store:
        with self._lock:
            if self._store is None:
                if self._opener is None:
                    raise WorkspaceError(self.unusable
                                         or "No repository to serve: start the server inside a git repository or pass --root.")
                self._attach(*self._opener(roots, why or self.unanswered or "the client offers no MCP roots"))
            assert self._store is not None
            config = self._store.config
            if not config.root.is_dir() or not config.git_dir.is_dir():  # (a GIT_DIR set-up has no .git in the root)
                raise WorkspaceError(
                    f"The repository this server works in, {config.root}, is no longer there (a worktree removed or moved, "
                    "or the folder deleted): nothing was read or written. Start the session again in the repository's folder.")
            return self._store

    def repair_index(self, why: str) -> None:
        """Rebuild the open Store's damaged index from the memory files."""
        if self._store is not None:
            self._store.repair_index(why)

    def _state(self) -> dict[str, str]:
        assert self._store is not None
        state = {f"skill://{name}": digest for name, digest in self._store.skill_digests().items()}
        for name in self._store.loop_names():
            try:
                state[f"loop://{name}"] = self._store.read(f"loop:{name}").sha256
            except UnsafePathError as exc:  # a linked spec is never read; the server goes on without it, and says so once
                if name not in self._refused:
                    self._refused.add(name)
                    log.warning("not serving loop %s: %s", name, exc)
        return state

    def check(self) -> None:
        """Compare skills and loops with what was last seen and publish what changed (for `subscriptions/listen`)."""
        now = self._state()
        changed = [uri for uri in sorted(set(now) | set(self._seen)) if now.get(uri) != self._seen.get(uri)]
        listed = set(now) != set(self._seen)
        self._seen = now
        if self.publish is not None and (changed or listed):
            self.publish(changed, listed)
