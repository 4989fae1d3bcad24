"""What asks `loop due`, through real git hooks: a git hook runs only the loops whose trigger is that git event, a run a
pre-push hook made is committed on the branch it pushed at once, and the next push sends it without checking the same
code again, a run whose log another branch lacks breaks no later hook, and a change loop waits for a change after its
accept, also one a teammate ran."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.runner import triggers
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.conftest import GIT_ENV, git
from tests.runner.conftest import BUGGY, FIXED
from tests.runner.test_loop_triggers import triggered


def committed(repo: Path, message: str) -> subprocess.CompletedProcess[str]:
    """A person's `git commit` of a new file, its hooks run by git; what git and the hooks printed."""
    (repo / f"{message}.txt").write_text(message, encoding="utf-8")
    git(repo, "add", f"{message}.txt")
    done = subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_a_commit_runs_no_scheduled_or_change_loop_from_the_git_hooks(toy: Path, store: Store, runner: CliRunner):
    """`loop hooks install` says its hooks run loops with trigger on: git; a plain `git commit` ran a cron loop and a
    change loop too, waited for their checks, and committed their receipts after the person's commit."""
    triggered(toy, "trigger: {on: schedule, cron: '* * * * *'}")
    (toy / ".agents/loops/on-change.md").write_text((toy / ".agents/loops/fix-add.md").read_text(encoding="utf-8").replace(
        "name: fix-add", "name: on-change").replace("trigger: {on: schedule, cron: '* * * * *'}",
                                                    "trigger: {on: change, paths: ['*.py']}"), encoding="utf-8")
    engine = Engine(store)
    engine.accept("fix-add")
    engine.accept("on-change")
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")  # a change after the accept: cron would run on-change
    assert runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"]).exit_code == 0
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "setup")
    committed(toy, "mine")
    assert git(toy, "log", "-1", "--format=%s").strip() == "mine"
    assert Engine(store).status() == []
    asked = {spec.name for spec, _ in triggers.fired(engine)}  # cron asks with no event: both are its to run
    assert asked == {"fix-add", "on-change"}, asked


def test_a_run_a_pre_push_hook_made_is_committed_on_the_branch_it_pushed_and_nowhere_else(toy: Path, store: Store,
                                                                                       runner: CliRunner, tmp_path: Path):
    """Left pending for "the next memory commit" so that the branch stayed at the pushed tip, the run's record was
    committed by the next repo-memory command on whatever branch was checked out then (after `git switch feature`, on
    feature), or swept into the agent's own commit there, or deleted by a `git clean` with no refusal. It is committed at
    once, on the branch the push sent, one commit past the pushed tip, and the push says it goes with the next push."""
    triggered(toy, "trigger: {on: git, events: [pre-push]}")
    Engine(store).accept("fix-add")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "setup")
    git(toy, "branch", "feature")
    git(toy, "remote", "add", "origin", str(remote))
    git(toy, "push", "-q", "-u", "origin", "main")
    assert runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"]).exit_code == 0
    committed(toy, "mine")
    pushed = subprocess.run(["git", "push", "-q"], cwd=toy, capture_output=True, text=True, env={**os.environ, **GIT_ENV},
                            timeout=120)
    assert pushed.returncode == 0, pushed.stderr
    assert "fix-add: due (git pre-push)" in pushed.stderr, pushed.stderr
    assert "the run's record is committed past the tip this push sends: your next push takes it\n" in pushed.stderr, \
        pushed.stderr  # and checks it again: this check failed
    assert [(r["loop"], r["state"]) for r in Engine(store).status()] == [("fix-add", "aborted")]
    assert "run ended aborted" in git(toy, "log", "-1", "--format=%s"), git(toy, "log", "--oneline", "-3")
    assert git(toy, "rev-parse", "HEAD^") == git(toy, "rev-parse", "origin/main"), git(toy, "log", "--oneline", "-3")
    assert git(toy, "status", "--porcelain", "--", ".agents") == ""  # nothing left on disk for another branch to take
    feature = git(toy, "rev-parse", "feature")
    git(toy, "switch", "-q", "feature")
    assert runner.invoke(cli, ["--root", str(toy), "loop", "list"]).exit_code == 0  # the next repo-memory command
    assert git(toy, "rev-parse", "HEAD") == feature, git(toy, "log", "--oneline", "-3")


