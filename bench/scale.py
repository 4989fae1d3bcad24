"""Benchmark: recall at scale through MCP — 10k skills + 100k experience records (and 1M records with --records).

Skills and records are made from LoCoMo's conversation turns (../shared/data/locomo/locomo-dev.json, read in place):
each skill is a turn as its description with five others as its body; records are turns in sessions of 200,
imported in bulk with `repo-memory log import` (one commit) into the repository once its skills are indexed (as in a
repository in use; before, the import's time included indexing the 10k skills). Queries are LoCoMo questions, asked by the `mcp` SDK's
stdio client of a `repo-memory serve` child process (`recall`, no filters: skills, loops and records together), as
a harness asks them. Reports the bulk import rate, the time to build the index from the files and to embed, the
index and vector sizes on disk, recall p50/p95 full-text only and hybrid, and the server's peak RSS (VmHWM), with
the same queries against a plain FTS5 table of the same texts as the baseline measured in the same run.

    python bench/scale.py                        # 10k skills + 100k records
    python bench/scale.py --records 1000000      # 1M records
    python bench/scale.py --small                # what CI runs: 30 skills + 150 records, 12 queries
    python bench/scale.py --keep DIR [--reuse]   # keep the repository (embedding 10k skills takes ~20 min); measure it again

Identical texts are embedded once (as in real use), so the vectors of 100k records made of ~4k distinct turns cost
~4k embeddings; the vector index still holds one vector per record. `--no-embed` measures full-text only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import DATA, gold, turns_of  # noqa: E402 - the same data handling as bench/locomo.py
from peers import tree_rss_kb  # noqa: E402
from search import build_repo, load_corpus, plain_fts5  # noqa: E402

from repo_memory.config import Config  # noqa: E402
from repo_memory.core.store import Store  # noqa: E402
from repo_memory.index import fts  # noqa: E402

CLI = [sys.executable, "-m", "repo_memory"]
SESSION = 200  # records per session
SETTLE = 8.0  # seconds between a server's first answer and the measured ones
STARTED = 20.0  # seconds of a just-started server's life measured as such (its embedding job starts 5 s in)
STARTED_GAP = 0.05  # seconds between questions then
EDITS, EDIT_POLL = 20, 0.005  # skills edited by hand while a server runs, and how often recall is asked for the new word


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def env(semantic: bool) -> dict[str, str]:
    return {**os.environ, "REPO_MEMORY_SEMANTIC": "true" if semantic else "false"}


def run(root: Path, *args: str, semantic: bool = False) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([*CLI, "--root", str(root), *args], capture_output=True, text=True, env=env(semantic))
    if done.returncode:
        sys.exit(f"repo-memory {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return time.perf_counter() - started, done.stdout


def import_records(root: Path, turns: list[tuple[str, str, str, str]], count: int, work: Path) -> float:
    """`count` records in sessions of SESSION, written as one JSONL file and imported by `repo-memory log import`."""
    path = work / "records.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for i in range(count):
            _, speaker, text, _ = turns[i % len(turns)]
            out.write(json.dumps({"kind": "observation", "text": text, "data": {"speaker": speaker},
                                  "session": f"bulk-{i // SESSION:06d}"}) + "\n")
    took, output = run(root, "log", "import", str(path))
    print(f"  {output.strip().splitlines()[-1]}")
    path.unlink()
    return took


async def ask(root: Path, questions: list[str], semantic: bool, settle: float = SETTLE) -> tuple[list[float], str, int]:
    """Recall latencies through a stdio server, the ranking it reported, and the server's peak RSS in kB."""
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "serve"], cwd=str(root), env=env(semantic))
    samples, ranking = [], ""
    async with Client(params) as client:
        await client.call_tool("recall", {"query": questions[0]})  # the first call loads what is loaded lazily
        # A server answers its first calls itself while the MCP SDK is imported beside them (seconds of CPU); steady
        # recall is measured once that is done.
        await anyio.sleep(settle)
        for q in questions:
            started = time.perf_counter()
            result = await client.call_tool("recall", {"query": q})
            samples.append((time.perf_counter() - started) * 1000)
            ranking = (result.structured_content or {}).get("ranking", "")
        rss = tree_rss_kb(os.getpid())
    return samples, ranking, rss


def first_hit(reply: dict) -> dict:
    """The first hit of a recall's reply ({} when none): a reply names the query itself, and meaning finds something."""
    hits = (reply.get("result", {}).get("structuredContent") or {}).get("hits") or [{}]
    return hits[0]


