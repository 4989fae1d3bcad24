"""Benchmark: cold start of `repo-memory serve` over stdio — process start to the `initialize` answer, to the
`tools/list` answer and to the first answered `recall`, in a fresh repository, as a harness starts it.

Baselines measured in the same run: `python -c pass` (the interpreter's own start), and the same server with its
front turned off (REPO_MEMORY_FRONT=off: every request waits for the MCP SDK, as before the front existed).

    python bench/startup.py             # 15 cold starts of each
    python bench/startup.py --runs 3    # the small mode CI runs
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

SERVE = [sys.executable, "-m", "repo_memory", "serve"]
ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench",
       "GIT_COMMITTER_EMAIL": "bench@example.com"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}


def fresh_repo(base: Path) -> Path:
    root = base / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    (root / "README.md").write_text("A project.\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env={**os.environ, **ENV})
    return root


def one_start(repo: Path, env: dict[str, str]) -> tuple[float, float, float, float, float]:
    """Milliseconds from spawning the server to each of the three answers and to its exit once the input is closed
    right after them (a short session, a health check), and the CPU milliseconds the whole process spent."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.Popen(SERVE, cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, object]) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]

    def answer() -> float:
        for line in proc.stdout:  # type: ignore[union-attr]
            if "id" in json.loads(line):
                return (time.perf_counter() - started) * 1000
        raise RuntimeError("the server closed its output before answering")

    try:
        send(INITIALIZE)
        initialized = answer()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = answer()
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "how do we release"}}})
        recalled = answer()
    finally:
        proc.stdin.close()
        proc.wait(30)
    ended = (time.perf_counter() - started) * 1000
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime) * 1000
    return initialized, listed, recalled, ended, cpu


def python_pass() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="cold starts of each kind (default 15)")
    args = parser.parse_args()
    env = {**os.environ, **ENV, "REPO_MEMORY_SEMANTIC": os.environ.get("REPO_MEMORY_SEMANTIC", "true")}
    with tempfile.TemporaryDirectory() as tmp:
        repo = fresh_repo(Path(tmp))
        one_start(repo, env)  # the first start builds the index and writes .pyc files: not a cold start of a user's
        rows: dict[str, list[tuple[float, float, float, float, float]]] = {"front": [], "no front": []}
        baseline = []
        for _ in range(args.runs):  # interleaved, so a busy moment of the machine costs every kind alike
            rows["front"].append(one_start(repo, env))
            rows["no front"].append(one_start(repo, {**env, "REPO_MEMORY_FRONT": "off"}))
            baseline.append(python_pass())
    print(f"cold starts of `repo-memory serve` in a fresh repository, median of {args.runs} (ms from process start)")
    print(f"{'':<10} {'initialize':>11} {'tools/list':>11} {'recall':>9} {'exit':>7} {'CPU':>7}")
    for name, samples in rows.items():
        medians = [statistics.median(s[i] for s in samples) for i in range(5)]
        print(f"{name:<10} {medians[0]:>11.0f} {medians[1]:>11.0f} {medians[2]:>9.0f} {medians[3]:>7.0f} {medians[4]:>7.0f}")
    base = statistics.median(baseline)
    front = [statistics.median(s[i] for s in rows["front"]) for i in range(3)]
    print(f"python -c pass: {base:.0f} ms; initialize = {front[0] / base:.1f}x python's own start; "
          f"without the front initialize takes {statistics.median(s[0] for s in rows['no front']) / front[0]:.1f}x as long")
    print("(exit: the input closed after the recall, as a health check or a short session ends; CPU: the whole process's.\n"
          " With the front, a session that needs nothing else never loads the MCP SDK; without it, the SDK serves every request.)")
    print("targets: initialize < 150, tools/list < 200, first recall < 400")
    return 0


if __name__ == "__main__":
    sys.exit(main())
