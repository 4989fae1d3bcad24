"""Experience records in the index: one row per record, searchable with the words around it.

Each record is indexed with its own text, who said it, its date, and the text of its neighbours (two records
either side in the same session), so a record is found by the conversation around it. The log files stay the
truth: rows point back at (file, offset, length) and reads re-verify on disk.
"""

from __future__ import annotations

import hashlib
import logging
import contextlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repo_memory.errors import UnsafePathError
from repo_memory.formats import experience
from repo_memory.guards import disk
from repo_memory.index import cited, fts
from repo_memory.index.folding import fold, searched
from repo_memory.index.db import TOKENIZE, Database
from repo_memory.index.hits import Hit
from repo_memory.index.query import Query, parts
from repo_memory.index.ranking import WINDOW, Filters, RecordRanking
from repo_memory.index.recordrows import COLUMNS, ROLES, Judge, date_words, embedded, row
from repo_memory.index.vectors import QueryVectors

RACY_NS = 2_000_000_000
SYNC_BLOCK = 1 << 20  # bytes of a log read and indexed at a time (its records as Python objects: ~10x)
REFRESH_SPAN = 2000  # records whose full-text rows are written at a time

log = logging.getLogger("repo_memory")


# A record is indexed with the words of its neighbours (index/ranking.py WINDOW), each cut to its opening: context
# is what a short reply answers, and a long neighbour — a tool's output, an assistant's essay — flooded every record
# around it with its words. With each LoCoMo turn followed by a long unrelated one (bench/long_turns.py, a stand-in
# for a chat whose assistant writes essays) full-text turn any@5 was 0.666 with whole neighbours, 0.702 with 40 words
# of each (60: 0.693, 100: 0.675; plain BM25 0.542), and on LoCoMo as it is 0.781 and 0.777 (docs/benchmarks.md).
CONTEXT_WORDS = 40


def _searched(text: str, anchors: str = "", refs: str = "") -> str:
    """What the full-text index holds of a record's text: the text, then the words of the camelCase names in it
    (query.parts) in its first 4,000 characters, then the code it cites (`anchors`, its column: index/cited.py) and
    the free text of its refs (a URL, a ticket: `refs`, its column); as the index holds text (index/folding.py); CJK runs as their bigrams (guards/cjk.py).
    Excerpts are cut from the text itself (records table), never from this."""
    found = parts(text[:4000])  # the names a long tool output opens with; scanning all of it cost 1 ms per 16k characters
    said = "\n".join([text, *filter(None, [" ".join(found), cited.words(cited.anchors(anchors)), cited.given(refs)])])
    return searched(said)


def _opening(text: str) -> str:
    """What of a neighbour's text is indexed with a record: its first CONTEXT_WORDS words (split no further: this
    runs four times per record indexed)."""
    words = text.split(None, CONTEXT_WORDS)
    return text if len(words) <= CONTEXT_WORDS else " ".join(words[:CONTEXT_WORDS])


