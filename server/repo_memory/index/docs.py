"""Documents in the index: skills and loop specs, incremental by content hash, searchable with BM25.

Of the valid files for one skill name, the one in the highest-priority folder is searchable (the `winner`); the
others are shadowed. Quarantined documents (injection markers, secrets a person left in a file) are indexed but
never returned by a search; doctor lists them. Every row is in the full-text index; searches keep the winners.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from repo_memory.formats import skills
from repo_memory.index import cited, fts, fusion
from repo_memory.index.db import TOKENIZE, Database
from repo_memory.index.docfiles import Loaded, Progress, load_all, unchanged
from repo_memory.index.hits import MEANING, Hit
from repo_memory.index.query import Query
from repo_memory.index.vectors import QueryVectors, vkey

# Weights of the FTS columns (name, description, tags, body, words) in BM25: a hit in a name says more than one in a
# body. `words` holds the words of the camelCase names in the description and body (query.parts), so "retry policy"
# finds a skill that says RetryPolicy.maxAttempts, and the code it cites (index/cited.py); they count as the body does.
# (A record keeps them after its text in its own full-text row; docs_fts reads its columns from `docs`, so they are a
# column of their own.)
WEIGHTS = (10.0, 5.0, 4.0, 1.0, 1.0)
CHECKPOINT_AFTER = 200  # rows changed by one sync
KINDS = ("skill", "loop")


@dataclass(frozen=True)
class SyncReport:
    """What one synchronisation changed."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    looked: str = "all"  # at every memory file; "files": the ones changes named; "logs": the experience logs alone

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed


def _row(item: skills.Found, loaded: Loaded, now: int) -> dict[str, Any]:
    doc = loaded.doc
    return {
        "path": item.rel, "kind": item.kind, "rank": item.rank, "name": doc.name, "source": item.source,
        "sha256": doc.sha256, "mtime_ns": loaded.mtime_ns, "size": loaded.size, "checked_ns": now, "valid": int(doc.valid),
        "problems": json.dumps([p.__dict__ for p in doc.problems]) if doc.problems else "",
        "notes": json.dumps(list(doc.notes)) if doc.notes else "",
        "description": doc.description, "tags": " ".join(doc.tags), "body": doc.body,
        "words": loaded.words,
        "status": doc.status, "origin": doc.origin, "winner": 0, "flags": json.dumps(list(doc.flags)) if doc.flags else "",
        "anchors": json.dumps(doc.anchors) if doc.anchors else "", "vkey": vkey(item.rel, doc.sha256),
    }


