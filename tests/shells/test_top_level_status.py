"""A SKILL.md with `status:` at the top of its frontmatter, where repo-memory does not keep it (its fields go under
`metadata:`): a draft or deprecated one is never served as active, and every listing says where the key belongs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git, initialised

WIP = "---\nname: wip\ndescription: Half-written release steps; use when releasing\nstatus: draft\n---\nNot ready.\n"
KEPT = ("---\nname: kept\ndescription: Accepted release steps; use when releasing\nstatus: draft\nmetadata:\n"
        "  status: active\n---\n1. tag\n")


def cli(repo: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True, input=stdin,
                          env={**os.environ, "CLAUDECODE": "1"})


def test_a_top_level_draft_is_no_active_skill_and_listings_say_to_move_it_under_metadata(tmp_path: Path):
    """`status: draft` at the top level was ignored without a word: the half-written skill was listed active and
    briefed to every session. It now reads as the draft its author wrote (metadata.status, when given, still decides),
    and `skill list` and doctor say the key belongs under `metadata:`."""
    repo = initialised(tmp_path)
    for name, text in (("wip", WIP), ("kept", KEPT)):
        (repo / f".agents/skills/{name}").mkdir(parents=True)
        (repo / f".agents/skills/{name}/SKILL.md").write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skills")
    listed = {r["name"]: r for r in json.loads(cli(repo, "skill", "list", "--json").stdout)}
    assert listed["wip"]["status"] == "draft" and listed["kept"]["status"] == "active", listed
    for name in ("wip", "kept"):
        assert any("under `metadata:`" in note for note in listed[name]["notes"]), listed[name]
    assert "move it under `metadata:`" in cli(repo, "skill", "list").stdout
    said = [f for f in json.loads(cli(repo, "doctor", "--json").stdout) if "top level" in f["message"]]
    assert sorted(f["path"] for f in said) == [".agents/skills/kept/SKILL.md", ".agents/skills/wip/SKILL.md"], said
    assert all(f["level"] == "warning" and "metadata:" in f["fix"] for f in said), said
    hook = {"hook_event_name": "SessionStart", "session_id": "x", "cwd": str(repo), "source": "startup"}
    briefing = json.loads(cli(repo, "hook", "session-start", stdin=json.dumps(hook)).stdout)
    context = briefing["hookSpecificOutput"]["additionalContext"]
    served = next(line for line in context.splitlines() if line.startswith("- skills:"))
    drafts = next(line for line in context.splitlines() if line.startswith("- drafts"))
    assert "skill:kept" in served and "skill:wip" not in served and "skill:wip" in drafts, context
