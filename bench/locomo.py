"""Benchmark: LoCoMo evidence retrieval through `recall`, next to a plain SQLite FTS5 BM25 baseline.

Each LoCoMo conversation becomes one session log (one record per turn, with its speaker and session
date); every question goes through MCP `recall` as an agent calls it, scoped to its conversation, twice: full-text
ranking alone (semantic = false) and hybrid (after embedding every turn with the bundled model), next to a plain
FTS5 BM25 table. Reads ../shared/data/locomo/locomo-dev.json in place (never copied); no hosted model is called.

    python bench/locomo.py                     # every conversation of the dev split
    python bench/locomo.py --conversations 2   # the small mode CI runs
    python bench/locomo.py --lexical-only      # skip embedding
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import anyio
from mcp import Client

from repo_memory import layout
from repo_memory.shells import mcp as server
from repo_memory.formats import experience
from repo_memory.index import query
from repo_memory.config import Config
from repo_memory.core.store import Store

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def turns_of(conv: dict) -> list[tuple[str, str, str, str]]:
    """(dia_id, speaker, text, session date) of every turn, in order."""
    out = []
    c = conv["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k))
    for n in numbers:
        date = c.get(f"session_{n}_date_time", "")
        for turn in c[f"session_{n}"]:
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            out.append((turn["dia_id"], turn["speaker"], text, date))
    return out


def gold(evidence: list[str], known: set[str]) -> list[str]:
    ids = []
    for item in evidence:
        for piece in re.split(r"[;,\s]+", item):
            match = re.fullmatch(r"D(\d+):0*(\d+)", piece.strip())
            if match and f"D{match[1]}:{match[2]}" in known:
                ids.append(f"D{match[1]}:{match[2]}")
    return list(dict.fromkeys(ids))


def iso(date: str) -> str:
    try:
        return datetime.strptime(date, "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M:00Z")
    except ValueError:
        return experience.now()


class Baseline:
    """Plain FTS5 BM25: one turn per document, porter tokenizer, OR of non-stopword terms."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, conv UNINDEXED, dia UNINDEXED, tokenize='porter unicode61')")

    def add(self, conv: str, turns: list[tuple[str, str, str, str]]) -> None:
        self.conn.executemany("INSERT INTO t VALUES (?, ?, ?)", [(f"{t[1]}: {t[2]}", conv, t[0]) for t in turns])

    def search(self, conv: str, question: str, k: int) -> list[str]:
        expr = query.parse(question).fts
        if not expr:
            return []
        return [r[0] for r in self.conn.execute("SELECT dia FROM t WHERE t MATCH ? AND conv = ? ORDER BY bm25(t) LIMIT ?", (expr, conv, k))]


def score(ranked: list[str], wanted: list[str]) -> dict[str, float]:
    top5, top10 = ranked[:5], ranked[:10]
    first = next((i for i, d in enumerate(ranked, start=1) if d in wanted), None)
    sessions5 = {d.split(":")[0] for d in top5}
    return {
        "any@5": float(any(d in top5 for d in wanted)), "any@10": float(any(d in top10 for d in wanted)),
        "all@5": float(all(d in top5 for d in wanted)), "mrr": 1.0 / first if first else 0.0,
        "sess@5": float(any(d.split(":")[0] in sessions5 for d in wanted)),
    }


