"""`repo-memory serve`: the server process — stdio, the file watcher, and a bounded exit that commits what it owns.

A harness ends a server by closing its stdin, then SIGTERM, then SIGKILL: the MCP SDK client waits 2 s after each;
Codex sends SIGTERM to the server's whole process group with the end of input and SIGKILL some 50 ms later. At end of
input the server stops the loop steps still verifying, gives the calls in flight a moment to answer (front.LAST_ANSWERS),
then stops the watcher and commits what it owns; a SIGTERM, SIGINT or SIGHUP that arrives meanwhile (or
first) gives that commit EXIT_BUDGET more seconds, then the process exits. Before its first write waits for a commit, a
server starts a finisher outside its process group (shells/finish.py), which commits whatever the server could not once
it is gone, though it was killed before it heard any signal (its main thread in C code as the MCP SDK imports: no
handler runs); the next repo-memory process would too: nothing acknowledged is lost, and it lands within seconds.
One that may leave text without a vector starts an embedder the same way (shells/embedder.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

import anyio

from repo_memory import layout
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import RepoMemoryError, WorkspaceError, disk_refused
from repo_memory.git import pending, textconv_cache
from repo_memory.git.pending import Journal
from repo_memory.guards import secretscan
from repo_memory.shells import embedder, finish, shipped
from repo_memory.shells.front import Front
from repo_memory.shells.served import Opener, Served

if TYPE_CHECKING:
    from repo_memory.shells.watch import Watcher

# Seconds the front serves alone before the MCP SDK (0.9 s of CPU to import) is loaded anyway, unless a request only the
# SDK answers comes first: a health check (`claude mcp list`) or a session of a few calls ends before it and never pays
# for it; a longer session is served by the SDK from then on, as from the start before.
SDK_AFTER = 5.0
EXIT_BUDGET = 1.5  # seconds a signal leaves the exit commit: inside the 2 s a client gives between SIGTERM and SIGKILL
log = logging.getLogger("repo_memory")


class Lifetime:
    """Starts and ends one server process; `end` runs once, whichever comes first: end of input or a signal."""

    def __init__(self) -> None:
        self.store: Store | None = None
        self._ended = threading.Event()
        self._once = threading.Lock()
        self._finisher: subprocess.Popen[bytes] | None = None  # started at the first write this server owes a commit
        self._keeping = threading.Lock()

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)

    def attach(self, store: Store) -> Watcher:
        """Serve `store`: reconcile its index once, then re-index on every save."""
        from repo_memory.shells.watch import Watcher

        from repo_memory.core import following, indexing

        indexing.sweep(store.root)  # what writes killed with an earlier process left
        textconv_cache.drop_raw_in(store.root, store.config.git_dir, store.config.state_dir)  # what a `git show`
        # without repo-memory on PATH left in git's diff cache: the raw lines, kept for that log version ever after
        self.store, self.watcher = store, Watcher(store)
        pending.keep_with(self.keep)
        self.watcher.start()
        self.watcher.listeners.append(functools.partial(following.keep, store))  # a pull: the harnesses' own lists follow
        self.watcher.supervise()
        store.embedding().start()  # in the background: the model loads and new text is embedded without holding up a call
        return self.watcher

    def keep(self) -> None:
        """Before a write of this server waits for a commit, have its finisher wait for it to be gone: Codex's SIGKILL
        comes 50 ms after its SIGTERM, and a main thread in C code (a garbage collection) runs no handler that long."""
        with self._keeping:
            if self.store is None or (self._finisher is not None and self._finisher.poll() is None):
                return
            try:
                self._finisher = finish.start(self.store.root, os.getpid(), until_gone=True, harness=pending.harness_pid())
            except OSError as exc:  # the write goes on: this server commits it at its end, or the next process does
                log.warning("could not start the process that commits what this server leaves if it is killed: %s", exc)

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
            self.stop_steps()
            if self.store is None:
                self._ended.set()
                return
            if not self.store.config.git_dir.is_dir():  # a worktree removed under the server: nothing to commit to
                log.warning("the repository %s is no longer there; what it had not committed went with the folder (moved: the next "
                            "session in its new place commits it)", self.store.root)
                self.watcher.stop()
                self._ended.set()
                return
            watched = self._finisher is not None and self._finisher.poll() is None  # it commits what is left, and embeds it
            harness = pending.harness_pid()  # its hooks' writes, should its SessionEnd hook be cut off before it commits them
            if not watched and any(e.owner in (os.getpid(), harness) for e in Journal(self.store.config.state_dir).read()):
                finish.start(self.store.root, os.getpid(), harness=harness)  # commits what this process leaves, should it be killed first; embeds it
            elif not watched and self.store.embedding().behind():  # Codex's SIGKILL comes 50 ms after SIGTERM: one process is started, not two
                embedder.start(self.store.root)  # embeds what this session left without a vector
            self.watcher.stop()  # before the event loop closes: a late change notification has nowhere to go
            threading.Thread(target=self._close, name="repo-memory-close", daemon=True).start()
        if not self._ended.wait(budget):
            log.warning("exiting before the last memory commit finished; the next repo-memory process commits it")

    def stop_steps(self) -> None:
        """Kill the loop verification steps still running; their calls answer that they were stopped, the runs stay live."""
        verify = sys.modules.get("repo_memory.runner.verify")  # not imported: no step ever ran here
        if verify is not None and verify.end_all():
            log.info("stopped the loop verification steps still running")

    def _close(self) -> None:
        try:
            assert self.store is not None
            self.store.close(commit=True)
        finally:
            self._ended.set()


def run(root: str | None, wire: Front | None = None) -> NoReturn:
    """Serve MCP over stdio until the client goes away, then end the process.

    The repository is `--root`, else REPO_MEMORY_ROOT, else CLAUDE_PROJECT_DIR, else the working directory's; but the
    working directory is only where the client started the server (a dotfiles repository in $HOME, say), so when it
    is outside any repository, or in one `repo-memory init` never ran in, the Store opens at the first request that
    needs it, in the repository the client names as its MCP root (`_opener`); so does a CLAUDE_PROJECT_DIR (where
    Claude Code was started) in a repository holding the home folder, where init never ran. `wire` is the front the
    console script started before importing anything heavy; without one, it starts here.

    The process ends with os._exit once the exit commit is done: the interpreter's own shutdown would finalize stdin
    and stderr under daemon threads still using them (the front's reader, a tool call, the watcher's logging), which
    CPython can answer with "Fatal Python error: could not acquire lock" and SIGABRT (seen in this project's tests)."""
    code = 1
    try:
        code = _serve(root, wire)
    except WorkspaceError as exc:
        print(f"repo-memory: {exc}", file=sys.stderr)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported, then the same exit as any other
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _serve(root: str | None, wire: Front | None) -> int:
    """Serve until the client goes; the exit status: 1 when what was found could not be served (the client heard why
    on each call), else 0."""
    wire = wire or Front.on_stdio(shipped.load()).start()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="repo-memory: %(message)s")
    lifetime = Lifetime()
    lifetime.install()
    wire.at_end = lifetime.stop_steps
    store, here, unusable = _found(root)
    if unusable:  # the client is connected (the front answered it): it hears why on each call, and the server stays
        log.error("%s", unusable)
    opener = None if unusable else _opener(here, lifetime)
    served = Served(store, lifetime.attach(store) if store else None, opener, unusable=unusable,
                    opens_without_roots=isinstance(here, Config))
    wire.client.tell(served.name_client)
    wire.serve_calls(served if store is not None or served.opens_without_roots else None)  # calls answered while the SDK loads
    wire.settle()
    if not wire.needs_sdk(SDK_AFTER):  # a session the front answered whole (a health check, a few calls) ends here
        wire.end_alone()
        lifetime.end()
        return 1 if unusable else 0
    from repo_memory.shells import mcp  # the MCP SDK takes most of a second to import; the front answers meanwhile

    server = mcp.build(None, served=served)
    if wire.manifest is None:  # the shipped manifest was made with other SDK versions: record this machine's
        threading.Thread(target=_record_manifest, name="repo-memory-manifest", daemon=True).start()
    try:
        anyio.run(server.run_front_async, wire)
    finally:
        lifetime.end()
    return 1 if unusable else 0


