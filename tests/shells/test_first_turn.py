"""The tools are there on the first turn, with a user's defaults: three fresh headless sessions per harness, each set
up only with `repo-memory setup`, on the latest CLIs, the harness's default model, no flags. Each session's first model
request must offer the repo-memory tools and a first-turn `recall` must run.

(A server that took 1.2-2 s to answer `initialize` lost this race in 4 of 10 Codex sessions and 1 of 10 Claude Code
sessions; the closing note of the "works with what a user gets" issue counts 10 of each.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.shells.cli import cli
from tests.conftest import git, write_skill_file
from tests.harness.clis import CODEX_NAMESPACE, claude, codex, codex_home
from tests.harness.fake_anthropic import FakeAnthropic, offered, tool_results, tool_use
from tests.harness.fake_responses import FakeResponses, function_call, function_outputs, offered_namespaces

pytestmark = pytest.mark.slow
SESSIONS = 3


@pytest.fixture
def project(repo: Path) -> Path:
    write_skill_file(repo, "release-checklist", "How we cut a release: bump the version, tag, publish.", "1. tag\n2. publish")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def setup(repo: Path, harness: str, *flags: str) -> None:
    result = CliRunner().invoke(cli, ["--root", str(repo), "setup", harness, *flags], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def test_claude_code_offers_the_tools_on_the_first_request_and_a_first_turn_recall_runs(project: Path, tmp_path: Path,
                                                                                        monkeypatch: pytest.MonkeyPatch):
    for n in range(SESSIONS):
        home = tmp_path / f"home{n}"
        home.mkdir()
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
        setup(project, "claude-code")
        with FakeAnthropic([tool_use("mcp__repo-memory__recall", {"query": "cut a release"}), "Tag, then publish."]) as api:
            done = claude(project, home, api, "How do we cut a release?")
        assert done.returncode == 0, done.stderr[-2000:]
        first, second = api.main_requests()[:2]
        assert "mcp__repo-memory__recall" in offered(first), f"session {n}: {sorted(offered(first))}"
        answer = json.loads(tool_results(second)[-1]["text"])
        assert answer["hits"][0]["id"] == "skill:release-checklist", f"session {n}: {answer}"


def test_codex_offers_the_tools_on_the_first_request_and_a_first_turn_recall_runs(project: Path, tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch):
    for n in range(SESSIONS):
        home = tmp_path / f"home{n}"
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
        turns = [function_call("recall", {"query": "cut a release"}, namespace=CODEX_NAMESPACE), "Tag, then publish."]
        with FakeResponses(turns) as api:
            codex_home(home, api)
            setup(project, "codex", "--trust")
            done = codex(project, home, "How do we cut a release?")
        assert done.returncode == 0, done.stderr[-2000:]
        first, second = api.main_requests()[:2]
        assert CODEX_NAMESPACE in offered_namespaces(first), f"session {n}"
        output = function_outputs(second)[0]["text"]
        assert "unsupported call" not in output, f"session {n}: {output[:500]}"
        answer = json.loads(output.split("Output:\n", 1)[1])
        assert answer["hits"][0]["id"] == "skill:release-checklist", f"session {n}: {answer}"
