"""repo-memory: durable memory for coding agents, kept as plain files inside a git repository."""

from __future__ import annotations

TYPE_CHECKING = False  # importing typing costs more than `repo-memory serve` may spend before its first answer
if TYPE_CHECKING:
    from typing import Any

    from repo_memory.config import Config
    from repo_memory.errors import RepoMemoryError
    from repo_memory.core.store import Store

import time as _time

STARTED = _time.monotonic()  # about when this process began: before the first import of ours (a hook's budget, hooks.py)
__version__ = "0.1.0"
__all__ = ["Config", "RepoMemoryError", "Store", "__version__"]


def __getattr__(name: str) -> Any:
    """Import the public classes on first use, so hooks and `--version` start fast."""
    if name == "Config":
        from repo_memory.config import Config

        return Config
    if name == "Store":
        from repo_memory.core.store import Store

        return Store
    if name == "RepoMemoryError":
        from repo_memory.errors import RepoMemoryError

        return RepoMemoryError
    raise AttributeError(name)
