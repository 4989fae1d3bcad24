"""Benchmark: code anchors — parse + hash cost per file, and the staleness check after one file changes.

1. Parse every source file of real trees (this repository's server/, the installed Python packages' sources, the
   JavaScript/TypeScript of the npm tools in .tools/ and the npx cache, when present) with tree-sitter and hash every definition, as if each
   symbol were anchored: files/s and ms per file (p50, p95), per language.
2. A repository with memories anchored across many files: copies of real package sources, SKILLS skills citing
   ANCHORS symbols. Then one file's function body changes and `staleness.check` runs (what every recall does):
   its time, against a baseline measured in the same run — the same check after a checkout touched every cited
   file (every one parsed again). Also: the first check of a new process (a server starting, `repo-memory stale`)
   when nothing changed, the memory the parse cache holds after every cited file was parsed, and `doctor` once a
   `git mv` has made every anchor stale.

    python bench/anchors.py                 # the full run
    python bench/anchors.py --small         # the small mode CI runs
"""

from __future__ import annotations

import argparse
import gc
import glob
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from repo_memory import layout
from repo_memory.code import anchors, fingerprint
from repo_memory.code.staleness import Staleness
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.index.db import Database

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def sources(small: bool) -> list[Path]:
    files = sorted(ROOT.glob("server/**/*.py"))
    site = sorted(p for p in SITE.rglob("*.py") if p.stat().st_size < anchors.MAX_FILE_BYTES)
    files += site[:: 20] if small else site
    trees = [ROOT / ".tools" / "node_modules", *Path.home().glob(".npm/_npx/*/node_modules")]  # the npm tools the tests use
    js = sorted(Path(p) for tree in trees for ext in ("js", "mjs", "cjs", "ts")
                for p in glob.glob(str(tree / "**" / f"*.{ext}"), recursive=True) if not p.endswith(".d.ts") and Path(p).is_file())
    files += [p for p in js if p.stat().st_size < anchors.MAX_FILE_BYTES][: 50 if small else 2000]
    return files


def parse_cost(files: list[Path]) -> None:
    by_language: dict[str, list[float]] = {}
    symbols = 0
    started = time.perf_counter()
    for path in files:
        data = path.read_bytes()
        t = time.perf_counter()
        defs = anchors.definitions(data, path.suffix)
        for nodes in defs.values():
            fingerprint.body_hash(nodes)
        by_language.setdefault(path.suffix, []).append((time.perf_counter() - t) * 1000)
        symbols += len(defs)
    total = time.perf_counter() - started
    size = sum(p.stat().st_size for p in files) / 1e6
    print(f"parse + hash every definition: {len(files)} files, {size:.1f} MB, {symbols} definitions in {total:.1f} s "
          f"({len(files) / total:.0f} files/s)")
    print(f"  {'language':10} {'files':>7} {'ms/file p50':>12} {'p95':>8} {'mean':>8}")
    for suffix, times in sorted(by_language.items()):
        print(f"  {suffix:10} {len(times):>7} {statistics.median(times):>12.2f} {pct(times, 0.95):>8.2f} {statistics.mean(times):>8.2f}")


