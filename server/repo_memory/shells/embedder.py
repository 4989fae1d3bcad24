"""What embeds the text a short session left without a vector: a detached process at the lowest priority, started as a
server ends (`Lifetime.end`; with writes to commit, the commit finisher does this once it committed: shells/finish.py)
or a session ends (the SessionEnd hook).

Headless runs (`claude -p`, `codex exec`, a loop's rounds) end their server seconds after it starts, often by a signal,
before its job (core/semantic.py) has embedded or saved what the session wrote. This process waits (up to WAIT) for
the embedding lock, so never two embed at once and a live server's job goes on alone; embeds what has no vector,
newest first, saving as it goes, for at most BOUND seconds; and exits without a word. Nobody waits for it: it is in a
session of its own, its output goes nowhere.

    python -m repo_memory.shells.embedder ROOT
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from repo_memory.core.store import Store

WAIT = 15.0  # seconds to wait for the lock (a server still closing holds it); a server that keeps it embeds by itself
BOUND = 120.0  # seconds of embedding at most (about 3,500 short texts on two cores); `repo-memory reindex` does the rest


def start(root: Path) -> None:
    """Start the embedder for the repository at `root`, detached; returns at once."""
    command = [sys.executable, "-m", "repo_memory.shells.embedder", str(root)]
    env = {k: v for k, v in os.environ.items() if k != "REPO_MEMORY_VERIFY"}  # not ended with a `loop run` round
    subprocess.Popen(command, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, close_fds=True, env=env)


def main(argv: list[str]) -> int:
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
    if store.config.semantic:
        os.nice(19)  # behind everything the agent and the person do: nobody waits for it
        store.embedding().finish(WAIT, BOUND)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
