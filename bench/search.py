"""Benchmark: cold index build and recall latency at 1k and 10k skills, against a plain FTS5 baseline.

Skills are built from the conversation turns of LoCoMo (../shared/data/locomo/locomo-dev.json, read in
place, never copied); queries are LoCoMo's questions. Prints a table; nothing is written outside a tmp dir.

    python bench/search.py                      # 1k and 10k skills, 500 queries
    python bench/search.py --sizes 200 --queries 50   # the small mode CI runs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client

from repo_memory import layout
from repo_memory.index import query
from repo_memory.shells import mcp as server
from repo_memory.config import Config
from repo_memory.core.store import Store

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


def load_corpus(path: Path) -> tuple[list[str], list[str]]:
    conversations = json.loads(path.read_text(encoding="utf-8"))
    turns, questions = [], []
    for conv in conversations:
        for key, value in conv["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [f"{t['speaker']}: {t['text']}" for t in value]
        questions += [qa["question"] for qa in conv["qa"]]
    return turns, questions


def build_repo(root: Path, turns: list[str], count: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    layout.init(root)
    for i in range(count):
        start = (i * 7) % len(turns)
        description = turns[start][:300].replace("\n", " ")
        body = "\n\n".join(turns[(start + k * (1 + i // len(turns))) % len(turns)] for k in range(1, 6))
        words = [w for w in query.words(description) if w not in query.STOPWORDS][:4] or ["skill"]
        name = f"{'-'.join(words)}-{i}"[:64].strip("-")
        name = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "", name)) or f"skill-{i}"
        folder = root / ".agents/skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {json.dumps(description)}\nmetadata:\n  status: active\n  tags: [{', '.join(words[:2])}]\n---\n\n{body}\n",
            encoding="utf-8",
        )


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def baseline(root: Path, store: Store, questions: list[str]) -> list[float]:
    """Plain FTS5 BM25 over the skills: one unweighted column per document, OR of non-stopword terms, no reranking."""
    return plain_fts5([f"{row['name']} {row['description']} {row['body']}" for row in store.skills()], questions)


def plain_fts5(texts: list[str], questions: list[str]) -> list[float]:
    """Latency (ms) of each question against a plain FTS5 table of `texts`: the in-run baseline of the benchmarks."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    conn.executemany("INSERT INTO t VALUES (?)", [(t,) for t in texts])
    samples = []
    for q in questions:
        expr = query.parse(q).fts
        started = time.perf_counter()
        if expr:
            conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 8", (expr,)).fetchall()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


async def through_mcp(store: Store, questions: list[str]) -> list[float]:
    samples = []
    async with Client(server.build(store)) as client:
        for q in questions:
            started = time.perf_counter()
            result = await client.call_tool("recall", {"query": q, "limit": 8})
            samples.append((time.perf_counter() - started) * 1000)
            assert not result.is_error
    return samples


def measure(turns: list[str], questions: list[str], size: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        build_repo(root, turns, size)
        os.sync()  # the fixture's writeback is not part of what we measure
        builds = []
        for _ in range(3):  # each build is cold: a fresh index file; the median of three damps machine noise
            shutil.rmtree(root / ".git" / "repo-memory", ignore_errors=True)
            store = Store(Config.load(root))
            started = time.perf_counter()
            report = store.reindex()
            builds.append(time.perf_counter() - started)
            assert report.added == size, report
            store.close()
        build_s = statistics.median(builds)
        store = Store(Config.load(root))
        direct = []
        for q in questions:
            t0 = time.perf_counter()
            store.recall(q, 8)
            direct.append((time.perf_counter() - t0) * 1000)
        mcp = anyio.run(through_mcp, store, questions)
        base = baseline(root, store, questions)
        store.close()
    return {
        "skills": size, "index_s": build_s,
        "store_p50": statistics.median(direct), "store_p95": percentile(direct, 95),
        "mcp_p50": statistics.median(mcp), "mcp_p95": percentile(mcp, 95),
        "base_p50": statistics.median(base), "base_p95": percentile(base, 95),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"skipped: LoCoMo data not found at {args.data} (pass --data PATH)")
        return 0
    turns, questions = load_corpus(args.data)
    questions = questions[: args.queries]
    print(f"{len(turns)} LoCoMo turns as skill text, {len(questions)} LoCoMo questions as queries\n")
    header = f"{'skills':>7} {'index s':>8} {'store p50':>10} {'store p95':>10} {'MCP p50':>8} {'MCP p95':>8} {'FTS5 p50':>9} {'FTS5 p95':>9} {'p95 vs FTS5':>12}"
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        r = measure(turns, questions, size)
        print(f"{r['skills']:>7} {r['index_s']:>8.2f} {r['store_p50']:>10.2f} {r['store_p95']:>10.2f} {r['mcp_p50']:>8.2f} "
              f"{r['mcp_p95']:>8.2f} {r['base_p50']:>9.2f} {r['base_p95']:>9.2f} {r['store_p95'] / max(r['base_p95'], 1e-9):>11.1f}x",
              flush=True)
    print("\nTimes in milliseconds unless marked s. Targets: recall p95 < 20 ms at 10k skills; full index of 10k files < 2 s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
