"""Benchmark: does full-text recall hold on conversations unlike LoCoMo's, where its features were tuned?

Stand-ins for the chats and logs recall meets in use, made of LoCoMo's dev turns two ways, crossed:
- long turns between: each turn followed by a long unrelated one (six turns of the other conversations, about 120
  words, spoken by "assistant", in the same session), as in a chat whose assistant writes essays or an agent's log full
  of tool outputs;
- a user and an assistant: the conversation's two people recorded as "user" and "assistant", and the questions'
  names turned into "I"/"my" and "you"/"your" ("What did Caroline paint?" -> "What did I paint?"), as a chat with an
  assistant is recorded and asked about; no question names a speaker any more.
Recalled with `semantic = false` and scoped to the conversation, beside a plain FTS5 BM25 table of the same turns;
with `--hybrid`, also with every turn embedded (minutes per form: the long turns are long).
A record is indexed with its neighbours' words (index/records.py); `--context-words N` sets how many words of each
neighbour (the shipped CONTEXT_WORDS by default), to see what the cut does. No hosted model; reads
../shared/data/locomo/locomo-dev.json in place.

    python bench/long_turns.py
    python bench/long_turns.py --context-words 1000000   # neighbours indexed whole, as before the cut
    python bench/long_turns.py --conversations 2          # the small mode CI runs
    python bench/long_turns.py --hybrid                   # hybrid recall too (about 25 minutes on two cores)
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import DATA, iso, new_repo, questions_of, score, session_of, turns_of  # noqa: E402

from repo_memory.config import Config  # noqa: E402
from repo_memory.core.store import Store  # noqa: E402
from repo_memory.formats import experience  # noqa: E402
from repo_memory.index import query, records  # noqa: E402

FILLER_TURNS = 6  # other conversations' turns in one long turn


def conversations(convs: list[dict], long_turns: bool) -> list[list[tuple[str, str, str, str]]]:
    """Per conversation, (id, speaker, text, date) of its turns, each followed by a long unrelated one when
    `long_turns`."""
    rng = random.Random(7)
    out = []
    for conv in convs:
        others = [t[2] for c in convs if c is not conv for t in turns_of(c)]
        rows = []
        for dia, speaker, text, date in turns_of(conv):
            rows.append((dia, speaker, text, date))
            if long_turns:
                # the session of the turn it follows (a dia id is "D<session>:<turn>"), as a reply in the same chat is
                rows.append((f"{dia.split(':')[0]}:long-{len(rows)}", "assistant", " ".join(rng.sample(others, FILLER_TURNS)), date))
        out.append(rows)
    return out


def as_chat(conv: dict) -> dict:
    """`conv` as a user's chat with an assistant: speaker A is "user" and asked about as I/my, B "assistant" and you/your."""
    conv = copy.deepcopy(conv)
    c = conv["conversation"]
    role = {c["speaker_a"]: "user", c["speaker_b"]: "assistant"}
    for key, turns in c.items():
        if re.fullmatch(r"session_\d+", key):
            for turn in turns:
                turn["speaker"] = role.get(turn["speaker"], turn["speaker"])
    for qa in conv["qa"]:
        for name, (subject, possessive) in ((c["speaker_a"], ("I", "my")), (c["speaker_b"], ("you", "your"))):
            qa["question"] = re.sub(rf"\b{re.escape(name)}\b", subject, re.sub(rf"\b{re.escape(name)}'s\b", possessive, qa["question"]))
    return conv


def recall_form(root: Path, convs: list[dict], turns: list[list[tuple[str, str, str, str]]], semantic: bool = False) -> list[dict[str, float]]:
    """Full-text: each conversation's questions asked once it is written. With `semantic`, every conversation written
    and every turn embedded before any question is asked, as bench/locomo.py's hybrid form."""
    store = Store(Config.load(new_repo(root), env={}, overrides={"semantic": semantic}))
    scores = []
    try:
        source = store.source("human", "import")
        written = []
        for conv, rows in zip(convs, turns):
            records = store.log(session_of(conv), [experience.Entry("observation", text=text, data={"speaker": speaker}, source=source,
                                                                    ts=iso(date)) for _, speaker, text, date in rows])
            id_of = {r["id"]: rows[n][0] for n, r in enumerate(records)}
            if semantic:
                written.append((conv, id_of))
            else:
                scores += asked(store, conv, id_of)
        if semantic:
            print(f"  embedding {sum(map(len, turns)):,} turns…", file=sys.stderr, flush=True)
            store.reindex(embedding=lambda done, total: None)
            for conv, id_of in written:
                scores += asked(store, conv, id_of)
    finally:
        store.close(commit=False)
    return scores


def asked(store: Store, conv: dict, id_of: dict[str, str]) -> list[dict[str, float]]:
    """Scores of recall's answers to the questions of `conv` (categories 1-4), scoped to it."""
    return [score([id_of.get(h.id, "") for h in store.recall(qa["question"], limit=10, session=session_of(conv), kinds=["observation"]).hits], wanted)
            for qa, wanted in questions_of(conv) if qa["category"] != 5]


def bm25_form(convs: list[dict], turns: list[list[tuple[str, str, str, str]]]) -> list[dict[str, float]]:
    scores = []
    for conv, rows in zip(convs, turns):
        conn = sqlite3.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
        conn.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", [(n, r[2]) for n, r in enumerate(rows)])
        for qa, wanted in questions_of(conv):
            if qa["category"] != 5:
                match = query.parse(qa["question"]).fts
                found = conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (match,)).fetchall() if match else []
                scores.append(score([rows[r[0]][0] for r in found], wanted))
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--context-words", type=int, default=records.CONTEXT_WORDS)
    parser.add_argument("--conversations", type=int, help="Only the first N conversations.")
    parser.add_argument("--hybrid", action="store_true", help="Also recall with every turn embedded (the bundled model).")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"skipped: LoCoMo data not found at {args.data} (pass --data PATH)")
        return 0
    records.CONTEXT_WORDS = args.context_words
    convs = json.loads(args.data.read_text(encoding="utf-8"))[: args.conversations]
    print(f"LoCoMo dev, categories 1-4, {'full-text and hybrid' if args.hybrid else 'full-text'} recall scoped to each conversation; "
          "each neighbour indexed with its first "
          f"{args.context_words:,} words\n")
    print(f"{'speakers':<20} {'turns':<30} {'system':<10} {'any@5':>6} {'MRR':>6} {'sess@5':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        for speakers, chats in (("by name", convs), ("user and assistant", [as_chat(c) for c in convs])):
            for name, long_turns in (("as they are", False), ("each followed by a long one", True)):
                turns = conversations(chats, long_turns)
                folder = Path(tmp) / f"{speakers}-{name}".replace(" ", "-")
                for system in ("full-text", "hybrid", "fts5-bm25") if args.hybrid else ("full-text", "fts5-bm25"):
                    scored = (bm25_form(chats, turns) if system == "fts5-bm25" else
                              recall_form(folder / system, chats, turns, semantic=system == "hybrid"))
                    print(f"{speakers:<20} {name:<30} {system:<10} {statistics.fmean(s['any@5'] for s in scored):6.3f} "
                          f"{statistics.fmean(s['mrr'] for s in scored):6.3f} {statistics.fmean(s['sess@5'] for s in scored):7.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
