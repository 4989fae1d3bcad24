"""A skill change is committed whole or not at all: a person's `git stash` in the commit window takes an agent's
SKILL.md away and leaves the Codex file beside it; nothing of the change is committed until it is back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import InvalidRecordError
from repo_memory.shells.cli import cli
from tests.conftest import git

SKILL = ".agents/skills/deploy-flamingo"


def test_a_stash_in_the_commit_window_commits_no_half_of_an_agents_skill_update_and_the_pop_commits_it_whole(repo: Path):
    store = Store(Config.load(repo), session="s-agent")
    try:
        accepted = _updated_by_the_agent(repo, store)
        git(repo, "stash", "-q")  # a person's, before the commit: it takes SKILL.md back and leaves the untracked marker
        store.flush()
        assert git(repo, "rev-parse", "HEAD") == accepted  # HEAD never holds the marker beside the active SKILL.md
        git(repo, "stash", "pop", "-q")
        doctor = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
        assert "changed but not committed:" not in doctor and "2 memory path(s) written but not committed" in doctor, doctor
        store.flush()
    finally:
        store.close()
    assert git(repo, "log", "-1", "--format=%s").strip() == "memory(skill): update deploy-flamingo"
    changed = sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split())
    assert changed == [f"{SKILL}/SKILL.md", f"{SKILL}/agents/openai.yaml"]
    assert "status: draft" in git(repo, "show", f"HEAD:{SKILL}/SKILL.md")
    assert git(repo, "status", "--porcelain", "--", SKILL) == ""


def test_a_persons_edit_over_an_agents_pending_skill_update_is_not_committed_as_the_agents_and_accept_settles_it(repo: Path):
    store = Store(Config.load(repo), session="s-agent")
    try:
        accepted = _updated_by_the_agent(repo, store)
        with (repo / SKILL / "SKILL.md").open("a", encoding="utf-8") as file:
            file.write("2. a person's line\n")  # in the window, before the agent's change is committed
        store.flush()
        assert git(repo, "rev-parse", "HEAD") == accepted
        assert store.commit_status().startswith("not committed yet: "), store.commit_status()
        doctor = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
        assert "2 memory path(s) written are held back" in doctor and "changed but not committed:" not in doctor, doctor
        store.review("deploy-flamingo", accept=True)  # the person's verdict on the file as it is: theirs to commit
        store.flush()
    finally:
        store.close()
    assert git(repo, "log", "-1", "--format=%s").strip() == "memory(skill): accept deploy-flamingo"
    assert "2. a person's line" in git(repo, "show", f"HEAD:{SKILL}/SKILL.md")
    assert git(repo, "status", "--porcelain", "--", SKILL) == ""


def test_a_stash_in_the_commit_window_holds_a_sessions_log_and_its_later_records_and_the_pop_commits_them(repo: Path):
    git(repo, "add", ".agents")
    git(repo, "commit", "-q", "-m", "repo-memory init")
    store = Store(Config.load(repo), session="s-agent")
    sid = store.session
    try:
        store.remember("one")
        store.checkpoint("first part", [f"{sid}#1"])  # commits #1-2: the session goes on in an untracked `+2` file
        store.remember("three")
        git(repo, "stash", "-q", "-u")  # a person's: it takes the `+2` file holding #3 away
        with pytest.raises(InvalidRecordError, match="stash took it"):  # #3's log is in the stash, not here to cover
            store.checkpoint("second part", [f"{sid}#3"])
        store.remember("four")
        store.flush("all")  # #4: not committed past the missing #3 (the chain keeps no hole)
        assert git(repo, "log", "-1", "--format=%s").strip() == f"memory(experience): {sid}#1-2"
        assert "`git stash pop`" in store.commit_status("experience"), store.commit_status("experience")
        doctor = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
        assert "git stash pop" in doctor and "changed but not committed:" not in doctor, doctor
        git(repo, "stash", "pop", "-q")
        doctor = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
        assert "changed but not committed:" not in doctor and "written outside repo-memory" not in doctor, doctor
    finally:
        store.close()
    assert git(repo, "log", "-1", "--format=%s").strip() == f"memory(experience): {sid}#3-4"
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".agents") == ""
    seqs = [json.loads(line)["seq"] for path in sorted(git(repo, "ls-files", ".agents/experience").split())
            for line in git(repo, "show", f"HEAD:{path}").splitlines()]
    assert sorted(seqs) == [1, 2, 3, 4]


def _doctor(repo: Path, *args: str) -> str:
    return CliRunner().invoke(cli, ["--root", str(repo), "doctor", *args]).output


def _updated_by_the_agent(repo: Path, store: Store) -> str:
    """An accepted skill, and the agent's update of it pending (a draft again, with Codex's marker beside it)."""
    git(repo, "add", ".agents")
    git(repo, "commit", "-q", "-m", "repo-memory init")
    store.write_skill("deploy-flamingo", "How to deploy with flamingo", "1. run flamingo up\n", actor="human")
    store.flush()
    store.write_skill("deploy-flamingo", None, "1. run flamingo up --canary\n", actor="agent")
    return git(repo, "rev-parse", "HEAD")


def test_a_dropped_stash_of_an_agents_pending_skill_update_settles_it_and_nothing_says_git_stash_pop(repo: Path):
    store = Store(Config.load(repo), session="s-agent")
    try:
        accepted = _updated_by_the_agent(repo, store)
        git(repo, "stash", "-q", "-u")
        git(repo, "stash", "drop", "-q")  # the person threw the agent's change away: the files are HEAD's again
        store.flush()
        assert "git stash pop" not in store.commit_status(), store.commit_status()
        assert store.git_health().pending == 0  # nothing left to commit: not held for ever
    finally:
        store.close()
    doctor = _doctor(repo)
    assert "held back" not in doctor and "git stash pop" not in doctor, doctor
    assert git(repo, "rev-parse", "HEAD") == accepted


def test_a_persons_commit_over_an_agents_pending_skill_update_names_the_way_out_and_doctor_fix_lets_it_go(repo: Path):
    store = Store(Config.load(repo), session="s-agent")
    try:
        _updated_by_the_agent(repo, store)
        with (repo / SKILL / "SKILL.md").open("a", encoding="utf-8") as file:
            file.write("2. a person's line\n")
        git(repo, "commit", "-q", "-am", "person: deploy steps")  # SKILL.md is theirs now; the untracked marker is not in it
        store.flush()
        said = store.commit_status()
        assert "git stash pop" not in said and "`repo-memory accept deploy-flamingo --sha SHA`" in said, said
        assert "`repo-memory doctor --fix`" in said, said
    finally:
        store.close()
    doctor = _doctor(repo)
    assert "git stash pop" not in doctor and "its own finding" not in doctor, doctor
    assert "2 memory path(s) written are held back" in doctor and "`repo-memory doctor --fix`" in doctor, doctor
    fixed = _doctor(repo, "--fix")
    assert "held back" not in fixed, fixed
    store = Store(Config.load(repo), session="s-other")
    try:
        assert store.git_health().pending == 0
    finally:
        store.close()