def run(data: Path, conversations: int | None, semantic: bool = True) -> dict:
    convs = json.loads(data.read_text(encoding="utf-8"))[:conversations]
    systems = ["lexical", *(["hybrid"] if semantic else []), "fts5-bm25"]
    results: dict[str, dict[str, list]] = {s: defaultdict(list) for s in systems}
    latency: dict[str, list[float]] = {s: [] for s in systems}
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        layout.init(root)
        writer = Store(Config.load(root, env={}, overrides={"semantic": False}))
        baseline = Baseline()
        dia_of: dict[str, str] = {}
        questions = []
        for conv in convs:
            session = "locomo-" + re.sub(r"[^A-Za-z0-9._-]", "-", conv["sample_id"])
            turns = turns_of(conv)
            entries = [experience.Entry(kind="observation", text=text, data={"speaker": speaker, "date": date},
                                        source={"actor": "human", "tool": "locomo-import"}, ts=iso(date))
                       for dia, speaker, text, date in turns]
            for record, turn in zip(writer.log(session, entries), turns, strict=True):
                dia_of[record["id"]] = turn[0]
            baseline.add(session, turns)
            known = {t[0] for t in turns}
            questions += [(session, qa, wanted) for qa in conv["qa"] if (wanted := gold(qa.get("evidence", []), known))]
        writer.close()
        stores = {"lexical": Store(Config.load(root, env={}, overrides={"semantic": False}))}
        if semantic:
            stores["hybrid"] = Store(Config.load(root, env={}, overrides={"semantic": True}))
            started = time.perf_counter()
            stores["hybrid"].reindex(embedding=lambda done, total: print(f"\rembedding {done}/{total}", end="", file=sys.stderr))
            timings["embedding s"] = time.perf_counter() - started
            print(file=sys.stderr)
        for system, store in stores.items():  # through a real MCP client, as an agent calls recall
            anyio.run(_ask, store, questions, dia_of, results[system], latency[system])
            store.close()
        for session, qa, wanted in questions:
            bucket = "5" if qa["category"] == 5 else str(qa["category"])
            started = time.perf_counter()
            ranked = baseline.search(session, qa["question"], 10)
            latency["fts5-bm25"].append((time.perf_counter() - started) * 1000)
            results["fts5-bm25"][bucket].append(score(ranked, wanted))
    return {"results": results, "latency": latency, "conversations": len(convs), "timings": timings}


async def _ask(store: Store, questions: list, dia_of: dict[str, str], results: dict[str, list], latency: list[float]) -> None:
    async with Client(server.build(store)) as client:
        for session, qa, wanted in questions:
            started = time.perf_counter()
            answer = await client.call_tool("recall", {"query": qa["question"], "limit": 10, "session": session})
            latency.append((time.perf_counter() - started) * 1000)
            ranked = [dia_of[h["id"]] for h in (answer.structured_content or {}).get("hits", []) if h["id"] in dia_of]
            results["5" if qa["category"] == 5 else str(qa["category"])].append(score(ranked, wanted))


def mean(rows: list[dict[str, float]], key: str) -> float:
    return statistics.fmean(r[key] for r in rows) if rows else float("nan")


def report(out: dict) -> str:
    lines = [f"LoCoMo dev split: {out['conversations']} conversations; retrieval within each question's conversation, through MCP "
             "recall; no hosted model (hybrid embeds with the bundled local model).", ""]
    header = f"{'system':<12} {'questions':>9} {'any@5':>6} {'any@10':>7} {'all@5':>6} {'MRR':>6} {'sess@5':>7} {'p50 ms':>7} {'p95 ms':>7}"
    lines += ["Categories 1-4:", header, "-" * len(header)]
    for system, buckets in out["results"].items():
        rows = [r for b, rs in buckets.items() if b != "5" for r in rs]
        lat = sorted(out["latency"][system])
        p95 = lat[min(len(lat) - 1, int(0.95 * (len(lat) - 1) + 0.5))]
        lines.append(f"{system:<12} {len(rows):>9} {mean(rows, 'any@5'):>6.3f} {mean(rows, 'any@10'):>7.3f} {mean(rows, 'all@5'):>6.3f} "
                     f"{mean(rows, 'mrr'):>6.3f} {mean(rows, 'sess@5'):>7.3f} {statistics.median(lat):>7.2f} {p95:>7.2f}")
    lines += ["", "Turn any@5 by category:", f"{'system':<12} " + " ".join(f"{CATEGORIES[c]:>12}" for c in CATEGORIES)]
    for system, buckets in out["results"].items():
        lines.append(f"{system:<12} " + " ".join(f"{mean(buckets.get(str(c), []), 'any@5'):>12.3f}" for c in CATEGORIES))
    for name, value in out["timings"].items():
        lines.append(f"{name}: {value:.1f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=None, help="Use only the first N conversations.")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--lexical-only", action="store_true", help="Skip the hybrid run (no embedding).")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"skipped: LoCoMo data not found at {args.data} (pass --data PATH)")
        return 0
    print(report(run(args.data, args.conversations, semantic=not args.lexical_only)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
