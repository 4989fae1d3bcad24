"""Ranked full-text queries, shared by documents (skills and loops) and experience records."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from repo_memory.guards import cjk
from repo_memory.index import cited, excerpts, folding

SNIPPET_MAX = 20_000  # characters: FTS5's snippet() grows with the square of the matches in a text
MARKS, GAP = ("\x02", "\x03"), "\x04"  # what snippet() marks a match and a gap with, to be found again in its excerpt
_MARKS = re.compile("[\x02-\x04]")  # a text holding them is excerpted as it is held, not placed back as written
# Rows a first pass may score. FTS5 scores every row that matches any term (about 0.7 us each), so a question with a
# word on half of 100k records cost 40-60 ms. Past this many, the first pass matches only the query's rarer words.
BUDGET = 5_000


Pass = tuple[str, ...]  # FTS5 expressions matching disjoint rows; each row scores as the whole query would score it


def ranked(conn: sqlite3.Connection, table: str, weights: Sequence[float], match: Pass, columns: str, where: str = "",
           params: Sequence[Any] = (), limit: int = 50) -> list[tuple[Any, ...]]:
    """`columns` of `table`'s rows matching `match`, best BM25 first, each row ending with its rank (lower is better)."""
    fts = f"{table}_fts"
    sql = (f"SELECT {columns}, bm25({fts}, {', '.join(map(str, weights))}) AS rank FROM {fts} JOIN {table} t ON t.rowid = {fts}.rowid "
           f"WHERE {fts} MATCH ?{f' AND {where}' if where else ''} ORDER BY rank LIMIT ?")
    rows = [row for expression in match for row in conn.execute(sql, [expression, *params, limit])]
    return sorted(rows, key=lambda r: r[-1])[:limit]  # one expression's rows come sorted; a pass's two are merged


def best(conn: sqlite3.Connection, table: str, weights: Sequence[float], match: Pass, limit: int,
         also: Sequence[float] = ()) -> list[tuple[Any, ...]]:
    """(rowid, rank) of the best `limit` rows matching `match`, from the full-text index alone (no content row is read);
    with `also`, each row's rank by those column weights too (computed only for the rows returned)."""
    fts = f"{table}_fts"
    other = f", bm25({fts}, {', '.join(map(str, also))})" if also else ""
    sql = f"SELECT rowid, bm25({fts}, {', '.join(map(str, weights))}) AS rank{other} FROM {fts} WHERE {fts} MATCH ? ORDER BY rank LIMIT ?"
    rows = [(int(r[0]), *map(float, r[1:])) for expression in match for r in conn.execute(sql, (expression, limit))]
    return sorted(rows, key=lambda r: r[1])[:limit]


def snippets(conn: sqlite3.Connection, table: str, column: str, match: str, rowids: Sequence[int], tokenize: str) -> dict[int, str]:
    """Excerpts of `column` around the matched words, for the given rows only; a huge text gives its opening instead.

    FTS5 finds the rows of a MATCH by reading every row that matches, so a snippet query over the whole index cost as
    much as ranking (1-2 ms at 100k records). The few rows are copied into a scratch table with the same tokenizer
    (made once per connection), where the same snippet() costs a few rows' worth. They are copied as the index holds
    them (folded, CJK runs as their words: index/folding.py), or a CJK run was one word there, which no pair a query
    asks for matched; the excerpt cut there is placed back in the text as written (index/excerpts.py). A CJK row's
    excerpt is more words long: each of its characters is two."""
    if not rowids:
        return {}
    scratch = f"{table}_snippets"
    texts = conn.execute(f"SELECT rowid, {column} FROM {table} WHERE rowid IN ({','.join('?' * len(rowids))})", list(rowids)).fetchall()
    out = {int(r): str(t)[:160].strip() + "…" for r, t in texts if len(t or "") > SNIPPET_MAX}
    rows = [(int(r), str(t)) for r, t in texts if r not in out and t]
    placed = {r: excerpts.placed(t) for r, t in rows if not t.isascii() and _placed(t)}
    conn.execute("SAVEPOINT snippets")  # one write to the scratch table, not one per statement
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{scratch} USING fts5(body, tokens UNINDEXED, "
                 f"tokenize='{tokenize}')")
    conn.execute(f"DELETE FROM temp.{scratch}")
    conn.executemany(f"INSERT INTO temp.{scratch} (rowid, body, tokens) VALUES (?, ?, ?)",
                     [(r, placed[r].text, 64 if cjk.holds(t) else 24) if r in placed else (r, t, 24) for r, t in rows])
    conn.execute("RELEASE snippets")
    sql = f"SELECT rowid, snippet({scratch}, 0, ?, ?, ?, tokens) FROM temp.{scratch} WHERE {scratch} MATCH ?"
    for rowid, cut in conn.execute(sql, [*MARKS, GAP, match]):
        found = placed.get(rowid)
        shown = found.excerpt(str(cut), MARKS, GAP) if found else str(cut)
        out[int(rowid)] = whole_names(shown.replace(MARKS[0], "**").replace(MARKS[1], "**").replace(GAP, "…").strip())
    return out


