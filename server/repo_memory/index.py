"""The derived search index: SQLite FTS5 over memory files, incremental by content hash, rebuildable any time."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from repo_memory import skills
from repo_memory.errors import Problem
from repo_memory.query import Query

SCHEMA_VERSION = 1
# Weights of the FTS columns (name, description, tags, body) in BM25: a hit in a name says more than one in a body.
WEIGHTS = (10.0, 5.0, 4.0, 1.0)
RACY_NS = 2_000_000_000  # a file modified this close to when we looked may change again within the mtime granularity

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Hit:
    """One search result from the index."""

    ref: str
    kind: str
    name: str
    description: str
    snippet: str
    score: float
    status: str
    origin: str
    path: str
    source: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class SyncReport:
    """What one synchronisation changed."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.removed


class Index:
    """A SQLite index of memory files; every method is safe to call from any thread."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self.db = sqlite_utils.Database(self._conn)
        with self._lock:
            if self._conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                self._create()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _create(self) -> None:
        """Drop everything and create the current schema (the files on disk are the truth)."""
        with self._transaction():
            for table in ("docs_fts", "files"):
                self._conn.execute(f"DROP TABLE IF EXISTS {table}")
            self.db["files"].create(
                {
                    "path": str, "kind": str, "rank": int, "name": str, "source": str, "sha256": str,
                    "mtime_ns": int, "size": int, "checked_ns": int, "valid": int, "problems": str,
                    "description": str, "tags": str, "body": str, "status": str, "origin": str, "winner": int,
                },
                pk="path",
            )
            self.db["files"].create_index(["kind", "name"])
            self._conn.execute(
                "CREATE VIRTUAL TABLE docs_fts USING fts5(name, description, tags, body, "
                "tokenize='porter unicode61 remove_diacritics 2')"
            )
            self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def _transaction(self) -> Any:
        return _Transaction(self._conn, self._lock)

    def rebuild(self, found: Iterable[skills.Found], progress: Progress | None = None) -> SyncReport:
        """Forget everything and index `found` from scratch."""
        with self._lock:
            self._create()
            return self.sync(found, progress)

    def sync(self, found: Iterable[skills.Found], progress: Progress | None = None, complete: bool = True) -> SyncReport:
        """Bring the index in line with `found`, re-reading only changed files.

        With `complete`, `found` is every skill file that exists now and rows for other files are dropped;
        without it, only the given files are looked at.
        """
        found = list(found)
        added = updated = unchanged = 0
        affected: set[str] = set()
        with self._transaction():
            existing = {
                row[0]: row[1:]
                for row in self._conn.execute("SELECT path, sha256, mtime_ns, size, checked_ns, rank, name FROM files WHERE kind='skill'")
                if complete or any(row[0] == f.rel for f in found)
            }
            for number, item in enumerate(found, start=1):
                if progress and (number % 500 == 0 or number == len(found)):
                    progress(number, len(found))
                prev = existing.pop(item.rel, None)
                outcome = self._sync_one(item, prev)
                if outcome is None:
                    unchanged += 1
                    continue
                added += prev is None
                updated += prev is not None
                affected.add(outcome)
                if prev is not None:
                    affected.add(prev[5])
            for path, prev in existing.items():
                self._delete(path)
                affected.add(prev[5])
            for name in affected:
                self._choose_winner(name)
        return SyncReport(added=added, updated=updated, removed=len(existing), unchanged=unchanged)

    def _sync_one(self, item: skills.Found, prev: tuple[Any, ...] | None) -> str | None:
        """Index one file if it changed; return its skill name when the row changed, None when untouched."""
        now = time.time_ns()
        if item.refused:
            skill = skills.Skill(name=Path(item.rel).parent.name, path=item.rel, source=item.source, sha256="",
                                 problems=(Problem(item.refused),))
            st_mtime, st_size = 0, 0
        else:
            try:
                st = os.stat(item.path)
            except FileNotFoundError:
                if prev is not None:
                    self._delete(item.rel)
                    return str(prev[5])
                return None
            st_mtime, st_size = st.st_mtime_ns, st.st_size
            if prev is not None and prev[4] == item.rank and (prev[1], prev[2]) == (st_mtime, st_size) and prev[3] - prev[1] > RACY_NS:
                return None
            data = Path(item.path).read_bytes()
            skill = skills.parse(data, item.rel, item.source)
            if prev is not None and prev[0] == skill.sha256 and prev[4] == item.rank:
                self._conn.execute("UPDATE files SET mtime_ns=?, size=?, checked_ns=? WHERE path=?", (st_mtime, st_size, now, item.rel))
                return None
        row = {
            "path": item.rel, "kind": "skill", "rank": item.rank, "name": skill.name, "source": item.source,
            "sha256": skill.sha256, "mtime_ns": st_mtime, "size": st_size, "checked_ns": now, "valid": int(skill.valid),
            "problems": json.dumps([p.__dict__ for p in skill.problems]) if skill.problems else "",
            "description": skill.description, "tags": " ".join(skill.tags), "body": skill.body,
            "status": skill.status, "origin": skill.origin, "winner": 0,
        }
        if prev is None:
            self._conn.execute(f"INSERT INTO files ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
        else:
            rowid = self._rowid(item.rel)
            self._conn.execute("DELETE FROM docs_fts WHERE rowid=?", (rowid,))
            assignments = ", ".join(f"{k}=?" for k in row if k != "path")
            self._conn.execute(f"UPDATE files SET {assignments} WHERE path=?", [v for k, v in row.items() if k != "path"] + [item.rel])
        return skill.name

    def _rowid(self, path: str) -> int:
        return int(self._conn.execute("SELECT rowid FROM files WHERE path=?", (path,)).fetchone()[0])

    def _delete(self, path: str) -> None:
        row = self._conn.execute("SELECT rowid FROM files WHERE path=?", (path,)).fetchone()
        if row:
            self._conn.execute("DELETE FROM docs_fts WHERE rowid=?", (row[0],))
            self._conn.execute("DELETE FROM files WHERE rowid=?", (row[0],))

    def _choose_winner(self, name: str) -> None:
        """Of the valid files for skill `name`, the one in the highest-priority folder is searchable; the rest are shadowed."""
        rows = self._conn.execute(
            "SELECT rowid, winner FROM files WHERE kind='skill' AND name=? AND valid=1 ORDER BY rank, path", (name,)
        ).fetchall()
        for position, (rowid, winner) in enumerate(rows):
            if position == 0:
                self._conn.execute("DELETE FROM docs_fts WHERE rowid=?", (rowid,))
                self._conn.execute(
                    "INSERT INTO docs_fts (rowid, name, description, tags, body) "
                    "SELECT rowid, replace(name, '-', ' '), description, tags, body FROM files WHERE rowid=?",
                    (rowid,),
                )
                self._conn.execute("UPDATE files SET winner=1 WHERE rowid=?", (rowid,))
            elif winner:
                self._conn.execute("DELETE FROM docs_fts WHERE rowid=?", (rowid,))
                self._conn.execute("UPDATE files SET winner=0 WHERE rowid=?", (rowid,))

    def search(self, query: Query, limit: int, statuses: Sequence[str]) -> list[Hit]:
        """Hits for `query` among searchable documents whose status is in `statuses`, best first."""
        if not query:
            return []
        pool = max(limit * 3, 30)
        marks = ",".join("?" * len(statuses))
        sql = (
            "SELECT f.rowid, f.name, f.description, f.status, f.origin, f.path, f.source, f.tags, "
            f"bm25(docs_fts, {', '.join(map(str, WEIGHTS))}) AS rank, "
            "snippet(docs_fts, 3, '**', '**', '…', 24) "
            "FROM docs_fts JOIN files f ON f.rowid = docs_fts.rowid "
            f"WHERE docs_fts MATCH ? AND f.status IN ({marks}) ORDER BY rank LIMIT ?"
        )
        with self._lock:
            rows = self._conn.execute(sql, [query.fts, *statuses, pool]).fetchall()
            phrased = self._phrase_matches(query, [r[0] for r in rows])
        scored = []
        for rowid, name, description, status, origin, path, source, tags, rank, snippet in rows:
            score = -rank
            if rowid in phrased:
                score *= 1.5
            if name in (query.slug, "-".join(query.terms)):
                score += 1000.0  # asking for a skill by its name finds that skill first
            scored.append(
                Hit(ref=f"skill:{name}", kind="skill", name=name, description=description, snippet=snippet.strip(),
                    score=round(score, 6), status=status, origin=origin, path=path, source=source,
                    tags=tuple(tags.split()))
            )
        scored.sort(key=lambda h: (-h.score, h.name))
        return scored[:limit]

    def _phrase_matches(self, query: Query, rowids: list[int]) -> set[int]:
        if len(query.terms) < 2 or not rowids:
            return set()
        phrase = '"' + " ".join(query.terms) + '"'
        marks = ",".join("?" * len(rowids))
        sql = f"SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? AND rowid IN ({marks})"
        return {r[0] for r in self._conn.execute(sql, [phrase, *rowids])}

    def skill(self, name: str) -> dict[str, Any] | None:
        """The searchable row of skill `name`, if one exists."""
        with self._lock:
            cursor = self._conn.execute("SELECT * FROM files WHERE kind='skill' AND name=? AND winner=1", (name,))
            row = cursor.fetchone()
            return dict(zip([c[0] for c in cursor.description], row, strict=True)) if row else None

    def names(self) -> list[str]:
        """Names of every searchable skill."""
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT name FROM files WHERE kind='skill' AND winner=1 ORDER BY name")]

    def rows(self, where: str = "1", params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of the files table (for listings, doctor and tests)."""
        with self._lock:
            cursor = self._conn.execute(f"SELECT * FROM files WHERE {where} ORDER BY kind, name, rank, path", params)
            cols = [c[0] for c in cursor.description]
            return [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()]

    def snapshot(self) -> list[tuple[Any, ...]]:
        """Everything the index knows apart from bookkeeping times and row ids: equal for equal file trees."""
        with self._lock:
            files = self._conn.execute(
                "SELECT path, kind, rank, name, source, sha256, size, valid, problems, description, tags, body, status, origin, winner "
                "FROM files ORDER BY path"
            ).fetchall()
            fts = self._conn.execute(
                "SELECT f.path, d.name, d.description, d.tags, d.body FROM docs_fts d JOIN files f ON f.rowid=d.rowid ORDER BY f.path"
            ).fetchall()
        return [*files, ("--fts--",), *fts]


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT under the index lock (ROLLBACK on error)."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock):
        self.conn, self.lock = conn, lock

    def __enter__(self) -> None:
        self.lock.acquire()
        self.depth = self.conn.in_transaction
        if not self.depth:
            self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        try:
            if not self.depth:
                self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
        finally:
            self.lock.release()
