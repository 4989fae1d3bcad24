"""`repo-memory loop run`: drive a headless agent (claude -p, codex exec, any command) round by round."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from repo_memory.runner import checklist
from repo_memory.runner.engine import TERMINAL, Engine
from repo_memory.runner.verify import CANNOT_RUN

REPORT_CHARS = 8000


@dataclass(frozen=True)
class Round:
    """What one run of the agent command left: its report, the status it implies, its checklist answers, and why it
    could not start ('' when it did)."""

    report: str
    status: str
    answers: dict[str, bool] | None = None
    not_started: str = ""


def drive(engine: Engine, name: str, agent: str, timeout: float, echo: Callable[[str], None]) -> str:
    """Run loop `name` with `agent` until a terminal state; return that state."""
    started = engine.start(name, actor="human")
    run = started["run"]
    echo(f"run {run}: {started['state']}")
    if started["state"] != "running":
        echo(started["instruction"])
        return str(started["state"])
    spec = engine.spec(name)
    ladder = ", ".join(f"L{s.level} {s.name}" for s in spec.steps)
    # This round's agent answers in what it prints, not with loop_step: the driver steps the run when the round ends.
    instruction = (f"Goal: {started['goal']}\n\n{started['notes']}\n\nWork toward the goal. When this round ends, repo-memory "
                   f"verifies ({ladder}); success needs every step up to level {spec.success_requires_level}. Print "
                   f"BLOCKED: <why> if you cannot proceed.\n{checklist.ask(started['checklist'])}").strip()
    state = "running"
    for number in range(1, spec.max_iterations + 2):
        echo(f"round {number}: running the agent…")
        before = engine.state(run).iterations
        done = _round(agent, instruction, run, engine.store.root, timeout)
        if done.not_started:  # no work was done to judge: the run ends uncharged
            engine.abort(run, done.not_started)
            echo(f"round {number}: {done.not_started}. Check the --agent command (is it installed and on PATH?).")
            state = "aborted"
            break
        engine.store.refresh()
        now = engine.state(run)
        if now.iterations > before:  # the agent reported through loop_step itself: that step was this round's
            state = now.state if now.state in TERMINAL else "continue"
            echo(f"round {number}: the agent stepped the run itself; {state}")
            instruction = f"Goal: {started['goal']}\n\nThe run continues: your last loop_step answer says what failed. Fix that."
        else:
            result = engine.step(run, done.report, done.status, done.answers, in_words=True,
                                 then="Fix this; the checks run again when this round ends.")
            state = str(result["state"])
            echo(f"round {number}: {state}" + (f" — {result['instruction'].splitlines()[0]}" if state == "continue" else ""))
            instruction = f"Goal: {started['goal']}\n\n{result['instruction']}"
        if state in TERMINAL:
            break
    echo(f"run {run} ended {state}; receipt and evidence: repo-memory log show {run}")
    return state


def _round(agent: str, instruction: str, run: str, root: Path, timeout: float) -> Round:
    """Run the agent command once with the instruction (stdin, $REPO_MEMORY_INSTRUCTION, `{instruction}`)."""
    command = agent.replace("{instruction}", shlex.quote(instruction))
    try:
        proc = subprocess.run(command, shell=True, input=instruction, capture_output=True, text=True, timeout=timeout, cwd=root,
                              env={**os.environ, "REPO_MEMORY_RUN": run, "REPO_MEMORY_INSTRUCTION": instruction})
    except subprocess.TimeoutExpired:
        return Round(f"the agent round timed out after {timeout:g} s", "progress")
    if proc.returncode in CANNOT_RUN:  # the shell's "not executable" or "command not found"
        return Round("", "progress", not_started=f"the agent command could not be started (exit {proc.returncode}): "
                                                 f"{proc.stderr.strip()[-300:] or agent}")
    status = "blocked" if "BLOCKED:" in proc.stdout else ("done" if proc.returncode == 0 else "progress")
    return Round((proc.stdout + proc.stderr)[-REPORT_CHARS:], status, checklist.answers(proc.stdout))
