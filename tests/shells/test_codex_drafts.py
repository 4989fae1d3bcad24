"""A draft is not offered to Codex's model: Codex lists every SKILL.md under .agents/skills in its prompt by itself, a
draft (written by an agent, not reviewed yet) included, unless the skill's `agents/openai.yaml` turns implicit
invocation off. The real Codex CLI, set up as `repo-memory setup codex` leaves it, against a scripted model.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git, write_skill_file
from tests.harness.clis import CODEX_NAMESPACE, base_env, codex, codex_home
from tests.harness.fake_responses import FakeResponses, function_call

pytestmark = pytest.mark.slow


def cli(repo: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`repo-memory ARGS` as a person runs it in `repo`."""
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, env=base_env(home), text=True,
                          capture_output=True, timeout=120)


def offered(body: dict) -> set[str]:
    """The skills Codex lists to the model by itself (its <skills_instructions> block: `- name: description (file: …)`)."""
    text = json.dumps(body["input"]).replace("\\n", "\n")
    block = text.split("<skills_instructions>", 1)[1].split("</skills_instructions>", 1)[0]
    return set(re.findall(r"^- ([a-z0-9-]+): ", block, re.M))


def session(repo: Path, home: Path, turns: list) -> list[dict]:
    with FakeResponses(turns) as api:
        codex_home(home, api)
        assert cli(repo, home, "setup", "codex", "--trust").returncode == 0
        done = codex(repo, home, "Go on.")
        assert done.returncode == 0, done.stderr[-2000:]
        return api.main_requests()


def accept(repo: Path, home: Path, name: str) -> None:
    sha = json.loads(cli(repo, home, "skill", "show", name, "--json").stdout)["review_sha"]
    done = cli(repo, home, "accept", name, "--sha", sha)
    assert done.returncode == 0, done.stderr


def test_codex_offers_a_skill_to_its_model_only_once_a_person_accepted_it(repo: Path, tmp_path: Path):
    home = tmp_path / "home"
    write_skill_file(repo, "release-checklist", "How we cut a release: bump the version, tag, publish.", "1. tag\n2. publish")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    new = function_call("skill_write", {"name": "deploy-steps", "description": "How to deploy the service to staging.",
                                        "body": "1. build\n2. push"}, namespace=CODEX_NAMESPACE)
    look = function_call("read", {"ref": "skill:release-checklist"}, namespace=CODEX_NAMESPACE)  # an update reads first
    update = function_call("skill_write", {"name": "release-checklist", "body": "1. tag\n2. publish\n3. skip the changelog"},
                           namespace=CODEX_NAMESPACE)
    first = session(repo, home, [new, look, update, "Done."])
    assert "release-checklist" in offered(first[0]) and "deploy-steps" not in offered(first[0])

    # the next session: an agent's new skill and its rewrite of an accepted one are drafts, and Codex lists neither
    second = session(repo, home, ["Done."])
    assert not {"deploy-steps", "release-checklist"} & offered(second[0]), offered(second[0])
    assert {"skill-creator"} <= offered(second[0])  # Codex's own list is there, only the drafts left out
    assert git(repo, "status", "--porcelain", "--", ".agents") == ""  # what hides them is committed with them

    accept(repo, home, "deploy-steps")
    accept(repo, home, "release-checklist")
    third = session(repo, home, ["Done."])
    assert {"deploy-steps", "release-checklist"} <= offered(third[0])
    assert not list((repo / ".agents/skills").glob("*/agents"))  # nothing of ours is left in an accepted skill
    assert git(repo, "status", "--porcelain", "--", ".agents") == ""
