"""Benchmark: repo-memory against the memory servers people would pick instead, through the same MCP client.

Each system runs as its own stdio MCP server process, in its own fresh directory, driven by the `mcp` SDK's
stdio client — the same calls an agent would make:

  repo-memory      `python -m repo_memory serve` in a fresh git repository; `remember` to write, `recall` to search
  server-memory    the reference MCP memory server (`npx -y @modelcontextprotocol/server-memory`): one entity
                   per item with the text as an observation (`create_entities`), `search_nodes` to search
  basic-memory     `basic-memory mcp` from a Python 3.12 virtual environment (BASIC_MEMORY_PYTHON, default
                   /tmp/bm-venv/bin; create it with `PYENV_VERSION=3.12.1 python3.12 -m venv /tmp/bm-venv &&
                   /tmp/bm-venv/bin/pip install basic-memory`): one note per item (`write_note`), `search_notes`

Workloads, every figure measured in this run on this machine:
  cold start   process start to the first successful search call (3 starts)
  LoCoMo       each conversation's turns ingested as items ("[date] Speaker: text"), every question of
               categories 1-4 asked: turn any@5 / any@10, MRR, session any@5, search latency p50/p95
  scale        N items (LoCoMo turns, repeated): ingest time, searchable-after, search p50/p95, disk, peak RSS
A system that cannot be installed or started is reported with its error, not dropped. Ratios are against
repo-memory.

    python bench/peers.py                       # 2 conversations, scale 1000
    python bench/peers.py --conversations 7 --sizes 1000 10000
    python bench/peers.py --small               # CI: 1 conversation, scale 200 (it runs; the figures are the full run's)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import CATEGORIES, DATA, gold, turns_of  # noqa: E402 - the same data handling as bench/locomo.py

Item = tuple[str, str]  # (id, text)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


def tree_rss_kb(root_pid: int) -> int:
    """Peak resident memory (VmHWM) of the processes below `root_pid`, summed (npx starts node under a shell)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    total, stack = 0, list(children.get(root_pid, []))
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        match = re.search(r"VmHWM:\s+(\d+) kB", status)
        total += int(match[1]) if match else 0
    return total


def disk_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@dataclass
class System:
    name: str
    params: Callable[[Path], StdioServerParameters]
    prepare: Callable[[Path], None]
    ingest: Callable[[Client, list[Item]], Awaitable[None]]
    search: Callable[[Client, str, int], Awaitable[list[str]]]
    data_dir: Callable[[Path], Path]
    missing: str = ""
    ids: dict[str, str] = field(default_factory=dict)  # the system's id of an item -> our item id


# --- repo-memory ----------------------------------------------------------------------------------

def rm_prepare(work: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    subprocess.run([sys.executable, "-m", "repo_memory", "--root", str(work), "init"], check=True, capture_output=True)
    (work / ".agents" / "repo-memory.toml").write_text("writes_per_minute = 0\n", encoding="utf-8")  # bulk import


def rm_params(work: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "repo_memory", "serve"], cwd=str(work),
                                 env={**os.environ, "REPO_MEMORY_SESSION": "bench"})


def make_repo_memory() -> System:
    system = System("repo-memory", rm_params, rm_prepare, None, None, lambda w: w / ".agents")  # type: ignore[arg-type]

    async def ingest(client: Client, items: list[Item]) -> None:
        for item_id, text in items:
            result = await client.call_tool("remember", {"text": text, "kind": "observation"})
            system.ids[(result.structured_content or {})["ids"][0]] = item_id

    async def search(client: Client, question: str, k: int) -> list[str]:
        result = await client.call_tool("recall", {"query": question, "limit": k})
        return [system.ids.get(h["id"], h["id"]) for h in (result.structured_content or {}).get("hits", [])]

    system.ingest, system.search = ingest, search
    return system


# --- the reference MCP memory server --------------------------------------------------------------

