"""The real Claude Code (`.tools/`) against a scripted model: what repo-memory's hooks guarantee when its server is
not connected, and when two sets of its hooks run (setup's and the plugin's)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.harness.clis import ROOT, TOOLS, base_env, claude, records
from tests.harness.fake_anthropic import FakeAnthropic, session_id, tool_use
from tests.shells.test_claude_code import project  # noqa: F401  (the fixture)

pytestmark = pytest.mark.slow


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
