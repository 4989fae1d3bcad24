"""What the loop commands say: the help names the commands there are, an empty goal is told it is empty, and the
engine's verdicts read as the engine's in `log tail` and `log show` as they do in `read` and `git log -p`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli
from repo_memory.shells.cli.loops import loop

from tests.conftest import git


def test_the_loop_help_names_every_loop_command_and_no_other(runner: CliRunner):
    """It offered `watch`, which does not exist."""
    assert "Loop specs" in runner.invoke(cli, ["loop", "--help"]).output
    summary = (loop.help or "").splitlines()[0]  # the line `loop --help` shows, before the terminal wraps it
    named = set(re.findall(r"\b[a-z]+\b", summary.split(":", 1)[1].split(".")[0]))
    assert named == set(loop.commands), summary


@pytest.mark.parametrize(("goal", "said"), [("goal:", "it is empty (YAML read nothing here): write the text"),
                                            ('goal: ""', "it must not be empty")])
def test_an_empty_goal_is_told_it_is_empty_not_to_put_it_in_quotes(repo: Path, runner: CliRunner, goal: str, said: str):
    (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
    (repo / ".agents/loops/g.md").write_text(f"---\nname: g\nstatus: active\ntrigger: {{on: manual}}\n{goal}\nverify:\n"
                                             "  - {level: 4, run: 'true'}\nstop: {max_iterations: 1}\n"
                                             "success_requires_level: 4\n---\n", encoding="utf-8")
    result = runner.invoke(cli, ["--root", str(repo), "loop", "lint", "--json"])
    assert result.exit_code == 1
    assert [(p["line"], p["problem"]) for p in json.loads(result.output)] == [(5, said)]


def test_log_tail_and_log_show_say_the_verdicts_are_the_loop_engines(toy: Path, store: Store, runner: CliRunner):
    """They labelled loop.verify and loop.decision as the agent's (and its harness `unknown`), where `read` and the diff
    driver say "recorded by repo-memory's loop engine"."""
    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add", actor="human")["run"]
    engine.step(run, "tried", actor="human")
    engine.abort(run)
    tail = runner.invoke(cli, ["--root", str(toy), "log", "tail", "-n", "20", run]).output
    by = {line.split("  ")[2]: line.split("  ")[3] for line in tail.splitlines()}
    for verdict in ("loop.verify", "loop.decision", "loop.end"):
        assert by[verdict] == "repo-memory's loop engine, in a run driven by a person", tail
    assert by["loop.report"] == "human", tail
    shown = runner.invoke(cli, ["--root", str(toy), "log", "show", run]).output
    assert "unknown" not in shown, shown
    heads = re.findall(r"### \S+ · (\S+)\n+\*[^·]+· ([^*]+)\*", shown)
    assert heads and all(who.startswith("repo-memory's loop engine, in a run driven by a person") for kind, who in heads
                         if kind in ("loop.verify", "loop.decision", "loop.end")), heads


def test_loop_due_gives_the_whole_command_that_reruns_a_failed_loop_with_an_agent(toy: Path, store: Store, runner: CliRunner):
    """It said "rerun with --agent", leaving the person to guess which command takes it."""
    (toy / ".agents/loops/fix-add.md").write_text((toy / ".agents/loops/fix-add.md").read_text(encoding="utf-8").replace(
        "trigger: {on: manual}", "trigger: {on: ci}"), encoding="utf-8")
    Engine(store).accept("fix-add")
    due = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--run", "--event", "ci-failure"])
    assert "to have an agent fix it: `repo-memory loop run fix-add --agent '<command>'`" in due.output, due.output


def test_accept_with_a_sha_of_no_version_says_so_and_shows_the_current_one(toy: Path, store: Store, runner: CliRunner):
    """A typo read "changed since the version you reviewed", sending the person to look for a change there was none of."""
    current = Engine(store).spec("fix-add").sha256
    typo = runner.invoke(cli, ["--root", str(toy), "loop", "accept", "fix-add", "--sha", "0123456789ab"])
    assert typo.exit_code == 1 and "changed since" not in typo.output, typo.output
    assert f"--sha 0123456789ab matches no version of loop:fix-add; the current one is {current[:12]}" in typo.output
    older = Engine(store).spec("fix-add")  # a version git holds, then changed: that one still reads as a change
    Engine(store).accept("fix-add")
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "spec")
    spec = toy / ".agents/loops/fix-add.md"
    spec.write_text(spec.read_text(encoding="utf-8").replace("Fix calc.py", "Fix calc.py now"), encoding="utf-8")
    changed = runner.invoke(cli, ["--root", str(toy), "loop", "accept", "fix-add", "--sha", older.sha256[:12]])
    assert changed.exit_code == 1 and "changed since the version you reviewed" in changed.output, changed.output


def test_no_loop_runs_yet_reads_as_sentences(toy: Path, store: Store, runner: CliRunner):
    """"Start one: repo-memory loop run fix-add --agent '<command>' Runs of other clones…" ran two sentences together."""
    Engine(store).accept("fix-add")
    said = runner.invoke(cli, ["--root", str(toy), "loop", "status"]).output
    assert "Start one: `repo-memory loop run fix-add --agent '<command>'`. Runs of other clones" in said, said
