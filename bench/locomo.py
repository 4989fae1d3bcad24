"""Benchmark: LoCoMo evidence retrieval through `recall`, in the two ways memory gets written, next to full-text
ranking alone and a plain SQLite FTS5 BM25 baseline, all in one run.

- **tools**: as an agent uses the tools. One `repo-memory serve` child over stdio (the `mcp` SDK's client, as a
  harness starts it) with semantic recall on, so it embeds in the background as it does for a user. Each turn is
  written with `remember` (text, its speaker, when it was said, the turn's id in `data`), one call per turn, and a
  conversation's questions are asked right after it is written, while the server is still embedding it.
- **hybrid**: the same turns bulk-imported with `repo-memory log import` (JSONL with speaker and date), every turn
  embedded by `repo-memory reindex`, questions through an in-process MCP client.
- **full-text**: that import with `semantic = false`.
- **fts5-bm25**: one turn per document, porter tokenizer, OR of non-stopword terms.

Every question is scoped to its conversation (one session per conversation). Reads
../shared/data/locomo/locomo-dev.json in place (never copied); no hosted model is called.

    python bench/locomo.py                     # every conversation of the dev split
    python bench/locomo.py --conversations 2   # two conversations
    python bench/locomo.py --conversations 1 --sessions 8   # the small mode CI runs: it works, not how well
    python bench/locomo.py --lexical-only      # no embedding: full-text and FTS5 only
"""

from __future__ import annotations

import argparse
import json
import os
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
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from repo_memory import layout
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.formats import experience
from repo_memory.index import query
from repo_memory.shells import mcp as server

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
CLI = [sys.executable, "-m", "repo_memory"]
Turn = tuple[str, str, str, str]  # dia_id, speaker, text, session date as LoCoMo writes it


def turns_of(conv: dict) -> list[Turn]:
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


def first_sessions(conv: dict, sessions: int | None) -> dict:
    """`conv` with only its first `sessions` sessions (all when None); questions_of keeps the questions they answer."""
    if sessions is None:
        return conv
    kept = {k: v for k, v in conv["conversation"].items()
            if not (m := re.fullmatch(r"session_(\d+)(?:_date_time)?", k)) or int(m[1]) <= sessions}
    return {**conv, "conversation": kept}


def session_of(conv: dict) -> str:
    return "locomo-" + re.sub(r"[^A-Za-z0-9._-]", "-", conv["sample_id"])


