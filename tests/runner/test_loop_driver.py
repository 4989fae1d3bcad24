"""`repo-memory loop run` as a person sees it: every end says why, a round that times out takes its agent with it, and
Ctrl-C ends the run honestly instead of leaving it live for ever."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.runner import driver
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.conftest import git
from tests.runner.conftest import PY, spec_text
from tests.runner.test_loop_processes import sleeping
from tests.shells.test_serve_lifetime import wait_until


def test_a_round_that_times_out_kills_the_agent_and_says_so(toy: Path, store: Store):
    """Only the shell was killed: the agent behind `cd . && …` kept editing the repository after `loop run` returned."""
    nap = f"303.{os.getpid()}"
    Engine(store).accept("fix-add")
    lines: list[str] = []
    try:
        state = driver.drive(Engine(store), "fix-add", f"cd . && sleep {nap}", 1, lines.append)
        left = sleeping(nap)
    finally:
        for pid in sleeping(nap):
            os.kill(pid, signal.SIGKILL)
    assert left == [], "the agent of a timed-out round still runs"
    assert state == "no_progress", lines
    assert any(line.startswith("round 1: the agent timed out after 1 s") for line in lines), lines


def test_every_end_of_loop_run_says_why(toy: Path, store: Store):
    """`round 1: unverifiable` and `round 1: blocked` said nothing of why; the reason was only in the log."""
    missing = '  - {level: 4, name: lint, run: "ruff-not-installed-here check .", expect: {exit: 0}}'
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=missing), encoding="utf-8")
    store.refresh()
    Engine(store).accept("fix-add")
    lines: list[str] = []
    assert driver.drive(Engine(store), "fix-add", "true", 60, lines.append) == "unverifiable"
    assert any(line.startswith("round 1: unverifiable — Step 'lint' cannot run") and "install the tool" in line
               for line in lines), lines
    lines.clear()
    said = "echo looked around; echo 'BLOCKED: need the staging password'"
    assert driver.drive(Engine(store), "fix-add", said, 60, lines.append) == "blocked"
    assert any(line.startswith("round 1: blocked — ") and "need the staging password" in line for line in lines), lines


def _live(repo: Path) -> list[dict]:
    store = Store(Config.load(repo))
    try:
        return Engine(store).status()
    finally:
        store.close()


def _reap(proc: subprocess.Popen, nap: str) -> None:
    """What a test's `loop run` left behind: agents sleeping `nap`, and the run itself."""
    for pid in sleeping(nap):
        os.kill(pid, signal.SIGKILL)
    if proc.poll() is None:
        proc.kill()


@pytest.mark.parametrize("how", ["Ctrl-C", "SIGTERM"])
def test_an_interrupted_loop_run_ends_its_run_aborted_and_committed_and_its_agent_with_it(toy: Path, store: Store,
                                                                                         runner: CliRunner, how: str):
    """Ctrl-C printed "Aborted!" and left the run `running` for ever (briefed as live, an agent's loop_start refused), and
    git, hit by the same Ctrl-C, failed the commit with a broken pipe."""
    assert runner.invoke(cli, ["--root", str(toy), "init"]).exit_code == 0
    Engine(store).accept("fix-add")
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "toy")
    nap = f"304.{os.getpid()}{len(how)}"
    command = [PY, "-m", "repo_memory", "--root", str(toy), "loop", "run", "fix-add", "--agent", f"sleep {nap}"]
    proc = subprocess.Popen(command, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ})
    try:
        assert wait_until(lambda: bool(sleeping(nap)), 30), "the agent never started"
        if how == "Ctrl-C":
            os.killpg(proc.pid, signal.SIGINT)  # a terminal sends it to the whole foreground group
        else:
            os.kill(proc.pid, signal.SIGTERM)
        output = proc.communicate(timeout=60)[0]
        left = sleeping(nap)
    finally:
        _reap(proc, nap)
    assert left == [], "the interrupted round's agent still runs"
    assert proc.returncode != 0 and "memory commit failed" not in output, output
    (run,) = _live(toy)
    assert run["state"] == "aborted", (run, output)
    assert f"run {run['run']} ended aborted" in output and "interrupted" in output, output
    assert git(toy, "status", "--porcelain", "--", ".agents/experience") == "", "the run's end was not committed"


