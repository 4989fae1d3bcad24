"""A branch made before `repo-memory init` (no .agents/ there) checked out while memory is in use: recall serves
nothing its files no longer hold, and `remember` says what is true of the branch, not that init never ran."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from repo_memory.config import Config
from repo_memory.core.store import Store

from tests.conftest import git
from tests.shells.stdio_server import StdioServer


def predating(tmp_path: Path) -> Path:
    """A repository set up by `repo-memory init` on main, with a branch `old` made the commit before."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "initial")
    git(repo, "branch", "old")
    done = subprocess.run([sys.executable, "-m", "repo_memory", "init"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "memory set up")  # init commits what it wrote; whatever it left
    return repo


def test_recall_right_after_switching_to_a_branch_without_memory_serves_no_hit_whose_file_is_gone(tmp_path: Path):
    """Before the watcher's re-index, recall served the skill and the records of the branch left behind, the person's
    own committed records framed as "written outside repo-memory ... not committed yet"."""
    repo = predating(tmp_path)
    store = Store(Config.load(repo))
    try:
        written = store.remember("the cache lives in redis", session="ops")
        store.write_skill("cache-flush", "How to flush the redis cache", "1. redis-cli FLUSHALL")
        store.flush("all")
        assert {h.id for h in store.recall("cache redis flush").hits} >= {written[0]["id"], "skill:cache-flush"}
        git(repo, "switch", "-q", "old")
        assert not (repo / ".agents").exists()
        assert store.recall("cache redis flush").hits == []  # no re-index between: the files say what is there
        git(repo, "switch", "-q", "main")
        assert {h.id for h in store.recall("cache redis flush").hits} >= {written[0]["id"], "skill:cache-flush"}
    finally:
        store.close(commit=False)


def test_remember_on_a_branch_made_before_init_says_the_branch_predates_it_not_that_init_never_ran(tmp_path: Path):
    """The note told the agent init never ran and to have the person name the repository (--root): init ran in this
    clone; the branch checked out predates it, and the record begins the branch's own memory."""
    repo = predating(tmp_path)
    server = StdioServer(repo)
    try:
        server.initialize()
        first = server.call("remember", {"text": "the cache lives in redis"})["structuredContent"]
        assert not first.get("note"), first
        git(repo, "switch", "-q", "old")
        note = server.call("remember", {"text": "on the old branch"})["structuredContent"]["note"]
    finally:
        server.close_input()
        server.wait(30)
    assert "never ran" not in note and "--root" not in note, note
    assert "this branch predates it" in note and "merge" in note, note
    assert (repo / ".agents").is_dir()
