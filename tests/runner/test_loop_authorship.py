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


def test_a_spec_a_person_accepts_is_committed_so_the_runs_receipts_cite_a_spec_the_history_holds(toy: Path, store: Store,
                                                                                                  runner: CliRunner):
    """A hand-written spec was never committed (there is no `loop new`, and accept only noted the sha on this clone),
    while its runs were: a teammate pulled runs of a loop they did not have, citing a spec_sha256 no commit held."""
    import hashlib
    import json

    assert runner.invoke(cli, ["--root", str(toy), "init"]).exit_code == 0
    sha = hashlib.sha256((toy / ".agents/loops/fix-add.md").read_bytes()).hexdigest()
    accepted = runner.invoke(cli, ["--root", str(toy), "loop", "accept", "fix-add", "--sha", sha[:12]])
    assert accepted.exit_code == 0 and "Committed .agents/loops/fix-add.md" in accepted.output, accepted.output
    assert git(toy, "status", "--porcelain", "--", ".agents/loops/fix-add.md") == ""  # (the fixture's scaffolding is no run's)
    assert git(toy, "log", "-1", "--format=%s", "--", ".agents/loops/fix-add.md").strip() == "memory(loop): accept fix-add"
    run = Engine(store).start("fix-add")["run"]
    Engine(store).abort(run)
    store.flush("all")
    end = next(json.loads(line) for line in git(toy, "show", f"HEAD:{next(toy.glob('.agents/experience/*/' + run + '.jsonl')).relative_to(toy)}").splitlines()
               if json.loads(line)["kind"] == "loop.end")
    assert hashlib.sha256(git(toy, "show", "HEAD:.agents/loops/fix-add.md").encode()).hexdigest() == end["data"]["spec_sha256"]


def test_a_runs_commit_says_how_the_run_ended_so_git_log_reads_as_the_loops_history(toy: Path, store: Store, runner: CliRunner):
    assert runner.invoke(cli, ["--root", str(toy), "init"]).exit_code == 0
    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add")["run"]
    assert engine.step(run, "tried a fix")["state"] == "continue"
    engine.abort(run, "a person stopped it")
    subjects = git(toy, "log", "--format=%s", "--", ".agents/experience").splitlines()
    (subject,) = [s for s in subjects if run in s]
    assert subject.startswith(f"memory(experience): {run}#1-") and subject.endswith(", run ended aborted"), subjects
