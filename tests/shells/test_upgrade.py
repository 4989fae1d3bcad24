"""Upgrading from an older repo-memory: what an older install or setup left behind, as doctor and setup name it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.shells.cli import cli

from tests.conftest import git, write_skill_file

GONE = "/home/alice/old-repo-memory/.venv/bin/repo-memory"  # an install deleted since an older setup wrote its path


def run(runner: CliRunner, repo: Path, *args: str, code: int = 0) -> str:
    result = runner.invoke(cli, ["--root", str(repo), *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def doctor(runner: CliRunner, repo: Path) -> tuple[int, list[dict[str, str]]]:
    result = runner.invoke(cli, ["--root", str(repo), "doctor", "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.output)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "home"


def test_doctor_names_every_harness_entry_whose_program_is_gone_and_setup_again_mends_them(runner: CliRunner, repo: Path,
                                                                                          home: Path, tmp_path: Path):
    """repo-memory reinstalled elsewhere: the hooks in settings.local.json and the server entries still named the old
    install's path, so every hook exited 127 and Codex listed a server that cannot start, while doctor said "All good"."""
    run(runner, repo, "setup", "claude-code", "--hooks", "command")
    run(runner, repo, "setup", "codex", "--trust")
    local, config = repo / ".claude/settings.local.json", home / ".codex/config.toml"
    here = json.loads(local.read_text(encoding="utf-8"))["hooks"]["SessionStart"][0]["hooks"][0]["command"].split()[0]
    local.write_text(local.read_text(encoding="utf-8").replace(here, GONE), encoding="utf-8")
    config.write_text(config.read_text(encoding="utf-8").replace(f'command = "{here}"', f'command = "{GONE}"'), encoding="utf-8")
    plain = tmp_path / "not-a-program"  # there, but not executable
    plain.write_text("#!/bin/sh\n", encoding="utf-8")
    mcp = json.loads((repo / ".mcp.json").read_text(encoding="utf-8"))
    mcp["mcpServers"]["repo-memory"]["command"] = str(plain)  # an older setup wrote a path here too
    (repo / ".mcp.json").write_text(json.dumps(mcp), encoding="utf-8")
    (repo / ".codex").mkdir(exist_ok=True)
    (repo / ".codex/config.toml").write_text(f'[mcp_servers.repo-memory]\ncommand = "{GONE}"\nargs = ["serve"]\n', encoding="utf-8")
    code, found = doctor(runner, repo)
    dead = {f["path"]: f for f in found if GONE in f["message"] or str(plain) in f["message"]}
    assert code == 1 and set(dead) == {".claude/settings.local.json", ".mcp.json", "~/.codex/config.toml", ".codex/config.toml"}, found
    assert all(f["level"] == "error" for f in dead.values()), dead
    assert "SessionStart" in dead[".claude/settings.local.json"]["message"], dead
    assert "setup claude-code" in dead[".claude/settings.local.json"]["fix"] and "setup claude-code" in dead[".mcp.json"]["fix"]
    assert "not executable" in dead[".mcp.json"]["message"] and "does not exist" in dead["~/.codex/config.toml"]["message"], dead
    assert "setup codex" in dead["~/.codex/config.toml"]["fix"] and "[mcp_servers.repo-memory]" in dead[".codex/config.toml"]["fix"]
    run(runner, repo, "setup", "claude-code", "--hooks", "command")  # the fixes doctor gave
    run(runner, repo, "setup", "codex", "--trust")
    (repo / ".codex/config.toml").unlink()
    code, found = doctor(runner, repo)
    assert not [f for f in found if GONE in f["message"] or str(plain) in f["message"]], found


def test_doctor_says_when_a_hook_calls_a_bare_name_not_on_path(runner: CliRunner, repo: Path, home: Path):
    """A hook calling `uvx repo-memory …` (a person's) is checked as the harness runs it: its first word on PATH."""
    run(runner, repo, "setup", "claude-code", "--hooks", "command")
    local = repo / ".claude/settings.local.json"
    data = json.loads(local.read_text(encoding="utf-8"))
    data["hooks"]["Stop"][0]["hooks"][0]["command"] = "no-such-launcher-xyz repo-memory hook stop"
    local.write_text(json.dumps(data), encoding="utf-8")
    code, found = doctor(runner, repo)
    named = [f for f in found if "no-such-launcher-xyz" in f["message"]]
    assert named and "PATH" in named[0]["message"] and "Stop" in named[0]["message"], found


def test_doctor_and_setup_name_generated_skill_copies_git_tracks_and_the_command_that_untracks_them(runner: CliRunner, repo: Path,
                                                                                                    home: Path):
    """An older version left .claude/skills unignored and a `git add -A` committed the copies: every sync after a skill
    change left them modified, and neither doctor nor setup said why (ignore rules cannot help a tracked file)."""
    write_skill_file(repo, "release", "How we release; use when asked to release", "1. tag")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skill")
    run(runner, repo, "sync")
    git(repo, "add", "-f", ".claude/skills")  # what the older version's unignored folder let `git add -A` do
    git(repo, "commit", "-q", "-m", "everything")
    untrack = "git rm -r --cached .claude/skills/release"
    code, found = doctor(runner, repo)
    said = [f for f in found if f["path"].startswith(".claude/skills") and "tracks" in f["message"]]
    assert said and "release" in said[0]["message"] and untrack in said[0]["fix"] and "commit" in said[0]["fix"], found
    out = run(runner, repo, "setup", "claude-code", "--hooks", "command")
    assert untrack in out, out
    write_skill_file(repo, "release", "How we release; use when asked to release", "1. tag\n2. push tags")
    git(repo, "commit", "-q", "-am", "edit release skill")
    out = run(runner, repo, "sync")
    assert untrack in out, out  # the sync that leaves them modified says why
    assert git(repo, "ls-files", ".claude/skills").split() != [], "nothing untracks them but the person"
    git(repo, "rm", "-q", "-r", "--cached", ".claude/skills/release")
    git(repo, "commit", "-q", "-m", "untrack the generated copies")
    assert not [f for f in doctor(runner, repo)[1] if "tracks" in f["message"]]
    assert git(repo, "status", "--porcelain", "--", ".claude") == "", "the exclude line keeps the copies out of git now"


