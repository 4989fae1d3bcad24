"""`repo-memory loop run`: drive a headless agent (claude -p, codex exec, any command) round by round."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from repo_memory.errors import ConflictError
from repo_memory.formats import when
from repo_memory.guards.shellwords import quoted
from repo_memory.runner import checklist, verify
from repo_memory.runner.engine import TERMINAL, Engine
from repo_memory.runner.verify import CANNOT_RUN

REPORT_CHARS = 8000
AGENT_GRACE = 5.0  # seconds an agent told to stop (SIGTERM) gets to end, with what it started, before it is killed
SIGNALS = {signal.SIGINT: "Ctrl-C (SIGINT)", signal.SIGTERM: "SIGTERM"}


@dataclass(frozen=True)
class Round:
    """What one run of the agent command left: its report, the status it implies, its checklist answers, why it
    could not start ('' when it did), and whether it timed out."""

    report: str
    status: str
    answers: dict[str, bool] | None = None
    not_started: str = ""
    timed_out: bool = False


class Stop:
    """Ctrl-C or SIGTERM while `loop run` drives a run. The first stops the agent (SIGTERM, then SIGKILL after AGENT_GRACE)
    and any check in flight, a second kills the agent at once; either way the run then ends aborted, recorded and
    committed. Only a third gives up recording it (KeyboardInterrupt), saying which run it leaves live."""

    def __init__(self, echo: Callable[[str], None]) -> None:
        self.echo = echo
        self.signal = 0
        self.presses = 0
        self.round = 1  # the round it came in
        self.run = ""
        self.agent: subprocess.Popen[str] | None = None
        self._kill: threading.Timer | None = None

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.presses += 1
        said = _said(signum)
        if self.presses > 2:  # the person will not wait even for the record: say what is left behind
            left = f"run {self.run} stays live: end it with `repo-memory loop abort {quoted(self.run)}`" if self.run else \
                "the run may stay live: see `repo-memory loop status`"
            self._tell(f"{said} a third time: not recording the run's end; {left}")
            raise KeyboardInterrupt
        self.signal = self.signal or signum
        agent = self.agent
        if self.presses == 2:
            self._tell(f"{said} again: " + ("killing the agent now; " if agent is not None else "") + "the run's end is "
                       "still recorded and committed (a third interrupt leaves the run live)")
            _signal(agent, signal.SIGKILL)
        elif agent is None:
            self._tell(f"{said}: stopping any check in flight; then the run ends aborted, recorded and committed")
        else:
            self._tell(f"{said}: stopping the agent (killed if it has not ended in {AGENT_GRACE:g} s; interrupt again to kill "
                       "it at once) and any check in flight; then the run ends aborted, recorded and committed")
            _signal(agent, signal.SIGTERM)  # its own session: the terminal's Ctrl-C does not reach it
            # An agent may ignore SIGTERM: the person waits out the grace, not the whole --agent-timeout.
            self._kill = threading.Timer(AGENT_GRACE, _signal, (agent, signal.SIGKILL))
            self._kill.daemon = True
            self._kill.start()
        verify.end_all()  # a verification step in flight stops and judges nothing

    def watch(self, agent: subprocess.Popen[str] | None) -> None:
        """The round's agent a signal ends (None: the round is over, and so is any kill still pending for it)."""
        self.agent = agent
        if agent is None and self._kill is not None:
            self._kill.cancel()

    def _tell(self, line: str) -> None:
        # The main thread may be mid-write to the same stream, which a reentrant write refuses: the stop goes on unsaid.
        with contextlib.suppress(RuntimeError):
            self.echo(line)

    @property
    def said(self) -> str:
        return _said(self.signal) if self.signal else ""


def _said(signum: int) -> str:
    return SIGNALS.get(signal.Signals(signum), f"signal {signum}")


def _signal(agent: subprocess.Popen[str] | None, how: int) -> None:
    """Send `how` to the agent's process group (a session of its own), if there is an agent and it is still there."""
    if agent is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(agent.pid, how)


@contextlib.contextmanager
def stoppable(echo: Callable[[str], None]) -> Iterator[Stop]:
    """Catch SIGINT and SIGTERM (in the main thread) while a run is driven, so the run ends recorded, not left live."""
    stop = Stop(echo)
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    before = {number: signal.signal(number, stop) for number in SIGNALS}
    try:
        yield stop
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def refuse_live(engine: Engine, name: str) -> None:
    """ConflictError when loop `name` has a live run: a second one is started only on purpose (as loop_start does)."""
    if live := engine.live(name):
        run = live[0]
        raise ConflictError(f"Loop {name} already has a live run {run.run} (started {when.shown(when.at(run.started))}, "
                            f"{run.iterations} iteration(s)): an agent continues it with loop_step(run='{run.run}', …); "
                            f"a person ends it with `repo-memory loop abort {quoted(run.run)}`, or starts another beside it with "
                            f"`repo-memory loop run {quoted(name)} --new`.")