def _found(root: str | None) -> tuple[Store | None, Config | WorkspaceError | None, str]:
    """What start-up finds: the Store opened (the repository named, or the working directory's where init ran), else the
    working directory's repository to open at the first request (`_opener`) or why there is none; and why what was found
    cannot be served ('' when it can: every tool call answers it otherwise)."""
    if root is not None and not root.strip():  # `--root ${workspaceFolder}` with no folder open: not `.`, which click made it
        return None, None, _EMPTY_ROOT
    named = root or os.environ.get("REPO_MEMORY_ROOT") or os.environ.get("CLAUDE_PROJECT_DIR")
    try:
        config = _config(root)
        unchosen = not _chosen(root) and not layout.initialised(config.root, config.common_dir)
        # CLAUDE_PROJECT_DIR is only the folder Claude Code was started in: there, ~ is no more a project than a cwd is
        if unchosen and (not named or _holds_home(config.root)):
            if _holds_home(config.root):
                log.warning("%s", _unchosen(config.root, _found_from(), "a client naming its project's repository as "
                                            "an MCP root is served that project, one naming none is refused"))
            else:
                log.info("repo-memory init never ran in %s: memory opens at the first call in the repository the client "
                         "names as its workspace (MCP roots), else here", config.root)
            return None, config, ""  # init never ran in it: the client's root decides (_opener)
        store = Store(config)
        if store.sparse.left_out():  # said at start too: every tool call that needs memory answers it
            log.warning("%s. %s", store.sparse.why(), store.sparse.fix())
        return store, None, ""
    except WorkspaceError as exc:  # the client's root decides (_opener); but a repository named is the one served, or none
        if not named:
            log.info("no git repository at %s: memory opens at the first call in the repository the client names as its "
                     "workspace (MCP roots); `repo-memory serve --root PATH < /dev/null` checks one", os.getcwd())
        return None, exc, _cannot_open(exc, root) if named else ""
    except (RepoMemoryError, OSError, sqlite3.Error) as exc:
        return None, None, _cannot_open(exc, root)