def pushed(repo: Path, *args: str) -> str:
    """A person's `git push ARGS`, its pre-push hook run by git; what git and the hook printed on stderr."""
    done = subprocess.run(["git", "push", "-q", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_pushes_in_a_row_settle_once_the_record_of_the_one_check_is_pushed(toy: Path, store: Store, runner: CliRunner,
                                                                           tmp_path: Path):
    """Every push ran the loop again over the same code and committed its record past the tip that push sent: after
    `git push origin main`, `git push backup main` and `git push origin main` the branch was still one commit ahead of
    origin, and of backup two, for ever. The code one run checked is not checked again while only records changed: the
    next push takes the record, runs nothing and leaves the remote at the branch's tip."""
    triggered(toy, "trigger: {on: git, events: [pre-push]}")
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")  # the check passes: a failing one is checked at every push
    Engine(store).accept("fix-add")
    (toy / "notes-scratch.txt").write_text("a person's scratch notes, never added\n", encoding="utf-8")
    (toy / "node_modules").mkdir()  # untracked and not ignored: `git add -A` into the check's tree wrote each of them
    for n in range(300):
        (toy / "node_modules" / f"m{n}.js").write_text(f"module.exports = {n}\n", encoding="utf-8")
    objects = len(list((toy / ".git/objects").rglob("*")))
    for name in ("origin", "backup"):
        git(tmp_path, "init", "-q", "--bare", str(tmp_path / f"{name}.git"))
        git(toy, "remote", "add", name, str(tmp_path / f"{name}.git"))
    git(toy, "add", "-A", "--", ":!notes-scratch.txt", ":!node_modules")
    git(toy, "commit", "-q", "-m", "setup")
    git(toy, "push", "-q", "-u", "origin", "main")
    assert runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"]).exit_code == 0
    committed(toy, "mine")
    first = pushed(toy, "origin", "main")
    assert "fix-add: due (git pre-push)" in first and "your next push takes it, and checks the same code no more" in first, first
    assert git(toy, "rev-parse", "HEAD^") == git(toy, "rev-parse", "origin/main")  # the record, one past the pushed tip
    second = pushed(toy, "backup", "main")
    assert "fix-add: checked at fix-add-" in second and "(succeeded), nothing changed since" in second, second
    assert git(toy, "rev-parse", "backup/main") == git(toy, "rev-parse", "HEAD"), git(toy, "log", "--oneline", "-4")
    pushed(toy, "origin", "main")
    assert git(toy, "rev-parse", "origin/main") == git(toy, "rev-parse", "HEAD"), git(toy, "log", "--oneline", "-4")
    assert git(toy, "status", "-sb").splitlines()[0] == "## main...origin/main", git(toy, "status", "-sb")
    assert len(Engine(store).status()) == 1
    assert len(list((toy / ".git/objects").rglob("*"))) < objects + 100, "the untracked files were written into .git"
    committed(toy, "more")  # new code: the next push checks it
    assert "fix-add: due (git pre-push)" in pushed(toy, "origin", "main")
    assert len(Engine(store).status()) == 2


def test_a_push_of_a_commit_the_loop_checked_runs_nothing_and_sends_its_record(toy: Path, store: Store, runner: CliRunner,
                                                                                tmp_path: Path):
    """With `on: git` (both hooks) the push checked again what the commit had just checked, and left its own record
    behind the tip it sent: the branch stayed one commit ahead of its remote after every push."""
    triggered(toy, "trigger: {on: git}")
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    Engine(store).accept("fix-add")
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "origin.git"))
    git(toy, "remote", "add", "origin", str(tmp_path / "origin.git"))
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "setup")
    git(toy, "push", "-q", "-u", "origin", "main")
    assert runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"]).exit_code == 0
    assert "fix-add: due (git post-commit)" in committed(toy, "mine").stderr
    assert "(succeeded), nothing changed since: not run (git pre-push)" in pushed(toy)
    assert git(toy, "rev-parse", "origin/main") == git(toy, "rev-parse", "HEAD"), git(toy, "log", "--oneline", "-4")
    assert len(Engine(store).status()) == 1


