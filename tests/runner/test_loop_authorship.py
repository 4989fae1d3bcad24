"""Who a run's records speak for, as `git log -p` shows them: the agent's report is the agent's, the verdicts the
server's (the loop engine's), whoever drove the run."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.conftest import git


def test_git_log_shows_a_runs_verdicts_as_the_loop_engines_and_the_report_as_the_agents(toy: Path, store: Store, runner: CliRunner):
    assert runner.invoke(cli, ["--root", str(toy), "init"]).exit_code == 0
    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add")["run"]
    assert engine.step(run, "tried a fix")["state"] == "continue"
    engine.abort(run)
    shown = git(toy, "log", "-p", "--", ".agents/experience")
    lines = [ln for ln in shown.splitlines() if f"{run}#" in ln and "  by " in ln]
    by = {ln.split("  ")[2]: ln.split("  by ", 1)[1] for ln in lines}
    assert by["loop.report"].startswith("agent"), by
    for verdict in ("loop.verify", "loop.decision", "loop.end"):
        assert by[verdict].startswith("repo-memory's loop engine"), by
    assert "a run driven by an agent" in by["loop.verify"] and "a run driven by a person" in by["loop.end"], by
