"""Experiment: can a small learned reranker over what recall already computes lift LoCoMo evidence retrieval, on
conversations it was not trained on? Reproduces the "past the anchors" table in docs/benchmarks.md.

The dev conversations are imported as bench/locomo.py imports them and every turn is embedded. For each question
(scoped to its conversation) the script reads, through the index, what hybrid recall computes for every turn: the
full-text score with its boosts, the similarity of meaning and its neighbours', and the fused score recall ranks by.
Rerankers are linear models over a few of these features, trained with a listwise (softmax) loss on six conversations
and scored on the seventh, for each of the seven (leave-one-conversation-out), so no question is scored by a model
that saw its conversation. Each is compared with recall's own ranking on the same questions: the mean change in turn
any@5 with a 95% bootstrap interval over questions, turn and session any@5 per category. numpy only; nothing is
downloaded; no weights are shipped (docs/benchmarks.md says why). "recall (fused score)" is the fusion as it was
before 64ac3f8 (words half 0.6, no speaker factor on the meaning half, no neighbourhood); what a model over these
features learned there, made by hand, is how recall ranks now (index/ranking.py).

    python bench/rerank.py                    # build and embed (about 2.5 min of embedding on two cores)
    python bench/rerank.py --keep DIR         # keep the embedded repository in DIR; --keep DIR again reuses it
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import CATEGORIES, CLI, DATA, import_form, new_repo, questions_of, session_of  # noqa: E402

from repo_memory.config import Config  # noqa: E402
from repo_memory.core.store import Store  # noqa: E402
from repo_memory.formats import when  # noqa: E402
from repo_memory.index import fusion, query  # noqa: E402
from repo_memory.index.ranking import SPEAKER_BOOST, TIME_BOOST, WINDOW, Filters, RecordRanking  # noqa: E402

SETS = {  # the candidates measured; each name says what it adds to recall's fused score
    "+ neighbourhood": ["fused", "win"],
    "+ length": ["fused", "length"],
    "+ neighbourhood + length": ["fused", "win", "length"],
    "+ parts, speaker, time, neighbourhood": ["fused", "lexn", "semn", "spk", "time", "win"],
    "+ all of these + length": ["fused", "lexn", "semn", "spk", "time", "win", "length"],
}


def features(store: Store, conv: dict[str, Any], dia_of: dict[str, str]) -> list[dict[str, Any]]:
    """For each question of `conv`: every turn's features (a matrix, columns named by `names`) and which turns are evidence."""
    # the session as the index holds it: `log import` names an imported one with a suffix of its own (store.lines finds it)
    session = next(str(ln.record["session"]) for ln in store.lines(session_of(conv)) if ln.record)
    db = store._db  # the index as recall reads it: this is a measurement of its ranking, not a use of the tools
    ranking = RecordRanking(db, store._records._frequencies)
    rows = db.conn.execute("SELECT rowid, id, seq, vkey, speaker, text FROM records WHERE session = ? ORDER BY seq", (session,)).fetchall()
    where, params = Filters(session=session).where()
    out = []
    for qa, wanted in questions_of(conv):
        parsed = query.parse(qa["question"])
        found = ranking._ranked(parsed, " AND ".join(where), params, 100) if parsed else []
        named, timely = set(parsed.tokens), when.asks_when(qa["question"])
        lex = {r[0]: -r[-1] * (SPEAKER_BOOST if str(r[9]).lower() in named else 1.0)
               * (TIME_BOOST if timely and when.states_time(str(r[12])) else 1.0) for r in found}
        sem = store._index.semantic.query(qa["question"])
        assert sem is not None, "every turn is embedded first"
        similar = sem.similarity([r[3] for r in rows])
        sim = np.array([similar.get(r[3], 0.0) for r in rows])
        around = np.array([np.mean([sim[j] for j in range(i - WINDOW, i + WINDOW + 1) if j != i and 0 <= j < len(rows)]) for i in range(len(rows))])
        meaning = sim + fusion.NEIGHBOUR_WEIGHT * around
        lexical = np.array([lex.get(r[0], 0.0) for r in rows])
        lexn = lexical / (lexical.max() or 1.0)
        semn = (meaning - meaning.min()) / ((meaning.max() - meaning.min()) or 1.0)
        fused = fusion.LEXICAL_WEIGHT * lexn + (1 - fusion.LEXICAL_WEIGHT) * semn  # recall's own score (session scope)
        pool = set(np.argsort(-meaning)[:50]) | {i for i in np.argsort(-lexical)[:50] if lexical[i] > 0}
        candidates = sorted(pool, key=lambda i: -fused[i])
        kept = {i: fused[i] for i in candidates}
        columns = {
            "fused": fused, "lexn": lexn, "semn": semn,
            "spk": np.array([float(str(r[4]).lower() in named) for r in rows]),
            "time": np.array([float(timely and when.states_time(str(r[5])[:4000])) for r in rows]),
            "win": np.array([max([kept.get(j, 0.0) for j in range(i - 3, i + 4) if j != i] or [0.0]) for i in range(len(rows))]),
            "length": np.log1p(np.minimum([len(str(r[5])) for r in rows], 4000)) / 6,
        }
        dias = [dia_of.get(r[1], "") for r in rows]
        out.append({"session": session, "category": qa["category"], "wanted": wanted, "dias": dias, "candidates": candidates,
                    "columns": columns, "label": np.array([float(d in wanted) for d in dias])})
    return out


