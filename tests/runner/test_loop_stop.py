"""The Stop hook as a loop driver: every live run of the session is verified at each stop, and a check longer than the
hook may run is neither killed mid-way nor left silently live."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.formats import loops
from repo_memory.runner import verify
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.runner.conftest import FIXED, PY, hook, spec_text
from tests.runner.test_loop_processes import sleeping
from tests.shells.test_serve_lifetime import wait_until


def test_every_live_run_of_the_session_is_verified_at_stop_and_each_failing_one_is_named(toy: Path, store: Store):
    """Only the session's newest run was verified: the agent was let go with an older, failing run live and never checked."""
    passing = spec_text("always", verify='  - {level: 4, name: always, run: "true", expect: {exit: 0}, timeout: 30}')
    (toy / ".agents/loops/always.md").write_text(passing, encoding="utf-8")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    engine.accept("always")
    session = "two-loops-session"
    failing = engine.start("fix-add", harness_session=session)["run"]
    newest = engine.start("always", harness_session=session)["run"]
    payload = {"session_id": session, "cwd": str(toy), "hook_event_name": "Stop", "stop_hook_active": False,
               "last_assistant_message": "Done with both."}
    first = hook(toy, payload)
    assert first.get("decision") == "block", first
    assert failing in first["reason"] and "exit code 1" in first["reason"], first
    assert f"{newest} ended succeeded" in first["reason"], first  # the agent hears of the run that ended too
    store.refresh()
    assert engine.state(newest).state == "succeeded" and engine.state(failing).state == "running"
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    second = hook(toy, {**payload, "stop_hook_active": True, "last_assistant_message": "Fixed the sign."})
    assert "decision" not in second and f"{failing} ended succeeded" in second.get("systemMessage", ""), second
    assert hook(toy, {**payload, "last_assistant_message": "Nothing left."}) == {}


def test_a_check_still_running_when_the_hooks_time_runs_out_ends_the_run_unverifiable_saying_what_to_do(toy: Path):
    """The hook ran a 900-s step inline past the time its harness gives it, and was killed with nothing recorded."""
    step = loops.Step(index=0, level=4, name="tests", run="sleep 30", timeout=900)
    started = time.monotonic()
    outcome = verify.run(step, toy, deadline=started + 1)
    assert time.monotonic() - started < 10, "the step ran past the deadline"
    assert outcome.cannot_run and not outcome.passed, outcome  # the ladder is too long for the hook, not the work wrong
    assert "Stop hook" in outcome.reason and "repo-memory loop run" in outcome.reason, outcome.reason


def killed_mid_check(toy: Path, store: Store, nap: str,
                     during: Callable[[str], None] = lambda run: None) -> tuple[str, dict[str, Any]]:
    """A run of fix-add whose Stop hook a harness kills past its timeout while the check sleeps (`during`: what to look
    at meanwhile); returns the run and the Stop hook's payload."""
    slow = f'  - {{level: 4, name: check, run: "if [ -f slow ]; then sleep {nap}; fi; {PY} check.py", expect: {{exit: 0}}, timeout: 600}}'
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=slow), encoding="utf-8")
    (toy / "slow").write_text("the check sleeps while this file is here\n", encoding="utf-8")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add", harness_session="killed-hook")["run"]
    payload = {"session_id": "killed-hook", "cwd": str(toy), "hook_event_name": "Stop", "stop_hook_active": False,
               "last_assistant_message": "Done."}
    proc = subprocess.Popen([PY, "-m", "repo_memory", "hook", "stop"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=toy, text=True, start_new_session=True)
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload))
        proc.stdin.close()
        assert wait_until(lambda: bool(sleeping(nap)), 30), "the check never started"
        during(run)
        os.killpg(proc.pid, signal.SIGKILL)  # what a harness does to a hook past its timeout
        proc.wait(10)
    finally:
        for pid in sleeping(nap):
            os.kill(pid, signal.SIGKILL)
    return run, payload


def test_a_run_whose_stop_hook_was_killed_mid_check_is_checked_again_at_the_next_stop_and_says_so(toy: Path, store: Store):
    """The harness killed the hook mid-check: the run stayed live with no word of the check that never decided."""
    run, payload = killed_mid_check(toy, store, f"307.{os.getpid()}")
    (toy / "slow").unlink()  # the next check runs at once (a run is checked by the spec it started with: not edited)
    answer = hook(toy, {**payload, "last_assistant_message": "Done, again."})
    assert answer.get("decision") == "block" and run in answer["reason"], answer
    assert "cut off" in answer["reason"], answer


def test_doctor_and_lint_name_a_stop_hook_and_a_ladder_that_cannot_finish_in_time(toy: Path, runner: CliRunner):
    """An older setup's 60-s Stop hook and a ladder of 900-s steps were "All good" to doctor and `loop lint`."""
    assert runner.invoke(cli, ["--root", str(toy), "setup", "claude-code", "--hooks", "command"]).exit_code == 0
    settings = toy / ".claude/settings.local.json"
    written = json.loads(settings.read_text(encoding="utf-8"))
    assert [h["timeout"] for g in written["hooks"]["Stop"] for h in g["hooks"]] == [loops.STOP_TIMEOUT]
    for group in written["hooks"]["Stop"]:
        for stop_hook in group["hooks"]:
            stop_hook["timeout"] = 60  # as an older setup wrote it
    settings.write_text(json.dumps(written), encoding="utf-8")
    long = "\n".join(f'  - {{level: {n}, name: s{n}, run: "true", expect: {{exit: 0}}, timeout: 900}}' for n in (3, 4, 5))
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=long), encoding="utf-8")
    said = runner.invoke(cli, ["--root", str(toy), "doctor"]).output
    assert "Stop (short timeout)" in said and "repo-memory setup claude-code" in said, said
    assert "fix-add.md" in said and "2700 s" in said and "repo-memory loop run fix-add" in said, said
    linted = runner.invoke(cli, ["--root", str(toy), "loop", "lint", "fix-add"])
    assert linted.exit_code == 0 and "warning: its checks may take 2700 s" in linted.output, linted.output


def test_a_check_cut_off_mid_way_is_said_by_loop_status_and_the_next_session_start(toy: Path, store: Store):
    """Its Stop hook killed mid-check, the run was listed as any live run (`loop status`, the session's briefing) and the
    check that never decided was first mentioned at the run's next step; a check still under way is not called cut off.
    Then the first check cut off read "0 iteration(s)", and the briefing's `loop abort` named no run."""
    def said(*args: str, stdin: str = "") -> str:
        done = subprocess.run([PY, "-m", "repo_memory", *args], input=stdin, capture_output=True, text=True, cwd=toy,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def under_way(run: str) -> None:
        shown = said("loop", "status")
        assert run in shown and "cut off" not in shown, shown

    run, _ = killed_mid_check(toy, store, f"308.{os.getpid()}", under_way)
    status = said("loop", "status")
    assert f"{run} is live: its check that began at" in status and "was cut off before it decided" in status, status
    assert "cut off in its first check" in status and "0 iteration(s)" not in status, status  # no check decided, one began
    assert json.loads(said("loop", "status", "--json"))[0]["cut_off"], said("loop", "status", "--json")
    start = {"session_id": "next-session", "cwd": str(toy), "hook_event_name": "SessionStart", "source": "startup"}
    context = json.loads(said("hook", "session-start", stdin=json.dumps(start)))["hookSpecificOutput"]["additionalContext"]
    assert f"live loop run {run}" in context and "its check was cut off" in context, context
    assert f"a person ends it with `repo-memory loop abort {run}`" in context and "0 iteration(s)" not in context, context
