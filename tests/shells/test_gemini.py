"""Inside the real Gemini CLI, attached by hand: `gemini mcp add --trust repo-memory repo-memory serve` in the
repository, the folder trusted, and no hooks: what an agent gets there is the tools alone (`repo-memory setup gemini`
writes the same entry and adds the hooks: tests/shells/test_gemini_hooks.py).

The model is a scripted Gemini API on loopback (tests/harness/fake_gemini.py); HOME is a tmp dir; the CLI's default
model; nothing but loopback on the network.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import git, write_skill_file
from tests.harness.clis import base_env, cli_tool, gemini, gemini_home, records, run
from tests.harness.fake_gemini import FakeGemini, function_responses, offered

pytestmark = pytest.mark.slow
TOOL = "mcp_repo-memory_"  # Gemini CLI names an MCP server's tools mcp_<server>_<tool>


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A repository with a committed skill, repo-memory added to Gemini CLI as docs/clients.md says, the folder trusted."""
    home = tmp_path / "home"
    write_skill_file(repo, "release-checklist", "How we cut a release: bump the version, tag, publish.", "1. tag\n2. publish")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    added = run([cli_tool("gemini"), "mcp", "add", "--trust", "repo-memory", "repo-memory", "serve"], repo, base_env(home))
    assert added.returncode == 0, added.stderr
    git(repo, "add", ".gemini/settings.json")  # the project's entry, a team file like .mcp.json
    git(repo, "commit", "-q", "-m", "gemini: repo-memory")
    gemini_home(home, repo)
    return repo, home


def test_gemini_lists_the_server_as_connected_once_the_folder_is_trusted(project: tuple[Path, Path]):
    repo, home = project
    listed = run([cli_tool("gemini"), "mcp", "list"], repo, base_env(home))
    assert "repo-memory" in listed.stdout + listed.stderr and "Connected" in listed.stdout + listed.stderr, listed
    (home / ".gemini" / "trustedFolders.json").write_text("{}", encoding="utf-8")  # untrusted: Gemini starts no project server
    untrusted = run([cli_tool("gemini"), "mcp", "list"], repo, base_env(home))
    assert "Connected" not in untrusted.stdout + untrusted.stderr


def test_a_gemini_session_remembers_and_the_next_one_recalls_it_named_and_committed(project: tuple[Path, Path]):
    repo, home = project
    fact = "The nightly build runs on the arm runners since March; the x86 pool is for releases only."
    with FakeGemini([(TOOL + "remember", {"text": fact})]) as api:
        first = gemini(repo, home, api.url, "Note where the nightly build runs.")
        offers = offered(api.main_requests()[0])
        wrote = function_responses(api.main_requests()[-1])
    assert first.returncode == 0, first.stderr[-2000:]
    assert {TOOL + name for name in ("recall", "read", "remember", "checkpoint", "skill_write")} <= set(offers), offers
    assert wrote and "ids" in json.dumps(wrote[-1]), wrote
    record = next(r for r in records(repo) if r.get("text") == fact)
    assert record["source"]["harness"] == "gemini-cli"  # named by the client's own name: Gemini sets no variable of ours
    deadline = time.monotonic() + 10
    while "Memory-Harness: gemini-cli" not in git(repo, "log", "-1", "--format=%B") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "Memory-Harness: gemini-cli" in git(repo, "log", "-1", "--format=%B")  # committed when Gemini closed the server
    assert not git(repo, "status", "--porcelain", "--", ".agents")

    with FakeGemini([(TOOL + "recall", {"query": "where does the nightly build run"})]) as api:
        second = gemini(repo, home, api.url, "Where does the nightly build run?")
        answered = function_responses(api.main_requests()[-1])
    assert second.returncode == 0, second.stderr[-2000:]
    assert record["id"] in json.dumps(answered), answered
