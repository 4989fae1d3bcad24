"""`repo-memory loop run`: drive a headless agent (claude -p, codex exec, any command) round by round."""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable

from repo_memory.runner import checklist
from repo_memory.runner.engine import TERMINAL, Engine
from repo_memory.runner.verify import CANNOT_RUN

REPORT_CHARS = 8000


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
                   f"verifies ({ladder}); success needs every step up to level {spec.success_requires_level}. Print BLOCKED: <why> "
                   f"if you cannot proceed.\n{checklist.ask(started['checklist'])}").strip()
    state = "running"
    for round_number in range(1, spec.max_iterations + 2):
        echo(f"round {round_number}: running the agent…")
        command = agent.replace("{instruction}", shlex.quote(instruction))
        try:
            proc = subprocess.run(command, shell=True, input=instruction, capture_output=True, text=True, timeout=timeout,
                                  cwd=engine.store.root, env={**os.environ, "REPO_MEMORY_RUN": run, "REPO_MEMORY_INSTRUCTION": instruction})
            report = (proc.stdout + proc.stderr)[-REPORT_CHARS:]
            if proc.returncode in CANNOT_RUN:  # the shell could not start the agent: no work was done to judge
                why = f"the agent command could not be started (exit {proc.returncode}): {proc.stderr.strip()[-300:] or agent}"
                engine.abort(run, why)
                echo(f"round {round_number}: {why}. Check the --agent command (is it installed and on PATH?).")
                echo(f"run {run} ended aborted; receipt and evidence: repo-memory log show {run}")
                return "aborted"
            status = "blocked" if "BLOCKED:" in proc.stdout else ("done" if proc.returncode == 0 else "progress")
            answers = checklist.answers(proc.stdout)
        except subprocess.TimeoutExpired:
            report, status, answers = f"the agent round timed out after {timeout:g} s", "progress", None
        result = engine.step(run, report, status, answers, in_words=True, then="Fix this; the checks run again when this round ends.")
        state = str(result["state"])
        echo(f"round {round_number}: {state}" + (f" — {result['instruction'].splitlines()[0]}" if state == "continue" else ""))
        if state in TERMINAL:
            break
        instruction = f"Goal: {started['goal']}\n\n{result['instruction']}"
    echo(f"run {run} ended {state}; receipt and evidence: repo-memory log show {run}")
    return state
