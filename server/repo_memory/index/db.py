"""The index database: one SQLite file per clone, its schema and its transactions.

The index is a cache of the memory files: when its schema version differs from ours, or the file is damaged, it is
dropped and built again from the files. Every SQL statement of repo-memory lives in this package. sqlite-utils
makes the tables, indexes and full-text tables (`build_schema`; what it makes is recorded in ddl.py and replayed, so a
new index costs no import of it) and does the bulk upserts; the ranked full-text queries, and the
per-record append that runs on every hook call (where importing sqlite-utils would cost more than the write), are
plain SQL in the modules beside this one.

`docs_fts` is an external-content FTS5 table over `docs` (a document's text is stored once): a row leaves it
*before* its content row changes, since FTS5 finds the tokens to remove by reading the content row. `records_fts`
keeps its own copy of what it indexes (a record's text, speaker, date and its neighbours' text): measured on LoCoMo,
ranking and snippets over an external-content table were 0.4 and 0.9 ms slower per query.
"""

from __future__ import annotations

import contextlib
import logging
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from repo_memory.guards import disk
from repo_memory.index import ddl

SCHEMA_VERSION = 30  # 25: direction marks no longer flagged (guards/markers.py); 26-28: text folded (index/folding.py);
# 29: a skill's notes (a top-level `status`, formats/skills.py); 30: more chat-template tokens flagged (guards/markers.py)
TOKENIZE = "porter unicode61 remove_diacritics 2"
log = logging.getLogger("repo_memory")

# Small columns first, long text last: SQLite reads a row's columns in order, so a filter on a column stored after a
# long body would read through the body's overflow pages for every candidate row.
DOCS = {
    "rowid": int, "path": str, "kind": str, "rank": int, "name": str, "source": str, "sha256": str, "mtime_ns": int, "size": int,
    "checked_ns": int, "valid": int, "status": str, "origin": str, "winner": int, "flags": str, "anchors": str, "problems": str, "vkey": int,
    "notes": str, "tags": str, "words": str, "description": str, "body": str,
}
RECORDS = {
    "rowid": int, "id": str, "session": str, "seq": int, "ts": str, "kind": str, "actor": str, "harness": str, "tool": str,
    "flags": str, "outcome": str, "file": str, "offset": int, "length": int, "sha256": str, "origin": str, "speaker": str, "covers": str,
    "refs": str, "anchors": str, "vkey": int, "vlen": int, "text": str,
}
LOGS = {"path": str, "size": int, "mtime_ns": int, "checked_ns": int, "indexed_to": int, "tail_sha": str}
ANCHOR_STATE = {"memory": str, "anchor": str, "baseline": str, "current": str, "problem": str, "stamp": str}
# How many times a table's rows changed, for a reader that must not rescan it after every write to the others: the
# embedding job re-read every skill whenever a record was written (25 ms and the index's lock, at 10k skills).
CHANGES = {"name": str, "count": int}
TABLES = ("docs_fts", "docs", "records_fts", "records", "logs", "anchor_state", "changes", "files")  # `files` is version 4's name for docs


_NOT_DAMAGE = ("locked", "busy", "interrupt", "readonly", "read-only", "full")


def damage(exc: BaseException) -> bool:
    """Whether an SQLite error means the index file is damaged (rebuild it), not busy, full or a bug of ours. SQLite
    answers NOMEM (Python's MemoryError) when a damaged full-text block claims a huge size: that is damage too."""
    if isinstance(exc, MemoryError):
        return True
    if not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.IntegrityError | sqlite3.ProgrammingError):
        return False
    return not (isinstance(exc, sqlite3.OperationalError) and any(word in str(exc).lower() for word in _NOT_DAMAGE))