def older_codex_setup(runner: CliRunner, repo: Path, home: Path) -> None:
    """What `setup codex --trust` of a version before the PreToolUse hook left: four hooks, each trusted."""
    run(runner, repo, "setup", "codex", "--trust")
    hooks_path, config = repo / ".codex/hooks.json", home / ".codex/config.toml"
    data = json.loads(hooks_path.read_text(encoding="utf-8"))
    del data["hooks"]["PreToolUse"]
    hooks_path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    text = config.read_text(encoding="utf-8")
    config.write_text(re.sub(r'\[hooks\.state\."[^"]*:pre_tool_use:0:0"\]\ntrusted_hash = "[^"]*"\n\n?', "", text), encoding="utf-8")
    assert "pre_tool_use" not in config.read_text(encoding="utf-8")


def test_after_an_upgrade_doctors_advice_for_a_trusted_codex_setup_brings_every_hook_to_run_in_one_step(
        runner: CliRunner, repo: Path, home: Path):
    """doctor said `setup codex`, which added the PreToolUse hook the earlier --trust does not cover; a second step,
    `setup codex --trust`, was needed, and meanwhile setup and doctor said "tool calls are not recorded" though only
    the new guard hook was skipped (PostToolUse, which records them, was still trusted)."""
    older_codex_setup(runner, repo, home)
    older = [f for f in doctor(runner, repo)[1] if f["path"] == ".codex/hooks.json"]
    assert older and "`repo-memory setup codex --trust`" in older[0]["fix"], older
    run(runner, repo, "setup", "codex", "--trust")
    assert not [f for f in doctor(runner, repo)[1] if f["path"] == ".codex/hooks.json"]


def test_setup_codex_without_trust_names_exactly_the_hooks_codex_skips_and_what_each_loses(runner: CliRunner, repo: Path,
                                                                                          home: Path):
    older_codex_setup(runner, repo, home)
    out = run(runner, repo, "setup", "codex")
    assert "PreToolUse" in out and "an agent's own file tools can write the logs unchecked" in out, out
    assert "tool calls are not recorded" not in out and "setup codex --trust" in out, out
    skipped = [f for f in doctor(runner, repo)[1] if f["path"] == ".codex/hooks.json"]
    assert len(skipped) == 1 and "PreToolUse" in skipped[0]["message"], skipped
    assert "file tools can write the logs unchecked" in skipped[0]["message"], skipped
    assert "tool calls are not recorded" not in skipped[0]["message"], skipped
    run(runner, repo, "setup", "codex", "--trust")
    trusted = run(runner, repo, "setup", "codex")  # every hook trusted already: no word of hooks Codex skips
    assert "Hooks need review" not in trusted and "skips" not in trusted, trusted


def test_doctor_in_private_mode_says_the_attribute_rules_are_this_clones_own_not_to_commit(runner: CliRunner, repo: Path):
    """With commit = "private" init writes its rules to .git/info/attributes; an older init's lacked today's, and
    doctor's fix said "commit .gitattributes", a file private mode never writes."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    (repo / ".agents/repo-memory.toml").write_text('commit = "private"\n', encoding="utf-8")
    (repo / ".gitattributes").unlink()
    run(runner, repo, "init")
    attributes = repo / ".git/info/attributes"
    attributes.write_text("".join(line for line in attributes.read_text(encoding="utf-8").splitlines(keepends=True)
                                  if "eol=lf" not in line), encoding="utf-8")
    rules = [f for f in doctor(runner, repo)[1] if f["path"] == ".git/info/attributes"]
    assert rules and ".gitattributes" not in rules[0]["fix"] and "repo-memory init" in rules[0]["fix"], rules


def test_doctor_names_a_claude_code_local_scope_entry_whose_program_is_gone(runner: CliRunner, repo: Path, home: Path):
    """`claude mcp add --scope local` keeps an entry in ~/.claude.json under the project's path, and it wins over the
    project's .mcp.json: an older install's path there left Claude Code listing a server that cannot start, while doctor
    checked only the user scope and said nothing. The entry is written by the real CLI, as a person's would be."""
    from tests.harness.clis import base_env, cli_tool
    from tests.harness.clis import run as run_cli

    home.mkdir(parents=True, exist_ok=True)
    run(runner, repo, "setup", "claude-code")
    added = run_cli([cli_tool("claude"), "mcp", "add", "--scope", "local", "repo-memory", GONE, "serve"], repo, base_env(home))
    assert added.returncode == 0, added.stderr
    code, found = doctor(runner, repo)
    said = [f for f in found if GONE in f["message"]]
    assert code == 1 and said and said[0]["level"] == "error" and "local" in said[0]["path"], found
    assert "claude mcp remove --scope local repo-memory" in said[0]["fix"], said
    removed = run_cli([cli_tool("claude"), "mcp", "remove", "--scope", "local", "repo-memory"], repo, base_env(home))
    assert removed.returncode == 0, removed.stderr
    assert not [f for f in doctor(runner, repo)[1] if GONE in f["message"]]