class DocIndex:
    """Skills and loop specs in the index database."""

    def __init__(self, db: Database):
        self._db = db
        self._frequencies = fts.Frequencies("docs", TOKENIZE)  # bounds a query's first pass in a large library
        self._sync_lock = threading.Lock()  # one sync at a time in this process: overlapping ones would parse the same files twice

    def note(self, found: list[skills.Found], complete: bool = False) -> None:
        """Index documents just written (`complete`: `found` is every document); never fails the write (see
        Database.after_write)."""
        self._db.after_write(lambda: self.sync(found, complete=complete))

    def sync(self, found: Iterable[skills.Found], progress: Progress | None = None, complete: bool = True, gone: Iterable[str] = ()) -> SyncReport:
        """Bring the index in line with `found`, re-reading only changed files.

        With `complete`, `found` is every document that exists now and rows for other files are dropped; without it,
        only the given files are looked at, and the rows of `gone` (paths looked at and not found) dropped. Files are
        compared and parsed outside the write transaction, so searches are never held up by a long scan.
        """
        with self._sync_lock:
            return self._sync(found, progress, complete, set(gone))

    def _sync(self, found: Iterable[skills.Found], progress: Progress | None, complete: bool, gone: set[str]) -> SyncReport:
        found = list(found)
        wanted = None if complete else {f.rel for f in found} | gone
        conn = self._db.conn
        select = "SELECT path, sha256, mtime_ns, size, checked_ns, rank, name, kind FROM docs"
        with self._db.lock:  # a few files looked at: their rows, not 10k (15 ms)
            if wanted is not None and len(wanted) <= 500:
                cursor = conn.execute(f"{select} WHERE path IN ({','.join('?' * len(wanted))})", list(wanted))
            else:
                cursor = conn.execute(select)
            existing = {row[0]: row[1:] for row in cursor if wanted is None or row[0] in wanted}
        candidates = [(item, existing.pop(item.rel, None)) for item in found]
        candidates = [(item, prev) for item, prev in candidates if not unchanged(item, prev)]
        loaded = load_all([item for item, _ in candidates], progress, len(found))
        rows: list[dict[str, Any]] = []
        touched: list[tuple[str, int, int]] = []
        added = updated = 0
        affected: set[tuple[str, str]] = set()
        now = time.time_ns()
        for (item, prev), got in zip(candidates, loaded, strict=True):
            if got is None or got.moved():
                continue  # vanished or changed again since it was read: the next sync sees it
            if prev is not None and prev[0] == got.doc.sha256 and prev[4] == item.rank:
                touched.append((item.rel, got.mtime_ns, got.size))
                continue
            rows.append(_row(item, got, now))
            affected.add((item.kind, got.doc.name))
            if prev is None:
                added += 1
            else:
                affected.add((prev[6], prev[5]))
                updated += 1
        affected |= {(prev[6], prev[5]) for prev in existing.values()}
        with self._db.transaction():
            conn.executemany("UPDATE docs SET mtime_ns=?, size=?, checked_ns=? WHERE path=?", [(m, s, now, p) for p, m, s in touched])
            # Every row is in the full-text index; a changing row leaves it *before* its content changes, since
            # FTS5 reads the content row to find the tokens to remove.
            self._paths([r["path"] for r in rows] + list(existing))
            conn.execute("DELETE FROM docs_fts WHERE rowid IN (SELECT rowid FROM docs WHERE path IN (SELECT path FROM paths))")
            # An upsert, not an insert: another process (a hook, a second server) may have indexed the same new file
            # between our read of `existing` and this transaction. One executemany, not sqlite-utils' upsert_all, which
            # took twice as long for 10k rows (0.10 s against 0.05 s) inside the 2 s budget of a full 10k reindex.
            if rows:
                columns = list(rows[0])
                conn.executemany(f"INSERT INTO docs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) ON CONFLICT(path) DO UPDATE "
                                 f"SET {', '.join(f'{c}=excluded.{c}' for c in columns if c != 'path')}", [[r[c] for c in columns] for r in rows])
            conn.executemany("DELETE FROM docs WHERE path=?", [(p,) for p in existing])
            conn.execute("INSERT INTO docs_fts (rowid, name, description, tags, body, words) SELECT rowid, name, description, tags, body, words "
                         "FROM docs WHERE path IN (SELECT path FROM paths)")
            self._choose_winners(affected)
            if rows or existing:  # the documents changed: the embedding job looks at them again (generation)
                conn.execute("INSERT INTO changes (name, count) VALUES ('docs', 1) ON CONFLICT(name) DO UPDATE SET count = count + 1")
        if len(rows) + len(existing) >= CHECKPOINT_AFTER:
            self._db.checkpoint()
        return SyncReport(added=added, updated=updated, removed=len(existing), unchanged=len(found) - added - updated)

    def _paths(self, paths: list[str]) -> None:
        conn = self._db.conn
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS paths (path TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM paths")
        conn.executemany("INSERT OR IGNORE INTO paths VALUES (?)", [(p,) for p in paths])

    def _choose_winners(self, names: set[tuple[str, str]]) -> None:
        """Of the valid files for each name, the one in the highest-priority folder is searchable; the rest are shadowed."""
        if not names:
            return
        conn = self._db.conn
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS affected (kind TEXT, name TEXT, PRIMARY KEY (kind, name))")
        conn.execute("DELETE FROM affected")
        conn.executemany("INSERT OR IGNORE INTO affected VALUES (?, ?)", sorted(names))
        conn.execute(
            "UPDATE docs SET winner = (valid = 1 AND rowid = (SELECT d2.rowid FROM docs d2 WHERE d2.kind = docs.kind "
            "AND d2.name = docs.name AND d2.valid = 1 ORDER BY d2.rank, d2.path LIMIT 1)) "
            "WHERE (kind, name) IN (SELECT kind, name FROM affected)"
        )

    def search(self, query: Query, limit: int, statuses: Sequence[str], kinds: Sequence[str] = KINDS,
               weigh: Callable[[dict[str, Any]], float] | None = None, sem: QueryVectors | None = None) -> list[Hit]:
        """Hits for `query` among searchable documents of `kinds` whose status is in `statuses`, best first.

        Ranking is BM25 over the weighted columns with x1.5 when the query's words appear as a phrase, x2 when it
        names code the document cites (`_names`) — fused with
        the similarity of meaning when `sem` (the query's embedding) is given (fusion.py) — then first place for a
        document whose name is the query, and `weigh(row)` multiplies each score (a skill's utility and recency,
        see core/utility.py).
        """
        if not kinds or (not query and sem is None):
            return []
        pool = max(limit * 3, 30)

        def wanted(row: dict[str, Any] | None) -> bool:
            return bool(row and row["winner"] and not row["flags"] and row["kind"] in kinds and row["status"] in statuses)

        with self._db.reading() as conn:  # beside the records' search on the main connection (core/recall.py)
            kept, rows = [], {}
            for match in (self._frequencies.first_pass(conn, query.terms) or [(query.fts,)]) if query else []:
                while True:  # rank from the full-text index alone, then filter the pool on its rows (cheaper than a join)
                    ranked = fts.best(conn, "docs", WEIGHTS, match, pool)
                    rows = self._rows_by_id([rowid for rowid, _ in ranked], conn)
                    kept = [(rowid, rank) for rowid, rank in ranked if wanted(rows.get(rowid))]
                    if len(kept) >= limit or len(ranked) < pool:
                        break
                    pool *= 4  # filters ate the pool; look deeper
                if len(kept) >= limit:
                    break
            lexical = {rowid: -rank * _names(query, rows[rowid]) for rowid, rank in kept}
            scores = lexical
            if sem is not None:
                sem.prefetch([rows[rowid]["vkey"] for rowid in lexical])  # while the query is still being embedded
                nearest = self._rows_by_vkey([k for k, _ in sem.nearest(fusion.NEAREST)], conn)
                rows |= {rowid: row for rowid, row in nearest.items() if wanted(row)}
                candidates = {rowid: rows[rowid] for rowid in {*lexical, *(r for r in nearest if wanted(nearest[r]))}}
                similar = sem.similarity([row["vkey"] for row in candidates.values()])
                semantic = {rowid: similar[row["vkey"]] for rowid, row in candidates.items() if row["vkey"] in similar}
                sem.count_unembedded(fusion.unembedded(lexical, semantic), len(lexical))
                scores = fusion.fuse(lexical, semantic)
            scored = []
            for rowid, score in scores.items():
                row = rows[rowid]
                if row["name"] in (query.slug, "-".join(query.terms)):
                    score += 1000.0  # asking for a skill by its name finds that skill first
                if weigh is not None and row["kind"] == "skill":
                    score *= weigh(row)
                scored.append((score, row["name"], rowid))
            scored.sort(key=lambda t: (-t[0], t[1]))
            top = scored[:limit]
            excerpts = fts.snippets(conn, "docs", "body", query.fts, [rowid for _, _, rowid in top], TOKENIZE) if query else {}
            meaning = _unworded(conn, query, {r: rows[r] for _, _, r in top if r not in lexical})
        return [Hit(id=f"{rows[r]['kind']}:{rows[r]['name']}", kind=rows[r]["kind"], name=rows[r]["name"], title=_title(rows[r]["description"]),
                    snippet=excerpts.get(r) or rows[r]["body"].strip()[:160], score=score, status=rows[r]["status"],
                    provenance={"origin": rows[r]["origin"] or "unknown", "path": rows[r]["path"]},
                    matched=MEANING if r in meaning else "") for score, _, r in top]

    def generation(self) -> tuple[int, int]:
        """Changes whenever the documents may have changed, by this process or another, and when the index file was
        rebuilt or replaced; not when only records were written."""
        self._db.generation()  # moves to a file another process rebuilt
        with self._db.lock:
            found = self._db.conn.execute("SELECT count FROM changes WHERE name = 'docs'").fetchone()
            return self._db.opened, int(found[0]) if found else 0

    def embeddable(self, without: Callable[[list[int]], list[int]]) -> tuple[int, list[tuple[int, str]]]:
        """(how many documents are searchable, (vector key, text to embed) of those whose keys `without` returns: the
        ones lacking a vector). Keys first, then those texts: every text held the index 23 ms at 10k skills."""
        where = "winner = 1 AND valid = 1 AND flags = ''"
        with self._db.lock:
            keys = [int(r[0]) for r in self._db.conn.execute(f"SELECT vkey FROM docs WHERE {where}")]
        wanted = without(keys)
        texts: list[tuple[int, str]] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            with self._db.lock:
                texts += [(int(r[0]), f"{r[1]}: {r[2]}\n{r[3]}") for r in self._db.conn.execute(
                    f"SELECT vkey, name, description, substr(body, 1, 1500) FROM docs WHERE {where} AND vkey IN ({','.join('?' * len(chunk))})", chunk)]
        return len(keys), texts

    def _rows_by_vkey(self, keys: list[int], conn: sqlite3.Connection) -> dict[int, dict[str, Any]]:
        if not keys:
            return {}
        rowids = [r[0] for r in conn.execute(f"SELECT rowid FROM docs WHERE vkey IN ({','.join('?' * len(keys))})", keys)]
        return self._rows_by_id(rowids, conn)

    def _rows_by_id(self, rowids: list[int], conn: sqlite3.Connection) -> dict[int, dict[str, Any]]:
        if not rowids:
            return {}
        cursor = conn.execute(
            "SELECT rowid, kind, name, status, origin, path, winner, flags, mtime_ns, vkey, anchors, tags, words, description, body FROM docs "
            f"WHERE rowid IN ({','.join('?' * len(rowids))})", rowids)
        cols = [c[0] for c in cursor.description]
        return {r[0]: dict(zip(cols, r, strict=True)) for r in cursor.fetchall()}

    def get(self, name: str, kind: str = "skill") -> dict[str, Any] | None:
        """The searchable row of document `name`, if one exists."""
        rows = self.rows("kind=? AND name=? AND winner=1", (kind, name))
        return rows[0] if rows else None

    def names(self, kind: str = "skill") -> list[str]:
        """Names of every searchable document of `kind`."""
        with self._db.lock:
            return [r[0] for r in self._db.conn.execute("SELECT name FROM docs WHERE kind=? AND winner=1 ORDER BY name", (kind,))]

    def descriptions(self, kind: str = "skill") -> list[tuple[str, str]]:
        """(name, description) of every searchable document of `kind`."""
        with self._db.lock:
            rows = self._db.conn.execute("SELECT name, description FROM docs WHERE kind=? AND winner=1", (kind,)).fetchall()
        return [(str(n), str(d or "")) for n, d in rows]

    def rows(self, where: str = "1", params: Sequence[Any] = (), columns: str = "*") -> list[dict[str, Any]]:
        """Rows of the docs table (for listings, doctor and tests), with `columns` (all of 10k skills' took 70 ms)."""
        with self._db.lock:
            cursor = self._db.conn.execute(f"SELECT {columns} FROM docs WHERE {where} ORDER BY kind, name, rank, path", params)
            cols = [c[0] for c in cursor.description]
            return [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()]

    def digests(self, kind: str) -> dict[str, str]:
        """{name: content hash} of the searchable documents of `kind` (what a server compares for change notifications:
        reading whole rows for it took 70 ms at 10k skills)."""
        with self._db.lock:
            return dict(self._db.conn.execute("SELECT name, sha256 FROM docs WHERE kind=? AND winner=1", (kind,)))

    def anchored(self) -> list[tuple[str, str]]:
        """(memory id, anchors JSON) of every searchable document that cites code."""
        with self._db.lock:
            return [(f"{k}:{n}", a) for k, n, a in self._db.conn.execute("SELECT kind, name, anchors FROM docs WHERE winner=1 AND anchors != ''")]

    def snapshot(self) -> list[tuple[Any, ...]]:
        """Everything the index knows of documents apart from bookkeeping times and row ids: equal for equal file trees."""
        with self._db.lock:
            docs = self._db.conn.execute(
                "SELECT path, kind, rank, name, source, sha256, size, valid, problems, notes, description, tags, body, "
                "status, origin, winner, flags "
                "FROM docs ORDER BY path"
            ).fetchall()
        return docs


def _names(query: Query, row: dict[str, Any]) -> float:
    """x1.5 for a document holding the query's words as a phrase or one of its code names as written; x2 for one
    anchored to code the query names (index/cited.py)."""
    if cited.named(query.names, cited.anchors(row["anchors"])):
        return cited.CITED_BOOST
    return 1.5 if query.has_phrase(text := f"{row['name']} {row['description']} {row['body']}") or query.holds_name(text) else 1.0


def _title(description: str) -> str:
    return description if len(description) <= 200 else description[:199] + "…"


def _unworded(conn: sqlite3.Connection, query: Query, rows: dict[int, Any]) -> set[int]:
    """Of `rows` (rowid -> row) that the query's words did not find, those holding none of its words at all: found by
    meaning alone, which their hit says, as a record's does (a skill beyond the words' pool may hold some)."""
    if not rows:
        return set()
    if not query:
        return set(rows)
    texts = [" ".join(str(row[c] or "") for c in ("name", "description", "tags", "words")) + f" {str(row['body'] or '')[:4000]}"
             for row in rows.values()]
    return {rowid for rowid, share in zip(rows, fts.covered(conn, TOKENIZE, query.terms, texts)) if share == 0.0}
