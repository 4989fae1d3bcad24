"""Benchmark: a committed log of lines that hold no record, as any upstream can push one (`{}` lines: 3 bytes each, a
few KB once git packs them): what a fresh clone's first search, verify and doctor cost, and what they print.

Each command runs as a person runs it (`python -m repo_memory`), in a clone with a scratch HOME; time, CPU and peak
memory are the process's own (os.wait4).

    python bench/invalid_lines.py --lines 1000000
    python bench/invalid_lines.py --lines 2000      # the small mode the tests run
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOG = ".agents/experience/2026-12/2026-12-05-c0c0c0.jsonl"


def run(cwd: Path, env: dict[str, str], *args: str) -> tuple[float, float, int, bytes]:
    """Seconds, CPU seconds, peak KB and output of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(args), cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read() if proc.stdout else b""
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped above: Popen must not wait for it again
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    lines = parser.parse_args().lines
    with tempfile.TemporaryDirectory(prefix="repo-memory-bench-") as scratch:
        home = Path(scratch, "home")
        home.mkdir()
        env = {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
               "XDG_CONFIG_HOME": str(home / ".config"), "XDG_STATE_HOME": str(home / ".local/state")}
        for key, value in (("user.name", "bench"), ("user.email", "bench@example.com"), ("init.defaultBranch", "main")):
            subprocess.run(["git", "config", "--global", key, value], env=env, check=True)
        cli = [sys.executable, "-m", "repo_memory"]
        up, clone = Path(scratch, "up"), Path(scratch, "clone")
        up.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=up, env=env, check=True)
        subprocess.run([*cli, "init"], cwd=up, env=env, check=True, capture_output=True)
        (up / LOG).parent.mkdir(parents=True, exist_ok=True)
        (up / LOG).write_bytes(b"{}\n" * lines)
        subprocess.run(["git", "add", "-A"], cwd=up, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "notes"], cwd=up, env=env, check=True)
        subprocess.run(["git", "clone", "-q", str(up), str(clone)], env=env, check=True)
        subprocess.run([*cli, "init"], cwd=clone, env=env, check=True, capture_output=True)
        print(f"{lines:,} lines of `{{}}` in one committed log ({(up / LOG).stat().st_size / 1e6:.1f} MB)")
        print(f"{'command':<14} {'seconds':>8} {'cpu s':>8} {'peak MB':>8} {'lines out':>10}")
        for name, args in (("first search", ("search", "deploy")), ("search again", ("search", "deploy")),
                           ("verify", ("verify",)), ("doctor", ("doctor",))):
            took, cpu, peak, out = run(clone, env, *cli, *args)
            printed = out.count(b"\n")
            print(f"{name:<14} {took:>8.2f} {cpu:>8.2f} {peak / 1024:>8.0f} {printed:>10,}")


if __name__ == "__main__":
    main()
