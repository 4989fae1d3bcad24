"""A branch moved by compare-and-swap the moment a last look says nothing is in the way.

A person's `git commit` reads the branch tip as it starts and moves the branch only if it still points there, so a
memory commit landing after it started makes it fail ("cannot lock ref 'HEAD'"). commit.py looks for one (running.py)
just before moving the branch; one that starts between that look and the move is not seen. With `git update-ref` run
after the look, that gap was a git process's start-up: ms, tens of ms on a busy machine, enough to break a person's
commit now and then in the soak probe's repro. So `git update-ref --stdin` is started and handed the update first
(`start`, `update`: no lock is taken yet), and told `commit` after the look: a line on a pipe. Git before 2.27 knows no
`start`: there `git update-ref` is run after the look, as before.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
from collections.abc import Callable

from repo_memory.errors import GitError
from repo_memory.git.repo import GIT_TIMEOUT, Git

ZERO = "0" * 40  # the old value of a ref that must not exist yet (an unborn branch)


def swap(git: Git, ref: str, new: str, old: str | None, message: str,
         clear: Callable[[], str]) -> tuple[str, int, str]:
    """Move `ref` from `old` to `new` once `clear()` finds nothing in the way (''): (what `clear` found, when the ref
    was left alone; git's exit code; its errors). A ref no longer at `old` is left alone too, and git says so."""
    mover = git.start("update-ref", "--stdin", "-m", message)
    try:
        ready = _tell(mover, f"start\nupdate {ref} {new} {old or ZERO}\n") and _line(mover) == "start: ok\n"
        if why := clear():
            _tell(mover, "abort\n")
            return why, 0, ""
        if ready and _tell(mover, "commit\n"):
            _, err = mover.communicate(timeout=GIT_TIMEOUT)  # its input closed: it ends when the ref moved or not
            return "", mover.returncode, err
    except subprocess.TimeoutExpired:
        raise GitError(f"`git update-ref` did not finish within {GIT_TIMEOUT:g} s") from None
    finally:
        _end(mover)
    done = git.run("update-ref", "-m", message, ref, new, old or ZERO, check=False)  # git before 2.27 (or it died)
    return "", done.returncode, done.stderr


def _tell(proc: subprocess.Popen[str], lines: str) -> bool:
    """Write `lines` to `proc`; False when it has ended (git before 2.27 ends at `start`, a command it knows not)."""
    assert proc.stdin is not None
    try:
        proc.stdin.write(lines)
        proc.stdin.flush()
    except (BrokenPipeError, ValueError):  # ended; or its input is closed already
        return False
    return True


def _line(proc: subprocess.Popen[str]) -> str:
    """The next line `proc` writes, waited for at most GIT_TIMEOUT seconds ('' when it ended first)."""
    assert proc.stdout is not None
    if not select.select([proc.stdout], [], [], GIT_TIMEOUT)[0]:
        raise subprocess.TimeoutExpired(proc.args, GIT_TIMEOUT)
    return proc.stdout.readline()


def _end(proc: subprocess.Popen[str]) -> None:
    """Let `proc` end, unless it has: its input closed (a transaction still open is dropped, nothing moves); killed
    if it hangs."""
    if proc.returncode is not None:
        return
    try:
        proc.communicate(timeout=GIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
