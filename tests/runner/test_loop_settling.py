"""When a git hook may leave an `on: git` loop out, through real hooks, pushes to bare remotes and `loop run`: only when a
run of the same spec verified the very files HEAD holds (a run that checked nothing, a check that failed, or a check of
edits since discarded leaves the next commit or push to check again), and then it says so, naming the run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.conftest import GIT_ENV, git
from tests.runner.conftest import BUGGY, FIXED, agent_script
from tests.runner.test_loop_events import committed, pushed
from tests.runner.test_loop_triggers import triggered


def hooked(toy: Path, store: Store, runner: CliRunner, trigger: str, code: str = BUGGY) -> None:
    """The toy with calc.py as `code`, loop fix-add asked for by `trigger` and accepted, committed and pushed to two bare
    remotes beside it (origin and backup), and the git hooks of `loop hooks install`."""
    triggered(toy, trigger)
    (toy / "calc.py").write_text(code, encoding="utf-8")
    (toy / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    Engine(store).accept("fix-add")
    for name in ("origin", "backup"):
        git(toy.parent, "init", "-q", "--bare", str(toy.parent / f"{name}.git"))
        git(toy, "remote", "add", name, str(toy.parent / f"{name}.git"))
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "setup")
    git(toy, "push", "-q", "-u", "origin", "main")
    git(toy, "push", "-q", "backup", "main")
    assert runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"]).exit_code == 0


def checks(said: str, event: str = "pre-push") -> bool:
    """Whether a hook ran fix-add's check and said it failed."""
    return f"fix-add: due (git {event})" in said and "failed: Iteration 1 failed at step" in said


@pytest.mark.parametrize("end", ["aborted", "blocked"])
def test_a_run_that_checked_nothing_leaves_the_next_push_to_check(toy: Path, store: Store, runner: CliRunner, end: str):
    """A run that ended before any check (a person's `loop abort`, an agent's blocked report) counted as a check of the
    code it began at: the next push ran nothing and printed nothing, while calc.py still failed check.py."""
    hooked(toy, store, runner, "trigger: {on: git, events: [pre-push]}")
    engine = Engine(store)
    run = engine.start("fix-add", actor="human")["run"]
    if end == "aborted":
        engine.abort(run, "wrong moment")
    else:
        engine.step(run, "cannot tell", "blocked")
    assert [r["state"] for r in engine.status()] == [end]
    assert checks(pushed(toy, "origin", "main"))


def test_a_failed_check_says_so_at_every_push_and_after_an_amend(toy: Path, store: Store, runner: CliRunner):
    """After a post-commit run failed, pushes to two remotes, `commit --amend` and `push -f` sent the failing code and
    printed nothing, and `loop due --event pre-push` listed nothing: each had said "failed" before."""
    hooked(toy, store, runner, "trigger: {on: git}")
    assert checks(committed(toy, "mine").stderr, "post-commit")
    assert checks(pushed(toy, "origin", "main"))
    assert checks(pushed(toy, "backup", "main"))
    amended = subprocess.run(["git", "commit", "-q", "--amend", "--no-edit"], cwd=toy, capture_output=True, text=True,
                             env={**os.environ, **GIT_ENV}, timeout=120)
    assert amended.returncode == 0 and checks(amended.stderr, "post-commit"), amended.stderr
    (toy / "staged.txt").write_text("not committed\n", encoding="utf-8")
    git(toy, "add", "staged.txt")
    assert checks(pushed(toy, "-f", "origin", "main"))
    assert git(toy, "status", "--porcelain", "staged.txt") == "A  staged.txt\n"  # the person's index, as they left it
    due = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--event", "pre-push"])
    assert "fix-add: due (git pre-push)" in due.output, due.output


def test_a_check_of_edits_the_person_then_discarded_leaves_the_push_to_check(toy: Path, store: Store, runner: CliRunner):
    """`loop run` with an agent that fixed calc.py without committing ended succeeded; the person discarded the edit
    (`git checkout calc.py`), check.py failed again, and `git push` sent it without a check: the run had begun at HEAD."""
    hooked(toy, store, runner, "trigger: {on: git, events: [pre-push]}")
    fixer = agent_script(toy, f"open('calc.py', 'w').write({FIXED!r})\n")
    ran = runner.invoke(cli, ["--root", str(toy), "loop", "run", "fix-add", "--agent", fixer])
    assert ran.exit_code == 0 and [r["state"] for r in Engine(store).status()] == ["succeeded"], ran.output
    git(toy, "checkout", "-q", "calc.py")
    assert checks(pushed(toy, "origin", "main"))


def test_a_hook_that_leaves_a_loop_out_names_the_run_that_checked_the_same_files(toy: Path, store: Store, runner: CliRunner):
    """A push after a passing post-commit check ran nothing and said nothing of the loop; `loop due --event pre-push`
    listed nothing, with no word of why."""
    hooked(toy, store, runner, "trigger: {on: git}", FIXED)
    assert "fix-add: due (git post-commit)" in committed(toy, "mine").stderr
    run = Engine(store).status()[0]["run"]
    said = f"fix-add: checked at {run} (succeeded), nothing changed since: not run (git pre-push)"
    assert said in pushed(toy, "origin", "main")
    due = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--event", "pre-push"])
    assert due.exit_code == 0 and due.output.strip() == said, due.output
    assert len(Engine(store).status()) == 1