class Database:
    """The index's SQLite connection; safe to use from any thread (one connection, one lock).

    A damaged file (unreadable, or full-text tables that no longer parse) is found by a cheap probe when the
    connection opens, or by the first query it breaks (`damage`); either way the file is thrown away and built again
    from the memory files (`rebuild`), which are the truth. `rebuilt` counts how often that happened in this process.
    """

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self.writes = 0  # transactions committed through this connection
        self.rebuilt: list[str] = []  # why the file was thrown away and rebuilt, each time it was
        self.repair: Callable[[str], Any] | None = None  # rebuilds the file and re-indexes the memory files (set by the owner)
        self._opened = 0  # connections made so far: a reader made before the last one follows it to the new file
        self._reader: tuple[sqlite3.Connection, int] | None = None
        self._reader_lock = threading.Lock()
        try:
            self._open()
        except sqlite3.DatabaseError as exc:  # a damaged cache is thrown away and rebuilt from the files
            if not damage(exc):
                raise
            self.rebuild(str(exc))

    def _open(self) -> None:
        """Connect and check the file, starting again when SQLite refuses to wait for another connection.

        Processes starting together (a harness's server and its first hooks) open a new file at once. Where waiting
        could deadlock (two connections both asking for the exclusive lock that switching to WAL or creating the
        schema takes, or one arriving while the last connection's close checkpoints the log away) SQLite fails one
        "database is locked" at once, whatever the busy timeout; the answer it documents is to start over.
        """
        for attempt in range(12):  # ~4 s of waiting in all, on top of each statement's own busy timeout
            try:
                self._connect()
                self.probe()
                return
            except sqlite3.OperationalError as exc:
                if damage(exc) or attempt == 11:
                    raise
                with contextlib.suppress(sqlite3.Error, AttributeError):
                    self.conn.close()
                time.sleep(0.002 * 2 ** min(attempt, 8) * (0.5 + random.random()))

    def _connect(self) -> None:
        self.conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
        self._opened += 1
        if self.conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":  # set once, a property of the file
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=OFF")  # a disposable cache: a crash costs a rebuild, never user data
        if self.version() != SCHEMA_VERSION:
            self.create()
        self._inode = _inode(self.path)

    def probe(self) -> None:
        """Touch every table and the full-text indexes' structure (well under a millisecond); raises when damaged."""
        with self.lock:
            try:
                for table in ("docs", "records", "logs", "anchor_state"):
                    self.conn.execute(f"SELECT * FROM {table} LIMIT 1").fetchall()
                for fts in ("docs_fts", "records_fts"):
                    self.conn.execute(f"SELECT rowid FROM {fts} WHERE {fts} MATCH 'e' LIMIT 1").fetchall()
            except MemoryError:  # SQLITE_NOMEM: a damaged page claimed a size no index of ours has
                raise sqlite3.DatabaseError("a full-text block claims an impossible size (out of memory reading it)") from None

    def check(self) -> str:
        """A full check (for doctor: a second or so per 10,000 records): what is wrong with the file, or ''."""
        with self.lock:
            try:
                result = self.conn.execute("PRAGMA quick_check(1)").fetchone()[0]
                if result != "ok":
                    return str(result)
                for fts in ("docs_fts", "records_fts"):
                    self.conn.execute(f"INSERT INTO {fts}({fts}, rank) VALUES('integrity-check', 1)")
            except sqlite3.DatabaseError as exc:
                return str(exc)
        return ""

    def purge(self) -> None:
        """Leave no byte of deleted rows in the file: FTS5 keeps a deleted row's words in its segments until they merge,
        and deleted rows stay in free pages and the WAL (a redaction, index/records.py `scrub`)."""
        with self.lock:
            for table in ("records_fts", "docs_fts"):
                self.conn.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
            self.conn.execute("VACUUM")
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def rebuild(self, why: str, damaged: bool = True) -> None:
        """Throw the file away and create an empty index of the current schema; the caller re-indexes the files."""
        if damaged:
            log.warning("the index %s is damaged (%s); rebuilding it from the memory files", self.path, why)
        with self.lock:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()
            self.discard()
            self._connect()
            self.writes += 1
            if damaged:
                self.rebuilt.append(why)

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A second connection, for a search that runs beside one on the main connection (a recall ranks skills while
        it ranks records: SQLite works outside Python's lock, so the two use both cores). WAL lets it read whatever
        the other does; it is made again after the main connection moved to a rebuilt or replaced file. An index in
        memory (memory as it stood at a commit, core/past.py) has no second connection: its own is used."""
        if self.path == Path(":memory:"):
            with self.lock:
                yield self.conn
            return
        with self._reader_lock:
            if self._reader is None or self._reader[1] != self._opened:
                if self._reader is not None:
                    with contextlib.suppress(sqlite3.Error):
                        self._reader[0].close()
                self._reader = (sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None), self._opened)
            yield self._reader[0]

    def after_write(self, update: Callable[[], Any]) -> None:
        """Index what was just written to a memory file. The file is the truth and is already durable, so a failing
        index never fails the write: a damaged file is rebuilt, anything else is caught up by the next sync."""
        try:
            update()
        except sqlite3.Error as exc:
            if damage(exc):
                (self.repair or self.rebuild)(str(exc))
            else:
                log.warning("the index missed a write (%s); the next sync catches up", exc)

    def discard(self) -> None:
        """Delete the database files (the caller has closed the connection)."""
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)

    def version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self.lock:
            self.conn.close()
        with self._reader_lock:
            if self._reader is not None:
                self._reader[0].close()
                self._reader = None

    def create(self) -> None:
        """Drop every table and create the current schema (the files on disk are the truth)."""
        in_memory = self.path == Path(":memory:")
        # Two processes may find an old schema at once: one creates, the other sees the new version and stops.
        with self.lock, contextlib.nullcontext() if in_memory else disk.repo_lock(self.path.parent, "index-schema.lock"):
            if not in_memory and self.version() == SCHEMA_VERSION:
                return
            for table in TABLES:
                self.conn.execute(f"DROP TABLE IF EXISTS {table}")
            if ddl.VERSION == SCHEMA_VERSION:  # what build_schema made, recorded: no sqlite-utils import (0.1-0.3 s)
                for statement in ddl.STATEMENTS:
                    self.conn.execute(statement)
            else:
                build_schema(self.conn)
            self.conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def upsert(self, table: str, rows: list[dict[str, Any]], pk: str | tuple[str, ...]) -> None:
        """Insert or update `rows` by `pk` (the caller holds a transaction)."""
        if not rows:
            return
        import sqlite_utils

        sqlite_utils.Database(self.conn).table(table).upsert_all(rows, pk=pk)

    def transaction(self) -> _Transaction:
        """A write transaction (BEGIN IMMEDIATE … COMMIT) holding the index lock."""
        return _Transaction(self)

    @property
    def opened(self) -> int:
        """Connections made so far: a new one means a rebuilt or replaced file."""
        return self._opened

    def generation(self) -> tuple[int, int]:
        """Changes whenever the index may have changed: our own commits, or another process's (SQLite data_version).
        When another process replaced the file (a rebuild), this connection moves to the new one."""
        with self.lock:
            current = _inode(self.path)
            if self._inode and current and current != self._inode:
                with contextlib.suppress(sqlite3.Error):
                    self.conn.close()
                self._connect()
                self.writes += 1
            return self.writes, int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file: reads through a long WAL are slower."""
        with self.lock:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


class _Transaction:
    """BEGIN IMMEDIATE … COMMIT under the index lock (ROLLBACK on error); nested uses join the outer one."""

    def __init__(self, db: Database):
        self.db = db
        self.outer = False

    def __enter__(self) -> None:
        self.db.lock.acquire()
        self.outer = not self.db.conn.in_transaction
        if self.outer:
            self.db.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        try:
            if self.outer and self.db.conn.in_transaction:  # not in one: the file was rebuilt in the meantime
                self.db.conn.execute("ROLLBACK" if exc_type else "COMMIT")
                if not exc_type:
                    self.db.writes += 1
        finally:
            self.db.lock.release()


def build_schema(conn: sqlite3.Connection) -> None:
    """Create the index's tables, indexes and full-text tables in an empty database with sqlite-utils. What it makes is
    recorded in index/ddl.py, which `Database.create` replays; `python -m repo_memory.index.db` records it again."""
    import sqlite_utils

    db = sqlite_utils.Database(conn)
    docs = db.table("docs")
    docs.create(DOCS, pk="rowid", not_null={"path", "kind", "name"})
    docs.create_index(["path"], unique=True)
    docs.create_index(["kind", "name"])
    docs.enable_fts(["name", "description", "tags", "body", "words"], tokenize=TOKENIZE)
    records = db.table("records")
    records.create(RECORDS, pk="rowid", not_null={"id", "session", "seq", "ts", "kind", "file"},
                   defaults={"flags": "", "outcome": "", "anchors": "", "origin": ""})
    records.create_index(["id"], unique=True)
    records.create_index(["kind"])
    records.create_index(["session", "seq"])
    records.create_index(["ts"])
    records.create_index(["file"])
    records.create_index(["vkey"])
    docs.create_index(["vkey"])
    # The few rows that cite code, for the anchor check after every sync: without these it read every record
    # (19 ms at 100k) and every document. Partial indexes, which sqlite-utils does not make.
    conn.execute("CREATE INDEX records_anchored ON records (id, anchors) WHERE anchors != ''")
    conn.execute("CREATE INDEX records_origin ON records (origin) WHERE origin != ''")  # imported copies (ranking.py)
    conn.execute("CREATE INDEX docs_anchored ON docs (winner, kind, name, anchors) WHERE anchors != ''")
    # sqlite-utils makes only external-content full-text tables; this one keeps its own content (see above).
    conn.execute(f"CREATE VIRTUAL TABLE records_fts USING fts5(text, speaker, date, context, tokenize='{TOKENIZE}')")
    db.table("logs").create(LOGS, pk="path")
    anchors = db.table("anchor_state")
    anchors.create(ANCHOR_STATE, pk=("memory", "anchor"))
    anchors.create_index(["anchor"])
    db.table("changes").create(CHANGES, pk="name")


def schema_statements(conn: sqlite3.Connection) -> list[str]:
    """The statements that make the schema of `conn` again, in the order it was made: a full-text table's own
    statement makes its shadow tables, so theirs are left out, as are the indexes SQLite makes by itself."""
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
    virtual = [name for _, name, sql in rows if sql.upper().startswith("CREATE VIRTUAL TABLE")]
    return [sql for kind, name, sql in rows if not (kind == "table" and any(name.startswith(f"{v}_") for v in virtual))]


def ddl_source() -> str:
    """index/ddl.py as build_schema makes the schema now."""
    conn = sqlite3.connect(":memory:")
    build_schema(conn)
    statements = "".join(f"    {sql!r},\n" for sql in schema_statements(conn))
    return (f'"""The index schema\'s SQL as sqlite-utils makes it (index/db.py `build_schema`), recorded so that making an index\n'
            f'imports no sqlite-utils (0.1 s, 0.25 s with the numpy it imports). Generated: python -m repo_memory.index.db"""\n\n'
            f"VERSION = {SCHEMA_VERSION}\nSTATEMENTS = (\n{statements})\n")


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except OSError:
        return 0


if __name__ == "__main__":
    (Path(__file__).parent / "ddl.py").write_text(ddl_source(), encoding="utf-8")
