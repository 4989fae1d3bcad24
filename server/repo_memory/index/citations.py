"""Which records cite a record in their refs: the corrections, feedback and a person's checks that settle a stale one."""

from __future__ import annotations

from collections.abc import Sequence

from repo_memory.index.db import Database

CHUNK = 500  # ids per query: SQLite's limit on bound parameters is 999 in older builds


class Citations:
    """Read-only questions over the refs of the records table."""

    def __init__(self, db: Database):
        self._db = db

    def of(self, ids: Sequence[str]) -> list[tuple[str, str, str, str, str, str]]:
        """(cited id, citing id, kind, outcome, tool, anchors JSON) of every record, not quarantined, whose refs name
        one of `ids`, oldest first. `outcome` is set only on feedback the server wrote (index/records.py)."""
        out: list[tuple[str, str, str, str, str, str]] = []
        wanted = sorted(set(ids))
        for start in range(0, len(wanted), CHUNK):
            chunk = wanted[start:start + CHUNK]
            with self._db.lock:
                out += [tuple(r) for r in self._db.conn.execute(
                    "SELECT j.value, r.id, r.kind, r.outcome, r.tool, r.anchors FROM records r, json_each(r.refs) j "
                    f"WHERE r.flags = '' AND r.refs LIKE '%#%' AND j.value IN ({','.join('?' * len(chunk))}) "
                    "ORDER BY r.ts, r.id", chunk)]
        return out