def make_server_memory() -> System:
    npx = shutil.which("npx")
    system = System(
        "server-memory",
        lambda w: StdioServerParameters(command=npx or "npx", args=["-y", "@modelcontextprotocol/server-memory"], cwd=str(w),
                                        env={**os.environ, "MEMORY_FILE_PATH": str(w / "memory.jsonl")}),
        lambda w: w.mkdir(parents=True, exist_ok=True), None, None, lambda w: w,  # type: ignore[arg-type]
        missing="" if npx else "npx not found (install Node.js 20+)",
    )

    async def ingest(client: Client, items: list[Item]) -> None:
        for start in range(0, len(items), 50):  # its documented shape: entities with observations, created in batches
            batch = [{"name": i, "entityType": "memory", "observations": [t]} for i, t in items[start:start + 50]]
            result = await client.call_tool("create_entities", {"entities": batch})
            if result.is_error:
                raise RuntimeError(result.content[0].text)  # type: ignore[union-attr]

    async def search(client: Client, question: str, k: int) -> list[str]:
        result = await client.call_tool("search_nodes", {"query": question})
        data = result.structured_content or json.loads(result.content[0].text)  # type: ignore[union-attr]
        return [e["name"] for e in data.get("entities", [])][:k]

    system.ingest, system.search = ingest, search
    return system


# --- basic-memory --------------------------------------------------------------------------------

def make_basic_memory() -> System:
    venv_bin = Path(os.environ.get("BASIC_MEMORY_PYTHON", "/tmp/bm-venv/bin"))
    exe = venv_bin / "basic-memory"
    system = System(
        "basic-memory",
        lambda w: StdioServerParameters(command=str(exe), args=["mcp"], cwd=str(w),
                                        env={**os.environ, "HOME": str(w / "home")}),
        lambda w: (w / "home").mkdir(parents=True, exist_ok=True), None, None, lambda w: w,  # type: ignore[arg-type]
        missing="" if exe.exists() else f"{exe} not found: PYENV_VERSION=3.12.1 python3.12 -m venv {venv_bin.parent} && "
                                        f"{venv_bin}/pip install basic-memory",
    )

    async def ingest(client: Client, items: list[Item]) -> None:
        for item_id, text in items:
            result = await client.call_tool("write_note", {"title": item_id.replace(":", "-"), "content": text, "folder": "turns"})
            if result.is_error:
                raise RuntimeError(result.content[0].text[:300])  # type: ignore[union-attr]

    async def search(client: Client, question: str, k: int) -> list[str]:
        result = await client.call_tool("search_notes", {"query": question, "page_size": k})
        if result.is_error:
            raise RuntimeError(result.content[0].text[:300])  # type: ignore[union-attr]
        text = (result.structured_content or {}).get("result") or result.content[0].text  # type: ignore[union-attr]
        # It answers in markdown for the model: one "### <title>" heading per hit, best first.
        return [title.strip().replace("-", ":", 1) for title in re.findall(r"^### (.+)$", str(text), re.MULTILINE)][:k]

    system.ingest, system.search = ingest, search
    return system


# --- workloads -----------------------------------------------------------------------------------