class Baseline:
    """Plain FTS5 BM25: one turn per document, porter tokenizer, OR of non-stopword terms."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, conv UNINDEXED, dia UNINDEXED, tokenize='porter unicode61')")

    def add(self, conv: str, turns: list[Turn]) -> None:
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


class Tally:
    """Scores and latencies of one system, by question category."""

    def __init__(self) -> None:
        self.scores: dict[int, list[dict[str, float]]] = defaultdict(list)
        self.latency: list[float] = []
        self.unembedded: list[float] = []  # share of a hybrid answer's candidates that had no vector yet

    def add(self, category: int, ranked: list[str], wanted: list[str], ms: float) -> None:
        self.scores[category].append(score(ranked, wanted))
        self.latency.append(ms)


def new_repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    layout.init(path)
    # The benchmark writes a turn per call, far faster than an agent: the guard against a runaway writer is off.
    (path / ".agents" / "repo-memory.toml").write_text("writes_per_minute = 0\n", encoding="utf-8")
    return path


def questions_of(conv: dict) -> list[tuple[dict, list[str]]]:
    known = {t[0] for t in turns_of(conv)}
    return [(qa, wanted) for qa in conv["qa"] if (wanted := gold(qa.get("evidence", []), known))]


async def tools_form(root: Path, convs: list[dict], tally: Tally) -> None:
    """Write each conversation with `remember` through a stdio server embedding in the background, then ask its
    questions at once."""
    env = {**os.environ, "REPO_MEMORY_SEMANTIC": "true"}
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "serve"], cwd=str(root), env=env)
    async with Client(params) as client:
        for conv in convs:
            session, dia_of = session_of(conv), {}
            for dia, speaker, text, date in turns_of(conv):
                answer = await client.call_tool("remember", {"text": text, "kind": "observation", "session": session, "speaker": speaker,
                                                             "when": iso(date), "data": {"dia_id": dia}})
                if answer.is_error:
                    sys.exit(f"remember failed: {answer.content}")
                dia_of[(answer.structured_content or {})["ids"][0]] = dia
            for qa, wanted in questions_of(conv):
                started = time.perf_counter()
                answer = await client.call_tool("recall", {"query": qa["question"], "limit": 10, "session": session})
                found = answer.structured_content or {}
                tally.add(qa["category"], [dia_of[h["id"]] for h in found.get("hits", []) if h["id"] in dia_of], wanted,
                          (time.perf_counter() - started) * 1000)
                tally.unembedded.append(_unembedded(found.get("ranking", "")))


def _unembedded(ranking: str) -> float:
    """1.0 when recall ran on words alone, else the count of candidates without a vector out of 50 (the pool)."""
    if not ranking.startswith("hybrid"):
        return 1.0
    count = re.search(r"(\d+) candidate\(s\) had no vector", ranking)
    return min(1.0, int(count[1]) / 50) if count else 0.0


def import_form(root: Path, convs: list[dict], work: Path) -> dict[str, str]:
    """Import every conversation with `repo-memory log import`; returns record id -> dia_id."""
    path = work / "locomo.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for conv in convs:
            for dia, speaker, text, date in turns_of(conv):
                out.write(json.dumps({"kind": "observation", "text": text, "ts": iso(date), "session": session_of(conv),
                                      "data": {"speaker": speaker, "dia_id": dia}}) + "\n")
    subprocess.run([*CLI, "--root", str(root), "log", "import", str(path)], check=True, capture_output=True,
                   env={**os.environ, "REPO_MEMORY_SEMANTIC": "false"})
    store = Store(Config.load(root, env={}, overrides={"semantic": False}))
    try:
        store.refresh()
        return {ln.record["id"]: ln.record["data"]["dia_id"] for conv in convs for ln in store.lines(session_of(conv)) if ln.record}
    finally:
        store.close()


async def ask_in_process(store: Store, convs: list[dict], dia_of: dict[str, str], tally: Tally) -> None:
    async with Client(server.build(store)) as client:
        for conv in convs:
            for qa, wanted in questions_of(conv):
                started = time.perf_counter()
                answer = await client.call_tool("recall", {"query": qa["question"], "limit": 10, "session": session_of(conv)})
                hits = (answer.structured_content or {}).get("hits", [])
                tally.add(qa["category"], [dia_of[h["id"]] for h in hits if h["id"] in dia_of], wanted, (time.perf_counter() - started) * 1000)


def run(data: Path, conversations: int | None, semantic: bool = True, sessions: int | None = None) -> dict[str, Any]:
    convs = [first_sessions(c, sessions) for c in json.loads(data.read_text(encoding="utf-8"))[:conversations]]
    tallies: dict[str, Tally] = {name: Tally() for name in (["tools", "hybrid"] if semantic else []) + ["full-text", "fts5-bm25"]}
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if semantic:
            started = time.perf_counter()
            anyio.run(tools_form, new_repo(work / "tools"), convs, tallies["tools"])
            timings["tools form s (writing and asking)"] = time.perf_counter() - started
        imported = new_repo(work / "imported")
        dia_of = import_form(imported, convs, work)
        if semantic:
            started = time.perf_counter()
            subprocess.run([*CLI, "--root", str(imported), "reindex"], check=True, capture_output=True,
                           env={**os.environ, "REPO_MEMORY_SEMANTIC": "true"})
            timings["embedding every turn s"] = time.perf_counter() - started
        for name, on in (("hybrid", True), ("full-text", False)):
            if name in tallies:
                store = Store(Config.load(imported, env={}, overrides={"semantic": on}))
                anyio.run(ask_in_process, store, convs, dia_of, tallies[name])
                store.close()
        baseline = Baseline()
        for conv in convs:
            baseline.add(session_of(conv), turns_of(conv))
            for qa, wanted in questions_of(conv):
                started = time.perf_counter()
                ranked = baseline.search(session_of(conv), qa["question"], 10)
                tallies["fts5-bm25"].add(qa["category"], ranked, wanted, (time.perf_counter() - started) * 1000)
    return {"tallies": tallies, "conversations": len(convs), "sessions": sessions, "timings": timings}


def mean(rows: list[dict[str, float]], key: str) -> float:
    return statistics.fmean(r[key] for r in rows) if rows else float("nan")


def report(out: dict[str, Any]) -> str:
    tallies: dict[str, Tally] = out["tallies"]
    trimmed = f" (their first {out['sessions']} sessions)" if out.get("sessions") else ""
    lines = [f"LoCoMo dev split: {out['conversations']} conversations{trimmed}; retrieval within each question's conversation, through MCP "
             "recall; no hosted model (hybrid embeds with the bundled local model).", "",
             "tools: remember per turn through a stdio server embedding in the background, questions right after each conversation;",
             "hybrid / full-text: the turns bulk-imported (log import), every turn embedded / semantic = false.", ""]
    header = f"{'system':<12} {'questions':>9} {'any@5':>6} {'any@10':>7} {'all@5':>6} {'MRR':>6} {'sess@5':>7} {'p50 ms':>7} {'p95 ms':>7}"
    lines += ["Categories 1-4:", header, "-" * len(header)]
    for name, tally in tallies.items():
        rows = [r for c, rs in tally.scores.items() if c != 5 for r in rs]
        lat = sorted(tally.latency)
        p95 = lat[min(len(lat) - 1, int(0.95 * (len(lat) - 1) + 0.5))]
        lines.append(f"{name:<12} {len(rows):>9} {mean(rows, 'any@5'):>6.3f} {mean(rows, 'any@10'):>7.3f} {mean(rows, 'all@5'):>6.3f} "
                     f"{mean(rows, 'mrr'):>6.3f} {mean(rows, 'sess@5'):>7.3f} {statistics.median(lat):>7.2f} {p95:>7.2f}")
    for key, title in (("any@5", "Turn any@5"), ("sess@5", "Session any@5")):
        lines += ["", f"{title} by category:", f"{'system':<12} " + " ".join(f"{CATEGORIES[c]:>12}" for c in CATEGORIES)]
        for name, tally in tallies.items():
            lines.append(f"{name:<12} " + " ".join(f"{mean(tally.scores.get(c, []), key):>12.3f}" for c in CATEGORIES))
    if "tools" in tallies and tallies["tools"].unembedded:
        share = statistics.fmean(tallies["tools"].unembedded)
        lines += ["", f"tools: {share:.0%} of recall candidates had no vector yet when asked (ranked by their words alone)"]
    for name, value in out["timings"].items():
        lines.append(f"{name}: {value:.1f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=None, help="Use only the first N conversations.")
    parser.add_argument("--sessions", type=int, default=None, help="Use only the first N sessions of each conversation "
                        "(and the questions they answer).")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--lexical-only", action="store_true", help="No embedding: skip the tools form and the hybrid run.")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"skipped: LoCoMo data not found at {args.data} (pass --data PATH)")
        return 0
    print(report(run(args.data, args.conversations, semantic=not args.lexical_only, sessions=args.sessions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
