"""The state of every code anchor a memory cites: its baseline hash, its current hash, or why it cannot be resolved,
and the stamp of the cited file those were read from (a process trusts them while the file keeps that stamp)."""

from __future__ import annotations

from collections.abc import Sequence

from repo_memory.index.db import Database

State = tuple[str, str, str, str]  # (baseline, current, problem, stamp of the cited file)


class AnchorIndex:
    """The anchor_state table: one row per (memory, anchor)."""

    def __init__(self, db: Database):
        self._db = db

    def states(self) -> dict[tuple[str, str], State]:
        """(memory, anchor) -> (baseline, current, problem, stamp) of every anchor."""
        with self._db.lock:
            return {(m, a): (b, c, p, s) for m, a, b, c, p, s in
                    self._db.conn.execute("SELECT memory, anchor, baseline, current, problem, stamp FROM anchor_state")}

    def replace(self, changed: dict[tuple[str, str], State], gone: Sequence[tuple[str, str]]) -> None:
        """Write the states that changed and drop the anchors no memory cites any more."""
        rows = [{"memory": m, "anchor": a, "baseline": b, "current": c, "problem": p, "stamp": s} for (m, a), (b, c, p, s) in changed.items()]
        with self._db.transaction():
            self._db.conn.executemany("DELETE FROM anchor_state WHERE memory=? AND anchor=?", gone)
            self._db.upsert("anchor_state", rows, pk=("memory", "anchor"))

    def stale(self, memories: Sequence[str] | None = None) -> list[tuple[str, str, str, str, str]]:
        """(memory, anchor, baseline, current, problem) of anchors whose code changed or is gone (of `memories`, or all)."""
        where, params = "WHERE (problem != '' OR baseline != current)", list(memories or ())
        if memories is not None:
            if not memories:
                return []
            where += f" AND memory IN ({','.join('?' * len(memories))})"
        with self._db.lock:
            return [tuple(r) for r in self._db.conn.execute(
                f"SELECT memory, anchor, baseline, current, problem FROM anchor_state {where} ORDER BY memory, anchor", params)]

    def current(self, memory: str) -> list[tuple[str, str]]:
        """(anchor, current hash) of each resolvable anchor of `memory`."""
        with self._db.lock:
            return [(a, c) for a, c in self._db.conn.execute("SELECT anchor, current FROM anchor_state WHERE memory=? AND current != ''", (memory,))]

    def pairs(self) -> list[tuple[str, str]]:
        """(memory, anchor) of every anchor, by memory."""
        with self._db.lock:
            return [(m, a) for m, a in self._db.conn.execute("SELECT memory, anchor FROM anchor_state ORDER BY memory")]