def staleness_cost(small: bool) -> None:
    skills_n, anchors_n = (50, 200) if small else (500, 2000)
    base = Path(tempfile.mkdtemp(prefix="repo-memory-anchors-"))
    try:
        repo = base / "repo"
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        layout.init(repo)
        for package in ("click", "mcp", "rapidfuzz", "watchdog", "jsonschema", "pydantic"):
            if (SITE / package).is_dir():
                shutil.copytree(SITE / package, repo / "vendor" / package, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        shutil.copytree(ROOT / "server" / "repo_memory", repo / "vendor" / "repo_memory", ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "commit", "-q", "-m", "sources"], cwd=repo, check=True, env={**os.environ, **ENV})
        candidates: list[str] = []
        files = sorted((repo / "vendor").rglob("*.py"))
        for path in files:
            rel = path.relative_to(repo).as_posix()
            defs = anchors.definitions(path.read_bytes(), ".py")
            candidates += [f"{rel}::{name}" for name, nodes in defs.items() if nodes[0].type == "function_definition"]
        rng = random.Random(7)
        chosen = rng.sample(candidates, min(anchors_n, len(candidates)))
        cited_files = {a.split("::")[0] for a in chosen}
        (repo / ".agents" / "repo-memory.toml").write_text('commit = "off"\nwrites_per_minute = 0\n', encoding="utf-8")
        store = Store(Config.load(repo))
        per_skill = max(1, len(chosen) // skills_n)
        t = time.perf_counter()
        for i in range(skills_n):
            cited = chosen[i * per_skill:(i + 1) * per_skill]
            if cited:
                store.write_skill(f"skill-{i}", f"How part {i} of the vendored code works.", "Read the cited code.", anchors=cited, actor="human")
        store.refresh()
        store.close(commit=False)
        db = Database(Config.load(repo).index_path)
        checker = Staleness(db, anchors.Code(repo), Config.load(repo).state_dir)  # what every recall runs first
        checker.check()
        print(f"\nstaleness: {skills_n} skills citing {len(chosen)} symbols in {len(cited_files)} of {len(files)} files "
              f"(written and pinned in {time.perf_counter() - t:.1f} s)")
        warm = []
        for _ in range(20):
            t = time.perf_counter()
            checker.check()
            warm.append((time.perf_counter() - t) * 1000)
        # A change inside a nested definition changes its enclosing one too (both rightly stale): the target is a cited
        # symbol no other cited symbol encloses or is enclosed by, so exactly one memory should be flagged.
        alone = [a for a in chosen if not any(o != a and (o.startswith(a + ".") or a.startswith(o + ".")) for o in chosen)]
        target = rng.choice(alone or chosen)
        path = repo / target.split("::")[0]
        source = path.read_text(encoding="utf-8")
        changed_times = []
        for round_ in range(10):
            path.write_text(source + f"\n\ndef _bench_added_{round_}():\n    return {round_}\n", encoding="utf-8")  # a change in the file
            t = time.perf_counter()
            checker.check()
            changed_times.append((time.perf_counter() - t) * 1000)
        data = source.encode()
        symbol = target.split("::")[1]
        block = anchors.definitions(data, ".py")[symbol][0].child_by_field_name("body")
        indent = b" " * block.start_point[1]
        path.write_bytes(data[:block.start_byte] + b"_bench_changed = 1\n" + indent + data[block.start_byte:])  # a new first statement
        t = time.perf_counter()
        checker.check()
        one_change = (time.perf_counter() - t) * 1000
        flagged = [s.memory for s in checker.stale()]
        db.close()
        print(f"  check, nothing changed:            p50 {statistics.median(warm):7.1f} ms  p95 {pct(warm, 0.95):7.1f} ms")
        print(f"  check after one cited file changed: p50 {statistics.median(changed_times):7.1f} ms  p95 {pct(changed_times, 0.95):7.1f} ms")
        print(f"  check after {symbol} changed:  {one_change:7.1f} ms -> {len(flagged)} memory flagged stale ({', '.join(flagged[:2])})")
        everything_cost(repo, sorted(cited_files), changed_times)
        doctor_cost(repo, len(chosen))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def rss_mb() -> float:
    try:
        with open("/proc/self/status", encoding="utf-8") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024
    except (OSError, StopIteration):
        return float("nan")  # not Linux


def everything_cost(repo: Path, cited_files: list[str], one_file: list[float]) -> None:
    """A new process's first check with nothing changed; then every cited file touched (a checkout), checked again:
    its time and what the parse cache holds afterwards."""
    config = Config.load(repo)
    db = Database(config.index_path)
    first, everything, grown = [], [], []
    for round_ in range(3):
        gc.collect()
        before = rss_mb()
        code = anchors.Code(repo)
        fresh = Staleness(db, code, config.state_dir)  # what a server starting, or `repo-memory stale`, begins with
        t = time.perf_counter()
        fresh.check()
        first.append((time.perf_counter() - t) * 1000)
        for rel in cited_files:
            os.utime(repo / rel, ns=(time.time_ns(), time.time_ns() + round_ + 1))  # a checkout rewrote it
        t = time.perf_counter()
        fresh.check()
        everything.append((time.perf_counter() - t) * 1000)
        gc.collect()
        grown.append(rss_mb() - before)  # the first round's counts: freed memory is not always given back to the system
        held = code.held() if hasattr(code, "held") else (len(cited_files), len(cited_files))  # releases before kept every tree
        del fresh, code
    db.close()
    print(f"  first check of a new process, nothing changed: p50 {statistics.median(first):7.1f} ms")
    print(f"  check after every cited file changed ({len(cited_files)} files parsed): p50 {statistics.median(everything):7.1f} ms "
          f"({statistics.median(everything) / statistics.median(one_file):.0f}x the one-file check); the parse cache holds "
          f"{held[0]} files, {held[1]} syntax tree(s); the process grew by {grown[0]:.0f} MB")


def doctor_cost(repo: Path, cited: int) -> None:
    """doctor once a `git mv` of the cited code's folder has made every anchor stale (it names the commit of each)."""
    from repo_memory.core import doctor

    subprocess.run(["git", "mv", "vendor", "moved"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "move vendor to moved"], cwd=repo, check=True, env={**os.environ, **ENV})
    store = Store(Config.load(repo))
    store.stale()  # the staleness check itself is measured above
    t = time.perf_counter()
    found = [f for f in doctor.examine(store) if f.message.startswith("stale:")]
    took = time.perf_counter() - t
    store.close(commit=False)
    print(f"  doctor after a move made all {cited} anchors stale: {took:.2f} s ({len(found)} stale finding(s), summed up by "
          f"cause; naming the commit: {sum('move vendor to moved' in f.message for f in found)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="a small run (CI)")
    args = parser.parse_args()
    parse_cost(sources(args.small))
    staleness_cost(args.small)


if __name__ == "__main__":
    main()
