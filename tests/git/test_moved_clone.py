"""A clone whose folder a person moved or renamed (`mv repo repo2`) is the same clone: its id, its key and what it had
not committed yet stay its own. A copy of it (`cp -r repo copy`) is another clone, with an id of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import git, initialised

LOOP = """---
name: check
description: Check a file exists.
status: active
trigger: {on: manual}
goal: Make a.txt exist.
verify:
  - {level: 4, name: exists, run: "test -f a.txt", expect: {exit: 0}, timeout: 60}
stop: {max_iterations: 2}
success_requires_level: 4
---
Do it.
"""


def cli(where: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=where, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def doctor(where: Path) -> str:
    return subprocess.run([sys.executable, "-m", "repo_memory", "doctor"], cwd=where, capture_output=True, text=True, timeout=120).stdout


def move(source: Path, target: Path) -> None:
    subprocess.run(["mv", str(source), str(target)], check=True)


def uncommitted(tmp_path: Path) -> Path:
    repo = initialised(tmp_path, "repo")
    (repo / ".agents/repo-memory.toml").write_text('commit = "off"\n', encoding="utf-8")
    git(repo, "add", ".agents/repo-memory.toml")
    git(repo, "commit", "-q", "-m", "memory stays uncommitted")
    return repo


def test_a_named_session_goes_on_in_its_own_log_after_the_folder_was_moved(tmp_path: Path):
    repo = uncommitted(tmp_path)
    first = re.search(r"ops\.[0-9a-f]{8}#1", cli(repo, "log", "add", "staging DB is read-only on Fridays", "-s", "ops"))
    assert first, "the first record's id"
    moved = tmp_path / "repo2"
    move(repo, moved)
    assert "written outside" not in doctor(moved)
    second = cli(moved, "log", "add", "second note after the move", "-s", "ops")
    assert first.group().replace("#1", "#2") in second, second
    assert [p.name for p in moved.glob(".agents/experience/*/*.jsonl")] == [first.group().split("#")[0] + ".jsonl"]
    shown = cli(moved, "log", "show", "ops")
    assert "read-only on Fridays" in shown and "second note after the move" in shown
    link = tmp_path / "link"
    link.symlink_to(moved)  # the same folder reached through a symbolic link is the same clone
    assert first.group().replace("#1", "#3") in cli(link, "log", "add", "a third, through a link", "-s", "ops")


def test_an_accepted_loop_stays_accepted_after_the_folder_was_moved(tmp_path: Path):
    import hashlib

    repo = initialised(tmp_path, "repo")
    (repo / ".agents/loops/check.md").write_text(LOOP, encoding="utf-8")
    git(repo, "add", ".agents")
    git(repo, "commit", "-q", "-m", "loop")
    cli(repo, "loop", "accept", "check", "--sha", hashlib.sha256(LOOP.encode()).hexdigest()[:12])
    assert "runnable" in cli(repo, "loop", "list")
    moved = tmp_path / "renamed"
    move(repo, moved)
    listed = cli(moved, "loop", "list")
    assert "runnable" in listed and "not accepted" not in listed, listed


def test_what_a_server_wrote_before_its_folder_moved_is_committed_as_this_clones_after_it(tmp_path: Path):
    from tests.shells.stdio_server import StdioServer

    repo = initialised(tmp_path, "repo")
    server = StdioServer(repo)
    try:
        server.initialize()
        answer = server.call("remember", {"text": "the cache lives in redis"})
        [record] = answer["structuredContent"]["ids"]
        moved = tmp_path / "repo2"
        move(repo, moved)
        server.call("remember", {"text": "refused: the folder is gone"})
    finally:
        server.close_input()
        if server.wait(60) is None:
            server.kill()
    assert "written outside" not in doctor(moved)
    server = StdioServer(moved)  # the next session, at the new place, ends and commits what is pending
    try:
        server.initialize()
        hits = server.call("recall", {"query": "cache redis"})["structuredContent"]["hits"]
        assert [h["id"] for h in hits] == [record] and "written outside" not in str(hits), hits
    finally:
        server.close_input()
        assert server.wait(60) is not None
    assert git(moved, "status", "--porcelain", "--", ".agents") == ""
    assert "the cache lives in redis" in git(moved, "log", "-p", "--", ".agents/experience")


def test_a_copy_is_another_clone_and_a_copy_whose_original_is_gone_is_the_clone_moved(tmp_path: Path):
    repo = uncommitted(tmp_path)
    mine = re.search(r"ops\.([0-9a-f]{8})#1", cli(repo, "log", "add", "before the copy", "-s", "ops"))
    assert mine
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-r", str(repo), str(copy)], check=True)
    theirs = cli(copy, "log", "add", "in the copy", "-s", "ops")
    assert mine.group(1) not in theirs and re.search(r"ops\.[0-9a-f]{8}#1", theirs), theirs  # a log of its own
    assert f"{mine.group()[:-1]}2" in cli(repo, "log", "add", "the original goes on", "-s", "ops")
    elsewhere = tmp_path / "elsewhere"  # a move to another file system: a copy, then the original removed
    subprocess.run(["cp", "-r", str(repo), str(elsewhere)], check=True)
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    assert f"{mine.group()[:-1]}3" in cli(elsewhere, "log", "add", "after the move", "-s", "ops")
    assert "written outside" not in doctor(elsewhere)


def test_a_linked_worktree_moved_and_the_main_checkout_moved_keep_one_clone(tmp_path: Path):
    repo = uncommitted(tmp_path)
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"))
    first = re.search(r"ops\.[0-9a-f]{8}#1", cli(tmp_path / "linked", "log", "add", "in the linked worktree", "-s", "ops"))
    assert first
    git(repo, "worktree", "move", str(tmp_path / "linked"), str(tmp_path / "linked2"))
    assert first.group()[:-1] + "2" in cli(tmp_path / "linked2", "log", "add", "after git worktree move", "-s", "ops")
    move(repo, tmp_path / "main2")  # the common git dir moves: `git worktree repair` links the two again
    git(tmp_path / "main2", "worktree", "repair", str(tmp_path / "linked2"))
    assert first.group()[:-1] + "3" in cli(tmp_path / "linked2", "log", "add", "after the main checkout moved", "-s", "ops")
    assert first.group()[:-1] + "4" in cli(tmp_path / "main2", "log", "add", "in the main checkout", "-s", "ops")
    assert "written outside" not in doctor(tmp_path / "linked2")


def test_a_copy_and_its_original_moved_before_either_ran_never_share_an_id(tmp_path: Path):
    """The copy, used first, finds the original's place empty and takes the id: the original, moved, then finds the
    copy holding it and takes a new one. One of the two ids changes; two clones never write one session's ids."""
    from repo_memory.git.clone import clone_id

    keys = tmp_path / "keys"
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    mine = clone_id(repo / ".git", repo / ".git/repo-memory", keys)
    subprocess.run(["cp", "-r", str(repo), str(tmp_path / "copy")], check=True)
    move(repo, tmp_path / "moved")
    copy = clone_id(tmp_path / "copy/.git", tmp_path / "copy/.git/repo-memory", keys)
    moved = clone_id(tmp_path / "moved/.git", tmp_path / "moved/.git/repo-memory", keys)
    assert copy == mine != moved
    assert clone_id(tmp_path / "moved/.git", tmp_path / "moved/.git/repo-memory", keys) == moved
