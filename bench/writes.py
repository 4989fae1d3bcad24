"""Benchmark: the write path — skill writes and experience appends in each commit mode, coalescing, edit→searchable.

Baselines measured in the same run: a bare atomic file write (no index, no git), and `git add && git commit`
of one file (what committing every write naively costs).

    python bench/writes.py              # 200 writes per mode
    python bench/writes.py --writes 30  # the small mode CI runs
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from repo_memory import layout
from repo_memory.guards import disk
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells.watch import Watcher

ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def fresh_repo(base: Path, name: str, mode: str) -> Path:
    root = base / name
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    layout.init(root)
    (root / ".agents/repo-memory.toml").write_text(f'commit = "{mode}"\n', encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env={**os.environ, **ENV})
    return root


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed(fn: object, count: int) -> list[float]:
    out = []
    for i in range(count):
        started = time.perf_counter()
        fn(i)  # type: ignore[operator]
        out.append((time.perf_counter() - started) * 1000)
    return out


def commits(root: Path) -> int:
    return int(subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True, text=True, check=True).stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    n = args.writes
    os.environ.update(ENV)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        for mode in ("auto", "stage", "off"):
            root = fresh_repo(base, f"repo-{mode}", mode)
            store = Store(Config.load(root))
            before = commits(root)
            skill = timed(lambda i: store.write_skill(f"skill-{i}", f"Skill {i} for the write benchmark.", f"Step {i}", actor="human"), n)
            append = timed(lambda i: store.remember(f"record {i} of the write benchmark"), n)
            started = time.perf_counter()
            store.flush()
            flush_ms = (time.perf_counter() - started) * 1000
            store.close()
            rows.append((mode, skill, append, commits(root) - before, flush_ms))
        root = fresh_repo(base, "repo-base", "off")
        plain = timed(lambda i: disk.write_atomic(root / f".agents/skills/plain-{i}/SKILL.md", b"---\nname: x\ndescription: y\n---\n"), n)
        def naive_commit(i: int) -> None:
            path = root / f"note-{i}.md"
            path.write_text(f"note {i}\n", encoding="utf-8")
            subprocess.run(["git", "add", str(path)], cwd=root, check=True)
            subprocess.run(["git", "commit", "-q", "-m", f"note {i}"], cwd=root, check=True)
        naive = timed(naive_commit, min(n, 50))

        root = fresh_repo(base, "repo-watch", "off")
        store = Store(Config.load(root))
        watcher = Watcher(store)
        watcher.start()
        searchable = []
        for i in range(min(n, 50)):
            seen = threading.Event()
            listener = (lambda word: lambda: seen.set() if store.recall(word, kinds=["skill"]).hits else None)(f"zebra{i}")
            watcher.listeners.append(listener)
            folder = root / f".agents/skills/edited-{i}"
            folder.mkdir(parents=True)
            started = time.perf_counter()
            (folder / "SKILL.md").write_text(f"---\nname: edited-{i}\ndescription: zebra{i} procedure\n---\nbody\n", encoding="utf-8")
            seen.wait(5)
            searchable.append((time.perf_counter() - started) * 1000)
            watcher.listeners.remove(listener)
        read_after, found = [], 0  # a call made the moment after a save (what a tool call does first: settle)
        for i in range(min(n, 50)):
            folder = root / f".agents/skills/read-{i}"
            folder.mkdir(parents=True)
            started = time.perf_counter()
            (folder / "SKILL.md").write_text(f"---\nname: read-{i}\ndescription: yak{i} procedure\n---\nbody\n", encoding="utf-8")
            watcher.settle()
            found += bool(store.recall(f"yak{i}", kinds=["skill"]).hits)
            read_after.append((time.perf_counter() - started) * 1000)
        settle_idle = timed(lambda i: watcher.settle(), min(4 * n, 200))
        recall_alone = timed(lambda i: store.recall("procedure"), min(4 * n, 200))
        watcher.stop()
        store.close()

    print(f"{n} writes per mode on a 2-core machine (ms):\n")
    print(f"{'mode':<6} {'skill p50':>9} {'skill p95':>9} {'append p50':>10} {'append p95':>10} {'commits':>8} {'final flush':>11}")
    for mode, skill, append, made, flush_ms in rows:
        print(f"{mode:<6} {statistics.median(skill):>9.2f} {pct(skill, 95):>9.2f} {statistics.median(append):>10.2f} {pct(append, 95):>10.2f} "
              f"{made:>8} {flush_ms:>11.1f}")
    print(f"\nbaseline: bare atomic file write p50 {statistics.median(plain):.2f} ms; `git add && git commit` per write "
          f"p50 {statistics.median(naive):.1f} ms (a skill write in auto mode is {statistics.median(naive) / statistics.median(rows[0][1]):.1f}x faster, "
          f"its commit coalesced)")
    print(f"edit -> searchable (watcher): p50 {statistics.median(searchable):.0f} ms, p95 {pct(searchable, 95):.0f} ms over {len(searchable)} edits")
    print(f"save -> a call's read (settle, then recall): p50 {statistics.median(read_after):.1f} ms, p95 {pct(read_after, 95):.1f} ms; "
          f"found {found} of {len(read_after)}; settle with nothing changed p50 {statistics.median(settle_idle):.2f} ms "
          f"(a recall alone here p50 {statistics.median(recall_alone):.2f} ms)")
    print(f"commits for {2 * n} rapid writes in auto mode: {rows[0][3]} (coalesced in a {Config.__dataclass_fields__['commit_window'].default:g} s window)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
