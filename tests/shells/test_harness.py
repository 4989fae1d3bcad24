"""Attaching to Claude Code and Codex: setup commands, hook handlers with harness-shaped payloads, and the real CLIs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from repo_memory.shells import hooks, settings_text
from repo_memory.shells.cli import cli
from repo_memory.config import Config
from repo_memory.core.store import Store

from tests.conftest import git, kept, records_of, write_skill_file

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools" / "node_modules" / ".bin"


def cli_tool(name: str) -> str:
    found = TOOLS / name
    if found.exists():
        return str(found)
    if shutil.which(name):
        return str(shutil.which(name))
    pytest.skip(f"the {name} CLI is not installed (./install.sh --test installs it into .tools/ with npm)")


def run(runner: CliRunner, repo: Path, *args: str) -> str:
    result = runner.invoke(cli, ["--root", str(repo), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_setup_claude_code_registers_merges_hooks_and_undoes(repo: Path, runner: CliRunner):
    settings = repo / ".claude/settings.local.json"
    settings.parent.mkdir()
    theirs = {"permissions": {"allow": ["Bash(ls)"]}, "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "./lint.sh"}]}]}}
    settings.write_text(json.dumps(theirs), encoding="utf-8")
    write_skill_file(repo, "mirrored", "Goes to .claude/skills.")
    assert "dry run" in run(runner, repo, "setup", "claude-code", "--dry-run") and not (repo / ".mcp.json").exists()
    out = run(runner, repo, "setup", "claude-code")
    assert "registered" in out and "hooks installed" in out and "1 written" in out
    server = json.loads((repo / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["repo-memory"]
    assert server == {"type": "stdio", "command": "repo-memory", "args": ["serve"]}  # by name: the file works on a teammate's machine
    merged = json.loads(settings.read_text(encoding="utf-8"))
    assert merged["permissions"] == {"allow": ["Bash(ls)", "mcp__repo-memory", "mcp__plugin_repo-memory_repo-memory"]}
    assert merged["enabledMcpjsonServers"] == ["repo-memory"]
    commands = [h["command"] for g in merged["hooks"]["PostToolUse"] for h in g["hooks"]]
    assert "./lint.sh" in commands and any(c.endswith("hook post-tool") for c in commands)
    assert set(merged["hooks"]) == {"SessionStart", "PreToolUse", "PostToolUse", "PreCompact", "Stop", "SessionEnd"}
    assert (repo / ".claude/skills/mirrored/SKILL.md").is_file()
    assert "already" in run(runner, repo, "setup", "claude-code")
    run(runner, repo, "setup", "claude-code", "--remove")
    assert json.loads(settings.read_text(encoding="utf-8")) == theirs
    assert not (repo / ".mcp.json").exists() and not (repo / ".claude/skills/mirrored").exists()  # nothing of ours is left
    run(runner, repo, "setup", "claude-code", "--shared")
    shared = json.loads((repo / ".claude/settings.json").read_text(encoding="utf-8"))
    assert {h["command"] for g in shared["hooks"]["Stop"] for h in g["hooks"]} == {"repo-memory hook stop"}


def fake_claude(folder: Path, version: str) -> None:
    """A `claude` on PATH that answers --version as Claude Code does (setup asks it which hooks it has)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "claude"
    script.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n", encoding="utf-8")
    script.chmod(0o755)


@pytest.mark.parametrize("version,kind", [("2.1.332", "mcp"), ("2.1.117", "command"), (None, "command")])
def test_setup_claude_code_picks_hooks_by_the_installed_version_and_switching_leaves_one_of_each(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str | None, kind: str):
    bin_dir = tmp_path / "bin"
    if version:
        fake_claude(bin_dir, version)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin")
    out = run(runner, repo, "setup", "claude-code")
    assert f"hooks: {kind} (" in out
    hooks = json.loads((repo / ".claude/settings.local.json").read_text(encoding="utf-8"))["hooks"]

    def ours(event: str) -> list[dict]:
        return [h for g in hooks[event] for h in g["hooks"]]

    if kind == "mcp":  # the running server answers the recording and stop hooks; it is not connected yet at start nor still at end
        for event, tool in (("PostToolUse", "hook_post_tool"), ("Stop", "hook_stop")):
            [hook] = ours(event)
            assert hook["type"] == "mcp_tool" and hook["server"] == "repo-memory" and hook["tool"] == tool
            assert hook["input"]["session_id"] == "${session_id}"
        assert ours("PostToolUse")[0]["input"]["tool_input"] == "${tool_input}"
    # the guard never waits on the server: Claude Code skips an mcp_tool hook whose server is not connected
    for event in ("SessionStart", "PreToolUse", "PreCompact", "SessionEnd", *(() if kind == "mcp" else ("PostToolUse", "Stop"))):
        [hook] = ours(event)
        assert hook["type"] == "command" and "repo-memory" in hook["command"], (event, hook)
    other = "command" if kind == "mcp" else "mcp"
    run(runner, repo, "setup", "claude-code", "--hooks", other)  # switching replaces ours, never adds a second
    hooks = json.loads((repo / ".claude/settings.local.json").read_text(encoding="utf-8"))["hooks"]
    assert all(len([h for g in groups for h in g["hooks"]]) == 1 for groups in hooks.values())
    out = run(runner, repo, "setup", "claude-code", "--shared")
    assert "hooks: command (--shared" in out  # teammates' versions are unknown: commands work in every one


