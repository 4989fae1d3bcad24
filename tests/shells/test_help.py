"""What `repo-memory --help` and the setup commands' help tell a person, and what they refuse: run as a person runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git


def repo_memory(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
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
