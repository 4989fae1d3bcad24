"""After a memory commit moves the branch, the user's index entries for what it committed are refreshed, or `git
status` shows them staged for deletion and the person's next `git commit` deletes them. Another git process may hold
.git/index.lock just then (a person's `git commit` in its editor); the refresh is then owed, and must not be forgotten
when the next memory commit (of this process or another) comes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.git import commit
from tests.conftest import git
from tests.git.test_running import committed  # noqa: F401  (a fixture)


def lock_the_index_once_the_branch_moves(repo: Path) -> Path:
    """`arm`: once it exists, the next branch move (a memory commit's) makes a reference-transaction hook take
    .git/index.lock, as a git command a person starts just then would; the test lets it go."""
    arm, taken = repo.parent / "arm", repo.parent / "taken"
    hook = repo / ".git" / "hooks" / "reference-transaction"
    hook.write_text(f"#!/bin/sh\n[ \"$1\" = committed ] || exit 0\nmv '{arm}' '{taken}' 2>/dev/null || exit 0\n"
                    f"touch '{repo / '.git' / 'index.lock'}'\n", encoding="utf-8")
    hook.chmod(0o755)
    return arm


def test_an_index_refresh_the_index_lock_held_up_is_made_by_the_next_memory_commit(
        committed: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: F811
    monkeypatch.setattr(commit, "INDEX_LOCK_WAIT", 0.3)  # how long a refresh waits for the lock: the bound, not the behaviour
    arm = lock_the_index_once_the_branch_moves(committed)
    store = Store(Config.load(committed), session="s-agent")
    try:
        store.write_skill("first-skill", "Written just before a person's git command.", "1. Go.")
        arm.touch()
        first = store.flush("final")
        assert first is not None and first.sha and "index" in first.deferred, first  # committed, its refresh owed
        (committed / ".git" / "index.lock").unlink()  # the person's git command ends
        store.write_skill("second-skill", "Written afterwards.", "1. Go on.")
        second = store.flush("final")
        assert second is not None and second.sha and not second.deferred, second
    finally:
        store.close()
    assert {".agents/skills/first-skill/SKILL.md", ".agents/skills/second-skill/SKILL.md"} <= set(
        git(committed, "ls-tree", "-r", "--name-only", "HEAD").split())
    assert git(committed, "status", "--porcelain", "--", ".agents") == ""


def test_a_dead_processs_owed_refresh_is_made_by_the_next_process_keeping_what_the_index_gained_meanwhile(
        committed: Path):  # noqa: F811
    arm = lock_the_index_once_the_branch_moves(committed)
    arm.touch()
    script = ("import sys; from pathlib import Path; from repo_memory.git import commit; commit.INDEX_LOCK_WAIT = 0.3\n"
              "from repo_memory.config import Config; from repo_memory.core.store import Store\n"
              "store = Store(Config.load(Path(sys.argv[1])), session='s-agent')\n"
              "store.write_skill('orphaned-skill', 'Committed by a process that ended before its refresh.', '1. Go.')\n"
              "result = store.flush('final'); print(bool(result.sha), result.deferred); store.close(commit=False)\n")
    out = subprocess.run([sys.executable, "-c", script, str(committed)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(Path(commit.__file__).parents[2])})
    assert out.stdout.startswith("True ") and "index" in out.stdout, out.stdout + out.stderr  # committed, refresh owed
    (committed / ".git" / "index.lock").unlink()
    (committed / "notes.txt").write_text("a person's file\n", encoding="utf-8")
    git(committed, "add", "notes.txt")  # the index gains an entry before the next process starts
    Store(Config.load(committed), session="s-later").close()
    assert git(committed, "status", "--porcelain", "--", ".agents") == ""
    assert git(committed, "diff", "--cached", "--name-only").split() == ["notes.txt"]
