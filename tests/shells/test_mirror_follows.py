"""What the harnesses load by themselves follows a pull: Claude Code's copies in .claude/skills and Codex's openai.yaml."""

from __future__ import annotations

import time
from pathlib import Path

from click.testing import CliRunner

from repo_memory.shells import hooks
from repo_memory.shells.cli import cli

from tests.conftest import git, write_skill_file
from tests.shells.stdio_server import StdioServer

SESSION = "11111111-2222-3333-4444-555555555555"


def run(runner: CliRunner, repo: Path, *args: str) -> str:
    result = runner.invoke(cli, ["--root", str(repo), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def mirrored(repo: Path) -> dict[str, str]:
    """{name: status line} of each copy in .claude/skills."""
    base = repo / ".claude/skills"
    return {d.name: next(line.strip() for line in (d / "SKILL.md").read_text(encoding="utf-8").splitlines() if "status:" in line)
            for d in sorted(base.iterdir())} if base.is_dir() else {}


def teammate_changes(repo: Path, runner: CliRunner, tmp_path: Path) -> Path:
    """`repo` mirrors llama and zebra (sync) and pushes them; a teammate deprecates llama by hand, deletes zebra, adds an
    active koala and a draft yak written by a version that made no openai.yaml, and pushes. Returns the teammate's clone."""
    (repo / "app.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    run(runner, repo, "skill", "new", "llama", "-d", "Llama care; use for llamas", "--body", "1. feed hay")
    run(runner, repo, "skill", "new", "zebra", "-d", "Zebra care; use for zebras", "--body", "1. brush")
    assert "mirrored llama" in run(runner, repo, "sync")
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "-u", "origin", "main")
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(origin), str(teammate))
    llama = teammate / ".agents/skills/llama/SKILL.md"
    llama.write_text(llama.read_text(encoding="utf-8").replace("status: active", "status: deprecated"), encoding="utf-8")
    git(teammate, "rm", "-q", "-r", ".agents/skills/zebra")
    write_skill_file(teammate, "koala", "Koala care; use for koalas.", "1. eucalyptus", extra="metadata:\n  status: active\n")
    write_skill_file(teammate, "yak", "Yak care; use for yaks.", "1. shear", extra="metadata:\n  status: draft\n")
    git(teammate, "add", "-A")
    git(teammate, "commit", "-q", "-m", "deprecate llama, drop zebra, add koala and a draft yak")
    git(teammate, "push", "-q")
    return teammate


def test_a_running_servers_refresh_after_a_pull_withdraws_retired_copies_and_adds_newly_served_ones(
        repo: Path, runner: CliRunner, tmp_path: Path):
    teammate_changes(repo, runner, tmp_path)
    server = StdioServer(repo)
    try:
        server.initialize()
        server.call("recall", {"query": "llama"})
        git(repo, "pull", "-q", "--no-rebase")
        deadline = time.monotonic() + 45  # the watcher's re-index, or at worst the supervisor's look every 30 s
        while mirrored(repo) != {"koala": "status: active"} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert mirrored(repo) == {"koala": "status: active"}, server.stderr.decode()
    finally:
        server.close_input()
        server.wait(30)
    assert git(repo, "status", "--porcelain", "--", ".claude") == ""  # the copies stay ignored by git: nothing to commit


def test_the_session_start_hook_after_a_pull_brings_claude_codes_copies_and_codexs_files_in_step(
        repo: Path, runner: CliRunner, tmp_path: Path):
    teammate_changes(repo, runner, tmp_path)
    git(repo, "pull", "-q", "--no-rebase")
    before = git(repo, "rev-parse", "HEAD").strip()
    hooks.handle("session-start", {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"})
    assert mirrored(repo) == {"koala": "status: active"}
    # Codex lists every SKILL.md in .agents/skills: the deprecated one and the draft get the file keeping them out,
    # committed with them as `sync` does; nothing else is committed
    for name in ("llama", "yak"):
        assert "allow_implicit_invocation: false" in (repo / f".agents/skills/{name}/agents/openai.yaml").read_text(encoding="utf-8")
    changed = git(repo, "diff", "--name-only", before, "HEAD").split()
    assert sorted(changed) == [".agents/skills/llama/agents/openai.yaml", ".agents/skills/yak/agents/openai.yaml"]
    assert git(repo, "status", "--porcelain") == ""


def test_doctor_names_copies_no_longer_served_and_served_skills_not_copied(repo: Path, runner: CliRunner, tmp_path: Path):
    teammate_changes(repo, runner, tmp_path)
    git(repo, "pull", "-q", "--no-rebase")
    output = runner.invoke(cli, ["--root", str(repo), "doctor"], catch_exceptions=False).output
    said = {line.split(":")[1].strip(): line for line in output.splitlines() if line.startswith("warning: .claude/skills/")}
    assert "deprecated" in said[".claude/skills/llama"], output  # each says which way: a copy to withdraw, or one to make
    assert "no longer" in said[".claude/skills/zebra"], output
    assert "not copied" in said[".claude/skills/koala"], output
    assert ".claude/skills/yak" not in said, output
    run(runner, repo, "sync")
    after = runner.invoke(cli, ["--root", str(repo), "doctor"], catch_exceptions=False).output
    assert ".claude/skills/" not in after, after
