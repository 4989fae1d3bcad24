"""The index of experience records: one row per record, searchable with the words around it.

Each record is indexed with its own text, who said it, its date, and the text of its neighbours
(two records either side in the same session), so a record is found by the conversation around it.
The log files stay the truth: rows point back at (file, offset, length) and reads re-verify on disk.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repo_memory.guards import disk
from repo_memory.formats import experience
from repo_memory.guards import markers
from repo_memory.errors import UnsafePathError
from repo_memory.index.query import Query

if TYPE_CHECKING:
    from repo_memory.index.skills import Index

# BM25 weights of the columns (text, speaker, date, context), chosen on LoCoMo (bench/locomo.py): the context of
# ±2 records lifted turn any@5 from 0.59 to 0.71; ±1 and ±3 did worse; the other weights move it by about a point.
WEIGHTS = (1.0, 0.5, 1.0, 0.35)
WINDOW = 2
POOL = 50  # records reranked per query
SPEAKER_BOOST = 1.5  # chosen on LoCoMo: 1.1 -> 1.5 lifted turn any@5 from 0.72 to 0.76; 2.0 and 3.0 did no better
SNIPPET_MAX = 20_000  # FTS5's snippet() grows with the square of the matches in a text

log = logging.getLogger("repo_memory")

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, session TEXT NOT NULL, seq INTEGER NOT NULL, ts TEXT NOT NULL,
  kind TEXT NOT NULL, actor TEXT, harness TEXT, tool TEXT, text TEXT, speaker TEXT, covers TEXT, refs TEXT,
  file TEXT NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL, sha256 TEXT NOT NULL, flags TEXT NOT NULL DEFAULT '',
  outcome TEXT NOT NULL DEFAULT '', anchors TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS records_kind ON records(kind);
CREATE TABLE IF NOT EXISTS anchor_state (
  memory TEXT NOT NULL, anchor TEXT NOT NULL, baseline TEXT NOT NULL, current TEXT NOT NULL, problem TEXT NOT NULL,
  PRIMARY KEY (memory, anchor)
);
CREATE INDEX IF NOT EXISTS anchor_state_anchor ON anchor_state(anchor);
CREATE INDEX IF NOT EXISTS records_session ON records(session, seq);
CREATE INDEX IF NOT EXISTS records_ts ON records(ts);
CREATE TABLE IF NOT EXISTS logs (
  path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, checked_ns INTEGER, indexed_to INTEGER, tail_sha TEXT
);
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(text, speaker, date, context, tokenize='porter unicode61 remove_diacritics 2');
"""


@dataclass(frozen=True)
class RecordHit:
    """One experience record found by a search."""

    id: str
    kind: str
    ts: str
    session: str
    snippet: str
    score: float
    actor: str
    harness: str
    tool: str
    covers: tuple[str, ...]
    file: str = ""
    end: int = 0  # byte offset just past the record's line in `file`


def _outcome(record: dict[str, Any]) -> str:
    data = record.get("data")
    if record["kind"] == "outcome" and isinstance(data, dict) and isinstance(data.get("outcome"), str):
        return str(data["outcome"])
    return ""


def _record_anchors(record: dict[str, Any]) -> str:
    """Code a record cites: its refs of the form path::Symbol, with the hashes pinned when it was written."""
    pinned = record.get("anchors")
    pinned = pinned if isinstance(pinned, dict) else {}
    cited = {ref: str(pinned.get(ref, "")) for ref in record.get("refs", []) if isinstance(ref, str) and "::" in ref}
    return json.dumps(cited) if cited else ""


def _speaker(record: dict[str, Any]) -> str:
    data = record.get("data")
    if isinstance(data, dict) and isinstance(data.get("speaker"), str):
        return str(data["speaker"])
    return str(record["source"].get("actor", ""))


