"""Which records cite a record in their refs: the corrections, feedback and a person's checks that may settle a stale one."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from repo_memory.index.db import Database

CHUNK = 500  # ids per query: SQLite's limit on bound parameters is 999 in older builds


@dataclass(frozen=True)
class Citation:
    """A record (`citing`) whose refs name the record `cited`, with what may make it settle that one."""

    cited: str
    citing: str
    kind: str
    outcome: str  # set only on feedback the server wrote (index/records.py)
    actor: str
    tool: str
    file: str  # the log line it is indexed from, to read it back: (file, offset, length)
    offset: int
    length: int
    pinned: dict[str, str]  # the code it cites, with the hash pinned when it was written ('' for none)
    fresh: tuple[str, ...]  # the code it cites whose hash now is the one it pinned: it describes that code as it is


class Citations:
    """Read-only questions over the refs of the records table."""

    def __init__(self, db: Database):
        self._db = db

    def of(self, ids: Sequence[str]) -> list[Citation]:
        """Every record, not quarantined, whose refs name one of `ids`, oldest first (one query per CHUNK ids; the
        code each cites is looked up by the anchor_state table's key, only for records that cite code)."""
        out: list[Citation] = []
        wanted = sorted(set(ids))
        for start in range(0, len(wanted), CHUNK):
            chunk = wanted[start:start + CHUNK]
            with self._db.lock:
                rows = self._db.conn.execute(
                    "SELECT j.value, r.id, r.kind, r.outcome, r.actor, r.tool, r.file, r.offset, r.length, r.anchors, "
                    "CASE WHEN r.anchors = '' THEN '[]' ELSE (SELECT json_group_array(a.anchor) FROM anchor_state a "
                    "WHERE a.memory = r.id AND a.problem = '' AND a.current != '' AND a.baseline = a.current) END "
                    "FROM records r, json_each(r.refs) j "
                    f"WHERE r.flags = '' AND r.refs LIKE '%#%' AND j.value IN ({','.join('?' * len(chunk))}) "
                    "ORDER BY r.ts, r.id", chunk).fetchall()
            out += [Citation(cited, citing, kind, outcome, actor, tool, file, offset, length,
                             json.loads(pinned) if pinned else {}, tuple(json.loads(fresh)))
                    for cited, citing, kind, outcome, actor, tool, file, offset, length, pinned, fresh in rows]
        return out
