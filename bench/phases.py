"""Benchmark: where the time of one hybrid recall goes, in process, on a repository `bench/scale.py --keep DIR` built.

A hybrid recall embeds the query in a worker thread while the records' full-text pass runs in the caller's thread and
the skills' in another; then both wait for the embedding and fuse. This prints p50/p95/mean of each part over LoCoMo
questions, with full-text-only recall measured in the same run, so a change to one part can be seen apart from the
machine's load. The parts are timed by wrapping the methods that do them (timing only: nothing is changed).

    python bench/scale.py --keep /tmp/scale          # once: 10k skills + 100k records, every text embedded
    python bench/phases.py /tmp/scale/repo           # this code
    PYTHONPATH=<worktree>/server python bench/phases.py /tmp/scale/repo   # other code, interleaved with the above

On a shared two-core machine the figures move by 10-20 % between runs: compare runs made one after the other.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import DATA  # noqa: E402
from search import load_corpus, percentile  # noqa: E402

from repo_memory.config import Config  # noqa: E402
from repo_memory.core import recall as recall_module  # noqa: E402
from repo_memory.core import semantic  # noqa: E402
from repo_memory.core.store import Store  # noqa: E402
from repo_memory.index import docs, ranking, vectors  # noqa: E402

TIMES: dict[str, list[float]] = defaultdict(list)


def timed(owner: type, name: str, label: str) -> None:
    """Record the wall time of every call of `owner.name` under `label`."""
    method: Callable[..., Any] = getattr(owner, name)

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            TIMES[label].append((time.perf_counter() - started) * 1000)

    setattr(owner, name, wrapper)


def time_the_wait() -> None:
    """The time each thread waits for the query's embedding (its first use of the vector)."""
    plain = vectors.QueryVectors.vector.fget
    assert plain is not None

    def vector(self: Any) -> Any:
        started = time.perf_counter()
        found = plain(self)
        waited = (time.perf_counter() - started) * 1000
        if waited > 0.05:
            TIMES["waiting for the embedding (" + ("records" if threading.current_thread() is threading.main_thread() else "skills") + ")"].append(waited)
        return found

    vectors.QueryVectors.vector = property(vector)  # type: ignore[method-assign,assignment]


def measure(root: Path, questions: list[str], hybrid: bool) -> dict[str, list[float]]:
    TIMES.clear()
    store = Store(Config.load(root, env={}, overrides={"semantic": hybrid}))
    try:
        for question in questions[:3]:  # load the model, the vectors and SQLite's pages
            store.recall(question)
        TIMES.clear()
        for question in questions:
            store.recall(question)
        return {label: list(samples) for label, samples in TIMES.items()}
    finally:
        store.close(commit=False)


def report(title: str, times: dict[str, list[float]], count: int) -> list[str]:
    lines = [title, f"  {'part':<44} {'calls':>5} {'p50 ms':>7} {'p95 ms':>7} {'mean ms':>8}"]
    for label, samples in times.items():
        # a part some recalls skip (no wait: the embedding was cached or ready) is averaged over every recall
        lines.append(f"  {label:<44} {len(samples):>5} {statistics.median(samples):>7.2f} {percentile(samples, 95):>7.2f} {sum(samples) / count:>8.2f}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="A repository built by `bench/scale.py --keep DIR` (DIR/repo).")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"skipped: LoCoMo data not found at {args.data} (pass --data PATH)")
        return 0
    if not (args.repo / ".git").exists():
        sys.exit(f"{args.repo} is not a repository: build one with `python bench/scale.py --keep DIR` and pass DIR/repo")
    _, questions = load_corpus(args.data)
    questions = questions[: args.queries]
    timed(recall_module.Recall, "recall", "recall (the whole call)")
    timed(semantic.Semantic, "_embed_query", "embedding the query (worker thread)")
    timed(ranking.RecordRanking, "_ranked", "records: full-text pass")
    timed(ranking.RecordRanking, "_hybrid", "records: fusion, waiting included")
    timed(ranking.RecordRanking, "_neighbourhood", "records: neighbours' own words (in fusion)")
    timed(docs.DocIndex, "search", "skills and loops: whole search")
    timed(recall_module.Recall, "framed", "framing the hits")
    time_the_wait()
    lines = report(f"full-text only, {len(questions)} questions:", measure(args.repo, questions, False), len(questions))
    lines += report(f"hybrid, {len(questions)} questions:", measure(args.repo, questions, True), len(questions))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
