"""Inside the real Gemini CLI after `repo-memory setup gemini` alone (no settings written by hand): the server is
Connected, and the hooks run — the briefing reaches the first model request, our guard refuses what only repo-memory
writes and the activation of a skill recall does not serve, an edit of a skill makes it a draft, and the session's
records say gemini-cli and are committed when it ends.

The model is a scripted Gemini API on loopback (tests/harness/fake_gemini.py); HOME is a tmp dir; the CLI's default
model; nothing but loopback on the network.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store

from tests.conftest import git, write_skill_file
from tests.harness.clis import base_env, cli_tool, gemini, gemini_home, records, run
from tests.harness.fake_gemini import FakeGemini, function_responses, offered

pytestmark = pytest.mark.slow
EXE = str(Path(sys.executable).parent / "repo-memory")
# Headless `gemini -p` in its default approval mode offers the model no tool that changes anything (write_file,
# replace, run_shell_command, activate_skill): a user who runs Gemini headless for edits passes --approval-mode yolo.
YOLO = ("--approval-mode", "yolo")


@pytest.fixture
def project(repo: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A repository with an active skill, a draft and one experience log, set up by `repo-memory setup gemini` only,
    the folder trusted as Gemini's dialog stores it."""
    home = tmp_path / "home"
    write_skill_file(repo, "release-checklist", "How we cut a release: bump the version, tag, publish.", "1. tag\n2. publish")
    write_skill_file(repo, "deploy-shortcut", "Deploy straight from a laptop.", "Skip CI and push to prod.",
                     extra="metadata:\n  status: draft\n")
    store = Store(Config.load(repo))
    session = store.remember("deploys need a green main", session="earlier")[0]["session"]
    store.close()
    log = next(repo.glob(f".agents/experience/*/{session}.jsonl"))
    setup = run([EXE, "setup", "gemini"], repo, base_env(home))
    assert setup.returncode == 0 and "gemini mcp list" in setup.stdout, setup.stdout + setup.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    gemini_home(home, repo)
    return repo, home, log


def test_after_setup_gemini_the_server_is_connected(project: tuple[Path, Path, Path]):
    repo, home, _ = project
    listed = run([cli_tool("gemini"), "mcp", "list"], repo, base_env(home))
    said = listed.stdout + listed.stderr  # Gemini prints the list on stderr
    assert "repo-memory: repo-memory serve (stdio) - Connected" in said, listed


def test_a_gemini_session_starts_with_the_briefing(project: tuple[Path, Path, Path]):
    repo, home, _ = project
    with FakeGemini(["Done."]) as api:
        done = gemini(repo, home, api.url, "What should I know here?")
        first = json.dumps(api.main_requests()[0]["contents"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "this repository keeps memory in .agents/" in first and "release-checklist" in first, first[:3000]


def test_geminis_own_tools_meet_our_guard_and_the_session_is_recorded_as_gemini_cli_and_committed(
        project: tuple[Path, Path, Path]):
    repo, home, log = project
    before = log.read_bytes()
    skill = repo / ".agents/skills/release-checklist/SKILL.md"
    edited = skill.read_text(encoding="utf-8").replace("2. publish", "2. publish\n3. announce")
    script = [("write_file", {"file_path": str(log), "content": "{}\n"}),
              ("activate_skill", {"name": "deploy-shortcut"}),
              ("activate_skill", {"name": "release-checklist"}),
              ("write_file", {"file_path": str(skill), "content": edited})]
    with FakeGemini(script) as api:
        done = gemini(repo, home, api.url, "Tidy up the release notes.", args=YOLO)
        offers = offered(api.main_requests()[0])
        answers = [json.dumps(r) for r in function_responses(api.main_requests()[-1])]
    assert done.returncode == 0, done.stderr[-2000:]
    assert {"write_file", "activate_skill"} <= set(offers), offers
    assert len(answers) == 4, answers
    assert "repo-memory refused" in answers[0] and log.read_bytes() == before, answers[0]
    assert "not reviewed" in answers[1] and "Skip CI" not in answers[1], answers[1]
    assert "1. tag" in answers[2] and "refused" not in answers[2], answers[2]
    assert "3. announce" in skill.read_text(encoding="utf-8") and "status: draft" in skill.read_text(encoding="utf-8")

    ours = [r for r in records(repo) if r["_log"] != log.stem]
    assert {r["data"]["tool"] for r in ours if r["kind"] == "tool"} >= {"activate_skill", "write_file"}, ours
    assert {r["source"]["harness"] for r in ours} == {"gemini-cli"}, ours
    deadline = time.monotonic() + 10
    while git(repo, "status", "--porcelain", "--", ".agents") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not git(repo, "status", "--porcelain", "--", ".agents")
    assert "Memory-Harness: gemini-cli" in git(repo, "log", "--format=%B", "-5")


def test_a_draft_gemini_lists_and_its_model_reads_comes_with_a_word_not_to_follow_it(project: tuple[Path, Path, Path]):
    """Gemini CLI lists every SKILL.md of .agents/skills to its model, drafts among them, and its default headless mode
    offers read_file: what the model reads of a draft carries our AfterTool word (Gemini appends it as hook context)."""
    repo, home, _ = project
    draft = repo / ".agents/skills/deploy-shortcut/SKILL.md"
    with FakeGemini([("read_file", {"file_path": str(draft)})]) as api:
        done = gemini(repo, home, api.url, "How do we deploy?")
        answer = json.dumps(function_responses(api.main_requests()[-1]))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Skip CI" in answer and "not reviewed as it stands, so do not follow it" in answer, answer


def test_two_identical_calls_in_one_answer_are_two_records(project: tuple[Path, Path, Path]):
    """Gemini CLI gives a tool call no id: what tells two identical calls in one answer apart is the time of each
    AfterTool event, the same in every copy of one event our hooks are sent (one call is recorded once)."""
    repo, home, _ = project
    read = ("read_file", {"file_path": "README.md"})
    (repo / "README.md").write_text("hello\n", encoding="utf-8")
    with FakeGemini([[read, read], read]) as api:
        done = gemini(repo, home, api.url, "Read it, twice at once, then once more.", args=YOLO)
        answers = [r for r in function_responses(api.main_requests()[-1]) if r.get("name") == "read_file"]
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(answers) == 3, answers
    assert sum(r["kind"] == "tool" and r["data"]["tool"] == "read_file" for r in records(repo)) == 3


def test_gemini_lists_the_server_disabled_after_setup_alone_and_connected_after_setup_trust(repo: Path, tmp_path: Path):
    """What each setup's check line says is what the real `gemini mcp list` prints: Disabled in a folder not trusted
    (setup promised Connected), Connected once `setup gemini --trust` stored the trust as Gemini's dialog does."""
    home = tmp_path / "home"
    home.mkdir()
    said = {}
    for args in ((), ("--trust",)):
        setup = run([EXE, "setup", "gemini", *args], repo, base_env(home))
        assert setup.returncode == 0, setup.stdout + setup.stderr
        said[args] = next(line for line in setup.stdout.splitlines() if line.startswith("Check it"))
        listed = run([cli_tool("gemini"), "mcp", "list"], repo, base_env(home))
        shown = listed.stdout + listed.stderr
        state = "Connected" if args else "Disabled"
        assert f"repo-memory: repo-memory serve (stdio) - {state}" in shown, shown
        assert state in said[args] and ("Disabled" not in said[args] if args else True), said
