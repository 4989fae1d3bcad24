"""Worktrees of one repository (how people run agents side by side): each is a checkout with its own index and
commits on its own branch, while what belongs to the clone — its id and key, where each session got to, the loops a
person accepted, the files git reads from .git/info — is one for all of them."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import git, write_skill_file
from tests.runner.test_loops import spec_text
from tests.shells.stdio_server import StdioServer

SESSION = "7a1b2c3d-0000-4e8f-9a1b-worktrees000"
BEFORE = "2026-11-30-b4f0e1"  # a session the server named (a generated id)


def repo_memory(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120)


def linked(repo: Path, name: str, branch: str) -> Path:
    (repo / "app.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    tree = repo.parent / name
    git(repo, "worktree", "add", "-q", "-b", branch, str(tree))
    return tree


def ids_in(repo: Path) -> list[str]:
    return [json.loads(line)["id"] for log in (repo / ".agents/experience").rglob(f"{SESSION}*.jsonl")
            for line in log.read_text(encoding="utf-8").splitlines()]


def test_a_session_written_in_the_main_checkout_and_a_worktree_at_once_never_writes_an_id_twice(repo: Path):
    """Claude Code's worktree-isolated subagent: the server runs in the main checkout while the subagent's hooks write
    the same session in its worktree. Merged, the branches hold one session, every id once, and it verifies."""
    tree = linked(repo, "agent-1", "agent-1")

    def hook_in_tree(n: int) -> None:
        body = json.dumps({"session_id": SESSION, "cwd": str(tree), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                           "tool_use_id": f"toolu_{n}", "tool_input": {"command": f"make {n}"}, "tool_response": "ok"})
        assert repo_memory(tree, "hook", "post-tool", stdin=body).returncode == 0

    server = StdioServer(repo, env={"CLAUDE_CODE_SESSION_ID": SESSION})
    try:
        server.initialize()
        for n in range(3):
            assert not server.call("remember", {"text": f"main checkout note {n}"}).get("isError")
            hook_in_tree(n)
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()
    end = json.dumps({"session_id": SESSION, "cwd": str(tree), "hook_event_name": "SessionEnd", "reason": "other"})
    repo_memory(tree, "hook", "session-end", stdin=end)
    end = json.dumps({"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionEnd", "reason": "other"})
    repo_memory(repo, "hook", "session-end", stdin=end)
    assert git(tree, "status", "--porcelain") == "" and git(repo, "status", "--porcelain") == ""
    git(repo, "merge", "-q", "--no-edit", "agent-1")
    ids = ids_in(repo)
    assert len(ids) >= 6 and len(ids) == len(set(ids)), sorted(ids)
    verify = repo_memory(repo, "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_setup_in_a_worktree_has_git_ignore_this_machines_settings(repo: Path):
    """git reads info/exclude from the common git dir only: a line written in the worktree's own git dir was never
    read, so `git add -A` took the personal settings (this machine's paths) into a commit."""
    tree = linked(repo, "wt", "wt")
    done = repo_memory(tree, "setup", "claude-code")
    assert done.returncode == 0, done.stdout + done.stderr
    status = git(tree, "status", "--porcelain", "--untracked-files=all")
    assert status == "?? .mcp.json\n", status  # the team's file to commit; this machine's settings.local.json is ignored


def test_setup_remove_in_one_checkout_keeps_the_exclude_line_another_checkouts_settings_still_need(repo: Path):
    """Setup in the main checkout and in a worktree both rely on one marked line in the common .git/info/exclude;
    `setup --remove` in the main checkout took it out, and the worktree's settings.local.json (setup's hooks, this
    machine's paths) showed up to git. The line goes with the last checkout's setup."""
    tree = linked(repo, "wt", "wt")
    exclude = repo / ".git/info/exclude"
    before = exclude.read_bytes()
    for checkout in (repo, tree):
        done = repo_memory(checkout, "setup", "claude-code", "--hooks", "command")
        assert done.returncode == 0, done.stdout + done.stderr
    done = repo_memory(repo, "setup", "claude-code", "--remove")
    assert done.returncode == 0 and "kept the line /.claude/settings.local.json" in done.stdout, done.stdout + done.stderr
    assert git(tree, "status", "--porcelain", "--untracked-files=all") == "?? .mcp.json\n", done.stdout
    done = repo_memory(tree, "setup", "claude-code", "--remove")
    assert done.returncode == 0 and "removed the line /.claude/settings.local.json" in done.stdout, done.stdout + done.stderr
    assert exclude.read_bytes() == before, done.stdout


def test_setup_remove_in_one_checkout_keeps_the_exclude_lines_of_skill_copies_another_checkout_still_has(repo: Path):
    """The lines that keep the generated .claude/skills copies out of git are in the common .git/info/exclude too:
    `setup --remove` in the main checkout took them out, and the worktree's copies showed up to git."""
    write_skill_file(repo, "fmt", "Format code.")
    tree = linked(repo, "wt", "wt")
    exclude = repo / ".git/info/exclude"
    before = exclude.read_bytes()
    for checkout in (repo, tree):
        done = repo_memory(checkout, "setup", "claude-code", "--hooks", "command")
        assert done.returncode == 0 and (checkout / ".claude/skills/fmt/SKILL.md").exists(), done.stdout + done.stderr
    done = repo_memory(repo, "setup", "claude-code", "--remove")
    assert done.returncode == 0 and "removed the generated mirror .claude/skills/fmt" in done.stdout, done.stdout + done.stderr
    assert git(tree, "status", "--porcelain", "--untracked-files=all") == "?? .mcp.json\n", done.stdout
    done = repo_memory(tree, "setup", "claude-code", "--remove")
    assert done.returncode == 0 and exclude.read_bytes() == before, done.stdout + done.stderr


def test_a_loop_a_person_accepted_in_the_main_checkout_is_accepted_in_its_worktrees(repo: Path):
    tree = linked(repo, "wt", "wt")
    (repo / ".agents/loops/tests-pass.md").write_text(spec_text("tests-pass"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a loop")
    git(tree, "merge", "-q", "main")
    sha = hashlib.sha256((repo / ".agents/loops/tests-pass.md").read_bytes()).hexdigest()
    accepted = repo_memory(repo, "loop", "accept", "tests-pass", "--sha", sha[:12])
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    listed = repo_memory(tree, "loop", "list")
    assert "tests-pass" in listed.stdout and "not accepted" not in listed.stdout, listed.stdout


def test_a_server_whose_worktree_was_removed_refuses_to_write_and_recreates_nothing(repo: Path):
    """`git worktree remove --force` under a running server: a write had been acknowledged as durable while it went to
    a folder the server made again where the worktree was, and was never committed."""
    tree = linked(repo, "gone", "gone")
    server = StdioServer(tree)
    try:
        server.initialize()
        assert not server.call("remember", {"text": "written while the worktree was there"}).get("isError")
        git(repo, "worktree", "remove", "--force", str(tree))
        answer = server.call("remember", {"text": "written after it was removed"})
        assert answer.get("isError") and "no longer there" in answer["content"][0]["text"], answer
        answer = server.call("recall", {"query": "written"})
        assert answer.get("isError") and "no longer there" in answer["content"][0]["text"], answer
        server.close_input()
        assert server.wait(30) == 0, server.stderr.decode()
    finally:
        if server.wait(0) is None:
            server.kill()
    assert not tree.exists()
    assert not (repo / ".git/worktrees/gone").exists()


def test_memory_an_older_version_wrote_in_a_worktree_stays_the_clones_after_the_upgrade(repo: Path):
    """Versions before 2026-12-05 gave a linked worktree an id and key of its own (in .git/worktrees/<name>/repo-memory).
    After the upgrade its sessions forked to <session>.<clone>, its uncommitted records were called forged and never
    committed, and the loops a person had accepted there were not accepted any more."""
    from repo_memory.config import Config

    tree = linked(repo, "wt", "wt")
    (tree / ".agents/loops/tests-pass.md").write_text(spec_text("tests-pass"), encoding="utf-8")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "a loop")
    sha = hashlib.sha256((tree / ".agents/loops/tests-pass.md").read_bytes()).hexdigest()
    older = f"""
import dataclasses
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine
config = Config.load({str(tree)!r})
old = Store(dataclasses.replace(config, common_dir=config.git_dir), session={BEFORE!r})  # the worktree's own id, as then
old.remember("written by the older version, committed")
old.checkpoint("committed then", [{BEFORE!r} + "#1"])
old.remember("written by the older version, left pending")
Engine(old).accept("tests-pass", {sha[:12]!r})
old.close(commit=False)  # as its killed server left it: the last record pending
"""
    done = subprocess.run([sys.executable, "-c", older], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (Config.load(tree).git_dir / "repo-memory/clone.json").is_file()

    server = StdioServer(tree, env={"REPO_MEMORY_SESSION": BEFORE})
    try:
        server.initialize()
        answer = server.call("remember", {"text": "written after the upgrade"})["structuredContent"]
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()
    assert answer["ids"] == [f"{BEFORE}#4"], answer  # the same session, not BEFORE.<clone>
    assert git(tree, "status", "--porcelain") == ""  # all committed, the older version's pending record too
    verify = repo_memory(tree, "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    listed = repo_memory(tree, "loop", "list")
    assert "tests-pass" in listed.stdout and "not accepted" not in listed.stdout, listed.stdout
