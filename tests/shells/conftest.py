"""Fixtures the shell tests share."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.formats import experience

from tests.conftest import git


@pytest.fixture
def logged(repo: Path) -> Path:
    """A repository with one experience log, as a session leaves it."""
    store = Store(Config.load(repo))
    session = store.remember("deploys need a green main", session="s1")[0]["session"]
    store.close()
    return next((repo / experience.EXPERIENCE_DIR).rglob(f"{session}.jsonl"))


def cloned(repo: Path, tmp_path: Path) -> Path:
    """`repo`'s main pushed to a bare origin and cloned from there as a teammate's clone, which this returns."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "-u", "origin", "main")
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(origin), str(teammate))
    return teammate


def agent_writes(repo: Path, body: str) -> None:
    """An agent writes skill:deploy through the Store, which commits it as a draft (committer: repo-memory). Like an
    agent updating a skill, it reads the one there first: a write over a skill its session never read is refused."""
    store = Store(Config.load(repo))
    try:
        if (repo / ".agents" / "skills" / "deploy" / "SKILL.md").exists():
            store.read("skill:deploy")
        assert store.write_skill("deploy", "How we deploy; use when deploying", body, actor="agent").status == "draft"
    finally:
        store.close()
