"""The derived search index: SQLite FTS5 over memory files, incremental by content hash, rebuildable any time."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repo_memory.guards import disk
from repo_memory.index import records
from repo_memory.formats import skills
from repo_memory.errors import Problem, UnsafePathError
from repo_memory.index.query import Query

SCHEMA_VERSION = 4
# Weights of the FTS columns (name, description, tags, body) in BM25: a hit in a name says more than one in a body.
WEIGHTS = (10.0, 5.0, 4.0, 1.0)
RACY_NS = 2_000_000_000  # a file modified this close to when we looked may change again within the mtime granularity

SNIPPET_MAX = 20_000  # characters; see _snippets
CHECKPOINT_AFTER = 200  # rows changed by one sync
PARALLEL_MIN = 2000  # below this, starting worker processes costs more than it saves

Progress = Callable[[int, int], None]
log = logging.getLogger("repo_memory")


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


@dataclass(frozen=True)
class _Loaded:
    """A file as read and parsed, with the stat it had when read."""

    path: str
    mtime_ns: int
    size: int
    skill: skills.Skill

    def moved(self) -> bool:
        """True when the file changed after it was read."""
        if not self.path:
            return False
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return True
        return (st.st_mtime_ns, st.st_size) != (self.mtime_ns, self.size)


def _unchanged(item: skills.Found, prev: tuple[Any, ...] | None) -> bool:
    """True when `item` certainly matches its index row `prev`, judged by stat alone (git's racy-clean rule)."""
    if prev is None or item.refused or prev[4] != item.rank:
        return False
    try:
        st = os.stat(item.path)
    except FileNotFoundError:
        return False
    return (prev[1], prev[2]) == (st.st_mtime_ns, st.st_size) and prev[3] - prev[1] > RACY_NS


def _load(item: skills.Found) -> _Loaded | None:
    """Read and parse one file (runs in worker processes too); None when it vanished."""
    if item.refused:
        skill = skills.Skill(name=Path(item.rel).parent.name, path=item.rel, source=item.source, sha256="", problems=(Problem(item.refused),))
        return _Loaded("", 0, 0, skill)
    try:
        with os.fdopen(disk.open_safely(Path(item.path)), "rb") as handle:
            st = os.fstat(handle.fileno())
            data = handle.read()
    except FileNotFoundError:
        return None
    except UnsafePathError as exc:
        skill = skills.Skill(name=Path(item.rel).parent.name, path=item.rel, source=item.source, sha256="", problems=(Problem(str(exc)),))
        return _Loaded("", 0, 0, skill)
    return _Loaded(item.path, st.st_mtime_ns, st.st_size, skills.parse(data, item.rel, item.source))


def _load_all(items: list[skills.Found], progress: Progress | None, total: int) -> list[_Loaded | None]:
    """Load `items`, on every core when there are many and forking is safe (no other threads to inherit)."""
    cores = os.cpu_count() or 1
    done = total - len(items)
    results: list[_Loaded | None] = []
    if len(items) >= PARALLEL_MIN and cores > 1 and threading.active_count() == 1:
        import multiprocessing  # only bulk loads use worker processes
        from concurrent.futures import ProcessPoolExecutor

        if "fork" in multiprocessing.get_all_start_methods():
            with ProcessPoolExecutor(max_workers=min(cores, 8), mp_context=multiprocessing.get_context("fork")) as pool:
                stream: Iterable[_Loaded | None] = pool.map(_load, items, chunksize=256)
                return _with_progress(stream, progress, done, total)
    return _with_progress(map(_load, items), progress, done, total) if items else results


def _with_progress(stream: Iterable[_Loaded | None], progress: Progress | None, done: int, total: int) -> list[_Loaded | None]:
    results = []
    for number, loaded in enumerate(stream, start=done + 1):
        results.append(loaded)
        if progress and (number % 500 == 0 or number == total):
            progress(number, total)
    if progress and not results and total:
        progress(total, total)
    return results


def _row(item: skills.Found, loaded: _Loaded, now: int) -> dict[str, Any]:
    skill = loaded.skill
    return {
        "path": item.rel, "kind": "skill", "rank": item.rank, "name": skill.name, "source": item.source,
        "sha256": skill.sha256, "mtime_ns": loaded.mtime_ns, "size": loaded.size, "checked_ns": now, "valid": int(skill.valid),
        "problems": json.dumps([p.__dict__ for p in skill.problems]) if skill.problems else "",
        "description": skill.description, "tags": " ".join(skill.tags), "body": skill.body,
        "status": skill.status, "origin": skill.origin, "winner": 0, "flags": json.dumps(list(skill.flags)) if skill.flags else "",
        "anchors": json.dumps(skill.anchors) if skill.anchors else "",
    }


class Index:
    """A SQLite index of memory files; every method is safe to call from any thread."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self.writes = 0  # transactions committed through this connection
        self._sync_lock = threading.Lock()  # one sync at a time in this process: overlapping ones would parse the same files twice
        try:
            self._connect()
        except sqlite3.DatabaseError as exc:  # a damaged cache is thrown away and rebuilt from the files
            log.warning("index %s is unreadable (%s); rebuilding it", path, exc)
            self._conn.close()
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            self._connect()

    def _connect(self) -> None:
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=OFF")  # a disposable cache: a crash costs a rebuild, never user data
        if self._conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            self._create()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _create(self) -> None:
        """Drop everything and create the current schema (the files on disk are the truth)."""
        with self.transaction():
            for table in ("docs_fts", "files", "records_fts", "records", "logs", "anchor_state"):
                self._conn.execute(f"DROP TABLE IF EXISTS {table}")
            import sqlite_utils  # only to create tables; it costs ~0.1 s to import, so hooks and searches skip it

            files = sqlite_utils.Database(self._conn).table("files")
            files.create(
                {
                    "path": str, "kind": str, "rank": int, "name": str, "source": str, "sha256": str,
                    "mtime_ns": int, "size": int, "checked_ns": int, "valid": int, "problems": str,
                    "description": str, "tags": str, "body": str, "status": str, "origin": str, "winner": int, "flags": str, "anchors": str,
                },
                pk="path",
            )
            files.create_index(["kind", "name"])
            self._conn.execute(
                "CREATE VIRTUAL TABLE docs_fts USING fts5(name, description, tags, body, "
                "tokenize='porter unicode61 remove_diacritics 2')"
            )
            for statement in records.SCHEMA.split(";"):
                if statement.strip():
                    self._conn.execute(statement)
            self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def transaction(self) -> Any:
        """A write transaction (BEGIN IMMEDIATE … COMMIT) holding the index lock."""
        return _Transaction(self._conn, self._lock, self)

    def generation(self) -> tuple[int, int]:
        """Changes whenever the index may have changed: our own commits, or another process's (SQLite data_version)."""
        with self._lock:
            return self.writes, int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    @property
    def conn(self) -> sqlite3.Connection:
        return self._conn

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def rebuild(self, found: Iterable[skills.Found], progress: Progress | None = None) -> SyncReport:
        """Forget everything and index `found` from scratch."""
        with self._sync_lock:
            with self._lock:
                self._create()
            return self._sync(found, progress, True)

    def sync(self, found: Iterable[skills.Found], progress: Progress | None = None, complete: bool = True) -> SyncReport:
        """Bring the index in line with `found`, re-reading only changed files (see `_sync`)."""
        with self._sync_lock:
            return self._sync(found, progress, complete)

    def _sync(self, found: Iterable[skills.Found], progress: Progress | None, complete: bool) -> SyncReport:
        """Bring the index in line with `found`, re-reading only changed files.

        With `complete`, `found` is every skill file that exists now and rows for other files are dropped;
        without it, only the given files are looked at. Files are compared and parsed outside the write
        transaction, so searches are never held up by a long scan.
        """
        found = list(found)
        wanted = None if complete else {f.rel for f in found}
        with self._lock:
            existing = {
                row[0]: row[1:]
                for row in self._conn.execute("SELECT path, sha256, mtime_ns, size, checked_ns, rank, name FROM files WHERE kind='skill'")
                if wanted is None or row[0] in wanted
            }
        candidates = [(item, existing.pop(item.rel, None)) for item in found]
        candidates = [(item, prev) for item, prev in candidates if not _unchanged(item, prev)]
        loaded = _load_all([item for item, _ in candidates], progress, len(found))
        added: list[dict[str, Any]] = []
        changed: list[dict[str, Any]] = []
        updated = 0
        affected: set[str] = set()
        now = time.time_ns()
        with self.transaction():
            for (item, prev), got in zip(candidates, loaded, strict=True):
                if got is None or got.moved():
                    continue  # vanished or changed again since it was read: the next sync sees it
                skill = got.skill
                if prev is not None and prev[0] == skill.sha256 and prev[4] == item.rank:
                    self._conn.execute("UPDATE files SET mtime_ns=?, size=?, checked_ns=? WHERE path=?", (got.mtime_ns, got.size, now, item.rel))
                    continue
                row = _row(item, got, now)
                affected.add(skill.name)
                if prev is None:
                    added.append(row)
                    continue
                affected.add(prev[5])
                updated += 1
                changed.append(row)
            if changed or added:
                # An upsert, not an insert: another process (a hook, a second server) may have indexed the same
                # new file between our read of `existing` and this transaction. Old names are in `affected`, so
                # _choose_winners drops and rewrites their full-text rows.
                columns = list((changed or added)[0])
                self._conn.executemany(
                    f"INSERT INTO files ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
                    f"ON CONFLICT(path) DO UPDATE SET {', '.join(f'{c}=excluded.{c}' for c in columns if c != 'path')}",
                    [[r[c] for c in columns] for r in (*changed, *added)],
                )
            for path, prev in existing.items():
                self._delete(path)
                affected.add(prev[5])
            self._choose_winners(affected)
        if len(added) + updated + len(existing) >= CHECKPOINT_AFTER:
            with self._lock:  # fold a big write into the database file: reads through a long WAL are slower
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return SyncReport(added=len(added), updated=updated, removed=len(existing), unchanged=len(found) - len(added) - updated)

    def _delete(self, path: str) -> None:
        row = self._conn.execute("SELECT rowid FROM files WHERE path=?", (path,)).fetchone()
        if row:
            self._conn.execute("DELETE FROM docs_fts WHERE rowid=?", (row[0],))
            self._conn.execute("DELETE FROM files WHERE rowid=?", (row[0],))

    def _choose_winners(self, names: set[str]) -> None:
        """Of the valid files for each skill name, the one in the highest-priority folder is searchable; the rest are shadowed."""
        if not names:
            return
        self._conn.execute("CREATE TEMP TABLE IF NOT EXISTS affected (name TEXT PRIMARY KEY)")
        self._conn.execute("DELETE FROM affected")
        self._conn.executemany("INSERT OR IGNORE INTO affected VALUES (?)", [(n,) for n in names])
        scope = "kind='skill' AND name IN (SELECT name FROM affected)"
        self._conn.execute(f"DELETE FROM docs_fts WHERE rowid IN (SELECT rowid FROM files WHERE {scope})")
        self._conn.execute(
            f"UPDATE files SET winner = (valid = 1 AND rowid = (SELECT f2.rowid FROM files f2 WHERE f2.kind='skill' "
            f"AND f2.name = files.name AND f2.valid = 1 ORDER BY f2.rank, f2.path LIMIT 1)) WHERE {scope}"
        )
        self._conn.execute(
            "INSERT INTO docs_fts (rowid, name, description, tags, body) "
            f"SELECT rowid, replace(name, '-', ' '), description, tags, body FROM files WHERE {scope} AND winner = 1"
        )

    def search(self, query: Query, limit: int, statuses: Sequence[str], weigh: Callable[[dict[str, Any]], float] | None = None) -> list[Hit]:
        """Hits for `query` among searchable documents whose status is in `statuses`, best first.

        Ranking is BM25 over the weighted columns, then two boosts on a small pool: x1.5 when the query's
        words appear as a phrase, and first place for a skill whose name is the query; then `weigh(row)`
        multiplies each score (the skill's utility and recency, see utility.py).
        """
        if not query:
            return []
        pool = max(limit * 3, 30)
        with self._lock:
            while True:
                ranked = self._conn.execute(
                    f"SELECT rowid, bm25(docs_fts, {', '.join(map(str, WEIGHTS))}) AS r FROM docs_fts "
                    "WHERE docs_fts MATCH ? ORDER BY r LIMIT ?",
                    (query.fts, pool),
                ).fetchall()
                rows = self._rows_by_id([r[0] for r in ranked])
                # Quarantined content (injection markers) never comes back from a search; doctor lists it.
                kept = [(rowid, rank) for rowid, rank in ranked if rows[rowid]["status"] in statuses and not rows[rowid]["flags"]]
                if len(kept) >= limit or len(ranked) < pool:
                    break
                pool *= 4  # filtered statuses ate the pool; look deeper
            scored = []
            for rowid, rank in kept:
                row = rows[rowid]
                score = -rank
                if query.has_phrase(f"{row['name']} {row['description']} {row['body']}"):
                    score *= 1.5
                if row["name"] in (query.slug, "-".join(query.terms)):
                    score += 1000.0  # asking for a skill by its name finds that skill first
                if weigh is not None:
                    score *= weigh(row)
                scored.append((score, row["name"], rowid))
            scored.sort(key=lambda t: (-t[0], t[1]))
            top = scored[:limit]
            snippets = self._snippets(query, [rowid for _, _, rowid in top])
        return [
            Hit(ref=f"skill:{rows[rowid]['name']}", kind="skill", name=rows[rowid]["name"], description=rows[rowid]["description"],
                snippet=snippets.get(rowid, ""), score=round(score, 6), status=rows[rowid]["status"], origin=rows[rowid]["origin"],
                path=rows[rowid]["path"], source=rows[rowid]["source"], tags=tuple(rows[rowid]["tags"].split()))
            for score, _, rowid in top
        ]

    def _rows_by_id(self, rowids: list[int]) -> dict[int, dict[str, Any]]:
        if not rowids:
            return {}
        cursor = self._conn.execute(
            f"SELECT rowid, name, description, status, origin, path, source, tags, body, flags, mtime_ns FROM files WHERE rowid IN ({','.join('?' * len(rowids))})",
            rowids,
        )
        cols = [c[0] for c in cursor.description]
        return {r[0]: dict(zip(cols, r, strict=True)) for r in cursor.fetchall()}

    def _snippets(self, query: Query, rowids: list[int]) -> dict[int, str]:
        """Body excerpts around the matched words, computed only for the hits returned."""
        if not rowids:
            return {}
        # FTS5's snippet() grows with the square of the matches in a document, so huge bodies get their opening instead.
        sql = (f"SELECT rowid, CASE WHEN length(body) > {SNIPPET_MAX} THEN substr(body, 1, 160) || '…' "
               f"ELSE snippet(docs_fts, 3, '**', '**', '…', 24) END FROM docs_fts "
               f"WHERE docs_fts MATCH ? AND rowid IN ({','.join('?' * len(rowids))})")
        return {r[0]: r[1].strip() for r in self._conn.execute(sql, [query.fts, *rowids])}

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
                "SELECT path, kind, rank, name, source, sha256, size, valid, problems, description, tags, body, status, origin, winner, flags "
                "FROM files ORDER BY path"
            ).fetchall()
            fts = self._conn.execute(
                "SELECT f.path, d.name, d.description, d.tags, d.body FROM docs_fts d JOIN files f ON f.rowid=d.rowid ORDER BY f.path"
            ).fetchall()
        return [*files, ("--fts--",), *fts]


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT under the index lock (ROLLBACK on error)."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock, index: Index | None = None):
        self.conn, self.lock, self.index = conn, lock, index

    def __enter__(self) -> None:
        self.lock.acquire()
        self.depth = self.conn.in_transaction
        if not self.depth:
            self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        try:
            if not self.depth:
                self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
                if self.index is not None and not exc_type:
                    self.index.writes += 1
        finally:
            self.lock.release()
