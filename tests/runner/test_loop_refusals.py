"""A loop that may not run here is refused before anything is recorded or committed, by every driver; and `doctor`
names a spec whose acceptance carries no mark of this clone (an older version's, another clone's) instead of
letting it read as simply "not accepted"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.errors import ConflictError
from repo_memory.runner import triggers
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.conftest import git
from tests.runner.conftest import spec_text


def committed(repo: Path) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the team's loop")
    return git(repo, "rev-parse", "HEAD")


def accepted_before_upgrade(store: Store, name: str = "fix-add") -> None:
    """The acceptance file as versions before the clone's mark wrote it: the spec's sha256, no mark."""
    (store.config.clone_dir / "accepted-loops.json").write_text(json.dumps({name: store.loop_spec(name).sha256}), encoding="utf-8")


def test_loop_run_of_a_loop_accepted_before_the_upgrade_is_refused_and_nothing_is_logged_or_committed(toy: Path, store: Store,
                                                                                                    runner: CliRunner):
    """`loop run` started a run, ended it unverifiable and committed it (`memory(experience): …, run ended
    unverifiable`) to the team's branch: runnable() was checked only after loop.start was logged."""
    accepted_before_upgrade(store)
    head = committed(toy)
    ran = runner.invoke(cli, ["--root", str(toy), "loop", "run", "fix-add", "--agent", "true"])
    assert ran.exit_code == 1, ran.output
    assert "repo-memory loop accept fix-add" in ran.output and "nothing was started or recorded" in ran.output, ran.output
    assert Engine(store).status() == [] and store.runs() == []
    assert git(toy, "rev-parse", "HEAD") == head and git(toy, "status", "--porcelain") == ""


def test_a_draft_loop_is_refused_before_a_run_is_opened_saying_why(toy: Path, store: Store):
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(status="draft"), encoding="utf-8")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    with pytest.raises(ConflictError, match="not active.*repo-memory loop accept fix-add"):
        engine.start("fix-add")
    assert store.runs() == []


def test_a_triggered_loop_that_may_not_run_is_not_run_and_leaves_no_run(toy: Path, store: Store):
    """`loop due --run` filters unaccepted specs, but one whose acceptance lapsed between the check and the run (an
    edit, a pull) opened and committed a run all the same."""
    head = committed(toy)
    spec = store.loop_spec("fix-add")
    for agent in (None, "true"):
        said = triggers.run_due(Engine(store), spec, "a test", agent, lambda _: None)
        assert said.startswith("not run: ") and "repo-memory loop accept fix-add" in said, said
    assert store.runs() == [] and git(toy, "rev-parse", "HEAD") == head


def test_doctor_names_a_loop_accepted_before_the_upgrade_and_says_to_review_and_accept_it_again(toy: Path, store: Store,
                                                                                                runner: CliRunner):
    """After an upgrade a loop accepted with an older version read `not accepted`, and doctor said nothing of loops."""
    accepted_before_upgrade(store)
    committed(toy)
    said = runner.invoke(cli, ["--root", str(toy), "doctor"]).output
    line = next((ln for ln in said.splitlines() if "fix-add" in ln and "mark" in ln), "")
    assert line and "not accepted" in line, said
    assert "repo-memory loop show fix-add" in said and "repo-memory loop accept fix-add --sha" in said, said
    assert "not accepted" in runner.invoke(cli, ["--root", str(toy), "loop", "list"]).output  # never trusted silently
    spec = store.loop_spec("fix-add")
    forged = {"fix-add": {"sha256": spec.sha256, "mac": "0" * 32}}  # another clone's mark, or one an agent made up
    (store.config.clone_dir / "accepted-loops.json").write_text(json.dumps(forged), encoding="utf-8")
    assert "fix-add" in runner.invoke(cli, ["--root", str(toy), "doctor"]).output
    (toy / ".agents/loops/other.md").write_text(spec_text("other"), encoding="utf-8")
    store.refresh()
    Engine(store).accept("other")  # accepting another loop keeps the notice: the person has not reviewed this one
    assert "fix-add" in runner.invoke(cli, ["--root", str(toy), "doctor"]).output
    Engine(store).accept("fix-add")
    assert "fix-add" not in runner.invoke(cli, ["--root", str(toy), "doctor"]).output


def test_a_refused_loop_names_the_review_then_the_accept_with_its_sha_which_works_outside_a_terminal(toy: Path, store: Store,
                                                                                                     runner: CliRunner):
    """The refusal said `repo-memory loop accept fix-add`, which outside a terminal (an agent's shell, a hook) only
    answers "Name the version of loop fix-add you reviewed"."""
    accepted_before_upgrade(store)
    with pytest.raises(ConflictError) as refused:
        Engine(store).ready("fix-add")
    said = str(refused.value)
    show, accept = said.find("`repo-memory loop show fix-add`"), said.find("`repo-memory loop accept fix-add --sha SHA`")
    assert 0 <= show < accept, said
    sha = store.loop_spec("fix-add").sha256[:12]  # what `loop show` prints
    accepted = runner.invoke(cli, ["--root", str(toy), "loop", "accept", "fix-add", "--sha", sha])
    assert accepted.exit_code == 0, accepted.output
    assert Engine(store).ready("fix-add").name == "fix-add"
