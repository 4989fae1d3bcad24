"""How long a harness gives a hook that it times (SessionEnd: Claude Code ends it then, with every process it started),
counted as the harness counts it: from the hook process's start."""

from __future__ import annotations

import os
import time

import repo_memory
from repo_memory.git.pending import start_time
from repo_memory.shells import hookcalls

# Of the time Claude Code gives SessionEnd, counted from the process's start (3 s for setup's hooks, setup.TIMEOUTS;
# 1.5 s for a plugin's, whatever timeout it names: 2.1.337 counts only settings hooks'), the calls are read and recorded
# in the first 60 %; the end record and the commit come after, and the commit is left to the finisher (hooks._finisher) when
# less than a fifth is left. Writing a record costs about 1.3 times reading and making it (measured: 500 calls, 0.44 s
# then 0.55 s); on a busy machine both are slower alike, so the loop stops where the time it has taken, scaled so,
# would pass the budget.
RECORDED_SHARE, COMMIT_SHARE = 0.6, 0.2
WRITE_COST = 1.3
PLUGIN_BUDGET = 1.5


def budget() -> tuple[float, float]:
    """(when this hook's process started, on time.monotonic's clock; the seconds the harness gives it from then)."""
    started = _started()
    if time.monotonic() - started > 10:  # a process that began long before this hook (one that runs hooks in-process)
        started = time.monotonic()
    return started, PLUGIN_BUDGET if os.environ.get("CLAUDE_PLUGIN_ROOT") else hookcalls.SESSION_END_TIMEOUT


def _started() -> float:
    """When this process began on time.monotonic's clock, as the harness's timeout counts: its start time as Linux
    keeps it (a shell's `exec` keeps it too), else when repo_memory was first imported."""
    ticks = start_time(os.getpid())
    try:
        began = time.monotonic() - (time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, AttributeError):  # not Linux
        return repo_memory.STARTED
    return began if ticks and repo_memory.STARTED - 10 < began <= repo_memory.STARTED else repo_memory.STARTED  # else a clock that disagrees
