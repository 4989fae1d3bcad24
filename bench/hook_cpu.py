"""Benchmark: what one `repo-memory hook` process costs, in CPU and in time, for the hooks a harness runs per tool call.

Command hooks start a process per call: PreToolUse before every file and shell call (every harness, since the guard
must hold while the server is down), PostToolUse after each call where no `mcp_tool` hook reaches the server (Codex,
Gemini CLI, Claude Code before 2.1.118); and SessionEnd, whose time Claude Code bounds (3 s, a plugin's 1.5 s, counted
from the process's start: what the process spends starting is time it lacks to record and commit), here ending a
session of one call and committing it. Each hook here runs as a harness runs it (the payload on stdin, in a
repository `repo-memory init` set up), and its CPU counts the git processes it starts. The baseline, measured in the
same run, is the interpreter starting and exiting (`python -c pass`).

    python bench/hook_cpu.py              # 15 runs of each
    python bench/hook_cpu.py --runs 5     # the small mode CI runs
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [sys.executable, "-m", "repo_memory"]
IDENTITY = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}


def payloads(repo: Path, n: int) -> dict[str, tuple[str, dict]]:
    """(hook, payload) of each case, for run `n` (a PostToolUse of the same call twice is recorded once: each differs)."""
    base = {"session_id": "bench", "cwd": str(repo)}
    return {
        "pre-tool, a shell call": ("pre-tool", {**base, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                                                "tool_input": {"command": f"ls -la src && git status # {n}"}}),
        "pre-tool, a file write": ("pre-tool", {**base, "hook_event_name": "PreToolUse", "tool_name": "Write",
                                                "tool_input": {"file_path": str(repo / "src" / f"f{n}.py"), "content": "x = 1\n"}}),
        "post-tool, a shell call": ("post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                                  "tool_use_id": f"toolu_{n:04d}", "tool_input": {"command": f"pytest -q tests/t{n}.py"},
                                                  "tool_response": {"stdout": f"{n} passed in 0.5s\n", "stderr": ""}}),
        "session-end, one call": ("session-end", {**base, "session_id": f"bench-end-{n}", "hook_event_name": "SessionEnd",
                                                  "reason": "other"}),
    }


def before(repo: Path, n: int) -> dict[str, tuple[str, dict]]:
    """What runs, unmeasured, before a case: the call of the session a SessionEnd ends."""
    return {"session-end, one call": ("post-tool", {"session_id": f"bench-end-{n}", "cwd": str(repo), "hook_event_name": "PostToolUse",
                                                    "tool_name": "Bash", "tool_use_id": f"toolu_end{n:04d}",
                                                    "tool_input": {"command": "ls"}, "tool_response": {"stdout": "ok\n", "stderr": ""}})}


def measured(command: list[str], data: bytes, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds of the process and every process it started, wall seconds)."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(command, input=data, capture_output=True, cwd=cwd, env=env)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command[2:])} failed: {done.stderr.decode()[-2000:]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="runs of each hook (the median is printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        (repo / "src").mkdir(parents=True)
        # no background embedding (a SessionEnd starts it for the session's records): its CPU would weigh on the next runs
        env = {**os.environ, **IDENTITY, "HOME": tmp, "REPO_MEMORY_SEMANTIC": "false"}
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        subprocess.run([*CLI, "init"], cwd=repo, env=env, check=True, capture_output=True)
        samples: dict[str, list[tuple[float, float]]] = {}
        for n in range(args.runs):  # the cases interleaved, so that a slower moment of the machine weighs on each alike
            samples.setdefault("baseline: python -c pass", []).append(measured([sys.executable, "-c", "pass"], b"", repo, env))
            for name, (hook, payload) in payloads(repo, n).items():
                if name in (first := before(repo, n)):
                    measured([*CLI, "hook", first[name][0]], json.dumps(first[name][1]).encode(), repo, env)
                samples.setdefault(name, []).append(measured([*CLI, "hook", hook], json.dumps(payload).encode(), repo, env))
    print(f"One hook process as a harness starts it, median of {args.runs} runs (CPU counts the git processes it starts):\n")
    print(f"  {'':28} {'CPU ms':>8} {'wall ms':>8} {'CPU vs baseline':>16}")
    base = statistics.median(cpu for cpu, _ in samples["baseline: python -c pass"])
    for name, runs in samples.items():
        cpu, wall = statistics.median(c for c, _ in runs), statistics.median(w for _, w in runs)
        print(f"  {name:28} {cpu * 1000:8.0f} {wall * 1000:8.0f} {cpu / base if base else float('nan'):15.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
