"""One Codex server entry serves every repository: each session reads and writes only its own repository's memory.

The real Codex CLI, its model a scripted Responses API on loopback; HOME in a tmp dir.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.shells.cli import cli
from tests.conftest import git, write_skill_file
from tests.harness.clis import CODEX_NAMESPACE, base_env, codex, codex_home, records
from tests.harness.fake_responses import FakeResponses, function_call, function_outputs

pytestmark = pytest.mark.slow


def make_repo(base: Path, name: str, skill: str) -> Path:
    repo = base / name
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    write_skill_file(repo, skill, f"How we deploy {name}: the {skill} procedure.", "1. Ship it.")
    return repo


def test_two_repositories_one_codex_entry_each_session_uses_its_own_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    alpha, beta = make_repo(tmp_path, "alpha", "deploy-alpha"), make_repo(tmp_path, "beta", "deploy-beta")
    seen: dict[str, str] = {}
    for repo in (alpha, beta):
        turns = [function_call("recall", {"query": "how do we deploy"}, namespace=CODEX_NAMESPACE),
                 function_call("remember", {"text": f"session in {repo.name} was here"}, namespace=CODEX_NAMESPACE), "Done."]
        with FakeResponses(turns) as api:
            codex_home(home, api)
            result = CliRunner().invoke(cli, ["--root", str(alpha), "setup", "codex"], catch_exceptions=False)  # always from alpha
            assert result.exit_code == 0, result.output
            done = codex(repo, home, "How do we deploy?")
        assert done.returncode == 0, done.stderr[-2000:]
        outputs = [o["text"] for body in api.main_requests() for o in function_outputs(body)]
        assert outputs, f"Codex never called the tool: {done.stderr[-1500:]}"
        seen[repo.name] = outputs[0]
    assert "deploy-alpha" in seen["alpha"] and "deploy-beta" not in seen["alpha"]
    assert "deploy-beta" in seen["beta"] and "deploy-alpha" not in seen["beta"]
    for repo, other in ((alpha, beta), (beta, alpha)):
        texts = [r.get("text") for r in records(repo)]
        assert f"session in {repo.name} was here" in texts and f"session in {other.name} was here" not in texts
    config = (home / ".codex/config.toml").read_text(encoding="utf-8")
    assert config.count("[mcp_servers.repo-memory]") == 1 and "REPO_MEMORY_ROOT" not in config
    assert json.loads((alpha / ".codex/hooks.json").read_text(encoding="utf-8"))["hooks"]


def test_uninstall_without_global_says_the_codex_entry_still_serves_this_clone_and_how_to_remove_it(tmp_path: Path):
    """uninstall ended with "repo-memory is detached from this clone" while ~/.codex/config.toml still served it: the
    next `codex exec` here had the tools and wrote .agents/ all the same."""
    home, repo = tmp_path / "home", make_repo(tmp_path, "alpha", "deploy-alpha")
    env = base_env(home)

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, env=env, text=True, capture_output=True,
                              timeout=120, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    run("setup", "codex")
    last = run("uninstall").strip().splitlines()[-1]
    assert "[mcp_servers.repo-memory]" in (home / ".codex/config.toml").read_text(encoding="utf-8")  # it still serves here
    assert not last.startswith("repo-memory is detached"), last
    assert all(s in last for s in ("[mcp_servers.repo-memory]", str(home / ".codex/config.toml"), "uninstall --global",
                                   "setup codex --remove --global")), last
    last = run("uninstall", "--global").strip().splitlines()[-1]
    assert last.startswith("repo-memory is detached from this clone;"), last