def test_loop_run_refuses_a_loop_with_a_live_run_and_says_how_to_go_on(toy: Path, store: Store, runner: CliRunner):
    """A second `loop run` silently started another run beside the live one, where an agent's loop_start refuses."""
    engine = Engine(store)
    engine.accept("fix-add")
    live = engine.start("fix-add")["run"]
    refused = runner.invoke(cli, ["--root", str(toy), "loop", "run", "fix-add", "--agent", "true"])
    assert refused.exit_code == 1, refused.output
    assert live in refused.output and f"repo-memory loop abort {live}" in refused.output and "--new" in refused.output
    assert [r["run"] for r in engine.status()] == [live]
    again = runner.invoke(cli, ["--root", str(toy), "loop", "run", "fix-add", "--agent", "true", "--new"])
    assert len(engine.status()) == 2 and "round 1:" in again.output, again.output


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_ends_an_agent_that_ignores_sigterm_and_still_records_the_run(toy: Path, store: Store, runner: CliRunner,
                                                                            tmp_path: Path, presses: int):
    """An agent that ignored SIGTERM kept `loop run` silent for its whole --agent-timeout (1800 s by default); a second
    Ctrl-C then left the run `running` for ever, nothing recorded or committed."""
    assert runner.invoke(cli, ["--root", str(toy), "init"]).exit_code == 0
    Engine(store).accept("fix-add")
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "toy")
    nap = f"305.{os.getpid()}{presses}"
    said = tmp_path / "said.txt"
    command = [PY, "-m", "repo_memory", "--root", str(toy), "loop", "run", "fix-add", "--agent", f"trap '' TERM; sleep {nap}"]
    with said.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(command, start_new_session=True, stdout=out, stderr=subprocess.STDOUT, env={**os.environ})
    try:
        assert wait_until(lambda: bool(sleeping(nap)), 30), "the agent never started"
        os.killpg(proc.pid, signal.SIGINT)
        told = wait_until(lambda: "stopping the agent" in said.read_text(encoding="utf-8"), 2)
        assert told, f"the first Ctrl-C said nothing at once: {said.read_text(encoding='utf-8')!r}"
        if presses == 2:
            os.killpg(proc.pid, signal.SIGINT)
            assert wait_until(lambda: not sleeping(nap), driver.AGENT_GRACE - 2), "a second Ctrl-C did not kill the agent at once"
        proc.wait(timeout=driver.AGENT_GRACE + 20)
        left = sleeping(nap)
    finally:
        _reap(proc, nap)
    output = said.read_text(encoding="utf-8")
    assert left == [], "the agent still runs"
    (run,) = _live(toy)
    assert run["state"] == "aborted", (run, output)
    assert f"run {run['run']} ended aborted" in output, output
    assert git(toy, "status", "--porcelain", "--", ".agents/experience") == "", "the run's end was not committed"


def test_loop_status_says_how_to_end_a_live_run(toy: Path, store: Store, runner: CliRunner):
    """A run a third Ctrl-C (or SIGKILL) left live was listed as `running`, with no word of how to end it."""
    engine = Engine(store)
    engine.accept("fix-add")
    live = engine.start("fix-add")["run"]
    listed = runner.invoke(cli, ["--root", str(toy), "loop", "status"])
    assert listed.exit_code == 0 and f"repo-memory loop abort {live}" in listed.output, listed.output


def test_a_run_a_person_aborts_while_loop_run_drives_it_ends_saying_so(toy: Path, store: Store, runner: CliRunner):
    """The driver stepped the ended run and died with "Error: Run … already ended: aborted. Start a new run with
    loop_start('fix-add')": an MCP tool, to a person at a terminal."""
    Engine(store).accept("fix-add")
    aborts = (f"{PY} -m repo_memory loop abort \"$REPO_MEMORY_RUN\" --reason 'changed my mind' >/dev/null; "
              "cat >/dev/null; echo done")
    result = runner.invoke(cli, ["--root", str(toy), "loop", "run", "fix-add", "--agent", aborts])
    assert result.exit_code == 1, result.output
    assert "Error" not in result.output and "loop_start" not in result.output, result.output
    assert "round 1: the run was aborted meanwhile by a person (`repo-memory loop abort`): changed my mind" in result.output
    assert [r["state"] for r in Engine(store).status()] == ["aborted"]


def test_a_process_the_agent_left_running_in_a_session_of_its_own_ends_with_its_round(toy: Path, store: Store):
    """Only the agent's process group was killed: a `setsid sleep &` of the agent's outlived its round and the run."""
    nap = f"306.{os.getpid()}"
    Engine(store).accept("fix-add")
    agent = f"cat >/dev/null; setsid sleep {nap} >/dev/null 2>&1 </dev/null & echo done"
    try:
        driver.drive(Engine(store), "fix-add", agent, 60, lambda line: None)
        left = sleeping(nap)
    finally:
        for pid in sleeping(nap):
            os.kill(pid, signal.SIGKILL)
    assert left == [], "what the agent left running outlived its round"