def test_setup_claude_code_keeps_hooks_and_rules_in_one_file_and_git_ignores_the_personal_one(repo: Path, runner: CliRunner,
                                                                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    local, shared = repo / ".claude/settings.local.json", repo / ".claude/settings.json"
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")

    def ours(path: Path) -> tuple[int, list[str]]:
        data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        hooks_ = [h for groups in data.get("hooks", {}).values() for g in groups for h in g["hooks"] if "repo-memory" in h["command"]]
        return len(hooks_), [r for r in data.get("permissions", {}).get("allow", []) if "repo-memory" in r]

    out = run(runner, repo, "setup", "claude-code")
    assert ours(local) == (6, ["mcp__repo-memory", "mcp__plugin_repo-memory_repo-memory"]) and ours(shared) == (0, [])
    assert ".git/info/exclude: git now ignores /.claude/settings.local.json" in out.replace(str(repo) + "/", "")
    assert ".claude/settings.local.json" not in git(repo, "status", "--porcelain", "--untracked-files=all")
    run(runner, repo, "setup", "claude-code", "--shared")  # moving to the team's file moves them
    assert ours(shared) == (6, ["mcp__repo-memory", "mcp__plugin_repo-memory_repo-memory"]) and ours(local) == (0, [])
    assert json.loads(local.read_text(encoding="utf-8"))["enabledMcpjsonServers"] == ["repo-memory"]  # the approval is personal
    out = run(runner, repo, "setup", "claude-code")  # and back
    assert ours(local)[0] == 6 and ours(shared) == (0, []) and "git now ignores" not in out
    assert (repo / ".git/info/exclude").read_text(encoding="utf-8").count("settings.local.json") == 1


def test_setup_claude_code_says_how_to_trust_the_folder_and_trust_stores_what_the_dialog_stores(repo: Path, runner: CliRunner,
                                                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    (home / ".claude.json").write_text(json.dumps({"userID": "u", "projects": {"/elsewhere": {"allowedTools": []}}}), encoding="utf-8")
    out = run(runner, repo, "setup", "claude-code")
    assert "Pending approval" in out and "setup claude-code --trust" in out and "Yes, I trust this folder" in out
    out = run(runner, repo, "setup", "claude-code", "--trust")
    state = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    assert state["projects"][str(repo)] == {"hasTrustDialogAccepted": True} and state["userID"] == "u"
    assert state["projects"]["/elsewhere"] == {"allowedTools": []}
    assert "✔ Connected" in out and "Pending approval" not in run(runner, repo, "setup", "claude-code")


def test_setup_codex_edits_only_its_own_table(repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    config = tmp_path / "home/.codex/config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n', encoding="utf-8")
    run(runner, repo, "setup", "codex")
    text = config.read_text(encoding="utf-8")
    assert text.startswith('model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n')
    assert "[mcp_servers.repo-memory]" in text and "REPO_MEMORY_ROOT" not in text and "startup_timeout_sec = 20" in text
    assert "already" in run(runner, repo, "setup", "codex")
    with config.open("a", encoding="utf-8") as out:  # a table of the person's after ours (say, Codex's trust of a project)
        out.write('\n[projects."/elsewhere"]\ntrust_level = "trusted"\n')
    before = config.read_text(encoding="utf-8")
    assert "already with [mcp_servers.repo-memory]" in run(runner, repo, "setup", "codex")  # said "changed": it moved ours last
    assert config.read_text(encoding="utf-8") == before
    hooks_file = json.loads((repo / ".codex/hooks.json").read_text(encoding="utf-8"))
    assert set(hooks_file["hooks"]) == {"SessionStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}
    assert {h["command"] for g in hooks_file["hooks"]["Stop"] for h in g["hooks"]} == {"repo-memory hook stop"}
    removed = run(runner, repo, "setup", "codex", "--remove")
    assert "kept [mcp_servers.repo-memory]" in removed and "[mcp_servers.repo-memory]" in config.read_text(encoding="utf-8")
    assert not (repo / ".codex/hooks.json").exists()
    run(runner, repo, "setup", "codex", "--remove", "--global")
    assert config.read_text(encoding="utf-8") == ('model = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n'
                                                  '\n[projects."/elsewhere"]\ntrust_level = "trusted"\n')


def test_setup_codex_says_how_to_trust_its_hooks_and_trust_stores_what_codex_stores(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    config = tmp_path / "home/.codex/config.toml"
    assert "Trust all and continue" in run(runner, repo, "setup", "codex") and "--trust" in run(runner, repo, "setup", "codex")
    assert "hooks.state" not in config.read_text(encoding="utf-8")
    hooks_file = json.loads((repo / ".codex/hooks.json").read_text(encoding="utf-8"))
    assert [h["timeout"] for g in hooks_file["hooks"]["SessionEnd"] for h in g["hooks"]] == [3]  # Codex's cap, no warning
    run(runner, repo, "setup", "codex", "--trust")
    run(runner, repo, "setup", "codex", "--trust")  # idempotent
    text = config.read_text(encoding="utf-8")
    assert text.count(f'[projects."{repo}"]') == 1 and text.count("trusted_hash") == 5
    # the hashes the interactive "Trust all and continue" of Codex 0.171.0 wrote for these four hooks (the stop's, for
    # its timeout of 1800 s, is the one Codex runs the hook by in tests/shells/test_slow_checks.py)
    for key, digest in (("post_tool_use", "2e505c73be55b7a9"), ("session_start", "544c8111fef1a3a4"), ("session_end", "1364a542cf390b70"),
                        ("stop", "d3a93619a17d47bb")):
        assert f'[hooks.state."{repo}/.codex/hooks.json:{key}:0:0"]\ntrusted_hash = "sha256:{digest}' in text, key
    run(runner, repo, "setup", "codex", "--remove")
    assert "trusted_hash" not in config.read_text(encoding="utf-8")


def test_setup_codex_run_again_keeps_the_trust_codex_stored_for_every_hook_still_as_trusted(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                                           monkeypatch: pytest.MonkeyPatch):
    """A re-run without --trust dropped the trust of every hook in .codex/hooks.json, the person's own among them,
    while it printed "already hooks installed"; Codex then skipped those hooks without saying so."""
    from repo_memory.shells.codex import codex_hook_hashes

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    config = tmp_path / "home/.codex/config.toml"
    hooks_path = repo / ".codex/hooks.json"
    hooks_path.parent.mkdir(parents=True)
    own = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/audit.sh", "timeout": 5}]}]}}
    hooks_path.write_text(json.dumps(own), encoding="utf-8")
    run(runner, repo, "setup", "codex", "--trust")
    key, digest = next((k, d) for k, d in codex_hook_hashes(hooks_path, json.loads(hooks_path.read_text(encoding="utf-8")), everyone=True).items()
                       if k.endswith("post_tool_use:0:0"))
    with config.open("a", encoding="utf-8") as out:  # the person trusts their own hook in Codex's /hooks
        out.write(f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n')
    before = config.read_text(encoding="utf-8")
    run(runner, repo, "setup", "codex")
    assert config.read_text(encoding="utf-8").count("trusted_hash") == before.count("trusted_hash") == 6
    run(runner, repo, "setup", "codex", "--remove")
    after = config.read_text(encoding="utf-8")
    assert after.count("trusted_hash") == 1 and f'trusted_hash = "{digest}"' in after  # only the person's own hook stays trusted


def _trust_of(hooks_path: Path, config: Path) -> dict[str, bool]:
    """Each Stop hook's command in .codex/hooks.json, and whether config.toml trusts it there as Codex checks it."""
    from repo_memory.shells.codex import codex_hook_hashes

    settings = json.loads(hooks_path.read_text(encoding="utf-8"))
    state = tomllib.loads(config.read_text(encoding="utf-8")).get("hooks", {}).get("state", {})
    commands = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    return {commands[int(key.split(":")[-2])]: (state.get(key) or {}).get("trusted_hash") == digest
            for key, digest in codex_hook_hashes(hooks_path, settings, everyone=True).items() if ":stop:" in key}


@pytest.mark.parametrize("then", ["setup codex", "setup codex --remove"])
def test_a_codex_hook_the_person_added_after_setup_and_trusted_keeps_its_trust(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch, then: str):
    """A Stop hook of the person's own, added after `setup codex --trust` and trusted: a re-run swapped it with
    repo-memory's and both lost their trust; --remove moved it from stop:1:0 to stop:0:0 and dropped its trust (a
    trust was never moved onto a key that held one, even one being dropped)."""
    from repo_memory.shells.codex import codex_hook_hashes

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    config = tmp_path / "home/.codex/config.toml"
    hooks_path = repo / ".codex/hooks.json"
    run(runner, repo, "setup", "codex", "--trust")
    settings = json.loads(hooks_path.read_text(encoding="utf-8"))
    settings["hooks"]["Stop"].append({"matcher": "", "hooks": [{"type": "command", "command": "echo mine", "timeout": 5}]})
    hooks_path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    with config.open("a", encoding="utf-8") as out:  # the person trusts their hook in Codex's /hooks
        for key, digest in codex_hook_hashes(hooks_path, settings, everyone=True).items():
            out.write(f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n' if ":stop:1:" in key else "")
    assert _trust_of(hooks_path, config) == {"repo-memory hook stop": True, "echo mine": True}
    run(runner, repo, *then.split())
    expected = {"echo mine": True} if "--remove" in then else {"repo-memory hook stop": True, "echo mine": True}
    assert _trust_of(hooks_path, config) == expected


CLAUDE_SESSION = "8f1c2b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f"


def test_session_start_briefs_with_skills_and_the_previous_checkpoint(store: Store, repo: Path):
    write_skill_file(repo, "release-checklist", "How we cut a release.")
    store.refresh()
    earlier = Store(Config.load(repo), session="earlier-session")
    earlier.remember("found the flaky test")
    earlier.checkpoint("The flaky test was a clock dependency; fixed with freezegun.", [f"{earlier.session}#1"])
    earlier.close()
    payload = {"session_id": CLAUDE_SESSION, "transcript_path": "/tmp/t.jsonl", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    out = hooks.handle("session-start", payload)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart" and len(context.encode()) < 2048
    assert "skill:release-checklist" in context and f"{earlier.session}#2" in context and "clock dependency" in context


def test_post_tool_records_calls_with_an_excerpt_and_the_full_output_redacted_in_a_blob(repo: Path):
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
    big = "x" * 10_000 + f"\nexport GITHUB_TOKEN={token}\n"
    for tool, response in (("Bash", {"stdout": big, "stderr": "", "interrupted": False}), ("Read", {"file": {"content": "y" * 10_000}})):
        hooks.handle("post-tool", {"session_id": CLAUDE_SESSION, "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": tool,
                                   "tool_input": {"command": "ls -la"} if tool == "Bash" else {"file_path": "a.py"}, "tool_response": response})
    store = Store(Config.load(repo))
    records = records_of(store, CLAUDE_SESSION)
    bash, read = records
    assert bash["kind"] == "tool" and bash["text"].startswith("Bash") and len(bash["data"]["output_text"]) == 2000
    blob = (repo / ".agents/experience/blobs" / bash["data"]["output_blob"]).read_text(encoding="utf-8")
    store.close()
    assert "output_blob" in read["data"] and bash["data"]["redacted"] == ["github-token"]
    log = next((repo / ".agents/experience").glob(f"*/{CLAUDE_SESSION}.jsonl"))
    assert "[REDACTED:github-token]" in blob and token not in blob and token not in log.read_text()
    assert bash["source"]["tool"] == "hook:PostToolUse"


def test_compaction_records_a_summary_covering_records_since_the_last_checkpoint(repo: Path):
    store = Store(Config.load(repo), session=CLAUDE_SESSION)
    for text in ("a", "b", "c"):
        store.remember(text)
    store.close()
    hooks.handle("pre-compact", {"session_id": CLAUDE_SESSION, "cwd": str(repo), "hook_event_name": "PreCompact", "trigger": "auto",
                                 "custom_instructions": ""})
    hooks.handle("post-compact", {"session_id": CLAUDE_SESSION, "cwd": str(repo), "hook_event_name": "PostCompact",
                                  "summary": "nothing new since"})  # nothing uncovered: no second summary
    store = Store(Config.load(repo))
    records = records_of(store, CLAUDE_SESSION)
    store.close()
    summaries = [r for r in records if r["kind"] == "summary"]
    assert len(summaries) == 1 and summaries[0]["covers"] == [f"{CLAUDE_SESSION}#1-3"]


def claude_env(home: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(home), "PATH": f"{TOOLS}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


@pytest.fixture
def attached(repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    # --trust stores what answering the folder-trust dialog stores (~/.claude.json projects[<repo>].hasTrustDialogAccepted):
    # without it `claude mcp list` says "Pending approval" and setup prints that one step.
    with monkeypatch.context() as patched:
        patched.setenv("HOME", str(home))
        patched.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
        run(runner, repo, "setup", "claude-code", "--trust")
    return repo, home


@pytest.mark.slow
def test_claude_mcp_list_shows_the_server_connected(attached: tuple[Path, Path]):
    repo, home = attached
    claude = cli_tool("claude")
    out = subprocess.run([claude, "mcp", "list"], cwd=repo, env=claude_env(home), capture_output=True, text=True, timeout=180).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("repo-memory"))
    assert "Connected" in line, out


@pytest.mark.slow
def test_a_claude_session_that_records_nothing_leaves_no_file_and_no_commit(attached: tuple[Path, Path]):
    """`claude -p` without a login (and `claude mcp list`) fire SessionStart and SessionEnd; neither floods the branch."""
    repo, home = attached
    git(repo, "commit", "-q", "--allow-empty", "-m", "before")
    claude = cli_tool("claude")
    for args in (["-p", "hi"], ["mcp", "list"]):
        proc = subprocess.run([claude, *args], cwd=repo, env=claude_env(home), capture_output=True, text=True, timeout=180)
        assert proc.returncode == 0 or args[0] == "-p", proc.stderr
    assert git(repo, "log", "--format=%s").splitlines() == ["before"]
    assert list((repo / ".agents/experience").glob("*/*.jsonl")) == []


@pytest.mark.slow
def test_the_plugin_installs_as_the_readme_says_and_brings_only_the_plugin(repo: Path, tmp_path: Path):
    """`claude plugin marketplace add <checkout>` then `claude plugin install repo-memory@repo-memory`: Claude Code copies
    the plugin's source folder into its cache, so the source is plugin/, not the checkout (with .venv and .tools, 1.8 GB)."""
    claude, home = cli_tool("claude"), tmp_path / "home"
    home.mkdir()
    for args in (["plugin", "marketplace", "add", str(ROOT)], ["plugin", "install", "repo-memory@repo-memory"]):
        proc = subprocess.run([claude, *args], cwd=repo, env=claude_env(home), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0 and "Successfully" in proc.stdout, proc.stdout + proc.stderr
    cached = [p for p in (home / ".claude/plugins").rglob("*") if p.is_file() and "marketplaces" not in p.parts]
    assert sum(p.stat().st_size for p in cached) < 1_000_000, sorted(str(p) for p in cached)[:20]
    assert any(p.name == "hooks.json" for p in cached) and any(p.name == "SKILL.md" for p in cached)
    listed = subprocess.run([claude, "plugin", "list"], cwd=repo, env=claude_env(home), capture_output=True, text=True, timeout=120).stdout
    assert "repo-memory@repo-memory" in listed and "enabled" in listed, listed


@pytest.mark.slow
def test_the_codex_plugin_installs_as_the_readme_says(repo: Path, tmp_path: Path):
    codex, home = cli_tool("codex"), tmp_path / "home"
    home.mkdir()
    for args in (["plugin", "marketplace", "add", str(ROOT)], ["plugin", "add", "repo-memory@repo-memory"]):
        proc = subprocess.run([codex, *args], cwd=repo, env=claude_env(home), capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    cached = [p for p in (home / ".codex/plugins").rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in cached) < 1_000_000 and any(p.name == ".mcp.json" for p in cached), cached[:20]


@pytest.mark.slow
def test_the_repository_is_a_valid_claude_code_plugin(tmp_path: Path):
    claude = cli_tool("claude")
    proc = subprocess.run([claude, "plugin", "validate", str(ROOT)], env=claude_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Validation passed" in proc.stdout, proc.stdout + proc.stderr
    proc = subprocess.run([claude, "plugin", "validate", str(ROOT / "plugin/.claude-plugin/plugin.json")], env=claude_env(tmp_path),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Validation passed" in proc.stdout, proc.stdout + proc.stderr
    proc = subprocess.run([claude, "plugin", "validate", str(ROOT / "plugin")], env=claude_env(tmp_path), capture_output=True, text=True,
                          timeout=120)
    assert "ICON_MISSING" not in proc.stdout and "warning" not in proc.stdout.lower(), proc.stdout  # the plugin directory's checks too


@pytest.mark.slow
def test_codex_sees_the_server_after_setup(repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    codex = cli_tool("codex")
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    run(runner, repo, "setup", "codex")
    env = claude_env(home)
    listed = subprocess.run([codex, "mcp", "list"], cwd=repo, env=env, capture_output=True, text=True, timeout=120).stdout
    assert any(ln.startswith("repo-memory") and "enabled" in ln for ln in listed.splitlines()), listed
    prompt = subprocess.run([codex, "debug", "prompt-input", "hi"], cwd=repo, env=env, capture_output=True, text=True, timeout=180)
    assert prompt.returncode == 0, prompt.stderr
    json.loads(prompt.stdout)  # the model-visible input renders with our server configured and started


@pytest.mark.slow
def test_inspector_lists_every_tool_and_calls_recall_remember_read(repo: Path):
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed, so the MCP Inspector CLI cannot run (install Node.js 20+)")
    serve = [sys.executable, "-m", "repo_memory", "serve"]

    def inspector(*args: str) -> dict:
        proc = subprocess.run(["npx", "-y", "@modelcontextprotocol/inspector", "--cli", *serve, *args], cwd=repo, capture_output=True,
                              text=True, timeout=180, env={**os.environ, "REPO_MEMORY_SESSION": "inspected"})
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    tools = {t["name"] for t in inspector("--method", "tools/list")["tools"]}
    assert tools == {"recall", "read", "remember", "checkpoint", "skill_write", "loop_start", "loop_step", "loop_status", "history", "feedback"}
    remembered = inspector("--method", "tools/call", "--tool-name", "remember", "--tool-arg", "text=the inspector was here")
    assert remembered["structuredContent"]["ids"] == [f"{kept(repo, 'inspected')}#1"]
    hits = inspector("--method", "tools/call", "--tool-name", "recall", "--tool-arg", "query=inspector")["structuredContent"]["hits"]
    assert hits[0]["id"] == f"{kept(repo, 'inspected')}#1"
    read = inspector("--method", "tools/call", "--tool-name", "read", "--tool-arg", f"ref={kept(repo, 'inspected')}#1")["structuredContent"]
    assert read["records"][0]["verified"] is True


def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str = "") -> Path:
    """A HOME of its own for Codex and repo-memory, with ~/.codex/config.toml holding `text`; its config path."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    config = tmp_path / "home/.codex/config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(text, encoding="utf-8")
    return config


def test_setup_codex_run_again_merges_into_its_table_keeping_the_persons_keys_and_its_place(repo: Path, runner: CliRunner,
                                                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A re-run replaced the whole table: it dropped a key the person had added (tool_timeout_sec, an env var), said
    only "changed" and moved the table last; after --trust even a re-run that changed nothing said "changed"."""
    config = codex_home(tmp_path, monkeypatch, 'model = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    run(runner, repo, "setup", "codex", "--trust")
    with config.open("a", encoding="utf-8") as out:
        out.write('\n[profiles.fast]\nmodel = "gpt-5-mini"\n')
    before = config.read_text(encoding="utf-8")
    assert "already with [mcp_servers.repo-memory]" in run(runner, repo, "setup", "codex", "--trust")
    assert config.read_text(encoding="utf-8") == before
    tuned = (before.replace("startup_timeout_sec = 20\n", "startup_timeout_sec = 20\ntool_timeout_sec = 120  # slow disk\n")
             .replace('REPO_MEMORY_HARNESS = "codex"\n', 'REPO_MEMORY_HARNESS = "codex"\nREPO_MEMORY_SEMANTIC = "false"\n'))
    assert tuned != before
    config.write_text(tuned, encoding="utf-8")
    assert "already with [mcp_servers.repo-memory]" in run(runner, repo, "setup", "codex")
    assert config.read_text(encoding="utf-8") == tuned
    config.write_text(tuned.replace('args = ["serve"]', 'args = ["serve", "--old"]'), encoding="utf-8")
    out = run(runner, repo, "setup", "codex")
    assert "changed [mcp_servers.repo-memory]" in out
    assert config.read_text(encoding="utf-8") == tuned  # only its own key set back, in place; the person's keys and comment kept
    shown = subprocess.run([cli_tool("codex"), "mcp", "get", "repo-memory", "--json"], cwd=repo, env=claude_env(tmp_path / "home"),
                           capture_output=True, text=True, timeout=120)
    server = json.loads(shown.stdout)
    assert server["tool_timeout_sec"] == 120 and server["transport"]["env"]["REPO_MEMORY_SEMANTIC"] == "false", shown.stdout


def test_uninstall_keeps_the_comments_the_person_wrote_beside_repo_memorys_codex_tables(repo: Path, runner: CliRunner,
                                                                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Removing a table took every line up to the next header: the person's comment over their next table went too."""
    config = codex_home(tmp_path, monkeypatch, 'model = "gpt-5"   # my model\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    run(runner, repo, "setup", "codex", "--trust")
    with config.open("a", encoding="utf-8") as out:
        out.write('\n# my github server\n[mcp_servers.github]\ncommand = "gh-mcp"\n')
    run(runner, repo, "uninstall")  # the hooks' trust goes; the server entry, which serves every repository, stays
    text = config.read_text(encoding="utf-8")
    assert "hooks.state" not in text and "# my github server\n[mcp_servers.github]" in text, text
    config.write_text(text.replace("[mcp_servers.github]", "# (by hand)\n\n[mcp_servers.github]"), encoding="utf-8")
    run(runner, repo, "uninstall", "--global")  # now the server entry goes, the table before those comments
    text = config.read_text(encoding="utf-8")
    assert "repo-memory" not in text and text.startswith('model = "gpt-5"   # my model\n\n[mcp_servers.docs]\n'), text
    assert "# my github server\n# (by hand)\n\n[mcp_servers.github]" in text, text


def test_setup_codex_trust_turns_a_project_marked_untrusted_trusted_and_says_so(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch):
    """With --trust it said it trusted the project and left `trust_level = "untrusted"`: Codex then ran no hook."""
    config = codex_home(tmp_path, monkeypatch, f'[projects.{json.dumps(str(repo))}]\ntrust_level = "untrusted"\n')
    out = run(runner, repo, "setup", "codex", "--trust")
    assert "was untrusted" in out, out
    assert tomllib.loads(config.read_text(encoding="utf-8"))["projects"][str(repo)]["trust_level"] == "trusted"


def test_uninstall_takes_back_the_project_trust_setup_codex_trust_gave_and_leaves_the_persons_own(repo: Path, runner: CliRunner,
                                                                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """uninstall left `trust_level = "trusted"` that --trust had added, without a word: Codex went on trusting the
    repository's whole .codex/ layer, hooks a later commit adds among them."""
    config = codex_home(tmp_path, monkeypatch)
    run(runner, repo, "setup", "codex", "--trust")
    dry = run(runner, repo, "uninstall", "--dry-run")
    assert "removed the trust of this project that `setup codex --trust` added" in dry and "dry run" in dry
    assert "trusted" in config.read_text(encoding="utf-8")
    run(runner, repo, "uninstall")
    assert str(repo) not in config.read_text(encoding="utf-8")
    config.write_text(f'[projects.{json.dumps(str(repo))}]\ntrust_level = "untrusted"  # not this one\n', encoding="utf-8")
    run(runner, repo, "setup", "codex", "--trust")
    assert "set this project's trust back to \"untrusted\"" in run(runner, repo, "uninstall")
    assert tomllib.loads(config.read_text(encoding="utf-8"))["projects"][str(repo)] == {"trust_level": "untrusted"}
    assert "repo-memory uninstall" not in config.read_text(encoding="utf-8")
    config.write_text(f'[projects.{json.dumps(str(repo))}]\ntrust_level = "trusted"\n', encoding="utf-8")  # the person's own
    run(runner, repo, "setup", "codex", "--trust")
    run(runner, repo, "uninstall")
    assert tomllib.loads(config.read_text(encoding="utf-8"))["projects"][str(repo)] == {"trust_level": "trusted"}


def test_setup_says_to_commit_the_team_files_it_wrote_until_they_are_committed(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    """.codex/hooks.json (and .mcp.json) are team files, yet setup never said to commit them: they stayed untracked
    and a teammate's clone got no hooks."""
    codex_home(tmp_path, monkeypatch)
    out = run(runner, repo, "setup", "codex")
    assert "git add .codex/hooks.json" in out, out
    assert "git add .mcp.json" in run(runner, repo, "setup", "claude-code")
    git(repo, "add", ".codex/hooks.json", ".mcp.json")
    git(repo, "commit", "-q", "-m", "attach repo-memory")
    assert "git add" not in run(runner, repo, "setup", "codex") + run(runner, repo, "setup", "claude-code")


def test_setup_codex_writes_the_config_codex_reads_under_codex_home(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch):
    """With CODEX_HOME set, Codex reads $CODEX_HOME/config.toml; setup wrote ~/.codex/config.toml, which Codex never
    read: no server, no trusted hooks, while doctor (reading $CODEX_HOME) said the hooks were not trusted."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    run(runner, repo, "setup", "codex", "--trust")
    assert not (tmp_path / "home/.codex/config.toml").exists()
    text = (tmp_path / "codex-home/config.toml").read_text(encoding="utf-8")
    assert "[mcp_servers.repo-memory]" in text and "trusted_hash" in text, text
    listed = subprocess.run([cli_tool("codex"), "mcp", "list"], cwd=repo, env={**claude_env(tmp_path / "home"), "CODEX_HOME": str(tmp_path / "codex-home")},
                            capture_output=True, text=True, timeout=120)
    assert "repo-memory" in listed.stdout, listed.stdout + listed.stderr
    assert "Codex" not in run(runner, repo, "doctor")
    run(runner, repo, "uninstall", "--global")
    assert not (tmp_path / "codex-home").exists()  # setup made it, and nothing else was in it


def files_of(repo: Path) -> dict[str, bytes]:
    """What setup and uninstall may change: the working tree, and this clone's exclude, config and git hooks."""
    kept = [p for p in repo.rglob("*") if p.is_file() and (p.relative_to(repo).parts[0] != ".git"
                                                          or p.relative_to(repo).parts[1] in ("info", "config", "hooks"))]
    return {p.relative_to(repo).as_posix(): p.read_bytes() for p in kept}


def test_uninstall_says_it_takes_back_the_folder_trust_and_the_exclude_line_claude_code_setup_added(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """uninstall left the folder trust `setup claude-code --trust` stored and the exclude line for the personal settings
    file (tests/shells/test_uninstall.py checks the files); it says what it took back."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    run(runner, repo, "setup", "claude-code", "--trust")
    out = run(runner, repo, "uninstall")
    assert "took back the trust of" in out and "removed the line /.claude/settings.local.json that setup added" in out, out
    assert "left as" not in out, out


@pytest.mark.parametrize("name", [".claude/settings.local.json", ".claude/settings.json", ".mcp.json"])
@pytest.mark.parametrize("text,where", [('{\n  "permissions": {"allow": ["Bash(ls)"],}\n}\n', "line 2 column 41"),
                                        ('["my", "notes"]\n', "not a JSON object")])
def test_setup_and_uninstall_stop_before_writing_anything_at_a_settings_file_they_cannot_edit_and_name_it(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str, where: str):
    """A trailing comma gave a JSONDecodeError traceback naming no file, after .mcp.json was written; a JSON array
    was replaced without a word."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    run(runner, repo, "setup", "claude-code", "--shared")  # something of ours in every file, for uninstall to take out
    run(runner, repo, "setup", "claude-code")
    (repo / name).write_text(text, encoding="utf-8")
    before = files_of(repo)
    for args in (["setup", "claude-code"], ["setup", "claude-code", "--shared"], ["uninstall", "--team"]):
        result = runner.invoke(cli, ["--root", str(repo), *args])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (args, result.output, result.exception)
        assert f"{repo / name}" in result.output and where in result.output and "move it away" in result.output, result.output
        assert files_of(repo) == before, args


def test_setup_and_uninstall_team_write_a_team_file_only_when_its_content_changes_keeping_its_indentation_and_text(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A committed settings.json holding nothing of ours was rewritten on every setup (re-indented, é as \\u00e9) with
    'hooks and tool permission removed', which was false; .mcp.json lost its indentation; uninstall --team left both dirty."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    (repo / ".claude").mkdir()
    team = {".mcp.json": {"mcpServers": {"other": {"command": "x", "args": ["--café"]}}},
            ".claude/settings.json": {"permissions": {"allow": ["Bash(make lint)", "Bash(echo café)"]}, "model": "opus"}}
    for name, data in team.items():
        (repo / name).write_text(json.dumps(data, indent=4, ensure_ascii=False) + "\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "team config")
    out = run(runner, repo, "setup", "claude-code")
    assert "settings.json:" not in out.replace("settings.local.json:", ""), out
    assert git(repo, "status", "--porcelain", "--", ".claude/settings.json") == ""
    mcp = (repo / ".mcp.json").read_text(encoding="utf-8")
    assert "--café" in mcp and '\n    "mcpServers": {\n        "other"' in mcp, mcp  # the person's indentation, their text
    assert list(json.loads(mcp)["mcpServers"]) == ["other", "repo-memory"]
    assert "already" in run(runner, repo, "setup", "claude-code")
    run(runner, repo, "setup", "claude-code", "--shared")
    shared = (repo / ".claude/settings.json").read_text(encoding="utf-8")
    assert "echo café" in shared and '\n    "permissions"' in shared and list(json.loads(shared))[:2] == ["permissions", "model"]
    out = run(runner, repo, "setup", "claude-code")  # moving them back says so, and takes only ours out
    assert "hooks and tool permission removed (they are in settings.local.json now)" in out
    run(runner, repo, "uninstall", "--team")
    assert git(repo, "status", "--porcelain", "--", ".mcp.json", ".claude/settings.json") == ""  # a round trip


def test_setup_with_the_claude_code_plugin_enabled_adds_no_second_server_or_hooks_and_doctor_warns_of_both(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """With the plugin installed (`claude plugin install` enables it in ~/.claude/settings.json), setup installed its
    own hooks as well: both sets ran, every tool call was recorded twice, and doctor said 'All good'."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    local = repo / ".claude/settings.local.json"
    run(runner, repo, "setup", "claude-code")  # set up first, then the plugin installed
    (home / ".claude").mkdir(parents=True)
    (home / ".claude/settings.json").write_text(json.dumps({"enabledPlugins": {"repo-memory@repo-memory": True}}), encoding="utf-8")
    doctor = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "every hook runs twice" in doctor and "settings.local.json" in doctor, doctor
    out = run(runner, repo, "setup", "claude-code")
    assert "plugin repo-memory@repo-memory" in out and "claude plugin disable repo-memory@repo-memory" in out, out
    assert "Pending approval" not in out, out  # no .mcp.json to approve; Claude Code 2.1.337 starts it in a trusted folder
    assert "(plugin:repo-memory:repo-memory: ... - Not checked until you trust the folder, then ✔ Connected)" in out, out
    settings = json.loads(local.read_text(encoding="utf-8"))
    assert "hooks" not in settings  # the plugin brings them
    assert "mcp__plugin_repo-memory_repo-memory" in settings["permissions"]["allow"]  # its tools are still allowed
    assert "runs twice" not in runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    (repo / ".mcp.json").unlink()
    out = run(runner, repo, "setup", "claude-code", "--shared")
    assert "approved" not in out and "no hooks or tool permission (the plugin" in out, out
    assert not (repo / ".mcp.json").exists() and "hooks" not in json.loads((repo / ".claude/settings.json").read_text(encoding="utf-8"))
    local.write_text(json.dumps({"enabledPlugins": {"repo-memory@repo-memory": False}}), encoding="utf-8")  # disabled here
    run(runner, repo, "setup", "claude-code")
    assert "hooks" in json.loads(local.read_text(encoding="utf-8")) and (repo / ".mcp.json").exists()


def test_setup_then_uninstall_team_gives_back_team_files_written_with_objects_on_one_line_as_git_holds_them(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Setup laid a changed file out afresh (one key a line), so after uninstall --team a file the team wrote with
    objects on one line showed a diff of layout alone, and setup's own entries were laid out unlike the rest."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    (repo / ".claude").mkdir()
    (repo / ".mcp.json").write_text('{\n    "mcpServers": {"other": {"command": "x", "args": ["--y"]}}\n}\n', encoding="utf-8")
    (repo / ".claude/settings.json").write_text('{\n  "permissions": {"allow": ["Bash(make lint)", "Bash(echo café)"]},\n'
                                                '  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./done.sh"}]}]}\n}',
                                                encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "team config")
    run(runner, repo, "setup", "claude-code", "--shared")
    mcp = (repo / ".mcp.json").read_text(encoding="utf-8")
    assert mcp.startswith('{\n    "mcpServers": {"other": {"command": "x", "args": ["--y"]}, "repo-memory": {'), mcp
    assert '"Bash(make lint)", "Bash(echo café)", "mcp__repo-memory"' in (repo / ".claude/settings.json").read_text(encoding="utf-8")
    run(runner, repo, "setup", "claude-code")
    run(runner, repo, "uninstall", "--team")
    assert git(repo, "status", "--porcelain", "--", ".mcp.json", ".claude/settings.json") == ""


@pytest.mark.parametrize("undo", ["setup --remove", "uninstall"])
def test_setup_then_undo_gives_back_team_files_written_all_on_one_line_as_git_holds_them(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, undo: str):
    """Setup lays a file written on one line out afresh (its hooks on that line would be unreadable), and neither
    undo laid it back: a team's committed one-line .mcp.json, .claude/settings.json and .codex/hooks.json came back
    re-laid out (` M`, +29/-3)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    (repo / ".claude").mkdir()
    (repo / ".codex").mkdir()
    (repo / ".mcp.json").write_text('{"mcpServers": {"db": {"command": "db-mcp", "args": []}}}\n', encoding="utf-8")
    (repo / ".claude/settings.json").write_text('{"permissions": {"allow": ["Bash(npm test)"]}}\n', encoding="utf-8")
    (repo / ".codex/hooks.json").write_text('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "make lint"}]}]}}\n',
                                            encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "team config")
    run(runner, repo, "setup", "claude-code", "--hooks", "command", "--shared")
    run(runner, repo, "setup", "codex")
    assert "\n  " in (repo / ".mcp.json").read_text(encoding="utf-8")  # laid out afresh, one key a line
    if undo == "uninstall":
        out = run(runner, repo, "uninstall")
    else:
        out = run(runner, repo, "setup", "claude-code", "--remove") + run(runner, repo, "setup", "codex", "--remove")
    assert git(repo, "status", "--porcelain", "--", ".mcp.json", ".claude", ".codex") == "", out


VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=8)


@given(doc=st.dictionaries(st.text(max_size=4), VALUES, min_size=1, max_size=4), ours=VALUES, indent=st.sampled_from([2, 4, "\t"]),
       inline=st.booleans())
def test_a_settings_file_given_an_entry_and_having_it_taken_out_again_is_byte_for_byte_as_written(doc: dict, ours: object,
                                                                                                   indent: int | str, inline: bool):
    unit = " " * indent if isinstance(indent, int) else indent
    text = ("{\n" + ",\n".join(f"{unit}{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in doc.items()) + "\n}\n"
            if inline else json.dumps(doc, indent=indent, ensure_ascii=False) + "\n")
    nested = next((k for k, v in doc.items() if isinstance(v, dict) and v), None)
    added = {**doc, "repo-memory": ours} if nested is None else {**doc, nested: {**doc[nested], "repo-memory": ours}}
    with_ours = settings_text.edited(text, added, indent)
    assert with_ours is not None and json.loads(with_ours) == added
    assert settings_text.edited(with_ours, doc, indent) == text


def test_setup_codex_and_uninstall_stop_before_writing_anything_at_a_codex_hooks_file_that_is_not_json(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """uninstall had already taken repo-memory out of the Claude Code files when .codex/hooks.json gave a traceback."""
    codex_home(tmp_path, monkeypatch)
    run(runner, repo, "setup", "claude-code")
    run(runner, repo, "setup", "codex")
    (repo / ".codex/hooks.json").write_text('{"hooks": {},}\n', encoding="utf-8")
    before = files_of(repo)
    for args in (["setup", "codex"], ["uninstall", "--team"]):
        result = runner.invoke(cli, ["--root", str(repo), *args])
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (args, result.output, result.exception)
        assert f"{repo / '.codex/hooks.json'} is not valid JSON (line 1 column 14" in result.output, result.output
        assert files_of(repo) == before, args


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_setup_in_a_repository_init_never_ran_in_says_to_run_init(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 harness: str):
    """Setup in a fresh repository said nothing of init: an agent's logs were then committed with no union-merge rule,
    and only doctor said "repo-memory init has not run here"."""
    codex_home(tmp_path, monkeypatch)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")
    out = run(runner, fresh, "setup", harness)
    assert "`repo-memory init` has not run here" in out and "union-merge" in out, out
    run(runner, fresh, "init")
    assert "init" not in run(runner, fresh, "setup", harness)


def test_setup_claude_code_without_repo_memory_on_path_says_what_to_do_before_it_connects(repo: Path, runner: CliRunner,
                                                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """After its note that `repo-memory` is not on PATH, setup still said `claude mcp list` would show it Connected;
    Claude Code said "Failed to connect" (ENOENT). And its `ln -s` failed without ~/.local/bin."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # git, and no repo-memory
    out = run(runner, repo, "setup", "claude-code", "--trust")
    assert "not on your PATH" in out and "`mkdir -p ~/.local/bin && ln -s " in out, out
    [check] = [line for line in out.splitlines() if line.startswith("Check it")]
    assert "Connected" not in check and "PATH" in check and "Failed to connect" in check, out


def test_setup_codex_says_how_to_check_it_as_setup_claude_code_does(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    """`setup claude-code` ends with how to check it (`claude mcp list`); `setup codex` said nothing of `codex mcp list`."""
    codex_home(tmp_path, monkeypatch)
    out = run(runner, repo, "setup", "codex")
    [check] = [line for line in out.splitlines() if line.startswith("Check it")]
    assert "codex mcp list" in check and "enabled" in check and "Connected" not in check, out
    listed = subprocess.run([cli_tool("codex"), "mcp", "list"], cwd=repo, env=claude_env(tmp_path / "home"), capture_output=True,
                            text=True, timeout=120).stdout
    assert any(ln.startswith("repo-memory") and "enabled" in ln.split() for ln in listed.splitlines()), listed  # as it says
    assert "Check it" not in run(runner, repo, "setup", "codex", "--remove")


def _as_done(lines: str) -> list[str]:
    """A dry run's lines as the real run says them ("would remove" is "removed", no dry-run note)."""
    return sorted(line.replace(" (dry run, not written)", "").replace("would remove", "removed").replace("would take", "took")
                  for line in lines.splitlines())


def test_setup_claude_code_remove_dry_run_says_everything_the_real_run_then_does(repo: Path, runner: CliRunner):
    """`setup claude-code --remove --dry-run` said nothing of the .claude/skills mirror the real run then removed
    ("removed the generated mirror .claude/skills/fmt"); `uninstall --dry-run` did."""
    write_skill_file(repo, "fmt", "Format code.")
    run(runner, repo, "setup", "claude-code", "--hooks", "command")
    assert (repo / ".claude/skills/fmt/SKILL.md").exists()
    dry = run(runner, repo, "setup", "claude-code", "--remove", "--dry-run")
    assert (repo / ".claude/skills/fmt/SKILL.md").exists() and (repo / ".mcp.json").exists(), dry
    done = run(runner, repo, "setup", "claude-code", "--remove")
    assert "removed the generated mirror .claude/skills/fmt" in done, done
    assert _as_done(dry) == _as_done(done), (dry, done)


@pytest.mark.parametrize("harness,name", [("codex", ".codex/hooks.json"), ("claude-code", ".claude/settings.local.json")])
def test_setup_run_again_leaves_the_hooks_where_they_are_when_the_person_added_one_after_setup(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, harness: str, name: str):
    """A re-run took repo-memory's Stop hook out and put it back last, after a hook the person had added since: the
    file changed on every run (a team's committed .codex/hooks.json showed modified), and Codex's trust, kept by place,
    had to follow both hooks."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    path = repo / name
    run(runner, repo, "setup", harness, *(("--hooks", "command") if harness == "claude-code" else ()))
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["hooks"]["Stop"].append({"matcher": "", "hooks": [{"type": "command", "command": "echo mine", "timeout": 5}]})
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    before = path.read_bytes()
    out = run(runner, repo, "setup", harness, *(("--hooks", "command") if harness == "claude-code" else ()))
    assert path.read_bytes() == before, out
    assert f"{path}: already up to date" in out, out
