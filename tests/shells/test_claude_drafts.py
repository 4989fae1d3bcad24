"""Claude Code loads the skills in .claude/skills by itself: one an agent edits there becomes a draft, and Claude Code
stops offering it to its model until a person accepts it (repo-memory sets Claude Code's own
`disable-model-invocation` meanwhile, core/offering.py). The real Claude Code, set up as `repo-memory setup
claude-code` leaves it, against a scripted model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.shells.cli import cli
from tests.conftest import git, write_skill_file
from tests.harness.clis import TOOLS, claude
from tests.harness.fake_anthropic import FakeAnthropic, tool_results, tool_use

pytestmark = pytest.mark.slow
# Claude Code asks a person before any write its tools make into .claude/ (no permission mode but bypass, refused to
# root, covers it), so an agent edits the skill with a script of its own; `claude -p` has nobody to ask, so running
# that script is allowed up front, as a person answering yes would
EDITS = ("--allowedTools", "Bash(python3 edit.py)")
OFFER = "zebra-deploy: How we deploy the zebra service."  # how Claude Code lists a skill to its model


def listed(repo: Path, home: Path) -> str:
    """What Claude Code sends its model at the start of a session (the skills it offers are named there)."""
    with FakeAnthropic(["Done."]) as api:
        done = claude(repo, home, api, "hello")
        assert done.returncode == 0, done.stderr[-2000:]
        return json.dumps(api.main_requests()[0])


def test_claude_code_stops_offering_a_skill_of_its_folder_an_agent_edited_until_a_person_accepts_it(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)
    monkeypatch.setenv("PATH", f"{TOOLS}{os.pathsep}{os.environ['PATH']}")
    skill = write_skill_file(repo, "zebra-deploy", "How we deploy the zebra service.", "1. build\n2. push", folder=".claude/skills")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the team's Claude Code skill")
    runner = CliRunner()
    assert runner.invoke(cli, ["--root", str(repo), "setup", "claude-code"], catch_exceptions=False).exit_code == 0
    assert OFFER in listed(repo, home)

    (repo / "edit.py").write_text("from pathlib import Path\np = Path('.claude/skills/zebra-deploy/SKILL.md')\n"
                                  "p.write_text(p.read_text().replace('2. push', '2. push --force'))\n", encoding="utf-8")
    edit = tool_use("Bash", {"command": "python3 edit.py"})
    with FakeAnthropic([edit, "Done."]) as api:
        done = claude(repo, home, api, "Make the deploy skill force-push.", *EDITS)
        assert done.returncode == 0, done.stderr[-2000:]
        said = json.dumps(tool_results(api.main_requests()[-1]))
    assert "push --force" in skill.read_text(encoding="utf-8"), said
    assert OFFER not in listed(repo, home)  # a draft: not offered until reviewed (the briefing names it as a draft)

    sha = json.loads(runner.invoke(cli, ["--root", str(repo), "skill", "show", "zebra-deploy", "--json"]).stdout)["review_sha"]
    accepted = runner.invoke(cli, ["--root", str(repo), "accept", "zebra-deploy", "--sha", sha])
    assert accepted.exit_code == 0, accepted.output
    assert OFFER in listed(repo, home)
    text = skill.read_text(encoding="utf-8")
    assert "push --force" in text and "disable-model-invocation" not in text and "status: active" in text
