"""The benchmark scripts run in a small mode so they cannot rot (figures come from full runs by hand).

A benchmark whose data is missing skips: it measured nothing, so it cannot pass."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(script: str, *args: str, timeout: int = 300) -> str:
    """What `bench/<script>` printed; skips the test when its data is not on this machine (nothing was measured)."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    if proc.stdout.startswith("skipped:"):
        pytest.skip(proc.stdout.strip())
    return proc.stdout


def test_hook_cpu_benchmark_runs_in_small_mode_and_prints_each_hook_beside_its_baseline():
    out = bench("hook_cpu.py", "--runs", "2")
    rows = {line.split("  ")[1].strip(): line.split() for line in out.splitlines() if line.startswith("  ") and line.rstrip().endswith("x")}
    assert set(rows) == {"baseline: python -c pass", "pre-tool, a shell call", "pre-tool, a file write", "post-tool, a shell call",
                         "session-end, one call"}, out
    assert all(float(row[-1].rstrip("x")) > 1 for name, row in rows.items() if not name.startswith("baseline")), out


@pytest.mark.slow
def test_search_benchmark_runs_in_small_mode():
    out = bench("search.py", "--sizes", "150", "--queries", "20")
    row = next(line for line in out.splitlines() if line.strip().startswith("150 "))
    assert len(row.split()) == 9


@pytest.mark.slow
def test_locomo_benchmark_runs_in_small_mode_and_beats_its_baseline():
    out = bench("locomo.py", "--conversations", "1", "--sessions", "8")  # it runs and ranks: the figures are bench/locomo.py's whole run
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():
        if re.match(r"(tools|hybrid|full-text|fts5-bm25) +\d+ ", line):
            rows.setdefault(line.split()[0], line.split())  # the first table: questions, any@5, ...
    baseline = float(rows["fts5-bm25"][2])
    for system in ("tools", "hybrid", "full-text"):  # written through remember, and imported: turn any@5 on the first conversation
        assert float(rows[system][2]) > baseline, out
    assert "had no vector yet when asked" in out


@pytest.mark.slow
def test_long_turns_benchmark_runs_in_small_mode_and_full_text_beats_bm25_with_long_turns_between_and_as_a_chat():
    out = bench("long_turns.py", "--conversations", "2")
    rows = [line.rsplit(None, 4) for line in out.splitlines() if re.search(r" (full-text|fts5-bm25) +[\d.]+ ", line)]
    assert len(rows) == 8, out
    for form in {r[0] for r in rows}:  # speakers and turns: by name or as a user and an assistant, long turns between or not
        ours, bm25 = (float(r[2]) for name in ("full-text", "fts5-bm25") for r in rows if r[0] == form and r[1] == name)
        assert ours > bm25, out


@pytest.mark.slow
def test_writes_benchmark_runs_in_small_mode():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "writes.py"), "--writes", "20"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "edit -> searchable" in proc.stdout and "auto " in proc.stdout


@pytest.mark.slow
def test_secret_scan_benchmark_runs_in_small_mode_and_beats_its_baseline_on_false_positives():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "secret_scan.py"), "--small"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    from repo_memory.guards import secretscan

    families = len(secretscan.PROVIDERS) + len(secretscan.GENERIC)
    assert f"detected {families}/{families}" in proc.stdout
    total = next(line for line in proc.stdout.splitlines() if line.strip().startswith("all "))
    rates = [float(r) for r in re.findall(r"\(\s*([\d.]+)%\)", total)]
    assert rates[0] <= 1.0 and (len(rates) == 1 or rates[0] <= rates[1])  # ours, then detect-secrets' rate


@pytest.mark.slow
def test_anchor_benchmark_runs_in_small_mode_and_a_one_file_change_is_rechecked_quickly():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "anchors.py"), "--small"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "1 memory flagged stale" in proc.stdout and "files/s" in proc.stdout


@pytest.mark.slow
def test_peer_benchmark_runs_in_small_mode_through_real_mcp_servers():
    out = bench("peers.py", "--small", "--systems", "repo-memory", "server-memory", timeout=600)
    import json

    results = json.loads(out.strip().splitlines()[-1])["results"]
    ours = results["repo-memory"]["locomo"]
    assert ours["questions"] > 50 and ours["any@5"] > 0.6
    peer = results["server-memory"]
    assert "error" not in peer, f"the peer server failed, so nothing was compared: {peer.get('error')}"
    assert peer["locomo"]["any@5"] < ours["any@5"]


@pytest.mark.slow
def test_scale_benchmark_runs_in_small_mode_through_a_stdio_server_and_its_repository_is_timed_part_by_part(tmp_path: Path):
    out = bench("scale.py", "--small", "--keep", str(tmp_path), timeout=900)
    rows = {line.split(" p50")[0].strip(): line for line in out.splitlines() if " p50 " in line}
    assert {"full-text", "full-text, bare client", "hybrid (hybrid)", "hybrid, bare client", "plain FTS5 baseline"} <= set(rows), out
    assert "server peak RSS" in rows["hybrid (hybrid)"] and "records/s" in out
    quality = {line.strip().rsplit(" ", 1)[0].strip(): float(line.split()[-1]) for line in out.splitlines()
               if line.strip().startswith(("full-text", "hybrid")) and " p50 " not in line}
    assert quality["full-text"] > 0 and quality["hybrid"] > 0, out
    parts = subprocess.run([sys.executable, str(ROOT / "bench" / "phases.py"), str(tmp_path / "repo"), "--queries", "10"],
                           capture_output=True, text=True, timeout=300)
    assert parts.returncode == 0, parts.stderr[-3000:]
    hybrid = parts.stdout.split("hybrid, 10 questions:")[1]
    for part in ("recall (the whole call)", "records: full-text pass", "embedding the query (worker thread)", "skills and loops: whole search"):
        assert re.search(rf"{re.escape(part)}\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+", hybrid), parts.stdout


@pytest.mark.slow
def test_engineering_benchmark_runs_on_this_repositorys_history_and_recall_beats_plain_bm25():
    out = bench("engineering.py", "--history", str(ROOT), "--package", "repo_memory", "--paths", "server/repo_memory", "tests",
                "docs", "--commits", "400")
    row = next(line.split() for line in out.splitlines() if line.startswith("all "))
    recall, bm25 = float(row[2]), float(row[7])  # hit@1 of each: "all N  h1 / h5 / mrr  h1 / h5 / mrr"
    assert recall > bm25, out


@pytest.mark.slow
def test_invalid_lines_benchmark_runs_in_small_mode_and_doctor_prints_a_few_lines_of_a_flood():
    out = bench("invalid_lines.py", "--lines", "2000")
    rows = {line[:14].strip(): line.split() for line in out.splitlines()[2:]}
    assert set(rows) == {"first search", "search again", "verify", "doctor"}, out
    assert int(rows["verify"][-1].replace(",", "")) < 20 and int(rows["doctor"][-1].replace(",", "")) < 30, out