async def session(system: System, work: Path, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async with Client(system.params(work)) as client:
        return await body(client)


async def cold_start(system: System, base: Path) -> list[float]:
    times = []
    for n in range(3):
        work = base / f"{system.name}-cold-{n}"
        system.prepare(work)
        started = time.perf_counter()

        async def first(client: Client) -> None:
            await system.search(client, "release checklist", 5)

        await session(system, work, first)
        times.append(time.perf_counter() - started)
    return times


async def locomo(system: System, base: Path, conversations: list[dict]) -> dict[str, Any]:
    rows: list[dict[str, float]] = []
    latency: list[float] = []
    for n, conv in enumerate(conversations):
        work = base / f"{system.name}-locomo-{n}"
        system.prepare(work)
        turns = turns_of(conv)
        items = [(dia, f"[{date}] {speaker}: {text}") for dia, speaker, text, date in turns]
        known = {t[0] for t in turns}

        async def run(client: Client) -> None:
            await system.ingest(client, items)
            for qa in conv["qa"]:
                wanted = gold(qa.get("evidence", []), known)
                if not wanted or qa["category"] == 5:
                    continue
                started = time.perf_counter()
                ranked = await system.search(client, qa["question"], 10)
                latency.append((time.perf_counter() - started) * 1000)
                first = next((i for i, d in enumerate(ranked, start=1) if d in wanted), None)
                rows.append({"category": qa["category"], "any@5": float(any(d in ranked[:5] for d in wanted)), "any@10": float(any(d in ranked for d in wanted)),
                             "mrr": 1 / first if first else 0.0,
                             "sess@5": float(any(d.split(":")[0] in {r.split(":")[0] for r in ranked[:5]} for d in wanted))})

        await session(system, work, run)
    by_category = {CATEGORIES[c]: statistics.mean(r["any@5"] for r in rows if r["category"] == c)
                   for c in sorted({r["category"] for r in rows})}
    return {"questions": len(rows), **{k: statistics.mean(r[k] for r in rows) for k in ("any@5", "any@10", "mrr", "sess@5")},
            "p50": pct(latency, 0.5), "p95": pct(latency, 0.95), "any@5 by category": by_category}


async def scale(system: System, base: Path, size: int, texts: list[str], queries: list[str]) -> dict[str, float]:
    work = base / f"{system.name}-scale-{size}"
    system.prepare(work)
    items = [(f"S{i}:{i}", texts[i % len(texts)] + (f" (copy {i // len(texts)})" if i >= len(texts) else "")) for i in range(size)]
    out: dict[str, float] = {}

    async def run(client: Client) -> None:
        started = time.perf_counter()
        await system.ingest(client, items)
        out["ingest_s"] = time.perf_counter() - started
        probe = items[-1][1].split("]", 1)[-1][:60]
        t = time.perf_counter()
        while not await system.search(client, probe, 5) and time.perf_counter() - t < 30:
            await anyio.sleep(0.05)
        out["searchable_s"] = time.perf_counter() - started
        lat = []
        for q in queries:
            t = time.perf_counter()
            await system.search(client, q, 5)
            lat.append((time.perf_counter() - t) * 1000)
        out["p50"], out["p95"] = pct(lat, 0.5), pct(lat, 0.95)
        out["rss_mb"] = tree_rss_kb(os.getpid()) / 1024

    await session(system, work, run)
    out["disk_mb"] = disk_bytes(system.data_dir(work)) / 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000])
    parser.add_argument("--systems", nargs="*", default=["repo-memory", "server-memory", "basic-memory"])
    parser.add_argument("--small", action="store_true", help="CI: one conversation, scale 200")
    parser.add_argument("--plot", type=Path, help="also draw recall vs latency to this PNG (needs matplotlib)")
    parser.add_argument("--from-json", type=Path, help="redraw/report from the JSON line a previous run printed, without running")
    args = parser.parse_args()
    if args.from_json:
        results = json.loads(args.from_json.read_text(encoding="utf-8").strip().splitlines()[-1])["results"]
        report(results, args.sizes)
        if args.plot:
            plot(results, args.plot)
        return
    if not DATA.is_file():
        print(f"skipped: LoCoMo data not found at {DATA}")
        return
    convs = json.loads(DATA.read_text(encoding="utf-8"))[: 1 if args.small else args.conversations]
    if args.small:
        args.sizes = [200]
    texts = [f"[{d}] {s}: {t}" for c in convs for _, s, t, d in turns_of(c)]
    queries = [qa["question"] for c in convs for qa in c["qa"]][:50]
    makers = {"repo-memory": make_repo_memory, "server-memory": make_server_memory, "basic-memory": make_basic_memory}
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="repo-memory-peers-") as tmp:
        base = Path(tmp)
        for name in args.systems:
            system = makers[name]()
            if system.missing:
                results[name] = {"error": system.missing}
                print(f"{name}: not run — {system.missing}", flush=True)
                continue
            try:
                print(f"{name}: cold start…", flush=True)
                results[name] = {"cold": anyio.run(cold_start, system, base)}
                print(f"{name}: LoCoMo ({len(convs)} conversation(s))…", flush=True)
                results[name]["locomo"] = anyio.run(locomo, system, base, convs)
                for size in args.sizes:
                    print(f"{name}: scale {size}…", flush=True)
                    results[name][f"scale{size}"] = anyio.run(scale, system, base, size, texts, queries)
            except Exception as exc:  # noqa: BLE001 - a peer that fails is reported with its error, never dropped
                while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
                    exc = exc.exceptions[0]  # the error itself, not the task group around it
                results.setdefault(name, {})["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                print(f"{name}: failed — {results[name]['error']}", flush=True)
    report(results, args.sizes)
    if args.plot:
        plot(results, args.plot)


def plot(results: dict[str, dict[str, Any]], path: Path) -> None:
    """LoCoMo turn recall@5 against search latency p95, one point per system that ran."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=120)
    for name, r in results.items():
        if "locomo" not in r:
            continue
        lo = r["locomo"]
        ax.scatter(lo["p95"], lo["any@5"], s=80, color="#1565c0" if name == "repo-memory" else "#9e9e9e", zorder=3)
        ax.annotate(f"{name}\nany@5 {lo['any@5']:.2f}, p95 {lo['p95']:.0f} ms", (lo["p95"], lo["any@5"]), textcoords="offset points",
                    xytext=(8, -4), fontsize=8)
    ax.set_xscale("log")
    xs = [r["locomo"]["p95"] for r in results.values() if "locomo" in r]
    if xs:
        ax.set_xlim(min(xs) / 2, max(xs) * 6)  # room for the labels right of each point
    ax.set_xlabel("search latency p95 (ms, log scale) — lower is better")
    ax.set_ylabel("LoCoMo turn recall@5 — higher is better")
    ax.set_ylim(-0.05, 1.0)
    ax.grid(True, alpha=0.3)
    ax.set_title("Evidence retrieval vs latency, same MCP client, same machine", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    print(f"plot written to {path}")


def report(results: dict[str, dict[str, Any]], sizes: list[int]) -> None:
    ours = results.get("repo-memory", {})
    print("\nLoCoMo evidence retrieval (categories 1-4, one store per conversation)")
    print(f"{'system':15} {'questions':>9} {'any@5':>6} {'any@10':>6} {'MRR':>6} {'sess@5':>6} {'p50 ms':>8} {'p95 ms':>8} {'p95 vs ours':>11}")
    for name, r in results.items():
        if "locomo" not in r:
            print(f"{name:15} not run: {r.get('error', '?')}")
            continue
        lo = r["locomo"]
        ratio = lo["p95"] / ours["locomo"]["p95"] if "locomo" in ours else float("nan")
        print(f"{name:15} {lo['questions']:>9} {lo['any@5']:>6.3f} {lo['any@10']:>6.3f} {lo['mrr']:>6.3f} {lo['sess@5']:>6.3f} "
              f"{lo['p50']:>8.2f} {lo['p95']:>8.2f} {ratio:>10.1f}x")
    cats = sorted({c for r in results.values() for c in r.get("locomo", {}).get("any@5 by category", {})})
    print(f"\nturn any@5 by category\n{'system':15} " + " ".join(f"{c:>11}" for c in cats))
    for name, r in results.items():
        if "locomo" in r:
            print(f"{name:15} " + " ".join(f"{r['locomo']['any@5 by category'].get(c, float('nan')):>11.3f}" for c in cats))
    print("\ncold start: process start to first successful search (s, best of 3)")
    for name, r in results.items():
        if "cold" in r:
            ratio = min(r["cold"]) / min(ours["cold"]) if "cold" in ours else float("nan")
            print(f"{name:15} {min(r['cold']):6.2f}  ({ratio:.1f}x repo-memory)")
    for size in sizes:
        print(f"\nscale: {size} items")
        print(f"{'system':15} {'ingest s':>9} {'searchable s':>12} {'p50 ms':>8} {'p95 ms':>8} {'disk MB':>8} {'peak RSS MB':>11}")
        for name, r in results.items():
            s = r.get(f"scale{size}")
            if s:
                print(f"{name:15} {s['ingest_s']:>9.2f} {s['searchable_s']:>12.2f} {s['p50']:>8.2f} {s['p95']:>8.2f} {s['disk_mb']:>8.2f} {s['rss_mb']:>11.0f}")
    errors = {n: r["error"] for n, r in results.items() if "error" in r}
    for name, error in errors.items():
        print(f"\n{name}: {error}")
    print("\n" + json.dumps({"results": results}, default=str))


if __name__ == "__main__":
    main()