def drive(engine: Engine, name: str, agent: str, timeout: float, echo: Callable[[str], None], new: bool = False) -> str:
    """Run loop `name` with `agent` until a terminal state; return that state. Refused while the loop has a live run,
    unless `new`. Ctrl-C or SIGTERM (once or twice) ends the agent and the run (aborted, recorded and committed), then
    KeyboardInterrupt; see Stop."""
    if not new:
        refuse_live(engine, name)
    with stoppable(echo) as stop:
        started = engine.start(name, actor="human")
        run = stop.run = started["run"]
        echo(f"run {run}: {started['state']}")
        state = "running"
        try:
            state = _rounds(engine, name, started, agent, timeout, echo, stop)
        except ConflictError:  # a verification step the signal stopped: it judged nothing
            if not stop.signal:
                raise
        if stop.signal and state not in TERMINAL:
            engine.abort(run, f"`loop run` was interrupted by {stop.said} in round {stop.round}; the agent was stopped")
            echo(f"round {stop.round}: interrupted by {stop.said}: the agent was stopped and the run ends aborted")
            state = "aborted"
        echo(f"run {run} ended {state}; receipt and evidence: repo-memory log show {quoted(run)}")
        if stop.signal:
            raise KeyboardInterrupt
        return state


def _rounds(engine: Engine, name: str, started: dict[str, Any], agent: str, timeout: float, echo: Callable[[str], None],
            stop: Stop) -> str:
    """The rounds of run `started` up to a terminal state or an interruption; the state they leave."""
    run = started["run"]
    spec = engine.spec(name)
    ladder = ", ".join(f"L{s.level} {s.name}" for s in spec.steps)
    # This round's agent answers in what it prints, not with loop_step: the driver steps the run when the round ends.
    # Each round is a new agent session: each hears the goal, the spec's notes and how the round is checked.
    brief = f"Goal: {started['goal']}\n\n{started['notes']}".strip()
    how = (f"When this round ends, repo-memory verifies ({ladder}); success needs every step up to level "
           f"{spec.success_requires_level}. Print a line BLOCKED: <why> if you cannot proceed.")
    asked = checklist.ask(started["checklist"])
    instruction = f"{brief}\n\nWork toward the goal. {how}\n{asked}".strip()
    state = "running"
    for number in range(1, spec.max_iterations + 2):
        if stop.signal:
            return state
        stop.round = number
        echo(f"round {number}: running the agent…")
        before = engine.state(run).iterations
        done = _round(agent, instruction, run, engine.store.root, timeout, stop)
        if stop.signal:
            return state
        if done.not_started:  # no work was done to judge: the run ends uncharged
            engine.abort(run, done.not_started)
            echo(f"round {number}: {done.not_started}. Check the --agent command (is it installed and on PATH?).")
            return "aborted"
        if done.timed_out:
            echo(f"round {number}: the agent timed out after {timeout:g} s and was stopped; what it changed so far is verified")
        engine.store.refresh()
        now = engine.state(run)
        if now.state in TERMINAL and now.iterations == before:  # ended meanwhile, not by a step: `loop abort`, here or elsewhere
            echo(f"round {number}: the run was aborted meanwhile {_aborted_by(engine, run)}: {_decided(engine, run)}")
            return now.state
        if now.iterations > before:  # the agent reported through loop_step itself: that step was this round's
            state = now.state if now.state in TERMINAL else "continue"
            why = f" — {_decided(engine, run)}" if state in TERMINAL else ""
            echo(f"round {number}: the agent stepped the run itself; {state}{why}")
            instruction = f"{brief}\n\nThe run continues: your last loop_step answer says what failed. Fix that. {how}\n{asked}".strip()
        else:
            result = engine.step(run, done.report, done.status, done.answers, in_words=True,
                                 then="Fix this; the checks run again when this round ends.")
            state = str(result["state"])
            echo(f"round {number}: {state} — {_why(result, done)}")
            told = str(result["instruction"])
            instruction = f"{brief}\n\n{told}\n\n{how}\n{asked if checklist.PREFIX not in told else ''}".strip()
        if state in TERMINAL or stop.signal:
            return state
    return state


