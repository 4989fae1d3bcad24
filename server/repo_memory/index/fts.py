"""Ranked full-text queries, shared by documents (skills and loops) and experience records."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

SNIPPET_MAX = 20_000  # characters: FTS5's snippet() grows with the square of the matches in a text


def ranked(conn: sqlite3.Connection, table: str, weights: Sequence[float], match: str, columns: str, where: str = "",
           params: Sequence[Any] = (), limit: int = 50) -> list[tuple[Any, ...]]:
    """`columns` of `table`'s rows matching `match`, best BM25 first, each row ending with its rank (lower is better)."""
    fts = f"{table}_fts"
    sql = (f"SELECT {columns}, bm25({fts}, {', '.join(map(str, weights))}) AS rank FROM {fts} JOIN {table} t ON t.rowid = {fts}.rowid "
           f"WHERE {fts} MATCH ?{f' AND {where}' if where else ''} ORDER BY rank LIMIT ?")
    return conn.execute(sql, [match, *params, limit]).fetchall()


def best(conn: sqlite3.Connection, table: str, weights: Sequence[float], match: str, limit: int) -> list[tuple[int, float]]:
    """(rowid, rank) of the best `limit` rows matching `match`, from the full-text index alone (no content row is read)."""
    fts = f"{table}_fts"
    sql = f"SELECT rowid, bm25({fts}, {', '.join(map(str, weights))}) AS rank FROM {fts} WHERE {fts} MATCH ? ORDER BY rank LIMIT ?"
    return [(int(r[0]), float(r[1])) for r in conn.execute(sql, (match, limit))]


def snippets(conn: sqlite3.Connection, table: str, column: str, match: str, rowids: Sequence[int]) -> dict[int, str]:
    """Excerpts of `column` around the matched words, for the given rows only; a huge text gives its opening instead."""
    if not rowids:
        return {}
    fts = f"{table}_fts"
    index = _columns(conn, fts).index(column)
    sql = (f"SELECT rowid, CASE WHEN length({column}) > {SNIPPET_MAX} THEN substr({column}, 1, 160) || '…' "
           f"ELSE snippet({fts}, {index}, '**', '**', '…', 24) END FROM {fts} "
           f"WHERE {fts} MATCH ? AND rowid IN ({','.join('?' * len(rowids))})")
    return {r[0]: str(r[1] or "").strip() for r in conn.execute(sql, [match, *rowids])}


_COLUMNS: dict[str, list[str]] = {}


def _columns(conn: sqlite3.Connection, fts: str) -> list[str]:
    if fts not in _COLUMNS:
        _COLUMNS[fts] = [r[1] for r in conn.execute(f"PRAGMA table_info({fts})")]
    return _COLUMNS[fts]