def _placed(text: str) -> bool:
    """Whether the index holds `text` otherwise than as written (and its excerpt can be placed back in it)."""
    return (cjk.holds(text) or folding.fold(text) != text) and not _MARKS.search(text)


_JOINED = re.compile(r"\*\*([_./:-]+)\*\*")
_MARKED = re.compile(r"\*\*(.+?)\*\*")


def whole_names(snippet: str) -> str:
    """`snippet` with each highlight over the whole name it falls in: FTS5 marks tokens, and a name's tokens are its
    parts, so `**STAGING**_**DATABASE**_**URL**` or `__**version**__` read wrong when copied (now `**STAGING_DATABASE_URL**`).
    A CJK run is not a name: its matched characters are marked, not the run."""
    text = _JOINED.sub(r"\1", snippet)
    out, done = [], 0
    for mark in _MARKED.finditer(text):
        left, right = mark.start(), mark.end()
        while left > done and _in_name(text[left - 1]):
            left -= 1
        while right < len(text) and _in_name(text[right]):
            right += 1
        out += [text[done:left], "**", text[left : mark.start()], mark.group(1), text[mark.end() : right], "**"]
        done = right
    return "".join(out) + text[done:]


def _in_name(char: str) -> bool:
    return (char.isalnum() or char == "_") and (char.isascii() or not cjk.holds(char))


def best_texts(conn: sqlite3.Connection, doc: tuple[str, str], record_id: str, chars: int, doc_chars: int) -> list[str]:
    """The words of a document (kind, name) cut to `doc_chars` and of a record (id) cut to `chars`, for `covered`; the
    code each cites counts (a document's `words` hold it, a record's anchors are added: index/cited.py). Third, the
    document's name and description: what it says it is about."""
    found = conn.execute("SELECT name, description, tags, body, words FROM docs WHERE kind=? AND name=?", doc).fetchone()
    record = conn.execute("SELECT text, speaker, anchors FROM records WHERE id=?", (record_id,)).fetchone()
    said = [str(record[0] or ""), str(record[1] or ""), cited.words(cited.anchors(record[2]))] if record else []
    doc_words = [str(v or "").replace("-", " ") for v in found or ()]
    return [" ".join(doc_words)[:doc_chars], " ".join(said)[:chars], " ".join(doc_words[:2])[:chars]]


def covered(conn: sqlite3.Connection, tokenize: str, terms: Sequence[str], texts: Sequence[str], openings: Sequence[int] = (),
            passage: int = 0) -> list[float]:
    """For each of `texts`, the share of the query's `terms` it holds (a term of several words: all of them), words
    compared as the index stems them (a scratch table with the same tokenizer, made once per connection). With
    `openings`, text n's share is read over its first `openings[n]` tokens, unless `passage` tokens in a row anywhere
    in it hold every term: then it holds the whole query."""
    return [share for share, _ in coverage(conn, tokenize, terms, texts, openings, passage)]


