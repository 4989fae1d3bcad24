"""Whether the owner of pending memory is alive: one answer for the commit policy and the finisher alike."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from repo_memory.git import pending
from repo_memory.git.pending import alive, start_time


@pytest.fixture
def zombie() -> Iterator[subprocess.Popen[bytes]]:
    """A child that has exited and that its parent (this test) has not reaped yet."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # waits for the exit, leaves the child unreaped
    yield child
    child.wait()


def test_a_running_process_is_alive():
    assert alive(os.getpid(), start_time(os.getpid()))
    assert alive(os.getpid())


def test_a_process_that_exited_is_not_alive_while_its_parent_has_not_reaped_it_yet(zombie: subprocess.Popen[bytes]):
    assert not alive(zombie.pid)
    assert not alive(zombie.pid, start_time(zombie.pid))


def test_a_reaped_process_is_not_alive():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not alive(child.pid)


@pytest.mark.skipif(not os.path.exists("/bin/ps") and not os.path.exists("/usr/bin/ps"), reason="no ps")
def test_without_proc_ps_tells_a_zombie_from_a_running_process(zombie: subprocess.Popen[bytes]):
    """The fallback where /proc is absent (macOS, the BSDs): what `ps` says of the process's state."""
    assert pending.ps_state(zombie.pid) == "Z"
    assert pending.ps_state(os.getpid()) not in ("Z", "")
