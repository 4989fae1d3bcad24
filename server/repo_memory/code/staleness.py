"""Which memories are stale: the code their anchors cite changed, or is gone, since the memory was written.

The baseline of an anchor is the hash pinned in the memory when it was written (`metadata.anchor_hashes` of a
skill, `anchors` of a record). An anchor a person wrote by hand has none; its baseline is the code as this clone
first saw it (kept in `<git-dir>/repo-memory/anchor-baselines.json`, so a re-index does not forget it).
The state of every anchor lives in the index table `anchor_state`; `check` brings it up to date, re-parsing only
code files whose size or mtime changed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from repo_memory.guards import disk
from repo_memory.formats import loops
from repo_memory.errors import RepoMemoryError

if TYPE_CHECKING:
    from repo_memory.core.store import Store

BASELINES = "anchor-baselines.json"


@dataclass(frozen=True)
class Stale:
    """One stale anchor of a memory, with what happened to the code."""

    memory: str
    anchor: str
    reason: str


def check(store: Store) -> int:
    """Recompute every anchor's state; returns how many rows changed."""
    conn, lock = store.index.conn, store.index.lock
    loop_files = sorted((p.name, st.st_mtime_ns, st.st_size) for p in loops.files(store.root) if (st := p.stat()))
    signature = (store.index.generation(), str(loop_files))
    last = store.anchor_check
    if last and last[0] == signature and not store.code.changed(last[1]):
        return 0  # the same memories cite the same, unchanged files: nothing to recompute (a stat per cited file)
    with lock:
        cited = [(f"skill:{n}", a) for n, a in conn.execute("SELECT name, anchors FROM files WHERE kind='skill' AND winner=1 AND anchors != ''")]
        cited += list(conn.execute("SELECT id, anchors FROM records WHERE anchors != ''"))
        existing = {(m, a): (b, c, p) for m, a, b, c, p in conn.execute("SELECT memory, anchor, baseline, current, problem FROM anchor_state")}
    cited += _loop_anchors(store)
    if not cited and not existing:
        store.anchor_check = (signature, set())
        return 0
    first_seen = _baselines(store)
    learned = False
    wanted: dict[tuple[str, str], tuple[str, str, str]] = {}
    decoded = [(memory, json.loads(raw)) for memory, raw in cited]
    known = {a: (c, p) for (_, a), (_, c, p) in existing.items()}
    with store.code.batch():
        files = {a.partition("::")[0] for _, pins in decoded for a in pins}
        moved = store.code.changed(files)  # only anchors into these files (or new ones) need resolving again
        resolved = {a: (r.hash, r.problem) for _, pins in decoded for a in pins
                    if (a not in known or a.partition("::")[0] in moved) and (r := store.code.resolve(a))}
    resolved = {**{a: v for a, v in known.items() if a not in resolved}, **resolved}
    for memory, pins in decoded:
        for anchor, pinned in pins.items():
            current, problem = resolved[anchor]
            baseline = pinned or first_seen.get(f"{memory}|{anchor}", "")
            if not baseline and current:
                baseline = first_seen[f"{memory}|{anchor}"] = current
                learned = True
            wanted[(memory, anchor)] = (baseline, current, problem)
    if learned:
        disk.write_atomic(store.config.state_dir / BASELINES, json.dumps(first_seen, sort_keys=True).encode("utf-8"))
    changed = [(m, a, *v) for (m, a), v in wanted.items() if existing.get((m, a)) != v]
    gone = [key for key in existing if key not in wanted]
    if changed or gone:
        with store.index.transaction():
            conn.executemany("DELETE FROM anchor_state WHERE memory=? AND anchor=?", gone)
            conn.executemany("INSERT OR REPLACE INTO anchor_state VALUES (?, ?, ?, ?, ?)", changed)
    # The index as it stands after our own write: the next check skips unless something else changes it.
    store.anchor_check = ((store.index.generation(), signature[1]), {a.partition("::")[0] for _, a in wanted})
    return len(changed) + len(gone)


def _loop_anchors(store: Store) -> list[tuple[str, str]]:
    """Anchors of the loop specs (`memory.anchors`); a spec that does not parse is lint's business, not ours."""
    out = []
    for path in loops.files(store.root):
        try:
            spec = loops.parse(disk.read_safely(path), f"{loops.LOOPS_DIR}/{path.name}")
        except (RepoMemoryError, OSError):
            continue
        if spec.anchors:
            out.append((f"loop:{spec.name}", json.dumps(dict.fromkeys(spec.anchors, ""))))
    return out


def repin_first_seen(store: Store, memory: str) -> list[str]:
    """A person checked `memory` (one without pinned hashes, like a loop) against the code: take the code as it is now."""
    check(store)
    baselines = _baselines(store)
    with store.index.lock:
        rows = store.index.conn.execute("SELECT anchor, current FROM anchor_state WHERE memory=? AND current != ''", (memory,)).fetchall()
    for anchor, current in rows:
        baselines[f"{memory}|{anchor}"] = current
    disk.write_atomic(store.config.state_dir / BASELINES, json.dumps(baselines, sort_keys=True).encode("utf-8"))
    store.anchor_check = None
    check(store)
    return [a for a, _ in rows]


def _baselines(store: Store) -> dict[str, str]:
    try:
        return dict(json.loads((store.config.state_dir / BASELINES).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def _reason(anchor: str, baseline: str, current: str, problem: str) -> str:
    if problem:
        return f"{anchor}: {problem}"
    return f"{anchor}: the code changed since the memory was written ({baseline[:8]} -> {current[:8]})"


def stale(store: Store, memories: list[str] | None = None) -> list[Stale]:
    """Stale anchors of `memories` (all memories when None)."""
    where, params = "WHERE (problem != '' OR baseline != current)", []
    if memories is not None:
        if not memories:
            return []
        where += f" AND memory IN ({','.join('?' * len(memories))})"
        params = list(memories)
    with store.index.lock:
        rows = store.index.conn.execute(f"SELECT memory, anchor, baseline, current, problem FROM anchor_state {where} ORDER BY memory, anchor",
                                        params).fetchall()
    return [Stale(m, a, _reason(a, b, c, p)) for m, a, b, c, p in rows]


def anchored_to(store: Store, symbol: str) -> list[tuple[str, str]]:
    """(memory, anchor) for every memory citing `symbol`: `path::Class.method`, `Class.method` or a trailing part."""
    with store.index.lock:
        rows = store.index.conn.execute("SELECT memory, anchor FROM anchor_state ORDER BY memory").fetchall()
    out = []
    for memory, anchor in rows:
        path, _, name = anchor.partition("::")
        if symbol in (anchor, name) or name.endswith(f".{symbol}") or (symbol.endswith(f"::{name}") and path.endswith(symbol.split("::")[0])):
            out.append((memory, anchor))
    return out