def coverage(conn: sqlite3.Connection, tokenize: str, terms: Sequence[str], texts: Sequence[str], openings: Sequence[int] = (),
             passage: int = 0) -> list[tuple[float, float]]:
    """For each of `texts`, (its share of the query, as `covered` reads it; the part of the tokens so read that are
    words of the query): of two texts holding as much of a query, the second says which is more about it."""
    if not terms or not texts:
        return [(0.0, 0.0)] * len(texts)
    placed = _instances(conn, "covered", tokenize, [*terms, *texts])
    wanted = [{stem for _, stem in found} for n in range(len(terms)) if (found := placed.get(n))]
    if not wanted:
        return [(0.0, 0.0)] * len(texts)
    useful = set().union(*wanted)
    out = []
    for n in range(len(texts)):
        found = placed.get(len(terms) + n, [])
        if n < len(openings) and not (passage and _whole(wanted, found, passage)):
            found = [(offset, stem) for offset, stem in found if offset < openings[n]]
        have = {stem for _, stem in found}
        density = sum(1 for _, stem in found if stem in useful) / (len(found) or 1)
        out.append((sum(1 for w in wanted if w <= have) / len(wanted), density))
    return out


def _whole(wanted: list[set[str]], placed: list[tuple[int, str]], span: int) -> bool:
    """Whether `span` tokens in a row of a text hold every one of `wanted` (each a term's stems), `placed` being the
    text's (offset, stem) tokens."""
    useful = set().union(*wanted)
    found = sorted((offset, stem) for offset, stem in placed if stem in useful)
    held, start = Counter[str](), 0
    for offset, stem in found:  # the window ending at each token that holds a word of the query
        held[stem] += 1
        while found[start][0] <= offset - span:
            held[found[start][1]] -= 1
            start += 1
        if all(held[s] for w in wanted for s in w):
            return True
    return False


def _stems(conn: sqlite3.Connection, scratch: str, tokenize: str, texts: Sequence[str]) -> dict[int, set[str]]:
    """The stems of each of `texts` (by position) as a full-text table with `tokenize` indexes them."""
    return {n: {stem for _, stem in found} for n, found in _instances(conn, scratch, tokenize, texts).items()}


def _instances(conn: sqlite3.Connection, scratch: str, tokenize: str, texts: Sequence[str]) -> dict[int, list[tuple[int, str]]]:
    """The (offset, stem) of every token of each of `texts` (by position) as a full-text table with `tokenize` indexes
    them, in the form the index holds (index/folding.py): the texts go into the scratch table `scratch` (made once per
    connection) and its vocabulary is read back."""
    conn.execute(f"SAVEPOINT {scratch}")  # one write to the scratch table, not one per statement
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{scratch} USING fts5(t, tokenize='{tokenize}')")
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{scratch}_v USING fts5vocab(temp, {scratch}, instance)")
    conn.execute(f"DELETE FROM temp.{scratch}")
    conn.executemany(f"INSERT INTO temp.{scratch} (rowid, t) VALUES (?, ?)", [(n, folding.searched(t)) for n, t in enumerate(texts)])
    placed: dict[int, list[tuple[int, str]]] = {}
    for stem, doc, offset in conn.execute(f"SELECT term, doc, offset FROM temp.{scratch}_v"):
        placed.setdefault(int(doc), []).append((int(offset), str(stem)))
    conn.execute(f"RELEASE {scratch}")
    return placed


