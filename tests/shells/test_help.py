"""What `repo-memory --help` and the setup commands' help tell a person, and what they refuse: run as a person runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git


def repo_memory(cwd: Path, home: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), **({"PATH": path} if path else {})}
    env.pop("CODEX_HOME", None)
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_the_start_lines_name_the_setup_that_connects_an_agent(tmp_path: Path):
    """"Start:" listed init, skill new and demo, not `setup claude-code` / `setup codex`, the step that gives an agent
    the tools."""
    shown = repo_memory(tmp_path, tmp_path, "--help").stdout
    start = shown.split("Start:", 1)[1].split("Options:", 1)[0]
    assert "repo-memory setup claude-code" in start and "repo-memory setup codex" in start, shown


def test_root_help_names_repo_memory_root_as_the_second_source(tmp_path: Path):
    shown = " ".join(repo_memory(tmp_path, tmp_path, "--help").stdout.split())
    root = shown.split("--root DIRECTORY", 1)[1].split("--version", 1)[0]
    assert "REPO_MEMORY_ROOT" in root and root.index("REPO_MEMORY_ROOT") < root.index("CLAUDE_PROJECT_DIR"), root


def test_setup_codex_global_without_remove_is_refused_saying_what_to_do_and_writes_nothing(tmp_path: Path):
    """--global (with --remove: the server entry goes too) was accepted silently without --remove, as a plain setup."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    git(repo, "init", "-q", "-b", "main")
    done = repo_memory(repo, home, "setup", "codex", "--global")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--global goes with --remove" in done.stderr and "repo-memory setup codex --remove --global" in done.stderr, done.stderr
    assert not (home / ".codex").exists() and not (repo / ".codex").exists()


def test_setup_alone_lists_the_harnesses_which_are_installed_and_the_command_for_each(tmp_path: Path):
    """`repo-memory setup` printed the group's usage and exited 2: a new user learnt neither which harnesses there are
    nor which of them this machine has."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex").write_text("#!/bin/sh\n", encoding="utf-8")
    (bin_dir / "codex").chmod(0o755)
    done = repo_memory(tmp_path, tmp_path, "setup", path=f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = {name: next(line for line in done.stdout.splitlines() if f"setup {name}" in line) for name in ("claude-code", "codex", "gemini")}
    assert str(bin_dir / "codex") in lines["codex"], done.stdout
    assert "not on your PATH" in lines["claude-code"] and "@anthropic-ai/claude-code" in lines["claude-code"], done.stdout
    assert "not on your PATH" in lines["gemini"] and "@google/gemini-cli" in lines["gemini"], done.stdout
    assert "--help" in done.stdout  # the group's own help is still a flag away
    assert "Usage:" in repo_memory(tmp_path, tmp_path, "setup", "--help").stdout


def test_setup_without_the_harness_cli_says_it_is_not_on_path_and_how_to_install_it(tmp_path: Path):
    """setup codex / gemini wrote their config and ended with `Check it: codex mcp list`, which is `command not found`
    on a machine without Codex."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for name, cli, package in (("codex", "codex", "@openai/codex"), ("gemini", "gemini", "@google/gemini-cli"),
                               ("claude-code", "claude", "@anthropic-ai/claude-code")):
        done = repo_memory(repo, home, "setup", name, path=f"/usr/bin{os.pathsep}/bin")
        assert done.returncode == 0, done.stdout + done.stderr
        check = next(line for line in done.stdout.splitlines() if line.startswith("Check it"))
        assert f"`{cli}` is not on your PATH" in check and f"npm install -g {package}" in check, done.stdout


def test_the_start_lines_and_demos_help_name_gemini_cli_too(tmp_path: Path):
    """`setup gemini` exists, but the root help's "Start:" list and `demo --help` named only Claude Code and Codex."""
    start = repo_memory(tmp_path, tmp_path, "--help").stdout.split("Start:", 1)[1].split("Options:", 1)[0]
    assert "repo-memory setup gemini" in start, start
    assert "Gemini CLI" in " ".join(repo_memory(tmp_path, tmp_path, "demo", "--help").stdout.split())


def test_the_demos_attach_text_names_gemini_and_tells_other_clients_to_name_the_repository(tmp_path: Path):
    """"Any MCP client: run `…/repo-memory serve` over stdio in the repository": editors start servers in folders of
    their own choosing (docs/clients.md), so a server started as told served no repository; and Gemini was missing."""
    out = repo_memory(tmp_path, tmp_path, "demo", "--keep", str(tmp_path / "demo")).stdout
    assert "setup gemini --trust" in out, out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "MCP client" in line)
    other = " ".join(lines[at:at + 2])  # the paragraph
    assert "serve --root" in other and "docs/clients.md" in other, other