def _why(result: dict[str, Any], done: Round) -> str:
    """Why the round ended as it did, in a line: the agent's own BLOCKED: line, else the engine's reason."""
    if result["state"] == "blocked":
        said = next((m[1].strip() for m in BLOCKED.finditer(done.report)), "")
        return f"the agent says it cannot proceed: {said[:300]}"
    why = str(result["instruction"]).removeprefix(f"Stop: the run ended {result['state']}. ")
    return (why.splitlines() or [""])[0][:500]


def _decided(engine: Engine, run: str) -> str:
    """The reason of the run's last decision, as its loop.decision record says it."""
    decisions = [str(r.get("text") or "") for r in engine.store.trusted(run) if r["kind"] == "loop.decision"]
    return (decisions[-1].split(": ", 1)[-1].splitlines() or [""])[0][:500] if decisions else ""


def _aborted_by(engine: Engine, run: str) -> str:
    """Who ended the run without a step, as its last decision's record says."""
    decisions = [r for r in engine.store.trusted(run) if r["kind"] == "loop.decision"]
    source = decisions[-1].get("source") if decisions else None
    actor = source.get("actor") if isinstance(source, dict) else None
    return "by a person (`repo-memory loop abort`)" if actor in (None, "human") else f"by {actor}"


BLOCKED = re.compile(r"^BLOCKED:(.*)$", re.MULTILINE)  # a line of its own: not a quote of the words in a note or a log
PLACE, VALUE = "{instruction}", "${REPO_MEMORY_INSTRUCTION}"
# The instruction's place in the agent command, by the quotes around it: the variable expanded as one word, never text
# the shell reads again (quoted into the command, inside the person's double quotes a `$(…)` of the goal, or of a
# failing test's output, ran).
IN_QUOTES = {"": f'"{VALUE}"', '"': VALUE, "'": f"'\"{VALUE}\"'"}


def placed(agent: str) -> str:
    """The agent command with each `{instruction}` made $REPO_MEMORY_INSTRUCTION as one word, read as sh reads quotes."""
    out, quote, i = [], "", 0
    while i < len(agent):
        if agent.startswith(PLACE, i):
            out.append(IN_QUOTES[quote])
            i += len(PLACE)
            continue
        char = agent[i]
        if char == "\\" and quote != "'":  # the next character is taken as it is
            out.append(agent[i:i + 2])
            i += 2
            continue
        if char in "'\"" and quote in ("", char):
            quote = "" if quote else char
        out.append(char)
        i += 1
    return "".join(out)


def _round(agent: str, instruction: str, run: str, root: Path, timeout: float, stop: Stop) -> Round:
    """Run the agent command once with the instruction (stdin, $REPO_MEMORY_INSTRUCTION, `{instruction}`). It runs in a
    session of its own, ended with the round: at its timeout, on Ctrl-C, and whatever it left running when it exits
    (in its group, or carrying the round's token, as a verification step's processes do: one that called setsid)."""
    command = placed(agent)
    token = verify.agent_token(run)  # not the run's own: a loop_step of the agent's ends that one's leftovers
    proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=root, start_new_session=True, env={**os.environ, "REPO_MEMORY_RUN": run,
                                                                   "REPO_MEMORY_INSTRUCTION": instruction, verify.TOKEN: token})
    stop.watch(proc)
    timed_out = False
    try:
        try:
            out, err = proc.communicate(instruction, timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            out, err = _end(proc)
    finally:
        stop.watch(None)
        if proc.poll() is None:  # interrupted thrice: nothing waits for it, but it does not outlive the driver
            _end(proc, grace=0)
        verify.end_everything(proc.pid, token)  # what the agent started and left behind ends with its round
    if timed_out:
        said = (out + err)[-REPORT_CHARS:]
        return Round(f"the agent timed out after {timeout:g} s and was stopped" + (f"; it had printed:\n{said}" if said else ""),
                     "progress", timed_out=True)
    if proc.returncode in CANNOT_RUN:  # the shell's "not executable" or "command not found"
        return Round("", "progress", not_started=f"the agent command could not be started (exit {proc.returncode}): "
                                                 f"{err.strip()[-300:] or agent}")
    status = "blocked" if BLOCKED.search(out) else ("done" if proc.returncode == 0 else "progress")
    return Round((out + err)[-REPORT_CHARS:], status, checklist.answers(out))


def _end(proc: subprocess.Popen[str], grace: float = AGENT_GRACE) -> tuple[str, str]:
    """Stop the agent's process group: SIGTERM, then after `grace` seconds SIGKILL; what it printed."""
    for how, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, how)
        try:
            out, err = proc.communicate(timeout=wait)
            return out or "", err or ""
        except subprocess.TimeoutExpired:
            continue
    return "", ""