def _opener(here: Config | WorkspaceError | None, lifetime: Lifetime) -> Opener:
    """What opens the Store at the first request when none opened at start: in the first of the folders the client named
    as its MCP roots inside a git repository (the client's workspace); else, when it named none (it offers no roots, as
    Codex; did not answer in time; answered an error or an empty list), in `here`, the working directory's repository,
    as before, with a warning that says why and that init never ran there. A repository holding the home folder
    (`_holds_home`) where init never ran is no project, named as a root or found as `here`: refused on every call, with
    what to do (a client that opened ~/notes, or was started in ~, is not served the dotfiles).

    A client that named its workspace is never served `here` instead: memory goes to no repository the client did not
    name and init never ran in."""

    def opener(roots: list[Path], why: str) -> tuple[Store, Watcher]:
        in_home: list[tuple[Path, Config]] = []
        for candidate in roots:
            try:
                config = _config(candidate)
            except WorkspaceError:
                continue
            if _holds_home(config.root) and not layout.initialised(config.root, config.common_dir):
                in_home.append((candidate, config))  # ~ or a plain folder of it: no project, whatever the client opened
                continue
            opened = Store(config)
            return opened, lifetime.attach(opened)
        if in_home:
            folders = ", ".join(str(candidate) for candidate, _ in in_home)
            found = (f"found only because the client named {folders} as its MCP root (the home folder, or a folder of it "
                     "with no repository of its own)")
            raise WorkspaceError(_unchosen(in_home[0][1].root, found, "nothing was read or written. Open the project's "
                                           "own repository in the client instead"))
        if roots:
            named = ", ".join(str(r) for r in roots)
            if not isinstance(here, Config):
                raise WorkspaceError(f"The client's MCP roots ({named}) are not inside a git repository, and {os.getcwd()}, "
                                     "where the server was started, is in no repository it can serve: open your project's "
                                     "repository in the client, or start the server with --root PATH.")
            raise WorkspaceError(f"The client's MCP roots ({named}) are not inside a git repository, and {here.root}, the "
                                 "repository the server was started in, is not one `repo-memory init` ran in: nothing was "
                                 "read or written there. Open your project's repository in the client, run `repo-memory "
                                 f"init` in {here.root} to keep memory there, or start the server with --root PATH.")
        if isinstance(here, Config):
            if _holds_home(here.root):  # a dotfiles repository nobody chose for memory: refused, on every call
                raise WorkspaceError(_unchosen(here.root, _found_from(), f"nothing was read or written, as {why}"))
            log.warning("serving %s, the repository of the working directory, where `repo-memory init` never ran (%s): run "
                        "`repo-memory init` there, or pass --root PATH", here.root, why)
            try:
                opened = Store(here)
            except (RepoMemoryError, OSError, sqlite3.Error) as exc:
                raise WorkspaceError(_cannot_open(exc, here.root)) from exc
            return opened, lifetime.attach(opened)
        if here is not None and "not inside a git repository" not in str(here):  # git refused the one here (its owner, say)
            raise WorkspaceError(f"{here} ({why[0].upper()}{why[1:]}.)")
        raise WorkspaceError(f"{os.getcwd()} is not inside a git repository and {why}: start the server inside a repository, "
                             "or pass --root PATH (or set REPO_MEMORY_ROOT).")

    return opener