def ask_raw(root: Path, questions: list[str], semantic: bool, settle: float = SETTLE, during: float = 0.0, edits: int = 0) -> list[float]:
    """Recall latencies through a stdio server asked by a bare JSON-RPC client (a line out, a line back): the server's
    own cost, without the Python SDK client's validation of each result against the tool's output schema. With
    `during`, the questions are asked from the server's first answer on, one every STARTED_GAP seconds for `during`
    seconds (its start-up work, the embedding job's first pass included, is going on meanwhile), not after `settle`.
    With `edits`, a skill is edited by hand that many times after `settle` (a new word in its body, as a person saves
    it) and each sample is the time from the save until recall finds the word (asked every EDIT_POLL seconds)."""
    server = subprocess.Popen([*CLI, "serve"], cwd=root, env=env(semantic), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    sent = 0

    def call(method: str, params: dict, answer: bool = True) -> dict:
        nonlocal sent
        sent += 1
        message = {"jsonrpc": "2.0", "method": method, "params": params, **({"id": sent} if answer else {})}
        server.stdin.write(json.dumps(message).encode() + b"\n")
        server.stdin.flush()
        while answer:
            reply = json.loads(server.stdout.readline())
            if reply.get("id") == sent:
                return reply
        return {}

    def recall(q: str) -> None:
        started = time.perf_counter()
        reply = call("tools/call", {"name": "recall", "arguments": {"query": q}})
        samples.append((time.perf_counter() - started) * 1000)
        assert "result" in reply, reply

    samples: list[float] = []
    try:
        call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
        call("notifications/initialized", {}, answer=False)
        call("tools/call", {"name": "recall", "arguments": {"query": questions[0]}})
        if edits:
            time.sleep(settle)
            skill = sorted(p for p in (root / ".agents" / "skills").iterdir() if (p / "SKILL.md").is_file())[17] / "SKILL.md"
            original = skill.read_bytes()
            try:
                for n in range(edits):
                    word = f"zqedit{n}x{os.getpid()}"
                    skill.write_bytes(original.replace(b"\n---\n", f"\n---\nThe {word} valve.\n".encode(), 1))
                    saved = time.perf_counter()
                    while word not in json.dumps(first_hit(call("tools/call", {"name": "recall", "arguments": {"query": word}}))):
                        assert time.perf_counter() - saved < 30, f"the edit was not found in 30 s ({word})"
                        time.sleep(EDIT_POLL)
                    samples.append((time.perf_counter() - saved) * 1000)
                    time.sleep(1.0)
            finally:
                skill.write_bytes(original)
        elif during:
            until = time.monotonic() + during
            while time.monotonic() < until:
                recall(questions[len(samples) % len(questions)])
                time.sleep(STARTED_GAP)
        else:
            time.sleep(settle)
            for q in questions:
                recall(q)
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    return samples


def quality(root: Path, conversations: list[dict], semantic: bool, budget: int) -> float:
    """Turn any@5 of LoCoMo questions (categories 1-4) over all records, unscoped: a hit counts when its text is an
    evidence turn's (each turn is in the store many times). `budget`: the full-text first pass's (fts.BUDGET)."""
    fts.BUDGET = budget
    store = Store(Config.load(root, env={}, overrides={"semantic": semantic}))
    found = asked = 0
    try:
        for conv in conversations:
            text_of = {t[0]: t[2] for t in turns_of(conv)}
            for qa in conv["qa"]:
                wanted = {text_of[w] for w in gold(qa.get("evidence", []), set(text_of))}
                if qa["category"] == 5 or not wanted:
                    continue
                hits = store.recall(qa["question"], limit=5, kinds=["observation"]).hits
                texts = [str(store.read(h.id).records[0].record.get("text") or "") for h in hits]
                found += any(t.startswith(w) for t in texts for w in wanted)
                asked += 1
    finally:
        store.close(commit=False)
    return found / asked


def size(path: Path) -> float:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 1e6


def build(root: Path, skill_turns: list[str], turns: list[tuple[str, str, str, str]], args: argparse.Namespace, work: Path) -> None:
    """The repository: skills committed by hand, records imported in bulk, the index built from the files."""
    build_repo(root, skill_turns, args.skills)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "skills"], check=True, env={**os.environ, "GIT_AUTHOR_NAME": "b",
                   "GIT_AUTHOR_EMAIL": "b@e", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@e"})
    print(f"{args.skills:,} skills + {args.records:,} records (LoCoMo turns; {len({t[2] for t in turns}):,} distinct texts)")
    indexed, _ = run(root, "reindex")  # a repository in use has its skills indexed: the import is timed on its own
    print(f"  index the skills         {indexed:8.1f} s")
    imported = import_records(root, turns, args.records, work)
    print(f"  bulk import              {imported:8.1f} s  ({args.records / imported:,.0f} records/s, one commit)")
    built, _ = run(root, "reindex")
    print(f"  build index from files   {built:8.1f} s  index on disk {size(Config.load(root, env={}).index_path):,.0f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--small", action="store_true", help="30 skills, 150 records, 12 queries (CI)")
    parser.add_argument("--no-embed", action="store_true", help="Full-text only: skip embedding and the hybrid run.")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", type=Path, help="Build the repository in this folder and keep it (to profile it afterwards).")
    parser.add_argument("--reuse", action="store_true", help="With --keep: measure the repository built there before again.")
    args = parser.parse_args()
    if args.small:
        args.skills, args.records, args.queries = 30, 150, 12
    if not args.data.is_file():
        print(f"skipped: LoCoMo data not found at {args.data} (pass --data PATH)")
        return 0
    skill_turns, questions = load_corpus(args.data)
    questions = questions[: args.queries]
    turns = [t for conv in json.loads(args.data.read_text(encoding="utf-8")) for t in turns_of(conv)]
    with tempfile.TemporaryDirectory() as tmp:
        root = (args.keep or Path(tmp)) / "repo"
        index = root / ".git" / "repo-memory" / "index.sqlite"
        if root.exists() and not args.reuse:
            sys.exit(f"{root} exists; remove it, name another --keep folder, or pass --reuse to measure it again")
        if not args.reuse:
            build(root, skill_turns, turns, args, Path(tmp))
            index = Config.load(root, env={}).index_path
        settle = 0.0 if args.small else SETTLE  # CI runs --small to see it work, not to time it
        anyio.run(ask, root, questions[:50], False, 0.0)  # warms the page cache with the index just built
        full_text, _, rss = anyio.run(ask, root, questions, False, settle)
        rows = [("full-text", full_text, rss), ("full-text, bare client", ask_raw(root, questions, False, settle), 0)]
        if not args.no_embed:
            if not args.reuse:
                embedded, _ = run(root, "reindex", semantic=True)
                print(f"  reindex + embed          {embedded:8.1f} s  vectors on disk {size(index.parent / 'vectors.usearch'):,.0f} MB")
            samples, ranking, rss = anyio.run(ask, root, questions, True, settle)
            rows.append((f"hybrid ({ranking.split(' ')[0]})", samples, rss))
            rows.append(("hybrid, bare client", ask_raw(root, questions, True, settle), 0))
            if not args.small:  # a server that just started: recall while its embedding job makes its first pass
                rows.append(("hybrid, just started", ask_raw(root, questions, True, during=STARTED), 0))
                rows.append(("skill edit -> found", ask_raw(root, questions, True, settle, edits=EDITS), 0))
        texts = [re.sub(r"\s+", " ", t[2]) for t in turns] * (args.records // len(turns) + 1)
        rows.append(("plain FTS5 baseline", plain_fts5(texts[: args.records], questions), 0))
        print(f"\n  recall through MCP (stdio; the mcp SDK's client, and a bare JSON-RPC one), {len(questions)} LoCoMo questions, no filters:")
        for name, samples, rss in rows:
            peak = f"  server peak RSS {rss / 1024:,.0f} MB" if rss else "" if "bare" in name else "  (in-process SQLite, no MCP)"
            if "started" in name:
                peak = f"  max {max(samples):.0f} ms; bare client, {len(samples)} recalls in the first {STARTED:.0f} s"
            if "edit" in name:
                peak = f"  max {max(samples):.0f} ms; {len(samples)} hand edits, from the save to a recall that finds it (the watcher waits 50 ms)"
            print(f"  {name:<22} p50 {statistics.median(samples):7.2f} ms  p95 {percentile(samples, 95):7.2f} ms{peak}")
        conversations = json.loads(args.data.read_text(encoding="utf-8"))[: 1 if args.small else None]
        bounded = fts.BUDGET
        asked = "the first conversation's questions" if args.small else "LoCoMo categories 1-4"  # --small: it runs, untimed
        print(f"\n  turn any@5 over all records ({asked}, unscoped, records only):")
        unbounded = [("full-text, unbounded first pass", False, 10**12)] if args.records <= 200_000 else []  # too slow for 1,033 questions at 1M
        for name, semantic, budget in [*unbounded, ("full-text", False, bounded),
                                       *([("hybrid", True, bounded)] if not args.no_embed else [])]:
            print(f"  {name:<32} {quality(root, conversations, semantic, budget):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