@pytest.mark.parametrize("placed", ['"{instruction}"', "'{instruction}'", "{instruction}", '"Task: {instruction}!"'])
def test_the_instruction_reaches_the_agent_as_one_word_whatever_quotes_hold_its_place_and_is_never_run(
        toy: Path, store: Store, tmp_path: Path, placed: str):
    """`--agent "codex exec \\"{instruction}\\""`: the instruction was put in shell-quoted, which inside double quotes is
    text again, so a `$(…)` in the spec's goal (or in a failing test's output, from the second round on) ran."""
    spec = toy / ".agents/loops/fix-add.md"
    spec.write_text(spec.read_text(encoding="utf-8").replace("Make check.py pass", "Make check.py pass $(touch pwned) `touch pwned2`"),
                    encoding="utf-8")
    store.refresh()
    Engine(store).accept("fix-add")
    said = tmp_path / "said.txt"
    agent = f"{PY} -c 'import sys; open(sys.argv[1], \"w\").write(repr(sys.argv[2:]))' {said} {placed}"
    driver.drive(Engine(store), "fix-add", agent, 60, lambda line: None)
    assert not (toy / "pwned").exists() and not (toy / "pwned2").exists(), "text of the spec ran as a command"
    words = eval(said.read_text(encoding="utf-8"))  # noqa: S307 - the repr written just above
    assert len(words) == 1 and "$(touch pwned) `touch pwned2`" in words[0], words
    assert words[0].startswith("Task: ") == placed.startswith('"Task')


def test_every_round_hears_the_specs_notes_and_how_it_is_checked_not_only_the_first(toy: Path, store: Store, tmp_path: Path):
    """Each round is a new agent session: from round 2 on it heard only the goal and the failure, never the spec's notes
    ("check.py is the specification": do not edit it) nor how the round is checked, nor how to say BLOCKED."""
    Engine(store).accept("fix-add")
    heard = tmp_path / "heard"
    heard.mkdir()
    agent = f"{PY} -c 'import sys, os; n = len(os.listdir(sys.argv[1])); open(f\"{{sys.argv[1]}}/{{n}}\", \"w\").write(sys.stdin.read())' {heard}"
    driver.drive(Engine(store), "fix-add", agent, 60, lambda line: None)
    rounds = [(heard / str(n)).read_text(encoding="utf-8") for n in range(len(list(heard.iterdir())))]
    assert len(rounds) >= 2, rounds
    for said in rounds:
        assert "Fix calc.py; check.py is the specification." in said and "BLOCKED: <why>" in said, said
        assert "success needs every step up to level 4" in said, said
    assert "add(2, 2) returned 0" in rounds[1], rounds[1]  # and what failed


def test_only_a_line_that_begins_with_blocked_ends_the_run_blocked(toy: Path, store: Store):
    """A round that fixed calc.py and quoted a note holding "BLOCKED:" ended the run blocked, unchecked."""
    Engine(store).accept("fix-add")
    fixed = f"{PY} -c \"open('calc.py', 'w').write('def add(a, b):\\n    return a + b\\n')\"; echo '  > BLOCKED: as the docs put it'; echo fixed"
    lines: list[str] = []
    assert driver.drive(Engine(store), "fix-add", fixed, 60, lines.append) == "succeeded", lines


def test_loop_abort_of_a_run_whose_loop_run_was_killed_ends_the_agent_it_left(toy: Path, store: Store, runner: CliRunner):
    """`loop run` killed with SIGKILL (no time to end its round): its agent ran on under init, and `loop abort` of the
    run ended the run but left the agent, and a check it had begun, running."""
    Engine(store).accept("fix-add")
    nap = f"309.{os.getpid()}"
    command = [PY, "-m", "repo_memory", "--root", str(toy), "loop", "run", "fix-add", "--agent", f"sleep {nap}"]
    proc = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ})
    try:
        assert wait_until(lambda: bool(sleeping(nap)), 30), "the agent never started"
        proc.kill()
        proc.wait(10)
        assert sleeping(nap), "the agent is still running once its driver is gone"
        (run,) = _live(toy)
        aborted = runner.invoke(cli, ["--root", str(toy), "loop", "abort", run["run"]])
        assert aborted.exit_code == 0, aborted.output
        assert wait_until(lambda: not sleeping(nap), 10), "loop abort left the run's agent running"
    finally:
        _reap(proc, nap)