def _holds_home(root: Path) -> bool:
    """Whether the repository at `root` holds the whole home folder: a dotfiles repository (or a stray `git init ~`),
    which no client starting the server there names as a project; every project is a folder below it, or elsewhere."""
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError):  # no home to tell
        return False
    return root.resolve() == home or root.resolve() in home.parents


def _unchosen(root: Path, found: str, served: str) -> str:
    """Why the home folder's repository, `found` as said, is not served to a client naming no project, and what to do."""
    return (f"repo-memory does not keep memory in {root}: it is the repository holding your home folder (dotfiles, "
            f"say), {found}, and `repo-memory init` never ran there; {served}. Name the project's repository in the "
            "client's config for this server: `repo-memory serve --root /path/to/repo` (or REPO_MEMORY_ROOT=/path/to/repo "
            "in its env), then start the server again (reconnect it, or start a new session). If memory really belongs in "
            f"{root}, run `repo-memory init` there.")


def _chosen(root: str | None) -> bool:
    """Whether the person named the repository (--root, REPO_MEMORY_ROOT): served though it holds the home folder."""
    return bool(root or os.environ.get("REPO_MEMORY_ROOT"))


def _found_from() -> str:
    """How the repository the server found at start was found, when nobody chose it (`_chosen`)."""
    if claude := os.environ.get("CLAUDE_PROJECT_DIR"):
        return f"found only from CLAUDE_PROJECT_DIR ({claude}), the folder Claude Code was started in"
    return f"found only because the MCP client started the server in {os.getcwd()}"


_EMPTY_ROOT = ("repo-memory cannot serve: --root is empty. A client expands `--root ${workspaceFolder}` to nothing when no "
               "folder is open (or an unknown variable to ''), so no repository was named, and none is guessed: nothing was "
               "read or written. Open the project's folder in the client, or write the repository's path in the server's "
               "--root (or REPO_MEMORY_ROOT) instead, then start the MCP server again (reconnect it, or start a new session).")


def _config(root: str | Path | None) -> Config:
    """The Config of the repository at `root`. A session id from the environment that the secret scanner takes for a
    credential is never written: the server takes one of its own."""
    config = Config.load(root)
    if config.session and secretscan.scan(config.session):  # a guess, and a harness's id is no secret: serve all the same
        log.warning("the session id from the environment (REPO_MEMORY_SESSION or the harness's) looks like a credential to the "
                    "secret scanner, so it is not written anywhere: this server records under a session id of its own")
        config = dataclasses.replace(config, session=None)
    return config


def _cannot_open(exc: Exception, root: str | Path | None) -> str:
    """Why the repository found cannot be served, and what to do: for the person on stderr and the agent on every call."""
    where = Path(root or os.environ.get("REPO_MEMORY_ROOT") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    again = "start the MCP server again (reconnect it, or start a new session)"
    if isinstance(exc, OSError):
        why = disk_refused(exc, again)
    elif isinstance(exc, sqlite3.Error):  # the index of a clone used before, made read-only since
        why = (f"its index (index.sqlite in the repository's git directory, under repo-memory/) cannot be used: {exc}. Make it "
               f"and its folder writable for your user, or delete it (it is rebuilt from the memory files), then {again}.")
    elif unexpanded := re.search(r"\$\{[^}]*\}|\$[A-Za-z_]\w*", str(where)):  # `--root ${workspaceFolder}` taken literally
        why = (f"{unexpanded[0]} in it is a variable the MCP client did not expand (not every client expands "
               f"{unexpanded[0]}, nor in every setting), so no such folder was found. Write the repository's path in the "
               f"server's --root (or REPO_MEMORY_ROOT) instead, then {again}.")
    else:
        why = f"{secretscan.redact(str(exc))[0]} Then {again}."  # a value echoed back may be a credential
    return f"repo-memory cannot serve {where}: {why}"


def _record_manifest() -> None:
    from repo_memory.shells import manifest

    path = manifest.remember(manifest.generate())
    log.info("recorded the start-up manifest for this machine's SDK versions in %s", path)