class Frequencies:
    """How many rows of a full-text table hold each query word, to bound what a query's first pass scores.

    Like Lucene's CommonTermsQuery: when the words of a query match more than BUDGET rows in all, the first pass
    matches the rarest words whose rows add up to the budget; the common ones, which carry little BM25 weight
    (a word on a third of the rows has a fifth of the weight of one on 2%), are left out of it. When even the rarest
    word is common, every word must match. Below the budget the query is unchanged. Words are stemmed by SQLite's own
    tokenizer (a scratch table per connection), and counts are kept until the table grew by a tenth.
    """

    def __init__(self, table: str, tokenize: str):
        self.table, self.tokenize = table, tokenize
        self._counts: dict[str, int] = {}
        self._rows = -1
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def first_pass(self, conn: sqlite3.Connection, terms: Sequence[str]) -> list[Pass]:
        """The passes a first pass should make, to be tried in turn until one finds enough rows (empty: match the whole
        query). A pass that matches the rows holding a rare word is two expressions — those rows with a common word
        too, and those without — so that every word counts once, as in the whole query: "(rare) AND (every word)"
        counted the rare words twice (FTS5's bm25 adds up every phrase of the expression), and the common words, though
        rare enough to count, weighed half as much as they should (at 100k records, 2 points of turn any@5)."""
        with self._lock:
            counts = self._of(conn, terms)
        if sum(counts.values()) <= BUDGET:
            return []
        ordered = sorted(terms, key=lambda t: counts.get(t, 0))
        chosen: list[str] = []
        total = 0
        for term in ordered:
            if chosen and total + counts.get(term, 0) > BUDGET:
                break
            chosen.append(term)
            total += counts.get(term, 0)
        if total > BUDGET:  # every word is common: rows that hold them all, else the rarest word's
            return [(_joined(terms, "AND"),), (_joined(ordered[:1], "OR"),)] if len(terms) > 1 else [(_joined(ordered[:1], "OR"),)]
        rare, common = _joined(chosen, "OR"), _joined([t for t in terms if t not in chosen], "OR")
        return [(f"({rare}) AND ({common})", f"({rare}) NOT ({common})")]

    def _of(self, conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
        if conn is not self._conn:
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{self.table}_vocab USING fts5vocab(main, {self.table}_fts, row)")
            self._conn, self._counts, self._rows = conn, {}, -1
        rows = int(conn.execute(f"SELECT max(rowid) FROM {self.table}").fetchone()[0] or 0)
        if rows <= BUDGET:
            return {}
        if rows > self._rows * 1.1 or rows < self._rows:
            self._counts, self._rows = {}, rows
        new = [t for t in dict.fromkeys(terms) if t not in self._counts]
        if new:
            stems = _stems(conn, f"{self.table}_stemmer", self.tokenize, new)
            wanted = sorted({s for found in stems.values() for s in found})
            found = dict(conn.execute(f"SELECT term, doc FROM temp.{self.table}_vocab WHERE term IN ({','.join('?' * len(wanted))})",
                                      wanted).fetchall()) if wanted else {}
            for n, term in enumerate(new):  # a quoted word of several tokens ("foo-bar") matches at most its rarest one
                self._counts[term] = min((int(found.get(s, 0)) for s in stems.get(n, ())), default=0)
        return {t: self._counts[t] for t in terms}


LONGER_ROWS = 20  # rows of each table a suggestion's prefix query reads


def longer(conn: sqlite3.Connection, words: Sequence[str], limit: int = 5) -> list[str]:
    """Words the records and documents hold that begin with one of `words` and go on ("psycopg": psycopg2), as written:
    what a question's word may have meant when nothing matched. Read from the few rows a prefix query finds (the index
    holds stems, no word to show), most frequent first."""
    found: Counter[str] = Counter()
    for word in [w for w in words if len(w) >= 4 and w.isalnum()][:8]:
        written = re.compile(rf"(?<!\w){re.escape(word)}\w+", re.I)
        for sql in ("SELECT text FROM records_fts WHERE records_fts MATCH ? LIMIT ?",
                    "SELECT name || ' ' || description || ' ' || body FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?"):
            for (text,) in conn.execute(sql, (f'"{word}"*', LONGER_ROWS)):
                found.update(written.findall(str(text or "")))
    shown: dict[str, str] = {}
    for form, _ in found.most_common():
        shown.setdefault(form.lower(), form)  # one spelling of each word
    return list(shown.values())[:limit]


def _joined(terms: Sequence[str], operator: str) -> str:
    """Quoted terms (user text is never read as FTS5 syntax) joined by AND or OR."""
    return f" {operator} ".join(f'"{t}"' for t in terms)