def train(questions: list[dict[str, Any]], names: list[str], l2: float = 1e-3, steps: int = 1500, lr: float = 0.05) -> np.ndarray:
    """Weights of a linear scorer fitted with a softmax (listwise) loss over each question's candidates, by Adam."""
    usable = [q for q in questions if q["label"][q["candidates"]].sum() > 0]
    X = np.concatenate([np.stack([q["columns"][n][q["candidates"]] for n in names], 1) for q in usable])
    sizes = np.array([len(q["candidates"]) for q in usable])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    y = np.concatenate([q["label"][q["candidates"]] / q["label"][q["candidates"]].sum() for q in usable])
    group = np.repeat(np.arange(len(usable)), sizes)
    w, m, v = np.zeros(len(names)), np.zeros(len(names)), np.zeros(len(names))
    for t in range(1, steps + 1):
        s = X @ w
        e = np.exp(s - np.maximum.reduceat(s, starts)[group])
        p = e / np.add.reduceat(e, starts)[group]
        g = X.T @ (p - y) / len(usable) + l2 * w
        m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


def outcome(q: dict[str, Any], scores: np.ndarray) -> tuple[int, float, float]:
    """(category, turn any@5, session any@5) of ranking the question's candidates by `scores` (one per candidate)."""
    top = [q["dias"][q["candidates"][i]] for i in np.argsort(-scores, kind="stable")[:5]]
    sessions = {d.split(":")[0] for d in top}
    return q["category"], float(any(d in q["wanted"] for d in top)), float(any(w.split(":")[0] in sessions for w in q["wanted"]))


def evaluate(questions: list[dict[str, Any]], names: list[str] | None) -> list[tuple[int, float, float]]:
    """Outcomes of recall's ranking (names None) or of a model over `names`, trained leaving each conversation out."""
    if names is None:
        return [outcome(q, q["columns"]["fused"][q["candidates"]]) for q in questions]
    results: list[tuple[int, float, float] | None] = [None] * len(questions)
    for held in sorted({q["session"] for q in questions}):
        w = train([q for q in questions if q["session"] != held and q["category"] != 5], names)
        for n, q in enumerate(questions):
            if q["session"] == held:
                results[n] = outcome(q, np.stack([q["columns"][c][q["candidates"]] for c in names], 1) @ w)
    return [r for r in results if r is not None]


def interval(base: list[tuple[int, float, float]], other: list[tuple[int, float, float]], n: int = 2000) -> tuple[float, float, float]:
    diffs = [b[1] - a[1] for a, b in zip(base, other, strict=True) if a[0] != 5]
    rnd = random.Random(1)
    means = sorted(statistics.fmean(rnd.choices(diffs, k=len(diffs))) for _ in range(n))
    return statistics.fmean(diffs), means[int(0.025 * n)], means[int(0.975 * n)]


def row(name: str, res: list[tuple[int, float, float]], base: list[tuple[int, float, float]]) -> str:
    main = [r for r in res if r[0] != 5]
    per = " ".join(f"{statistics.fmean(r[1] for r in res if r[0] == c):>6.3f}" for c in (1, 2, 3, 4))
    mean, low, high = interval(base, res)
    change = "" if res is base else f"  {mean:+.3f} [{low:+.3f}, {high:+.3f}]"
    return (f"{name:<40} {statistics.fmean(r[1] for r in main):>6.3f} {per}  {statistics.fmean(r[2] for r in main):>6.3f}{change}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", type=Path, help="Build the embedded repository here, or reuse the one built there before.")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"skipped: LoCoMo data not found at {args.data} (pass --data PATH)")
        return 0
    import json

    convs = json.loads(args.data.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory() as tmp:
        root = (args.keep or Path(tmp)) / "repo"
        if not root.exists():
            dia_of = import_form(new_repo(root), convs, Path(tmp))
            subprocess.run([*CLI, "--root", str(root), "reindex"], check=True, capture_output=True, env={"REPO_MEMORY_SEMANTIC": "true",
                           **{k: v for k, v in __import__("os").environ.items() if k != "REPO_MEMORY_SEMANTIC"}})
        store = Store(Config.load(root, env={}, overrides={"semantic": True}))
        try:
            store.refresh()
            dia_of = {ln.record["id"]: ln.record["data"]["dia_id"] for c in convs for ln in store.lines(session_of(c)) if ln.record}
            questions = [q for conv in convs for q in features(store, conv, dia_of)]
        finally:
            store.close(commit=False)
    base = evaluate(questions, None)
    print(f"LoCoMo dev, {sum(q['category'] != 5 for q in questions)} questions of categories 1-4, every turn embedded; each model "
          "trained on six conversations and scored on the seventh.\n")
    print(f"{'ranking':<40} {'any@5':>6} " + " ".join(f"{CATEGORIES[c][:6]:>6}" for c in (1, 2, 3, 4))
          + f"  {'sess@5':>6}  change in any@5 [95% interval]")
    print(row("recall (fused score)", base, base))
    for name, names in SETS.items():
        print(row(name, evaluate(questions, names), base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
