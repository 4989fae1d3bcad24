"""`repo-memory loop run` as a person sees it: every end says why, and a round that times out takes its agent with it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from repo_memory.core.store import Store
from repo_memory.runner import driver
from repo_memory.runner.engine import Engine

from tests.runner.conftest import spec_text
from tests.runner.test_loop_processes import sleeping


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
    assert any(line.startswith("round 1: unverifiable — Step 'lint' cannot run") and "install the tool" in line for line in lines), lines
    lines.clear()
    said = "echo looked around; echo 'BLOCKED: need the staging password'"
    assert driver.drive(Engine(store), "fix-add", said, 60, lines.append) == "blocked"
    assert any(line.startswith("round 1: blocked — ") and "need the staging password" in line for line in lines), lines