def test_a_commit_on_a_branch_that_lacks_an_earlier_runs_log_still_runs_its_loop(toy: Path, store: Store, runner: CliRunner):
    """`loop due` read the runs the index listed without looking at the files: on a branch made before the commit that
    holds a run's log, the hook failed with "No loop run '…'. loop_status() lists the runs" (an MCP tool, at a terminal)."""
    triggered(toy, "trigger: {on: git, events: [post-commit]}")
    Engine(store).accept("fix-add")
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "setup")
    assert runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"]).exit_code == 0
    base = git(toy, "rev-parse", "HEAD").strip()
    committed(toy, "first")  # the hook's run, its log committed after "first"
    assert len(Engine(store).status()) == 1
    git(toy, "checkout", "-q", "-b", "feature", base)
    second = committed(toy, "second")
    assert "Error" not in second.stderr and "loop_status()" not in second.stderr, second.stderr
    assert "fix-add: due (git post-commit)" in second.stderr, second.stderr


def test_a_change_loop_that_never_ran_waits_for_a_change_after_its_accept(toy: Path, store: Store, runner: CliRunner):
    """With no run yet the cut-off was the start of time: the loop was due at once, "calc.py changed", though nobody had
    touched calc.py since it was committed."""
    triggered(toy, "trigger: {on: change, paths: ['calc.py']}")
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "setup")
    past = (toy / "calc.py").stat().st_mtime - 60
    os.utime(toy / "calc.py", (past, past))  # written a minute before the accept, as in any repository
    engine = Engine(store)
    engine.accept("fix-add")
    due = runner.invoke(cli, ["--root", str(toy), "loop", "due"])
    assert due.exit_code == 0 and "fix-add" not in due.output, due.output
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    due = runner.invoke(cli, ["--root", str(toy), "loop", "due"])
    assert "fix-add: due (calc.py changed since the loop was accepted)" in due.output, due.output


def test_a_change_loop_a_teammate_ran_waits_for_a_change_after_the_accept_on_a_new_clone(
        toy: Path, store: Store, runner: CliRunner, tmp_path: Path):
    """The cut-off was the teammate's run, older than the clone: every file a checkout writes is newer, so the loop was due
    at once after the accept, "calc.py changed since the last run", though nobody had touched calc.py since."""
    triggered(toy, "trigger: {on: change, paths: ['calc.py']}")
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "setup")
    Engine(store).accept("fix-add")
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    ran = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--run"])  # the teammate's run, committed
    assert "fix-add: due (calc.py changed since the loop was accepted)" in ran.output, ran.output
    git(toy, "commit", "-q", "-am", "fixed")
    clone = tmp_path / "mine"
    git(tmp_path, "clone", "-q", str(toy), str(clone))
    sha = Engine(store).spec("fix-add").sha256
    accepted = runner.invoke(cli, ["--root", str(clone), "loop", "accept", "fix-add", "--sha", sha])
    assert accepted.exit_code == 0, accepted.output
    assert runner.invoke(cli, ["--root", str(clone), "loop", "status"]).output.count("fix-add-") == 1  # the teammate's run
    due = runner.invoke(cli, ["--root", str(clone), "loop", "due"])
    assert due.exit_code == 0 and "fix-add" not in due.output, due.output
    (clone / "calc.py").write_text(BUGGY, encoding="utf-8")
    due = runner.invoke(cli, ["--root", str(clone), "loop", "due"])
    assert "fix-add: due (calc.py changed since the loop was accepted)" in due.output, due.output
