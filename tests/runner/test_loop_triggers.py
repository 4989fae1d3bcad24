"""Which loops `loop list` and `loop due` see: a spec with a bad file name is one invalid spec, not the end of every
loop; and a spec no person accepted here is never due, so a cron tick or a git hook makes no run and no commit of it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.runner import triggers
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.conftest import git
from tests.runner.conftest import spec_text


def triggered(repo: Path, trigger: str) -> None:
    """The toy's loop fix-add, asked for by `trigger` instead of by hand."""
    (repo / ".agents/loops/fix-add.md").write_text(spec_text().replace("trigger: {on: manual}", trigger), encoding="utf-8")


def test_a_spec_whose_file_name_is_not_allowed_is_listed_invalid_and_the_other_loops_go_on(toy: Path, store: Store,
                                                                                           runner: CliRunner):
    """`Bad_Loop.md` made `loop list` and `loop due` exit 1 listing nothing, so no git hook or cron loop ran any more."""
    triggered(toy, "trigger: {on: git}")
    (toy / ".agents/loops/Bad_Loop.md").write_text(spec_text("Bad_Loop"), encoding="utf-8")
    Engine(store).accept("fix-add")
    listed = runner.invoke(cli, ["--root", str(toy), "loop", "list"])
    assert listed.exit_code == 0, listed.output
    assert "Bad_Loop" in listed.output and "invalid  (repo-memory loop lint Bad_Loop)" in listed.output
    assert "fix-add" in listed.output and "runnable" in listed.output
    due = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--event", "post-commit"])
    assert due.exit_code == 0 and "fix-add: due (git post-commit)" in due.output, due.output
    assert [s.name for s, _ in triggers.due(Engine(store), "post-commit")] == ["fix-add"]
    status = runner.invoke(cli, ["--root", str(toy), "loop", "status"])  # how to start a first run reads every spec too
    assert status.exit_code == 0, status.output
    linted = runner.invoke(cli, ["--root", str(toy), "loop", "lint"])
    assert linted.exit_code == 1 and "Bad_Loop.md:1: The loop name 'Bad_Loop' is not allowed" in linted.output, linted.output


def test_a_scheduled_loop_nobody_accepted_here_is_not_due_and_makes_no_run_or_commit(toy: Path, store: Store, runner: CliRunner):
    """Every cron tick of `loop due --run` opened a run of a teammate's unaccepted spec and committed it ending unverifiable."""
    triggered(toy, "trigger: {on: schedule, cron: '* * * * *'}")
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "a teammate's loop")
    head = git(toy, "rev-parse", "HEAD")
    assert triggers.due(Engine(store), now=datetime.now(UTC)) == []
    first = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--run"])
    assert first.exit_code == 0, first.output
    assert "fix-add: waiting for a person's accept" in first.output and "due (" not in first.output, first.output
    assert "repo-memory loop accept fix-add" in first.output
    again = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--run"])  # the next tick: told once, not at every tick
    assert again.exit_code == 0 and "fix-add" not in again.output, again.output
    assert "waiting for a person's accept" in runner.invoke(cli, ["--root", str(toy), "loop", "due"]).output  # a person asking
    assert Engine(store).status() == [] and git(toy, "rev-parse", "HEAD") == head
    Engine(store).accept("fix-add")
    assert [s.name for s, _ in triggers.due(Engine(store), now=datetime.now(UTC))] == ["fix-add"]


def test_a_due_loop_whose_last_run_is_still_live_is_not_started_again(toy: Path, store: Store, runner: CliRunner):
    """A cron tick while the last tick's run still goes (or one a killed driver left live) started a second run beside it."""
    triggered(toy, "trigger: {on: ci}")
    engine = Engine(store)
    engine.accept("fix-add")
    live = engine.start("fix-add")["run"]
    ticked = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--run", "--event", "ci-failure", "--agent", "true"])
    assert ticked.exit_code == 0 and f"not run: Loop fix-add already has a live run {live}" in ticked.output, ticked.output
    assert [r["run"] for r in engine.status()] == [live]


def test_a_schedule_accepted_now_is_not_due_for_a_time_before_it_was_accepted(toy: Path, store: Store):
    """Accepted at 23:21, a `0 3 * * *` loop was due at once "fired at 03:00" — a time before anyone accepted it — and
    the next cron tick paid an agent round for it; a change loop counts from its accept already."""
    accepted = datetime.now(UTC)
    earlier = accepted - timedelta(hours=2)
    triggered(toy, f"trigger: {{on: schedule, cron: '{earlier.minute} {earlier.hour} * * *'}}")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    assert "fix-add" not in {s.name for s, _ in triggers.fired(engine, now=accepted + timedelta(minutes=1))}
    later = accepted + timedelta(minutes=5)
    triggered(toy, f"trigger: {{on: schedule, cron: '{later.minute} {later.hour} * * *'}}")
    store.refresh()
    engine.accept("fix-add")
    assert "fix-add" in {s.name for s, _ in triggers.fired(engine, now=later + timedelta(minutes=1))}


def test_a_change_loop_is_not_due_again_for_the_changes_its_own_run_made(toy: Path, store: Store):
    """After a run of a change loop whose agent fixed calc.py, `loop due` said at once "calc.py changed since the last
    run" (its files' times against the run's start): every cron tick paid another agent round. What changes after the
    run ended makes it due."""
    import os
    import time

    from tests.runner.conftest import FIXED, agent_script
    from repo_memory.runner import driver

    triggered(toy, "trigger: {on: change, paths: ['calc*.py']}")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    fix = agent_script(toy, f"open('calc.py', 'w').write({FIXED!r})\n")
    assert driver.drive(engine, "fix-add", fix, 60, lambda line: None) == "succeeded"
    assert "fix-add" not in {s.name for s, _ in triggers.fired(engine)}, "due again for its own run's change"
    later = time.time() + 120  # a person's edit after the run ended
    os.utime(toy / "calc.py", (later, later))
    assert "fix-add" in {s.name for s, _ in triggers.fired(engine, now=datetime.now(UTC) + timedelta(minutes=3))}
