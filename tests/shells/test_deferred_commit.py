"""A memory commit a person's running git command defers lands when that command ends, also after the session's server
has exited: the finisher (shells/finish.py) waits for what ends by itself, and only for that."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import git
from tests.git.test_running import memory_repo, open_commit
from tests.shells.stdio_server import StdioServer


def said(answer: dict) -> str:
    return json.dumps(answer.get("structuredContent") or answer.get("content"))


def memory_left(repo: Path) -> str:
    return git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".agents")


def test_a_commit_a_persons_git_commit_deferred_lands_when_it_ends_after_the_server_exited(tmp_path: Path):
    repo = memory_repo(tmp_path)
    with open_commit(repo, "commit"):
        server = StdioServer(repo)
        answers, code = server.session(
            ("skill_write", {"name": "cache-warm", "description": "How to warm the cache after a deploy", "body": "1. hit /warm"}),
            ("remember", {"text": "Cache warm takes 2 minutes."}))
        assert code == 0, server.stderr
        assert "lands when it is finished" in said(answers[0]), said(answers[0])
        assert "next repo-memory command" not in said(answers[0]), said(answers[0])  # the finisher waits for it
        time.sleep(1)  # the finisher has found the commit still held up
        assert "cache-warm" in memory_left(repo)
    deadline = time.monotonic() + 20  # the person's commit has ended: the finisher's next look lands the memory commit
    while memory_left(repo) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert memory_left(repo) == "", git(repo, "log", "--format=%s", "-3")
    subjects = git(repo, "log", "--format=%s", "-3")
    assert "feat: a person wrote this" in subjects and subjects.startswith("memory"), subjects


def test_the_finisher_does_not_wait_for_a_rebase_left_open(tmp_path: Path):
    repo = memory_repo(tmp_path)
    (repo / ".git" / "rebase-merge").mkdir()  # a rebase stopped for the person: it does not end by itself
    (repo / ".git" / "rebase-merge" / "head-name").write_text("refs/heads/main\n", encoding="utf-8")
    writer = subprocess.run(["repo-memory", "log", "add", "noted while a rebase is open", "-s", "agent"], cwd=repo,
                            capture_output=True, text=True)
    assert writer.returncode == 0, writer.stderr
    assert memory_left(repo)
    started = time.monotonic()
    finished = subprocess.run([sys.executable, "-m", "repo_memory.shells.finish", str(repo), "999999999"], cwd=repo,
                              capture_output=True, text=True, timeout=60)
    assert finished.returncode == 0, finished.stderr
    assert time.monotonic() - started < 20 and memory_left(repo)  # left for the next process once the rebase is done


def test_while_a_rebase_is_left_open_the_tools_say_what_lands_it_once_the_session_ended(tmp_path: Path):
    repo = memory_repo(tmp_path)
    (repo / ".git" / "rebase-merge").mkdir()
    (repo / ".git" / "rebase-merge" / "head-name").write_text("refs/heads/main\n", encoding="utf-8")
    server = StdioServer(repo)
    answers, code = server.session(
        ("skill_write", {"name": "cache-warm", "description": "How to warm the cache after a deploy", "body": "1. hit /warm"}))
    assert code == 0, server.stderr
    assert "lands when it is finished" in said(answers[0]) and "next repo-memory command" in said(answers[0]), said(answers[0])


def test_a_session_end_a_persons_git_commit_deferred_lands_when_it_ends_after_the_harness_exited(tmp_path: Path):
    repo = memory_repo(tmp_path)
    call = {"session_id": "s1", "cwd": str(repo), "tool_name": "Bash", "tool_use_id": "t1",
            "tool_input": {"command": "make test"}, "tool_response": {"stdout": "ok"}}
    harness = ("import json, subprocess, sys\n"  # a harness process: its hooks write for it, then it exits
               "for event, payload in json.loads(sys.argv[1]):\n"
               "    subprocess.run(['repo-memory', 'hook', event], input=json.dumps(payload), text=True, check=True,\n"
               "                   capture_output=True)\n")
    events = [["post-tool", call], ["session-end", {"session_id": "s1", "cwd": str(repo), "reason": "exit"}]]
    with open_commit(repo, "commit"):
        subprocess.run([sys.executable, "-c", harness, json.dumps(events)], cwd=repo, check=True, timeout=60)
        time.sleep(1)
        assert memory_left(repo)
    deadline = time.monotonic() + 20
    while memory_left(repo) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert memory_left(repo) == "", git(repo, "log", "--format=%s", "-3")