class RecordIndex:
    """Experience records in the index database."""

    def __init__(self, db: Database, root: Path, judge: Judge | None = None):
        self._db, self.root, self._judge = db, root, judge
        self._frequencies = fts.Frequencies("records", TOKENIZE)

    def note(self, files: Sequence[Path]) -> None:
        """Index what was just appended to `files`; never fails the append (see Database.after_write)."""
        self._db.after_write(lambda: self.sync(files, complete=False))

    def sync(self, files: Sequence[Path], complete: bool = True) -> int:
        """Index new lines of the logs in `files` (appends are read incrementally) and return how many records were added.

        With `complete`, `files` is every log that exists and rows of other logs are dropped.
        """
        added = 0
        columns = "SELECT path, size, mtime_ns, checked_ns, indexed_to, tail_sha FROM logs"
        with self._db.lock:
            if complete:
                known = {r[0]: r[1:] for r in self._db.conn.execute(columns)}
            else:  # the logs just appended to, not every log (an import appends to thousands, one after the other)
                rels = [path.relative_to(self.root).as_posix() for path in files]
                known = {r[0]: r[1:] for n in range(0, len(rels), 500) for r in self._db.conn.execute(
                    f"{columns} WHERE path IN ({','.join('?' * len(rels[n : n + 500]))})", rels[n : n + 500])}
        for path in files:
            rel = path.relative_to(self.root).as_posix()
            prev = known.pop(rel, None)
            try:
                st = os.stat(path)
            except FileNotFoundError:
                continue
            if prev and (prev[0], prev[1]) == (st.st_size, st.st_mtime_ns) and prev[2] - prev[1] > RACY_NS:
                continue
            try:
                added += self._sync_file(path, rel)
            except UnsafePathError as exc:  # a linked log is not read; doctor's log check reports it
                log.warning("not indexing %s: %s", rel, exc)
        if complete and known:
            with self._db.transaction():
                for rel in known:
                    self._forget(rel)
        return added

    def scrub(self, files: Sequence[Path]) -> None:
        """Index `files` afresh and leave no byte of what they held before in the database file: a redaction took a
        secret out of them (core/redacting.py). Deleted rows stay in free pages, and FTS5 keeps a deleted row's words
        in its segments until they merge: so the full-text tables are merged, the file rebuilt and its WAL emptied."""
        with self._db.transaction():
            for path in files:
                self._forget(path.relative_to(self.root).as_posix())
        self.sync(files, complete=False)
        self._db.purge()

    def behind(self, files: Sequence[Path]) -> int:
        """How many bytes of the logs in `files` the index has not read yet (a fresh clone's: all of them)."""
        with self._db.lock:
            read = dict(self._db.conn.execute("SELECT path, indexed_to FROM logs").fetchall())
        out = 0
        for path in files:
            with contextlib.suppress(OSError):
                out += max(0, os.stat(path).st_size - int(read.get(path.relative_to(self.root).as_posix()) or 0))
        return out

    def _sync_file(self, path: Path, rel: str) -> int:
        """Index what log `rel` gained since it was last indexed. Where it was last indexed to is read again inside the
        write transaction, and the file read there too: two indexers (a server's worker threads, a hook process beside
        it) that both started from the same offset would otherwise both add the lines after it, the second as `~hash`
        duplicates of every record."""
        with self._db.transaction():
            found = self._db.conn.execute("SELECT size, mtime_ns, checked_ns, indexed_to, tail_sha FROM logs WHERE path=?", (rel,)).fetchone()
            prev = tuple(found) if found else None
            st = os.stat(path)
            start = 0
            with os.fdopen(disk.open_safely(path), "rb") as handle:
                if prev and 0 < prev[3] <= st.st_size:
                    handle.seek(max(0, prev[3] - 4096))
                    if hashlib.sha256(handle.read(prev[3] - max(0, prev[3] - 4096))).hexdigest() == prev[4]:
                        start = prev[3]  # the indexed part is intact: read only what was appended
                if start == 0:
                    self._forget(rel)
                handle.seek(start)
                count, indexed_to, base, carry, later = 0, start, start, b"", dict[str, Any]()
                # A block at a time: a first look at a log of 100 MB held all of it, and every record of it, at once (~9x)
                while block := handle.read(SYNC_BLOCK):
                    data = carry + block
                    records, end = experience.records_in(data, base=base)  # it may hold millions of lines that are none
                    count += self.add(records, rel, later)
                    indexed_to, cut = max(indexed_to, end), data.rfind(b"\n") + 1
                    carry, base = data[cut:], base + cut  # a line the block cut: read with the next
                self._refresh_later(later)
                handle.seek(max(0, indexed_to - 4096))
                tail = handle.read(indexed_to - max(0, indexed_to - 4096))
            self._db.conn.execute("INSERT OR REPLACE INTO logs VALUES (?, ?, ?, ?, ?, ?)",
                                  (rel, st.st_size, st.st_mtime_ns, time.time_ns(), indexed_to, hashlib.sha256(tail).hexdigest()))
        return count

    def _forget(self, rel: str) -> None:
        conn = self._db.conn
        # The rows first, then the full-text table only for those: any statement that reads the full-text table makes
        # FTS5 write out what it holds in memory, so doing so for every new log cost an import 1.9 s per 100k records.
        rowids = conn.execute("SELECT rowid FROM records WHERE file=?", (rel,)).fetchall()
        conn.executemany("DELETE FROM records_fts WHERE rowid=?", rowids)  # before the rows
        conn.execute("DELETE FROM records WHERE file=?", (rel,))
        conn.execute("DELETE FROM logs WHERE path=?", (rel,))

    def add(self, lines: Sequence[experience.Line], rel: str, later: dict[str, Any] | None = None) -> int:
        """Index records just appended to log `rel` (the caller holds a transaction); plain SQL, as every hook call pays for it.
        `later`: their full-text rows are left for `_refresh_later` (what a block of a long log leaves for the next)."""
        if not lines:
            return 0
        conn = self._db.conn
        rows = self._disambiguated([row(line, rel, self._judge) for line in lines], rel)
        # The same id in another file (a copied log) replaces its row: that row leaves the full-text index first. Only
        # rows that exist are deleted from it: every statement that reads the full-text table makes FTS5 write out
        # what it holds in memory, so a lookup per new record cost an import a segment flush per batch.
        ids = [r[0] for r in rows]
        taken = [(int(r[0]),) for n in range(0, len(ids), 500) for r in conn.execute(
            f"SELECT rowid FROM records WHERE id IN ({','.join('?' * len(ids[n : n + 500]))})", ids[n : n + 500])]
        conn.executemany("DELETE FROM records_fts WHERE rowid=?", taken)
        conn.executemany("DELETE FROM records WHERE rowid=?", taken)
        conn.executemany(f"INSERT INTO records ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})", [r[:-1] for r in rows])
        dates = {r[0]: r[-1] for r in rows}
        for session in {r[1] for r in rows}:
            seqs = [r[2] for r in rows if r[1] == session]
            if later is None:
                self._refresh_fts(session, min(seqs) - WINDOW, max(seqs), dates)
            else:
                later.setdefault("seqs", {}).setdefault(session, []).extend(seqs)
        if later is not None:
            later.setdefault("dates", {}).update(dates)
        return len(rows)

    def _refresh_later(self, later: dict[str, Any]) -> None:
        """Write the full-text rows `add` left (records and neighbours both in, each written once: a row rewritten at
        every block's edge made FTS5 write out what it held each time, a first look at a log 1.6x slower)."""
        for session, seqs in later.get("seqs", {}).items():
            seqs.sort()
            first = seqs[0] - WINDOW  # REFRESH_SPAN of the records added at a time, however far apart their seqs are
            for n in range(0, len(seqs), REFRESH_SPAN):
                last = seqs[min(n + REFRESH_SPAN, len(seqs)) - 1]
                self._refresh_fts(session, first, last, later["dates"])
                first = last + 1

    def _disambiguated(self, rows: list[tuple[Any, ...]], rel: str) -> list[tuple[Any, ...]]:
        """Rows whose id another record of the same log already has (two clones continued it, git union-merged it) get
        `~` and 8 hex digits of their hash appended, so both are indexed and each can be read by its own id."""
        taken: set[str] = set()
        for n in range(0, len(rows), 500):  # bounded by SQLite's limit on bound parameters
            chunk = [r[0] for r in rows[n : n + 500]]
            taken |= {r[0] for r in self._db.conn.execute(
                f"SELECT id FROM records INDEXED BY idx_records_id WHERE file=? AND id IN ({','.join('?' * len(chunk))})", [rel, *chunk])}
        out = []
        for r in rows:
            if r[0] in taken:
                r = (f"{r[0]}~{r[15][:8]}", *r[1:])
            taken.add(r[0])
            out.append(r)
        return out

    def _refresh_fts(self, session: str, first: int, last: int, dates: dict[str, str]) -> None:
        """Rewrite the search rows of records first..last of `session` (their neighbour windows changed)."""
        conn = self._db.conn
        rows = conn.execute("SELECT rowid, id, seq, text, speaker, ts, anchors, refs FROM records WHERE session=? AND seq BETWEEN ? AND ? "
                            "ORDER BY seq", (session, first - WINDOW, last + WINDOW)).fetchall()
        by_seq = {r[2]: r for r in rows}
        # The records already in the full-text index: those of the window not just added (their dates are read there).
        indexed = {r[0] for r in rows if first <= r[2] <= last and r[1] not in dates}
        fresh = []
        for rowid, rid, seq, text, speaker, ts, anchors, refs in rows:
            if first <= seq <= last:
                context = searched("\n".join(f"{by_seq[s][4]}: {_opening(by_seq[s][3])}" for s in range(seq - WINDOW, seq + WINDOW + 1)
                                                if s != seq and s in by_seq))
                fresh.append((rowid, _searched(text, anchors, refs), fold(speaker), dates.get(rid) or self._date_of(rowid, ts), context))
        conn.executemany("DELETE FROM records_fts WHERE rowid=?", [(r[0],) for r in fresh if r[0] in indexed])
        conn.executemany("INSERT INTO records_fts (rowid, text, speaker, date, context) VALUES (?, ?, ?, ?, ?)", fresh)

    def _date_of(self, rowid: int, ts: str) -> str:
        found = self._db.conn.execute("SELECT date FROM records_fts WHERE rowid=?", (rowid,)).fetchone()
        return str(found[0]) if found else date_words({"ts": ts})

    def search(self, query: Query, limit: int, offset: int = 0, kinds: Sequence[str] | None = None, session: str | None = None,
               since: str | None = None, until: str | None = None, sem: QueryVectors | None = None) -> list[Hit]:
        """Records matching `query` within the filters, best first (index/ranking.py); quarantined records never come back,
        nor a copy an import made of a record held here."""
        return RecordRanking(self._db, self._frequencies).search(query, limit, offset, Filters(kinds, session, since, until), sem)

    def searchable(self) -> int:
        """How many distinct texts the records recall can return hold (one vector each)."""
        with self._db.lock:
            return int(self._db.conn.execute("SELECT count(DISTINCT vkey) FROM records WHERE flags = ''").fetchone()[0])

    def vector_keys(self) -> list[int]:
        """The vector key of every distinct text recall can return (doctor counts those without a vector)."""
        with self._db.lock:
            return [int(r[0]) for r in self._db.conn.execute("SELECT DISTINCT vkey FROM records WHERE flags = ''")]

    def speakers(self, after: int) -> tuple[set[str], int]:
        """The people records past rowid `after` name as their speaker (not ROLES), and the highest rowid read."""
        with self._db.lock:
            rows = self._db.conn.execute("SELECT DISTINCT speaker FROM records WHERE rowid > ?", (after,)).fetchall()
            upto = int(self._db.conn.execute("SELECT max(rowid) FROM records").fetchone()[0] or 0)
        return {str(r[0]) for r in rows if r[0] and str(r[0]).lower() not in ROLES}, upto

    def latest(self) -> int:
        """The highest rowid of any record (0 when there is none): records above what was looked at are new."""
        with self._db.lock:
            return int(self._db.conn.execute("SELECT max(rowid) FROM records").fetchone()[0] or 0)

    def embeddable(self, after: int, upto: int, limit: int, session: str | None = None) -> list[tuple[int, int, str]]:
        """(rowid, vector key, text to embed) of searchable records with `after` < rowid <= `upto` (of `session` only,
        when given), newest first: what may need a vector."""
        where, params = ("session = ? AND ", [session]) if session else ("", [])
        with self._db.lock:
            return [(int(r[0]), int(r[1]), embedded(str(r[2] or ""), str(r[3]))) for r in self._db.conn.execute(
                f"SELECT rowid, vkey, speaker, substr(text, 1, vlen) FROM records WHERE {where}rowid > ? AND rowid <= ? AND flags = '' "
                "ORDER BY rowid DESC LIMIT ?", [*params, after, upto, limit])]

    def snapshot(self) -> list[tuple[Any, ...]]:
        """Everything indexed about records, for comparing an incremental index with a rebuild."""
        with self._db.lock:
            return self._db.conn.execute(
                "SELECT id, session, seq, ts, kind, actor, text, speaker, covers, refs, file, offset, length, sha256, flags FROM records ORDER BY id"
            ).fetchall() + [("--fts--",)] + self._db.conn.execute(
                "SELECT r.id, f.text, f.speaker, f.date, f.context FROM records_fts f JOIN records r ON r.rowid = f.rowid ORDER BY r.id"
            ).fetchall()