def _date(record: dict[str, Any]) -> str:
    """Words for the record's date, so 'May 2023' or '2023-05-08' in a query can match it."""
    data = record.get("data")
    if isinstance(data, dict) and isinstance(data.get("date"), str):
        return str(data["date"])
    ts = str(record["ts"])
    try:
        moment = time.strptime(ts[:10], "%Y-%m-%d")
    except ValueError:
        return ts
    return f"{ts[:10]} {time.strftime('%d %B %Y', moment)}"


def _text(record: dict[str, Any]) -> str:
    text = record.get("text") or ""
    data = record.get("data")
    if data is not None and not isinstance(data, str):
        extra = {k: v for k, v in data.items() if k not in ("speaker", "date")} if isinstance(data, dict) else data
        if extra:
            text = f"{text}\n{json.dumps(extra, ensure_ascii=False)[:4000]}"
    elif isinstance(data, str):
        text = f"{text}\n{data}"
    return str(text)


class RecordIndex:
    """Experience records in the shared index database (the connection, lock and schema are the Index's)."""

    def __init__(self, index: Index, root: Path):
        self._index, self.root = index, root

    @property
    def _conn(self) -> sqlite3.Connection:
        return self._index.conn

    @property
    def _lock(self) -> threading.RLock:
        return self._index.lock

    def sync(self, files: Sequence[Path], complete: bool = True) -> int:
        """Index new lines of the logs in `files` (appends are read incrementally) and return how many records were added.

        With `complete`, `files` is every log that exists and rows of other logs are dropped.
        """
        added = 0
        with self._lock:
            known = {r[0]: r[1:] for r in self._conn.execute("SELECT path, size, mtime_ns, checked_ns, indexed_to, tail_sha FROM logs")}
        for path in files:
            rel = path.relative_to(self.root).as_posix()
            prev = known.pop(rel, None)
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue
            if prev and (prev[0], prev[1]) == (st.st_size, st.st_mtime_ns) and prev[2] - prev[1] > 2_000_000_000:
                continue
            try:
                added += self._sync_file(path, rel, st, prev)
            except UnsafePathError as exc:  # a linked log is not read; doctor's log check reports it
                log.warning("not indexing %s: %s", rel, exc)
        if complete:
            with self._index.transaction():
                for rel in known:
                    self._forget(rel)
        return added

    def _sync_file(self, path: Path, rel: str, st: os.stat_result, prev: tuple[Any, ...] | None) -> int:
        start = 0
        with os.fdopen(disk.open_safely(path), "rb") as handle:
            if prev and 0 < prev[3] <= st.st_size:
                handle.seek(max(0, prev[3] - 4096))
                if hashlib.sha256(handle.read(prev[3] - max(0, prev[3] - 4096))).hexdigest() == prev[4]:
                    start = prev[3]  # the indexed part is intact: read only what was appended
            handle.seek(start)
            data = handle.read()
        lines = experience.parse_lines(data, base=start)
        complete = [line for line in lines if not line.torn]
        indexed_to = (complete[-1].offset + len(complete[-1].raw) + 1) if complete else start
        tail = data[max(0, indexed_to - start - 4096) : indexed_to - start] if indexed_to - start >= 4096 or start == 0 else None
        if tail is None:  # the last 4 KiB straddle what we read and what we skipped
            with open(path, "rb") as handle:
                handle.seek(max(0, indexed_to - 4096))
                tail = handle.read(indexed_to - max(0, indexed_to - 4096))
        with self._index.transaction():
            if start == 0:
                self._forget(rel)
            count = self.add([line for line in complete if line.record is not None], rel)
            self._conn.execute(
                "INSERT OR REPLACE INTO logs VALUES (?, ?, ?, ?, ?, ?)",
                (rel, st.st_size, st.st_mtime_ns, time.time_ns(), indexed_to, hashlib.sha256(tail).hexdigest()),
            )
        return count

    def _forget(self, rel: str) -> None:
        self._conn.execute("DELETE FROM records_fts WHERE rowid IN (SELECT rowid FROM records WHERE file=?)", (rel,))
        self._conn.execute("DELETE FROM records WHERE file=?", (rel,))
        self._conn.execute("DELETE FROM logs WHERE path=?", (rel,))

    def add(self, lines: Sequence[experience.Line], rel: str) -> int:
        """Index records just appended to log `rel` (caller holds the lock and a transaction)."""
        if not lines:
            return 0
        rows = []
        for line in lines:
            r = line.record
            assert r is not None
            src = r["source"]
            text = _text(r)
            flags = markers.find(text)
            rows.append((r["id"], r["session"], r["seq"], r["ts"], r["kind"], src.get("actor", ""), src.get("harness", ""),
                         src.get("tool", ""), text, _speaker(r), json.dumps(r.get("covers", [])), json.dumps(r.get("refs", [])),
                         rel, line.offset, len(line.raw), r["sha256"], json.dumps([str(m) for m in flags]) if flags else "",
                         _outcome(r), _record_anchors(r), _date(r)))
        self._conn.executemany(
            "INSERT OR REPLACE INTO records (id, session, seq, ts, kind, actor, harness, tool, text, speaker, covers, refs, file, offset, length, "
            "sha256, flags, outcome, anchors) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [row[:-1] for row in rows],
        )
        sessions = {row[1] for row in rows}
        for session in sessions:
            seqs = [row[2] for row in rows if row[1] == session]
            self._refresh_fts(session, min(seqs) - WINDOW, max(seqs), {row[0]: row[-1] for row in rows})
        return len(rows)

    def _refresh_fts(self, session: str, first: int, last: int, dates: dict[str, str]) -> None:
        """Rewrite the search rows of records first..last of `session` (their neighbour windows changed)."""
        rows = self._conn.execute(
            "SELECT rowid, id, seq, text, speaker, ts FROM records WHERE session=? AND seq BETWEEN ? AND ? ORDER BY seq",
            (session, first - WINDOW, last + WINDOW),
        ).fetchall()
        by_seq = {r[2]: r for r in rows}
        for rowid, rid, seq, text, speaker, ts in rows:
            if not first <= seq <= last:
                continue
            context = "\n".join(f"{by_seq[s][4]}: {by_seq[s][3]}" for s in range(seq - WINDOW, seq + WINDOW + 1) if s != seq and s in by_seq)
            date = dates.get(rid) or self._date_of(rowid, ts)
            self._conn.execute("DELETE FROM records_fts WHERE rowid=?", (rowid,))
            self._conn.execute("INSERT INTO records_fts (rowid, text, speaker, date, context) VALUES (?, ?, ?, ?, ?)",
                               (rowid, text, speaker, date, context))

    def _date_of(self, rowid: int, ts: str) -> str:
        row = self._conn.execute("SELECT date FROM records_fts WHERE rowid=?", (rowid,)).fetchone()
        return str(row[0]) if row else _date({"ts": ts})

    def search(self, query: Query, limit: int, offset: int = 0, kinds: Sequence[str] | None = None, session: str | None = None,
               since: str | None = None, until: str | None = None) -> list[RecordHit]:
        """Records matching `query` within the filters, best first."""
        if not query:
            return []
        where, params = ["records_fts MATCH ?", "r.flags = ''"], [query.fts]  # quarantined records never come back
        if kinds:
            where.append(f"r.kind IN ({','.join('?' * len(kinds))})")
            params += list(kinds)
        if session:
            where.append("r.session = ?")
            params.append(session)
        if since:
            where.append("r.ts >= ?")
            params.append(since)
        if until:
            where.append("r.ts < ?")
            params.append(until)
        pool = max(offset + limit, POOL)
        sql = (
            f"SELECT r.rowid, r.id, r.kind, r.ts, r.session, r.actor, r.harness, r.tool, r.covers, r.speaker, "
            f"bm25(records_fts, {', '.join(map(str, WEIGHTS))}) AS rank, r.file, r.offset + r.length FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
            f"WHERE {' AND '.join(where)} ORDER BY rank LIMIT ?"
        )
        with self._lock:
            rows = self._conn.execute(sql, [*params, pool]).fetchall()
            named = set(query.tokens) & {str(r[9]).lower() for r in rows}
            # A speaker's name has little weight in BM25 (it is on every other record); asking about a person prefers their records.
            ranked = sorted(rows, key=lambda r: r[10] * (SPEAKER_BOOST if str(r[9]).lower() in named else 1.0))[offset : offset + limit]
            snippets = self._snippets(query, [r[0] for r in ranked])
        return [
            RecordHit(id=r[1], kind=r[2], ts=r[3], session=r[4], snippet=snippets.get(r[0], ""),
                      score=round(-r[10] * (SPEAKER_BOOST if str(r[9]).lower() in named else 1.0), 6),
                      actor=r[5], harness=r[6], tool=r[7], covers=tuple(json.loads(r[8] or "[]")), file=r[11], end=r[12])
            for r in ranked
        ]

    def _snippets(self, query: Query, rowids: list[int]) -> dict[int, str]:
        if not rowids:
            return {}
        sql = (f"SELECT rowid, CASE WHEN length(text) > {SNIPPET_MAX} THEN substr(text, 1, 160) || '…' "
               f"ELSE snippet(records_fts, 0, '**', '**', '…', 24) END FROM records_fts "
               f"WHERE records_fts MATCH ? AND rowid IN ({','.join('?' * len(rowids))})")
        return {r[0]: r[1].strip() for r in self._conn.execute(sql, [query.fts, *rowids])}

    def flagged(self) -> list[tuple[str, str]]:
        """(id, markers) of every quarantined record."""
        with self._lock:
            return [(r[0], r[1]) for r in self._conn.execute("SELECT id, flags FROM records WHERE flags != '' ORDER BY id")]

    def locate(self, session: str, start: int, end: int) -> list[tuple[str, int, int, int]]:
        """(file, offset, length, seq) of records start..end of `session`, from the index."""
        with self._lock:
            return [tuple(r) for r in self._conn.execute(
                "SELECT file, offset, length, seq FROM records WHERE session=? AND seq BETWEEN ? AND ? ORDER BY seq", (session, start, end)
            )]

    def nearest(self, session: str, seq: int) -> str | None:
        """The id of the record closest to session#seq, for did-you-mean."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id FROM records WHERE session=? ORDER BY abs(seq - ?) LIMIT 1", (session, seq)
            ).fetchone()
        return str(row[0]) if row else None

    def sessions(self) -> list[tuple[str, int, str, str]]:
        """(session, records, first ts, last ts) of every indexed session, newest first."""
        with self._lock:
            return [tuple(r) for r in self._conn.execute(
                "SELECT session, count(*), min(ts), max(ts) FROM records GROUP BY session ORDER BY max(ts) DESC"
            )]

    def timeline(self, since: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
        """Records in time order (oldest first), optionally from `since`."""
        with self._lock:
            cursor = self._conn.execute(
                "SELECT id, ts, kind, actor, substr(text, 1, 160) AS text FROM records WHERE ts >= ? ORDER BY ts, session, seq LIMIT ?",
                (since or "", limit),
            )
            cols = [c[0] for c in cursor.description]
            return [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()]

    def snapshot(self) -> list[tuple[Any, ...]]:
        """Everything indexed about records, for comparing an incremental index with a rebuild."""
        with self._lock:
            records = self._conn.execute(
                "SELECT id, session, seq, ts, kind, actor, text, speaker, covers, refs, file, offset, length, sha256, flags FROM records ORDER BY id"
            ).fetchall()
            fts = self._conn.execute(
                "SELECT r.id, f.text, f.speaker, f.date, f.context FROM records_fts f JOIN records r ON r.rowid = f.rowid ORDER BY r.id"
            ).fetchall()
        return [*records, ("--fts--",), *fts]
