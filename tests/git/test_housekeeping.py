"""Memory commits keep the repository tidy as git's own commands do: git packs loose objects after its own commits
(`git gc --auto`), but repo-memory commits with plumbing, which never asks; a year of memory commits left 5.5k loose
objects (29 MiB) that only a person's own commits ever packed."""

from __future__ import annotations

from pathlib import Path

from repo_memory.config import Config
from repo_memory.core.store import Store
from tests.conftest import git


def loose(repo: Path) -> int:
    return int(next(line.split()[1] for line in git(repo, "count-objects", "-v").splitlines() if line.startswith("count:")))


def test_memory_commits_let_git_pack_loose_objects_when_it_would_after_a_commit_of_its_own(repo: Path):
    git(repo, "config", "gc.auto", "20")  # git's threshold (6,700 by default), low enough for a test
    git(repo, "config", "gc.autoDetach", "false")  # git then packs before it returns, so the test sees it done
    store = Store(Config.load(repo))
    try:
        for n in range(30):
            store.write_skill(f"skill-{n:02d}", f"Procedure {n}.", f"1. step {n}", actor="human")
            store.flush()
    finally:
        store.close()
    assert loose(repo) < 20, git(repo, "count-objects", "-v")
    assert git(repo, "count-objects", "-v").count("packs: 0") == 0
