"""Fixtures the shell tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.formats import experience


@pytest.fixture
def logged(repo: Path) -> Path:
    """A repository with one experience log, as a session leaves it."""
    store = Store(Config.load(repo))
    session = store.remember("deploys need a green main", session="s1")[0]["session"]
    store.close()
    return next((repo / experience.EXPERIENCE_DIR).rglob(f"{session}.jsonl"))
