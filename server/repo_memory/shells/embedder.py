"""What embeds the text a short session left without a vector: a detached process at the lowest priority, started as a
server ends (`Lifetime.end`; with writes to commit, the commit finisher does this once it committed: shells/finish.py)
or a session ends (the SessionEnd hook).

Headless runs (`claude -p`, `codex exec`, a loop's rounds) end their server seconds after it starts, often by a signal,
before its job (core/semantic.py) has embedded or saved what the session wrote. This process waits (up to WAIT) for
the embedding lock, so never two embed at once and a live server's job goes on alone; embeds what has no vector,
newest first, saving as it goes, for at most BOUND seconds; and exits without a word. Nobody waits for it: it is in a
session of its own, its output goes nowhere. `repo-memory uninstall` stops it (`stop`): SIGTERM ends the embedding after
the batch under way, the vectors embedded so far are saved, and a finisher still commits what it came to commit.

    python -m repo_memory.shells.embedder ROOT
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory.git.pending import alive

if TYPE_CHECKING:
    from repo_memory.core.store import Store

WAIT = 15.0  # seconds to wait for the lock (a server still closing holds it); a server that keeps it embeds by itself
BOUND = 120.0  # seconds of embedding at most (about 3,500 short texts on two cores); `repo-memory reindex` does the rest
STOP_WAIT = 10.0  # seconds `stop` waits for each to end: a batch of 16 texts at the lowest priority on busy cores
MODULES = ("repo_memory.shells.embedder", "repo_memory.shells.finish")  # the processes that embed after a session (finish.py)
_STOPPED = threading.Event()  # SIGTERM came: this process embeds no more


def start(root: Path) -> None:
    """Start the embedder for the repository at `root`, detached; returns at once."""
    command = [sys.executable, "-m", "repo_memory.shells.embedder", str(root)]
    env = {k: v for k, v in os.environ.items() if k != "REPO_MEMORY_VERIFY"}  # not ended with a `loop run` round
    subprocess.Popen(command, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, close_fds=True, env=env)


def listen() -> None:
    """From now on SIGTERM ends this process's embedding, not the process (a finisher still commits)."""
    signal.signal(signal.SIGTERM, lambda *_: _STOPPED.set())


def stopped() -> bool:
    """Whether SIGTERM came (`listen`): `repo-memory uninstall` stops this process."""
    return _STOPPED.is_set()


def main(argv: list[str]) -> int:
    listen()
    from repo_memory.config import Config
    from repo_memory.core.store import Store

    config = Config.load(Path(argv[0]))
    if config.semantic:
        store = Store(config)
        try:
            run(store)
        finally:
            store.close(commit=False)
    return 0


def run(store: Store) -> None:
    """Embed what `store`'s repository has without a vector, at the lowest priority (shells/finish.py too, once it committed)."""
    def stopped(*_: object) -> None:
        _STOPPED.set()
        store.embedding().interrupt()

    if store.config.semantic and not _STOPPED.is_set():
        signal.signal(signal.SIGTERM, stopped)
        os.nice(19)  # behind everything the agent and the person do: nobody waits for it
        store.embedding().finish(WAIT, BOUND)


def stop(root: Path, dry_run: bool = False) -> list[str]:
    """Stop the processes that embed for the repository at `root` (`repo-memory uninstall`), waiting up to STOP_WAIT
    for each to save its vectors and end; what was done, one line each."""
    said = []
    for pid, module in _running(root):
        what = f"the embedder (process {pid}) saving vectors into the git dir" if module == MODULES[0] else \
            f"the embedding of the finisher (process {pid}) that commits what a session left"
        if dry_run:
            said.append(f"would stop {what} (dry run)")
            continue
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:  # it ended meanwhile, or is another user's
            continue
        deadline = time.monotonic() + STOP_WAIT  # a zombie (its parent yet to reap it) has ended: pending.alive
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        said.append(f"stopped {what}" if not alive(pid) else f"asked {what} to stop; it ends after the batch it embeds")
    return said


def _running(root: Path) -> Iterator[tuple[int, str]]:
    """(process id, module) of each embedder or finisher of the repository at `root`, from their command lines
    (`start`, finish.start): `python -m MODULE ROOT …`."""
    top = os.path.realpath(root)
    for pid, argv in _processes():
        for i, word in enumerate(argv[:-2]):
            if word == "-m" and argv[i + 1] in MODULES and os.path.realpath(argv[i + 2]) == top and pid != os.getpid():
                yield pid, argv[i + 1]
                break


def _processes() -> Iterator[tuple[int, list[str]]]:
    """(process id, command line) of every process this user may see: /proc on Linux, `ps` elsewhere (its words
    split at spaces: a root with a space in it is not found there)."""
    if Path("/proc/self").is_dir():
        for name in os.listdir("/proc"):
            try:
                if name.isdigit():
                    yield int(name), Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace").split("\0")
            except OSError:  # it ended meanwhile
                continue
        return
    listed = subprocess.run(["ps", "-A", "-ww", "-o", "pid=", "-o", "args="], capture_output=True, text=True, check=False)
    for line in listed.stdout.splitlines():
        pid, _, args = line.strip().partition(" ")
        if pid.isdigit():
            yield int(pid), args.split()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
