"""What a verification step starts ends with the server: a `repo-memory serve` child whose client leaves mid-step, or
that is told to stop, takes the step's processes with it; and the run stays live, to be stepped again."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
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
