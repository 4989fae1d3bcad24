"""Ranking experience records for a query: a bounded full-text pass, boosts for a person the question names and for
records that say when, then — with the query's embedding — fusion with similarity of meaning (fusion.py)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from repo_memory.formats import when
from repo_memory.index import cited, fts, fusion
from repo_memory.index.db import TOKENIZE, Database
from repo_memory.index.hits import MEANING, NEIGHBOURS, Hit
from repo_memory.index.query import STOPWORDS, Query, words
from repo_memory.index.vectors import QueryVectors

# BM25 weights of the columns (text, speaker, date, context), chosen on LoCoMo (bench/locomo.py): the context of
# ±2 records lifted turn any@5 from 0.59 to 0.71; ±1 and ±3 did worse; the other weights move it by about a point.
WEIGHTS = (1.0, 0.5, 1.0, 0.35)
WINDOW = 2  # records either side in a session are a record's neighbours: their words are indexed with it, their meaning counts
# ...where it is in an exchange: more than one speaker among it and its neighbours. In a conversation the reply holds
# none of the question's words, the turn it answers does; notes one writer made one after another (an agent's
# `remember` calls, a person's `log add`) are separate statements, and there records holding no word of a question
# ranked above the one holding it ("austrian VAT rate": the Umsatzsteuer note 9th below six notes beside two holding
# "rate"; hybrid, the note the model alone ranks first 11th). Such a record ranks by its own words and meaning; its
# neighbours' words count ASIDE as much, which finds and orders the records holding none of the question's words
# (a note is still found by the one before it) without lifting them above one that holds a word.
ASIDE = 0.01
POOL = 50  # records reranked per query
OWN = (*WEIGHTS[:3], 0.0)  # a record's own words: its text, speaker and date, not its neighbours'
# Hybrid ranking of records: the words half weighs 0.4 (skills keep fusion.LEXICAL_WEIGHT), and a record gains 0.15 of
# the best own-words score (scaled) of its neighbours among the word candidates. With the meaning half also preferring
# a named speaker, these were picked on LoCoMo's features in every leave-one-conversation-out fold (a grid over the
# fused score's parts, as bench/rerank.py reads them). Through recall, every turn embedded, paired over the same
# questions: LoCoMo 0.803 -> 0.815 (+0.013 [-0.002, +0.026]); bench/long_turns.py's stand-ins: as a chat 0.786 -> 0.818
# (+0.032 [+0.019, +0.046]), a long turn after each 0.746 -> 0.772, both 0.718 -> 0.749 (docs/benchmarks.md).
# Neighbours count by their own words: with the words indexed with them, two records lifted each other with one's
# words, and an older statement beside any other record outranked a newer one alone in its session
# (tests/core/test_fresh_records.py).
RECORDS_LEXICAL_WEIGHT = 0.4
NEIGHBOURHOOD_WEIGHT = 0.15
SPEAKER_BOOST = 1.5  # chosen on LoCoMo: 1.1 -> 1.5 lifted turn any@5 from 0.72 to 0.76; 2.0 and 3.0 did no better
# A question put to a chat's memory is in the user's words: "I", "me" and "my" are the user, "you" and "your" the
# assistant, the roles a chat's turns are recorded with. LoCoMo as a chat (bench/long_turns.py: its two speakers
# recorded as user and assistant, the questions' names turned into "I" and "you") lost 4.7 points of turn any@5 to the
# names it no longer had (0.777 -> 0.730, full-text); with this, 0.778 (0.671 against 0.622 with long turns between);
# hybrid, every turn embedded, 0.761 -> 0.786, +0.025 [+0.014, +0.038], MRR +0.057 (docs/benchmarks.md).
# An agent's log is recorded as human and agent, and there the agent writes the queries, so its "I" is not the human's.
ROLE_OF = {**dict.fromkeys(("i", "me", "my", "mine", "myself"), "user"), **dict.fromkeys(("you", "your", "yours", "yourself"), "assistant")}
# ...except where they only put the question: "can you", "could you tell me", "remind me" ask, and are about no one.
ASKING = {"you": frozenset({"can", "could"}), "me": frozenset({"tell", "remind", "show", "give", "help", "let"})}
# A question that asks when prefers records that say when (answer-type matching, as question answering systems do):
# the same factor as a named speaker, not tuned on LoCoMo.
TIME_BOOST = SPEAKER_BOOST
# A record that holds a code name of the question as written (mod_19, 8.1.0, cli/parse_args.py) over one holding its
# words apart (f_3 in mod_11; 8.0.1): in a small memory BM25 cannot tell them (the words are in most records, and their
# weight is floored), in a large one the name's phrase already counts. The factor the docs' phrase match gets; it
# lifts the meaning half too, which cannot tell #876 from #884 or 8.1.0 from 8.0.1.
NAME_BOOST = 1.5
# A record holding four words of the question in a row, as the question has them (a quoted error message), over
# one that holds them apart or among its neighbours' words (indexed with it: in an agent's log the records beside an
# error are other facts). Error fragments at rank 1 on click's history 0.72 -> 0.92, flask's 0.60 -> 0.84 (docs/
# benchmarks.md); LoCoMo 0.773 -> 0.772, within noise. The words half only (see _hybrid).
QUOTE_BOOST = 1.5


def _not_copy(same: str = "") -> str:
    """SQL true of a record unless it is a copy `log import` made of a record this index holds (a clone that imported
    another's export, then pulled its log, holds both): its origin (`id@hash`, index/records.py) names that record, or
    another copy of the same record, under a smaller id, holds it too; either of the same kind, time and text, not
    quarantined and satisfying `same`. Decided per record, never by what else a page holds, so pages stay consistent."""
    alike = f"o.flags = '' AND o.kind = t.kind AND o.ts = t.ts AND o.text = t.text{same}"
    return (f"NOT (t.origin != '' AND (EXISTS (SELECT 1 FROM records o WHERE o.id = substr(t.origin, 1, length(t.origin) - 13) "
            f"AND substr(o.sha256, 1, 12) = substr(t.origin, -12) AND {alike}) OR EXISTS (SELECT 1 FROM records o "
            f"WHERE o.origin != '' AND o.origin = t.origin AND o.id < t.id AND {alike})))")


UNFILTERED = f"t.flags = '' AND {_not_copy()}"  # quarantined records never come back, nor copies of records held here
# Within one session, a copy is left out only for an original in that session (a copy is kept in its own log's).
IN_SESSION = f"t.flags = '' AND {_not_copy(' AND o.session = t.session')}"
# Records of a session's life rather than its work — its start and end, a compaction the harness made with no summary
# of its own — stay in the log, and come back when `kinds` names their kind; not in default recall, where "Session
# ended (other)" outranked a decision for the decision's own words. Hook names are compared as Claude Code and Codex
# spell them (SessionEnd, session_end); the text is the one shells/hooks.py writes for a compaction.
ROUTINE = ("NOT (lower(replace(t.tool, '_', '')) IN ('hook:sessionstart', 'hook:sessionend') OR "
           "lower(replace(t.tool, '_', '')) IN ('hook:precompact', 'hook:postcompact') AND t.text LIKE 'The harness compacted its context%')")
FAST = (UNFILTERED, f"{UNFILTERED} AND {ROUTINE}")  # conditions few rows fail: the best rows by words are ranked first
PER_TEXT = 2  # records of one text (one vector) that join a query's candidates by meaning
Window = dict[tuple[str, int], tuple[int, str]]  # (session, seq) -> (vector key, speaker) of a record (RecordRanking._window)
_COLUMNS = ("t.rowid, t.id, t.kind, t.ts, t.session, t.actor, t.harness, t.tool, t.covers, t.speaker, t.vkey, t.seq, substr(t.text, 1, 4000), "
            "t.anchors, t.refs")


@dataclass(frozen=True)
class Filters:
    """Which records a search may return: of these kinds (None: any), of one session, written in [since, until)."""

    kinds: Sequence[str] | None = None
    session: str | None = None
    since: str | None = None
    until: str | None = None

    def where(self) -> tuple[list[str], list[Any]]:
        """SQL conditions on the records table (as `t`) and their parameters; the first ones leave the full-text pass
        unfiltered (`FAST`)."""
        where, params = [IN_SESSION if self.session else UNFILTERED], []
        if self.kinds:
            where.append(f"t.kind IN ({','.join('?' * len(self.kinds))})")
            params += list(self.kinds)
        else:
            where.append(ROUTINE)
        for clause, value in (("t.session = ?", self.session), ("t.ts >= ?", self.since), ("t.ts < ?", self.until)):
            if value:
                where.append(clause)
                params.append(value)
        return where, params


class RecordRanking:
    """Ranks the records of one index for one query."""

    def __init__(self, db: Database, frequencies: fts.Frequencies):
        self._db, self._frequencies = db, frequencies

    def search(self, query: Query, limit: int, offset: int, filters: Filters, sem: QueryVectors | None = None) -> list[Hit]:
        """Records matching `query` within the filters, best first; quarantined records never come back. With `sem`
        (the query's embedding), records close in meaning join the candidates and the ranking is hybrid (fusion.py)."""
        if not query and sem is None:
            return []
        where, params = filters.where()
        pool = max(offset + limit, POOL)
        with self._db.lock:
            rows = self._ranked(query, " AND ".join(where), params, pool) if query else []
            window = self._window([(r[4], r[11]) for r in rows])
            talk = _talking([(r[4], r[11]) for r in rows], window)
            # A speaker's name has little weight in BM25 (it is on every other record); asking about a person prefers
            # their records, named whole or by any of their names ("Caroline" or "Ms Smith" for "Caroline Smith").
            asked = {*query.tokens, *_roles(query.tokens)}
            named = _named({str(r[9]).lower() for r in rows}, asked)
            timely = when.asks_when(query.text)
            lexical = {r[0]: -(r[-2] + (1.0 if (r[4], r[11]) in talk else ASIDE) * (r[-1] - r[-2])) * (SPEAKER_BOOST if str(r[9]).lower() in named else 1.0)
                       * (TIME_BOOST if timely and when.states_time(str(r[12])) else 1.0)
                       * _names(query, r)
                       * (QUOTE_BOOST if query.quotes(str(r[12])) else 1.0) for r in rows}
            found = {r[0]: r[:-2] for r in rows}
            own = {r[0]: -r[-2] for r in rows}  # ranked by their own words alone, not their neighbours' indexed with them
            scores = lexical if sem is None else self._hybrid(lexical, found, sem, where, params, pool, asked, own, query, window)
            page = sorted(scores.items(), key=lambda p: (-p[1], p[0]))[offset : offset + limit]
            excerpts = fts.snippets(self._db.conn, "records", "text", query.fts, [rowid for rowid, _ in page], TOKENIZE) if query else {}
            missing = [rowid for rowid, _ in page if rowid not in excerpts]
            if missing:  # found by meaning, not by words: its opening stands in for an excerpt
                excerpts |= dict(self._db.conn.execute(
                    f"SELECT rowid, substr(text, 1, 160) FROM records WHERE rowid IN ({','.join('?' * len(missing))})", missing).fetchall())
            matched = self._matched(query, [found[rowid] for rowid, _ in page], own)
        return [Hit(id=r[1], kind=r[2], snippet=str(excerpts.get(rowid, "")), score=score, ts=when.stamp(r[3]), session=r[4],
                    source={"actor": r[5], "harness": r[6], "tool": r[7]}, covers=tuple(json.loads(r[8] or "[]")),
                    matched=matched.get(rowid, "")) for rowid, score in page if (r := found[rowid])]

    def _matched(self, query: Query, rows: list[tuple[Any, ...]], own: dict[int, float]) -> dict[int, str]:
        """`matched` of the records of a page (rowid -> why) whose text holds no word of the query: they came back
        through the code they cite or their neighbours' words (both indexed with them), or by meaning alone. The hit
        says so, or an agent reads an unrelated record as related (the ranking is not changed by it)."""
        conn = self._db.conn
        said = [(r[0], f"{r[12]}\n{cited.given(r[14])}") for r in rows if own.get(r[0], 0.0) <= 0 or r[13] or r[14] != "[]"]
        unworded = _unworded(conn, query, said)  # a record's words: its text and the free text of its refs
        anchored = [(r[0], cited.words(cited.anchors(r[13]))) for r in rows if r[0] in unworded and r[13]]
        through = {rowid for rowid, _ in anchored} - _unworded(conn, query, anchored)  # their anchors hold a word of it
        return {r[0]: cited.CITES if r[0] in through else NEIGHBOURS if r[0] in own else MEANING
                for r in rows if r[0] in unworded and (r[0] in through or own.get(r[0], 0.0) <= 0)}

    def _ranked(self, query: Query, where: str, params: list[Any], pool: int) -> list[tuple[Any, ...]]:
        """The best `pool` rows for the words of `query`, the first pass bounded (fts.Frequencies) in a large index;
        each row's columns end with its rank by its own words (OWN) and its rank (lower is better)."""
        rows: list[tuple[Any, ...]] = []
        for match in self._frequencies.first_pass(self._db.conn, query.terms) or [(query.fts,)]:
            if where in FAST:  # rank from the full-text index alone, then read the few rows it chose (few are left out)
                best = fts.best(self._db.conn, "records", WEIGHTS, match, pool + 8, OWN)
                got = {r[0]: r for r in self._db.conn.execute(
                    f"SELECT {_COLUMNS} FROM records t WHERE t.rowid IN ({','.join('?' * len(best))}) AND {where}", [b[0] for b in best])}
                rows = [(*got[rowid], mine, rank) for rowid, rank, mine in best if rowid in got][:pool]
            else:
                rows = fts.ranked(self._db.conn, "records", WEIGHTS, match, f"{_COLUMNS}, bm25(records_fts, {', '.join(map(str, OWN))})",
                                  where, params, pool)
            if len(rows) >= pool:
                break
        return rows

    def _hybrid(self, lexical: dict[int, float], found: dict[int, tuple[Any, ...]], sem: QueryVectors, where: list[str],
                params: list[Any], pool: int, asked: set[str], own: dict[int, float], query: Query,
                window: Window) -> dict[int, float]:
        """Fused scores of the lexical candidates and the records nearest in meaning (within the same filters);
        `window` holds what `_window` read for the lexical candidates."""
        conn = self._db.conn
        filters = " AND ".join(where)
        # Until the query's embedding is ready, read what does not depend on it: the words' candidates' neighbours
        # and the stored vectors of both.
        around = _neighbours([(r[4], r[11]) for r in found.values()], window)
        sem.prefetch([r[10] for r in found.values()] + [k for keys in around.values() for k in keys])
        if any(c == "t.session = ?" for c in where):  # one session: score every record of it, exactly, neighbours included
            placed = conn.execute(f"SELECT t.vkey, t.seq, t.speaker FROM records t INDEXED BY idx_records_session_seq WHERE {filters}",
                                  params).fetchall()
            similar = sem.similarity([k for k, _, _ in placed])  # reads the stored vectors before it waits for the query's
            by_seq = {seq: similar[k] for k, seq, _ in placed if k in similar}
            talk = _talking([("", seq) for _, seq, _ in placed], {("", seq): (k, speaker) for k, seq, speaker in placed})
            beside = {seq: [by_seq[s] for s in _around(seq) if s in by_seq] if ("", seq) in talk else [] for seq in by_seq}
            scored = [(k, by_seq[seq] + fusion.NEIGHBOUR_WEIGHT * _mean(beside[seq], by_seq[seq])) for k, seq, _ in placed if seq in by_seq]
            near = sorted(scored, key=lambda p: -p[1])
            floor = near[-1][1] if near else None
        else:  # everywhere: the nearest vectors, then the filters
            near = sem.nearest(max(fusion.NEAREST, pool * 2))
            unrelated = sem.unrelated()
            floor = unrelated * (1 + fusion.NEIGHBOUR_WEIGHT) if near and unrelated is not None else None  # where an unrelated record lands
        keys = list(dict.fromkeys(k for k, _ in near[:pool]))
        # Records saying the same thing share a vector: the newest few of each join, so a line repeated in a thousand
        # sessions costs what one does, and the candidates stay bounded. The newest are read from the vkey index in
        # rowid order until PER_TEXT pass the filters: filtering every record of each text first read 24 rows a text
        # at 100k records (a scale run's repeated turns), 2-20 ms a recall against under 1 ms.
        newest: dict[int, str] = {}
        for chunk in range(0, len(keys), 400):
            part = keys[chunk : chunk + 400]
            newest |= dict(conn.execute(
                f"WITH k(v) AS (VALUES {','.join(['(?)'] * len(part))}) SELECT k.v, (SELECT group_concat(rowid) FROM (SELECT t.rowid "
                f"FROM records t INDEXED BY idx_records_vkey WHERE t.vkey = k.v AND {filters} ORDER BY t.rowid DESC LIMIT {PER_TEXT})) FROM k",
                [*part, *params]))
        chosen = [rowid for key in keys if newest.get(key) for rowid in sorted(map(int, newest[key].split(",")), reverse=True)][:pool]
        chosen = [rowid for rowid in chosen if rowid not in found]
        for chunk in range(0, len(chosen), 500):
            part = chosen[chunk : chunk + 500]
            for r in conn.execute(f"SELECT {_COLUMNS} FROM records t WHERE t.rowid IN ({','.join('?' * len(part))})", part):
                found.setdefault(r[0], r)
        similar = sem.similarity([r[10] for r in found.values()])
        window |= self._window([(r[4], r[11]) for r in found.values() if (r[4], r[11]) not in around])
        around |= _neighbours([(r[4], r[11]) for r in found.values() if (r[4], r[11]) not in around], window)
        talk = _talking([(r[4], r[11]) for r in found.values()], window)
        near_by = sem.similarity(sorted({k for keys in around.values() for k in keys}))
        semantic = {}
        for rowid, r in found.items():
            if r[10] in similar:
                context = [near_by[k] for k in around.get((r[4], r[11]), []) if k in near_by and (r[4], r[11]) in talk]
                semantic[rowid] = similar[r[10]] + fusion.NEIGHBOUR_WEIGHT * _mean(context, similar[r[10]])
        sem.count_unembedded(fusion.unembedded(lexical, semantic), len(lexical))
        # The question's named speaker is left out of its embedding (core/semantic.py), so the meaning half prefers
        # their records as the words half does.
        named = _named({str(r[9]).lower() for r in found.values()}, asked)
        prefer = {rowid: (SPEAKER_BOOST if str(r[9]).lower() in named else 1.0) * _names(query, r)
                  for rowid, r in found.items()}  # not QUOTE_BOOST: in the meaning half it cost LoCoMo's hybrid 0.821 -> 0.816
        fused = fusion.fuse(lexical, semantic, floor, prefer, RECORDS_LEXICAL_WEIGHT)
        # With no vector among the candidates the ranking stays full-text's (the neighbourhood gains only beside meaning).
        return self._neighbourhood(fused, found, own, talk) if semantic else fused

    def _neighbourhood(self, fused: dict[int, float], found: dict[int, tuple[Any, ...]], own: dict[int, float],
                       talk: set[tuple[str, int]]) -> dict[int, float]:
        """Each candidate's fused score plus NEIGHBOURHOOD_WEIGHT times the best own-words score (scaled) among the word
        candidates within WINDOW of it in its session, if it is in an exchange (`talk`)."""
        top = max(own.values(), default=0.0) or 1.0
        at = {(found[rowid][4], found[rowid][11]): max(score, 0.0) / top for rowid, score in own.items()}
        beside = {rowid: [at.get((r[4], s), 0.0) for s in _around(r[11])] if (r[4], r[11]) in talk else [] for rowid, r in found.items()}
        return {rowid: score + NEIGHBOURHOOD_WEIGHT * max(beside[rowid], default=0.0) for rowid, score in fused.items()}

    def _window(self, places: list[tuple[str, int]]) -> Window:
        """(session, seq) -> (vector key, speaker) of each record within WINDOW of one of `places`, themselves included:
        one indexed join per 400 places, not a query per session (the nearest records of an unscoped query span a hundred)."""
        wanted = sorted({(session, s) for session, seq in places for s in range(seq - WINDOW, seq + WINDOW + 1)})
        found: Window = {}
        for chunk in range(0, len(wanted), 400):
            part = wanted[chunk : chunk + 400]
            found |= {(session, seq): (key, speaker) for session, seq, key, speaker in self._db.conn.execute(
                f"WITH w(s, q) AS (VALUES {','.join(['(?, ?)'] * len(part))}) SELECT r.session, r.seq, r.vkey, r.speaker "
                "FROM w JOIN records r ON r.session = w.s AND r.seq = w.q", [v for p in part for v in p])}
        return found


def _neighbours(places: list[tuple[str, int]], window: Window) -> dict[tuple[str, int], list[int]]:
    """For each (session, seq), the vector keys of the records within WINDOW of it in that session."""
    return {(session, seq): [window[(session, s)][0] for s in _around(seq) if (session, s) in window] for session, seq in places}


def _talking(places: list[tuple[str, int]], window: Window) -> set[tuple[str, int]]:
    """Those of `places` in an exchange: more than one speaker among the records within WINDOW of it, itself included."""
    return {(session, seq) for session, seq in places
            if len({window[(session, s)][1] for s in range(seq - WINDOW, seq + WINDOW + 1) if (session, s) in window}) > 1}


def _names(query: Query, row: tuple[Any, ...]) -> float:
    """What a record gains for the code names of the query: more when it is anchored to that code (index/cited.py) than
    when its text holds the name."""
    if row[13] and cited.named(query.names, cited.anchors(row[13])):
        return cited.CITED_BOOST
    return NAME_BOOST if query.holds_name(str(row[12])) else 1.0


def _unworded(conn: sqlite3.Connection, query: Query, texts: list[tuple[int, str]]) -> set[int]:
    """Of `texts` (rowid, a record's text) that did not match the query by their own words, those that hold none of
    its words at all, compared as the index stems them (a first pass in a large index matches only some words)."""
    if not query.terms or not texts:
        return set()
    shares = fts.covered(conn, TOKENIZE, query.terms, [text for _, text in texts])
    return {rowid for (rowid, _), share in zip(texts, shares) if share == 0.0}


def _named(speakers: set[str], asked: set[str]) -> set[str]:
    """The speakers a question names, whole or by any of their names ("Caroline" or "Ms Smith" for "Caroline Smith"),
    `asked` being its words and the chat roles its pronouns are about."""
    return {s for s in speakers if s in asked or any(w in asked for w in words(s) if w not in STOPWORDS)}


def _roles(tokens: list[str]) -> set[str]:
    """The chat roles a question's pronouns are about (ROLE_OF), leaving out those that only put the question (ASKING)."""
    return {ROLE_OF[t] for n, t in enumerate(tokens) if t in ROLE_OF and not (n and tokens[n - 1] in ASKING.get(t, ()))}


def _around(seq: int) -> list[int]:
    return [s for s in range(seq - WINDOW, seq + WINDOW + 1) if s != seq]


def _mean(values: list[float], alone: float) -> float:
    """The mean of the neighbours' similarities; a record without neighbours (alone in its session, or all of them
    without a vector yet) stands for its own, on the scale the floor of meaning assumes: counted as 0 it fell to the
    floor and lost its meaning half whatever it said."""
    return sum(values) / len(values) if values else alone
