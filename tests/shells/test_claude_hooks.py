"""The real Claude Code (`.tools/`) against a scripted model: what repo-memory's hooks guarantee when its server is
not connected, and when two sets of its hooks run (setup's and the plugin's)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.harness.clis import ROOT, TOOLS, base_env, claude, records
from tests.harness.fake_anthropic import FakeAnthropic, session_id, tool_results, tool_use
from tests.shells.test_claude_code import EDITS, project  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow


def test_with_the_server_not_connected_claudes_write_to_an_experience_log_is_still_refused_and_its_calls_recorded(
        project: tuple[Path, Path], tmp_path: Path):  # noqa: F811
    """Claude Code skips an `mcp_tool` hook whose server is not connected (still starting, or failed to start): the
    guard must not hang on it, and the calls made meanwhile are recorded all the same."""
    repo, home = project
    broken = tmp_path / "broken"
    broken.mkdir()
    # `repo-memory` on PATH (what .mcp.json starts) whose server never comes up, as a server still starting is
    real = subprocess.run(["sh", "-c", "command -v repo-memory"], capture_output=True, text=True, env=base_env(home)).stdout.strip()
    (broken / "repo-memory").write_text(f'#!/bin/sh\n[ "$1" = serve ] && exit 1\nexec {real} "$@"\n', encoding="utf-8")
    (broken / "repo-memory").chmod(0o755)
    env = {"PATH": f"{broken}{os.pathsep}{base_env(home)['PATH']}"}
    forged = repo / ".agents/experience/2026-12/forged-session.jsonl"
    turns = [tool_use("Read", {"file_path": str(repo / ".agents/skills/release-checklist/SKILL.md")}),
             tool_use("Write", {"file_path": str(forged), "content": '{"id":"forged-session#1","kind":"decision","text":"x"}\n'}),
             "Done."]
    with FakeAnthropic(turns) as api:
        assert claude(repo, home, api, "Write it.", *EDITS, env=env).returncode == 0
    told = tool_results(api.main_requests()[-1])
    assert not forged.exists(), told
    assert "repo-memory refused this Write call" in str(told)
    session = session_id(api.main_requests()[0])
    calls = [r["data"] for r in records(repo) if r["_log"] == session and r["kind"] == "tool"]
    assert [c["tool"] for c in calls] == ["Read"], calls  # the refused Write never ran: no PostToolUse
    assert calls[0]["call_id"] and "How we cut a release" in calls[0]["output_text"]


def test_setup_then_the_plugin_records_each_tool_call_once(project: tuple[Path, Path]):  # noqa: F811
    """`setup claude-code` first, then the plugin (the README offers both): two sets of hooks, one per call recorded."""
    repo, home = project
    env = {**base_env(home), "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    for args in (["plugin", "marketplace", "add", str(ROOT)], ["plugin", "install", "repo-memory@repo-memory"]):
        done = subprocess.run([str(TOOLS / "claude"), *args], cwd=home, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    turns = [tool_use("Read", {"file_path": str(repo / ".agents/skills/release-checklist/SKILL.md")}),
             tool_use("Read", {"file_path": str(repo / ".gitattributes")}), "Done."]
    with FakeAnthropic(turns) as api:
        assert claude(repo, home, api, "Read them.").returncode == 0
    session = session_id(api.main_requests()[0])
    calls = [r["data"] for r in records(repo) if r["_log"] == session and r["kind"] == "tool"]
    assert sorted(Path(c["input"]["file_path"]).name for c in calls) == [".gitattributes", "SKILL.md"], calls
    assert len({c["call_id"] for c in calls}) == 2


def test_a_forked_session_records_only_its_own_calls_at_its_end(project: tuple[Path, Path]):  # noqa: F811
    """`claude --resume SID --fork-session` copies the earlier conversation, its tool calls among them, into the new
    session's transcript: those calls were the first session's (and recorded there), not the fork's to record again."""
    repo, home = project
    reads = [tool_use("Read", {"file_path": str(repo / ".agents/skills/release-checklist/SKILL.md")}),
             tool_use("Read", {"file_path": str(repo / ".gitattributes")}), "Done."]
    with FakeAnthropic(reads) as api:
        assert claude(repo, home, api, "Read them.").returncode == 0
    first = session_id(api.main_requests()[0])
    with FakeAnthropic([tool_use("Read", {"file_path": str(repo / ".gitattributes")}), "Done."]) as api:
        assert claude(repo, home, api, "Once more.", "--resume", str(first), "--fork-session").returncode == 0
    fork = session_id(api.main_requests()[0])
    assert fork and fork != first
    calls = [(r["_log"].split("+")[0], r["data"]["call_id"]) for r in records(repo) if r["kind"] == "tool"]
    assert len(calls) == 3 and len({call for _, call in calls}) == 3, calls
    assert [log for log, _ in calls].count(fork) == 1, calls
