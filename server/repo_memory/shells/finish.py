"""What outlives a server that is ended in a hurry: a process in a session of its own that waits for the server to
be gone, then commits what it left pending.

Codex ends a stdio server by sending SIGTERM to its whole process group (the git processes of an exit commit too),
closing its stdin, and sending SIGKILL some 50 ms later: no server can commit in that time, and one whose main thread
is in C code then (a garbage collection as the MCP SDK imports) runs no signal handler at all before it is killed. So a
server starts this before its first write waits for a commit (`Lifetime.keep`: `--until-gone` waits as long as the
server runs; `repo-memory uninstall` ends it meanwhile), outside its process group; a server that has none at its end
(a harness's hooks start one too) starts one then. If the server's own commit lands, there is nothing left here. A
commit deferred by what ends by itself (a person's `git commit` in its editor, the index lock: underway.passing) is
retried here when that ends, looking every POLL seconds for up to PATIENCE; one that waits for a person's step (a
rebase left open, a detached HEAD, signing that fails) is left pending for the next repo-memory process. Then it
embeds what has no vector (shells/embedder.py).

    python -m repo_memory.shells.finish ROOT PID [START-TIME] [--until-gone] [--if-pending]
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory.git.pending import alive, start_time
from repo_memory.shells import embedder

if TYPE_CHECKING:
    from repo_memory.core.store import Store
    from repo_memory.git.repo import Git

WAIT = 15.0  # seconds to wait for the server to be gone; a server that outlives it commits by itself
LOOK = 0.5  # seconds between looks at a server waited for until it is gone, where no pidfd tells its exit
POLL = 0.5  # seconds between looks at a git command that holds the commit up (a scan of /proc)
PATIENCE = 600.0  # seconds to wait for it; past that, the next repo-memory process commits what is left


def start(root: Path, pid: int, until_gone: bool = False, if_pending: bool = False, harness: int = 0) -> subprocess.Popen[bytes]:
    """Start the finisher for server `pid` of the repository at `root`, detached from its process group; it waits for
    the server WAIT seconds, or `until_gone`. `if_pending`: once it is gone, it does nothing more unless writes it owned are
    still pending (a hook's, for its harness: the hook commits, and starts the embedding, itself when not cut off).
    `harness`: the server's; what its hooks left pending once the server is gone is committed once it is gone too."""
    command = [sys.executable, "-P", "-m", "repo_memory.shells.finish", str(root), str(pid), str(start_time(pid)),
               *(["--until-gone"] if until_gone else []), *(["--if-pending"] if if_pending else []),
               *([f"--harness={harness}:{start_time(harness)}"] if harness > 1 else [])]
    # It outlives the server on purpose: not ended with a `loop run` round (runner/verify.py's token) either.
    env = {k: v for k, v in os.environ.items() if k != "REPO_MEMORY_VERIFY"}
    if if_pending:  # a hook's: Claude Code ends a hook it times out with every process descended from it, whatever
        command = [sys.executable, "-P", "-c", ORPHAN, *command]  # its session, so a process that exits at once starts it
    return subprocess.Popen(command, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, close_fds=True, env=env)


# Starts the command it is given in a session of its own and exits: the command's parent gone, it is no descendant of
# whoever started this (the system adopts it).
ORPHAN = ("import subprocess, sys; subprocess.Popen(sys.argv[1:], start_new_session=True, stdin=subprocess.DEVNULL, "
          "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)")


def main(argv: list[str]) -> int:
    embedder.listen()  # `repo-memory uninstall` stops its embedding, not its commit (nor its wait, but `--until-gone`)
    root, pid, started = Path(argv[0]), int(argv[1]), int(argv[2]) if len(argv) > 2 and argv[2].isdigit() else 0
    if not gone(pid, started, None if "--until-gone" in argv else WAIT):
        return 0
    from repo_memory.config import Config
    from repo_memory.core.store import Store
    from repo_memory.git.pending import Journal
    from repo_memory.git.repo import Git

    config = Config.load(root, lenient=True)  # as the hook that started it read the settings
    if "--if-pending" in argv and not any(e.owner == pid and e.started == started for e in Journal(config.state_dir).read()):
        return 0  # the hook committed what the harness left (or another process's entries: theirs to commit)
    store = Store(config)  # opening a Store commits what a dead process left pending
    try:
        land(store, Git(config.root, config.git_dir))
        # Claude Code closes its servers, then runs SessionEnd, and ends that hook with every process it started after
        # 1.5 s (a plugin's): on a busy machine before the hook started the finisher of what the harness's hooks left
        harness = next((a.split("=", 1)[1].split(":") for a in argv if a.startswith("--harness=")), None)
        if harness and any((e.owner, e.started) == (int(harness[0]), int(harness[1])) for e in Journal(config.state_dir).read()) and \
                gone(int(harness[0]), int(harness[1]), WAIT):
            store.close(commit=False)
            store = Store(config)  # the harness gone, what it left is committed
            land(store, Git(config.root, config.git_dir))
        embedder.run(store)  # then what the server left without a vector: it was killed too soon to embed or save it
    finally:
        store.close(commit=False)
    return 0


def gone(pid: int, started: int, wait: float | None) -> bool:
    """Wait for server `pid` to be gone (True); False once `wait` seconds passed, or, with None (as long as it runs),
    once `repo-memory uninstall` stopped this process: the server commits at its own end, or the next process does."""
    deadline = None if wait is None else time.monotonic() + wait
    try:
        exited: int | None = os.pidfd_open(pid)  # readable once the process exits (Linux 5.3)
    except (AttributeError, OSError):
        exited = None
    try:
        while alive(pid, started):  # the commit policy's own test (a zombie is gone), or opening the Store would leave it pending
            if time.monotonic() > deadline if deadline is not None else embedder.stopped():
                return False
            if exited is None:
                time.sleep(0.02 if deadline is not None else LOOK)
            elif select.select([exited], [], [], LOOK)[0]:
                time.sleep(0.02)  # it exited: /proc says so in a moment
    finally:
        if exited is not None:
            os.close(exited)
    return True


def land(store: Store, git: Git) -> None:
    """Commit what is pending, waiting while what defers the commit ends by itself (underway.passing)."""
    from repo_memory.git import underway

    deadline = time.monotonic() + PATIENCE
    while (result := store.flush()) is not None and result.deferred and not result.sha and underway.passing(result.deferred):
        while underway.still_passing(git):
            if time.monotonic() > deadline:
                return
            time.sleep(POLL)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
