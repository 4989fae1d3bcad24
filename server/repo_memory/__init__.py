"""repo-memory: durable memory for coding agents, kept as plain files inside a git repository."""

from repo_memory.config import Config
from repo_memory.errors import RepoMemoryError
from repo_memory.store import Store

__version__ = "0.1.0"
__all__ = ["Config", "RepoMemoryError", "Store", "__version__"]
