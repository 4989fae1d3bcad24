"""What a verification step starts ends with the server: a `repo-memory serve` child whose client leaves mid-step, or
that is told to stop, takes the step's processes with it; and the run stays live, to be stepped again."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.formats.loops import Step
from repo_memory.runner import verify
from repo_memory.runner.engine import Engine

from tests.conftest import git
from tests.shells.stdio_server import StdioServer
from tests.shells.test_serve_lifetime import wait_until


def sleeping(nap: str) -> list[int]:
    """The pids of processes running `sleep NAP` (a nap unique to one test)."""
    table = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in table.splitlines() if line.strip().endswith(f"sleep {nap}")]


def slow_loop(repo: Path, nap: str, timeout: int) -> Store:
    """An accepted loop `slow` whose one step sleeps NAP seconds (bounded by `timeout`); the Store that accepted it."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
    (repo / ".agents/loops/slow.md").write_text(
        "---\nname: slow\nstatus: active\ntrigger: {on: manual}\ngoal: Wait.\n"
        f'verify:\n  - {{level: 4, run: "echo checking; sleep {nap}", expect: {{exit: 0}}, timeout: {timeout}}}\n'
        "stop: {max_iterations: 3}\nsuccess_requires_level: 4\n---\nWait.\n", encoding="utf-8")
    store = Store(Config.load(repo))
    store.refresh()
    Engine(store).accept("slow")
    return store


@pytest.mark.parametrize("ending", ["input closed", "SIGTERM"])
def test_a_step_in_flight_is_killed_when_the_server_ends_and_its_run_stays_live(repo: Path, ending: str):
    nap = f"301.{os.getpid()}{len(ending)}"  # this test's own sleep: another run on the machine may be sleeping too
    slow_loop(repo, nap, timeout=300).close()
    server = StdioServer(repo)
    try:
        server.initialize()
        run = server.call("loop_start", {"name": "slow"})["structuredContent"]["run"]
        server.send("tools/call", {"name": "loop_step", "arguments": {"run": run, "report": "waited", "status": "done"}})
        assert wait_until(lambda: bool(sleeping(nap)), 20), "the step never started"
        if ending == "SIGTERM":
            server.kill(signal.SIGTERM)
        else:
            server.close_input()
        assert server.wait(30) is not None, "the server did not exit"
        assert wait_until(lambda: not sleeping(nap), 5), f"the step's command outlived the server: {sleeping(nap)}"
    finally:
        for pid in sleeping(nap):
            os.kill(pid, signal.SIGKILL)
        if server.proc.poll() is None:
            server.kill()
    store = Store(Config.load(repo))
    try:
        (status,) = Engine(store).status(run)
        assert status["state"] == "running" and status["iterations"] == 0, status  # the interrupted step decided nothing
    finally:
        store.close()


def test_a_step_left_running_by_a_killed_server_is_ended_before_its_run_is_verified_again(repo: Path):
    """A server killed with SIGKILL cannot stop its step; the run resumed in another server ran a second copy of the
    same verification beside the first, in the same tree."""
    nap = f"302.{os.getpid()}"
    store = slow_loop(repo, nap, timeout=2)
    server = StdioServer(repo)
    try:
        server.initialize()
        run = server.call("loop_start", {"name": "slow"})["structuredContent"]["run"]
        server.send("tools/call", {"name": "loop_step", "arguments": {"run": run, "report": "waited", "status": "done"}})
        assert wait_until(lambda: bool(sleeping(nap)), 20), "the step never started"
        left = set(sleeping(nap))
        server.kill(signal.SIGKILL)
        server.wait(10)
        store.refresh()
        answer = Engine(store).step(run, "waited again", "done")  # the resumed run, in another process
        assert answer["state"] == "continue" and "timed out" in answer["instruction"], answer
        assert not left & set(sleeping(nap)), "the killed server's step still runs beside the new one"
    finally:
        for pid in sleeping(nap):
            os.kill(pid, signal.SIGKILL)
        if server.proc.poll() is None:
            server.kill()
        store.close()


def test_a_process_a_step_left_is_gone_not_dying_when_the_step_ends(tmp_path: Path):
    """The step's leftovers were sent SIGKILL and the step ended at once: a process that had left the step's session was
    still exiting (freeing its memory, holding its files, locks and ports) when the next step could start."""
    escapee = tmp_path / "escapee.py"  # holds memory, whose freeing makes its exit take a while, and says its pid
    escapee.write_text("import os, time\nheld = bytearray(512 << 20)\n"
                       f"with open({str(tmp_path / 'ready')!r}, 'w') as fifo:\n    fifo.write(str(os.getpid()))\ntime.sleep(300)\n",
                       encoding="utf-8")
    script = tmp_path / "leave.sh"
    script.write_text(f"#!/bin/sh\nmkfifo ready\nsetsid {sys.executable} {escapee} </dev/null >/dev/null 2>&1 &\n"
                      "read pid < ready\necho \"$pid\" > escaped.pid\n", encoding="utf-8")
    script.chmod(0o755)
    outcome = verify.run(Step(index=0, level=4, name="leave", run=str(script), expect={"exit": 0}, timeout=60), tmp_path)
    pid = int((tmp_path / "escaped.pid").read_text(encoding="utf-8"))
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        stat = "gone) X"  # reaped already
    try:
        assert outcome.passed, outcome.reason
        assert stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"), f"the step ended while what it started still ran: {stat}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
