"""Recall: one search over skills, loops and experience, with every hit framed as recorded data.

Documents (skills and loops) and records are each ranked by their own BM25; the lists are merged on scores
divided by each list's best, so neither drowns the other, then weighed by how much of the query each list's best
hit holds, so a weak match in one list does not tie with a whole one in the other; when both hold as much, the one more
about it comes first. Each hit says who recorded it, whether it is committed, and whether the code it cites changed since.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from repo_memory.code.staleness import Staleness
from repo_memory.core import utility
from repo_memory.core.ages import SkillAges
from repo_memory.core.provenance import OUTSIDE, UNSEALED, Provenance, unsealed
from repo_memory.core.reading import DATA_NOTE, PAGE_CHARS
from repo_memory.core.semantic import Semantic
from repo_memory.errors import InvalidArgumentError, UnsafePathError
from repo_memory.formats import experience, loops, skills, when
from repo_memory.git.committed import Committed, describe, describe_loop, describe_skill
from repo_memory.git.repo import Git
from repo_memory.guards import disk
from repo_memory.index import cited, folding, fts, query
from repo_memory.index.activity import Activity
from repo_memory.index.anchors import AnchorIndex
from repo_memory.index.db import TOKENIZE, Database
from repo_memory.index.docs import DocIndex
from repo_memory.index.hits import OMIT, Hit
from repo_memory.index.records import RecordIndex

DEFAULT_STATUSES = ("active", "draft")
DOC_KINDS = ("skill", "loop")


COVER_CHARS = 4000  # characters of a best hit read for the share of the query it holds: 0.6 ms (20 kB: 2.6 ms)
COVER_MIN = 600  # characters of a best skill read for it, at the least (its name, description and first steps)
SKILL_COVER_CHARS = 20_000  # characters of a best skill searched for the whole query as a passage
QUERY_CHARS = 2000  # characters of a query that are searched for (and, of those, semantic.TEXT_CHARS embedded): bounded work
SYMBOL_FORMS = ("A symbol is path::Class.method, Class.method or a method's name; a file path (src/app.py) returns every "
                "memory anchored in that file.")


@dataclass(frozen=True)
class RecallResult:
    """Hits for a query, the cursor of the next page, and names it may have meant when nothing matched."""

    query: str
    hits: list[Hit]
    suggestions: Annotated[list[str], OMIT] = field(default_factory=list)
    next_cursor: Annotated[str | None, OMIT] = None
    ranking: str = "full-text"  # "hybrid" when similarity of meaning was fused in; else why not
    note: str = DATA_NOTE
    as_of: Annotated[str, OMIT] = ""  # the commit and time memory was searched as of


def searched(text: str) -> str:
    """What of a query is searched for: all of it, or past QUERY_CHARS its opening and its end (a pasted traceback's
    error line, what tells it apart from others, is its last line)."""
    return text if len(text) <= QUERY_CHARS else f"{text[: QUERY_CHARS // 2]}\n…\n{text[-(QUERY_CHARS - QUERY_CHARS // 2 - 3):]}"


def _may_hold(text: str, terms: Sequence[str]) -> bool:
    """Whether `text` may hold every word of `terms` as the index stems them: each word's opening is in it (stemming
    changes a word's end, never its first letters), the text folded as the words are (index/folding.py)."""
    lowered = folding.fold(text).lower()
    return all(w[: max(2, min(len(w) - 1, 4))] in lowered for w in query.words(" ".join(terms)))


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    if not cursor.startswith("offset:") or not cursor[7:].isdigit() or len(cursor) > 20:
        raise InvalidArgumentError(f"Cursor {cursor[:40]!r} is not one this server gave out; call recall again without a cursor.")
    return int(cursor[7:])


def _normalised(hits: list[Hit], scale: float = 1.0) -> list[tuple[float, Hit]]:
    top = max((h.score for h in hits), default=0.0) or 1.0
    return [(h.score / top * scale, h) for h in hits]


def _about(record: dict[str, Any] | None, ts: str) -> str:
    """The time `record` is about (its data's `when`), when it is not `ts`: a decision of February written down today
    reads as older than today's."""
    data = record.get("data") if record else None
    about = when.stamp(data["when"]) if isinstance(data, dict) and isinstance(data.get("when"), str) else ""
    return about if about != ts else ""


def _scored(hit: Hit, score: float) -> Hit:
    """`hit` with the score it was ranked by (its list's scores divided by the list's best, so 1.0 is a best match):
    raw BM25 and fused scores are on scales of their own and would print out of order, or as 0.000. A hit matching only
    words most memories hold (BM25 gives them almost no weight) keeps two significant digits, not 0.0: listed, it matched."""
    return dataclasses.replace(hit, score=round(score, 4) if score >= 1e-4 or score <= 0 else float(f"{score:.2g}"))


def _hybrid(unembedded: int, worded: int = 1, filtered: bool = False, found: bool = True) -> str:
    if not worded:  # e5-small's similarity does not tell a nonsense query from a paraphrase: say so, do not cut
        where = "the memories the filters leave" if filtered else "any memory searched"
        if not found:
            return f"hybrid: no word of the query is in {where}, and none of them is near it in meaning"
        return (f"hybrid, by meaning alone: no word of the query is in {where}, so these hits are only the nearest in "
                "meaning and may be unrelated")
    if not unembedded:
        return "hybrid (full-text + meaning)"
    return (f"hybrid (full-text + meaning); {unembedded} candidate(s) had no vector yet (embedding runs in the background) "
            "and were ranked by their words alone")


def split_kinds(kinds: Sequence[str] | None) -> tuple[set[str], list[str] | None]:
    """(document kinds, record kinds or None for all) asked for; InvalidArgumentError names the kinds that exist."""
    wanted = set(kinds or ())
    unknown = {k for k in wanted - {*DOC_KINDS, *experience.KINDS} if not k.startswith("loop.")}
    if unknown:
        named = " and ".join(f"'{k[:40]}'" for k in sorted(unknown))
        raise InvalidArgumentError(f"No kind {named} in memory. The kinds are skill, loop, and the experience kinds "
                                   f"{', '.join(experience.KINDS)} and loop.* (a loop run's records).")
    return wanted & set(DOC_KINDS), sorted(wanted - set(DOC_KINDS)) or None


class Recall:
    """Searches one repository's memory."""

    def __init__(self, root: Path, sources: tuple[str, ...], db: Database, records: RecordIndex, git: Git, committed: Committed,
                 staleness: Staleness, evidence: utility.Evidence, half_life_days: float, default_limit: int,
                 similar: Callable[[str], list[str]], semantic: Semantic | None = None, provenance: Provenance | None = None):
        self.root, self.sources, self._git, self._semantic = root, sources, git, semantic
        self._provenance = provenance  # judges whether each experience hit was written by repo-memory
        self._db, self._docs, self._records, self._activity = db, DocIndex(db), records, Activity(db)
        self._anchors = AnchorIndex(db)  # (memory, anchor) of every anchor, for recall by a file
        self._committed, self._staleness, self._evidence = committed, staleness, evidence
        self._half_life, self._default_limit, self._similar = half_life_days, default_limit, similar
        self.ages = SkillAges(committed, sources)  # when each skill last changed, for its decay (core/ages.py)
        # Skills and loops are ranked in this thread while the records are ranked in the caller's, each on its own
        # connection: SQLite ranks outside Python's lock, so a recall uses both cores (docs/benchmarks.md).
        self._beside = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recall-docs")

    def recall(self, text: str, limit: int | None = None, include: Sequence[str] = DEFAULT_STATUSES, kinds: Sequence[str] | None = None,
               session: str | None = None, since: str | None = None, until: str | None = None, cursor: str | None = None,
               symbol: str | None = None) -> RecallResult:
        """Hits for `text` within the filters. Filters on session or time leave documents out unless `kinds` asks for them.
        With `symbol`, the answer is every memory anchored to that code symbol instead."""
        limit = max(1, min(limit or self._default_limit, 50))
        offset = _offset(cursor)
        bare = query.without_frames(text) or text
        whole, cut, unframed = len(text), len(bare) > QUERY_CHARS, len(bare) < len(text)
        text = searched(bare)
        self._staleness.check()  # cheap when no cited code file changed: a stat per file
        if symbol:
            return self._anchored(symbol, limit, offset)
        doc_kinds, record_kinds = split_kinds(kinds)
        filtered = bool(session or since or until)
        if not kinds and not filtered:
            doc_kinds = set(DOC_KINDS)
        want_records = bool(record_kinds) or not kinds
        parsed, depth = query.parse(text, datetime.now(UTC)), offset + limit + 1
        since, until = when.moment(since, "since"), when.moment(until, "until", end=True)
        if since and until and until <= since:
            raise InvalidArgumentError(f"until ({until}) is not after since ({since}): no record can match. Swap them, or "
                                       "leave one out.")
        sem = self._semantic.query(text, session) if self._semantic is not None else None  # None: lexical only (off, or no vectors yet)
        # Records first: their full-text pass, the longer one, runs while the query is being embedded.
        docs = self._beside.submit(self._docs.search, parsed, depth, include, sorted(doc_kinds), self._weigh(), sem) if doc_kinds else None
        record_hits = self._records.search(parsed, depth, 0, record_kinds, session, since, until, sem) if want_records else []
        doc_hits = docs.result() if docs is not None else []
        doc_scale, record_scale, records_first = self._scales(parsed, doc_hits, record_hits)
        merged = sorted(_normalised(doc_hits, doc_scale) + _normalised(record_hits, record_scale),
                        key=lambda p: (-p[0], (p[1].kind in DOC_KINDS) == records_first, p[1].id))
        page: list[Hit] = []
        window = merged[offset : offset + 3 * limit]
        budget, taken, gone = PAGE_CHARS, 0, self._gone([hit for _, hit in window])
        for score, hit in window:
            if len(page) == limit:
                break
            if hit.id not in gone:
                budget -= 250 + len(hit.id) + len(hit.title) + len(hit.snippet) + sum(map(len, hit.covers))
                if page and budget < 0:
                    break  # the rest comes with the cursor, so no result outgrows what an agent can read at once
                page.append(_scored(hit, score))
            taken += 1
        more = len(merged) > offset + taken
        narrowed = filtered or bool(kinds)
        suggestions = [] if page or offset else [*(self._similar(text) if doc_kinds else []), *self._longer(parsed, narrowed)]
        ranking = _hybrid(sem.unembedded, sem.worded, narrowed, bool(page)) if sem is not None else f"full-text only: {self._why_lexical()}"
        said = ["The stack frames pasted in the query were not searched for, its other lines were."] if unframed else []
        said += [f"Only the first and the last {QUERY_CHARS // 2} characters of the query were used (it had {whole})."] if cut else []
        if session and not record_hits and self._activity.nearest(session, 1) is None:
            said.append(f"No session '{session[:80]}' has records: the filter left nothing to search.")
        if (since or until) and doc_kinds:
            said.append("since and until filter records; skills and loops have no time and are not filtered by it.")
        if narrowed and not page and not offset:
            given = ", ".join(f"{k}={v}" for k, v in (("kinds", ",".join(kinds or ())), ("session", session), ("since", since),
                                                     ("until", until)) if v)
            said.append(f"Nothing matched within the filters ({given}); recall again without them to search all of memory.")
        note = " ".join([*said, DATA_NOTE])
        return RecallResult(query=text, hits=self.framed(page), suggestions=suggestions, ranking=ranking,
                            next_cursor=f"offset:{offset + taken}" if more else None, note=note)

    def _longer(self, parsed: query.Query, narrowed: bool) -> list[str]:
        """Longer words memory holds that begin with a word of the query ("psycopg": psycopg2), unless it was filtered."""
        if narrowed:
            return []
        with self._db.lock:
            return fts.longer(self._db.conn, [t for t in parsed.terms if " " not in t])

    def _gone(self, hits: list[Hit]) -> set[str]:
        """Ids of `hits` whose file is gone from disk since the index saw it: a branch without memory just checked out,
        say, before the watcher's re-index (a stat per file). A log that is only shorter is not taken for gone: right
        after `git pull --rebase` a session's lines may sit in another file until the re-index, and `read` re-checks."""
        where = self._activity.positions([h.id for h in hits if h.kind not in DOC_KINDS])
        sizes: dict[str, int] = {}
        docs = {h.id: h.provenance.get("path", "") for h in hits if h.kind in DOC_KINDS}
        for rel in {*(file for file, _, _ in where.values()), *docs.values()}:
            try:
                sizes[rel] = os.stat(self.root / rel).st_size if rel else 0
            except OSError:
                sizes[rel] = -1
        return ({hid for hid, rel in docs.items() if sizes[rel] < 0}
                | {rid for rid, (file, _, _) in where.items() if file and sizes[file] < 0})

    def _scales(self, parsed: query.Query, docs: list[Hit], records: list[Hit]) -> tuple[float, float, bool]:
        """What the skills' and the records' scores are multiplied by after each list's best is made 1: 0.5 plus half
        the share of the query's words its best hit holds. Each list's best scored 1, so a skill holding two common
        words of a question tied with the record holding all of them, and won the tie: an agent asking for what it had
        just remembered, in its own words, got a skill first (tests/shells/test_remember.py).

        Third, whether the record goes first when the two bests tie (both hold as much of the query): when more of its
        words are the query's than of the skill's read text, and of the skill's name and description (what it says it
        is about), and its name is not all words of the question (skill:deploy-staging is what "how to deploy to staging"
        asks for, whatever a three-word record holds). The tie went to the skill: a runbook with one step naming
        `yield_per` came before the record of that change (an engineering memory's 73 questions: rank 1 for 58 -> 65
        full-text, 58 -> 64 hybrid; docs/benchmarks.md)."""
        if not docs or not records:
            return 1.0, 1.0, False
        kind, _, name = docs[0].id.partition(":")
        with self._db.lock:
            texts = fts.best_texts(self._db.conn, (kind, name), records[0].id, COVER_CHARS, SKILL_COVER_CHARS)
            # Over as many characters of the skill as the record has (at least COVER_MIN): a 4,000-character page held
            # most words of any question about its area, and outranked the one short record that answered it. But a
            # skill holding the whole query in a passage (every word within twice the query's length) holds all of it,
            # wherever: read in its opening only, one with the query verbatim in its last step held none of it.
            opening = len(query.words(texts[0][: max(len(texts[1]), COVER_MIN)]))
            if not _may_hold(texts[0], parsed.terms):  # tokenizing 20 kB costs 2-3 ms: only a skill that may hold it all
                texts[0] = texts[0][: max(len(texts[1]), COVER_MIN)]
            texts[1] += " " + " ".join(query.parts(texts[1]))
            passage = max(2 * len(parsed.tokens), 4)
            (doc, doc_density), (record, density), (_, about) = fts.coverage(self._db.conn, TOKENIZE, parsed.terms, texts, (opening,), passage)
        named = bool(name_words := set(query.words(name))) and name_words <= set(parsed.tokens)  # a skill named for the question
        return 0.5 + 0.5 * doc, 0.5 + 0.5 * record, doc == record and density > max(doc_density, about) and not named

    def close(self) -> None:
        self._beside.shutdown(wait=True)

    def _why_lexical(self) -> str:
        if self._semantic is None or not self._semantic.enabled:
            return "semantic = false"
        if self._semantic.problem:
            return self._semantic.problem
        return ("nothing is embedded yet (a running server embeds in the background, the records asked about first; nothing to "
                "do meanwhile)")

    def recall_at(self, text: str, as_of: str, limit: int = 8, kinds: Sequence[str] | None = None) -> RecallResult:
        """`recall` as memory stood at `as_of`: documents from that commit's tree, experience recorded up to that time."""
        commit, moment = self._git.resolve(as_of)
        text = searched(query.without_frames(text) or text)
        doc_kinds, record_kinds = split_kinds(kinds)
        if not kinds:
            doc_kinds = set(DOC_KINDS)
        hits: list[tuple[float, Hit]] = []
        parsed = query.parse(text)
        if doc_kinds:
            past = docs_at(self._git, self.root, self.sources, commit)
            hits += _normalised(past.search(parsed, limit, DEFAULT_STATUSES, sorted(doc_kinds)))
        if not kinds or record_kinds:
            hits += _normalised(self._records.search(parsed, limit, 0, record_kinds, None, None, moment))
        hits.sort(key=lambda p: (-p[0], p[1].kind not in DOC_KINDS, p[1].id))
        page = [_scored(h, score) for score, h in hits[:limit]]
        # Records are framed as a live recall frames them (who wrote them, whether HEAD holds them); skills and loops
        # are read from the commit itself, so they are committed, as its tree holds them.
        records = iter(self.framed([h for h in page if h.kind not in DOC_KINDS]))
        page = [next(records) if h.kind not in DOC_KINDS else dataclasses.replace(
                    h, committed=True, recorded=describe_loop(h.status, True) if h.kind == "loop" else
                    describe_skill(h.provenance.get("origin", ""), h.status, True)) for h in page]
        return RecallResult(query=text, hits=page, ranking="full-text (as_of searches by words)",
                            as_of=f"{commit[:12]} ({when.stamp(moment)})")

    def _weigh(self) -> Callable[[dict[str, Any]], float]:
        """Recall's multiplier for a skill row: what its uses earned, and how recently (core/utility.py has the formula)."""
        evidence, half_life, now = self._evidence.all(), self._half_life, time.time()
        if half_life <= 0:  # no decay: what a skill's uses earned alone
            return lambda row: utility.factor(evidence.get(row["name"]), 0, 0, now)
        head = self._committed.head()
        return lambda row: utility.factor(evidence.get(row["name"]), self.ages.changed_ns(row["path"], int(row["mtime_ns"] or 0), head), half_life, now)

    def framed(self, hits: list[Hit]) -> list[Hit]:
        """`hits` with whether each is committed, the line that frames it as recorded data, and why it is stale."""
        head = self._committed.head()
        where = self._activity.positions([h.id for h in hits if h.kind not in DOC_KINDS])
        stored = self._stored(list(where.values()))
        reasons: dict[str, list[str]] = {}
        for s in self._staleness.stale([h.id for h in hits]):
            reasons.setdefault(s.memory, []).append(s.reason)
        out = []
        for hit in hits:
            if hit.kind in DOC_KINDS:
                path = hit.provenance.get("path", "")
                try:
                    committed = self._committed.file(path, disk.read_safely(self.root / path), head)
                except (OSError, UnsafePathError):  # gone, or a link: in no case the committed file
                    committed = False
                recorded = (describe_loop(hit.status, committed) if hit.kind == "loop" else
                            describe_skill(hit.provenance.get("origin", ""), hit.status, committed))
            else:
                file, offset, length = where.get(hit.id, ("", 0, 0))
                committed = bool(file) and self._committed.record(file, offset + length, head)
                recorded = describe(hit.source.get("actor", ""), committed, hit.source.get("harness", ""), hit.source.get("tool", ""), hit.kind)
                if file and self._provenance is not None:  # committed or not: a commit of a hand edit holds the edit
                    record = stored[(file, offset)]
                    if not committed and (record is None or self._provenance.judge(record, file, offset + length, head)):
                        recorded = f"{OUTSIDE}; it claims: {recorded}"
                    if record is not None and unsealed(record):
                        recorded = f"{recorded}; {self._provenance.redacted(record) or UNSEALED}"
                    hit = dataclasses.replace(hit, when=_about(record, hit.ts))
            stale = "; ".join(reasons.get(hit.id, []))
            out.append(dataclasses.replace(hit, committed=committed, recorded=recorded, stale=bool(stale), stale_reason=stale))
        return out

    def _stored(self, where: list[tuple[str, int, int]]) -> dict[tuple[str, int], dict[str, Any] | None]:
        """The record stored at each (file, offset, length), as the file holds it now (each file opened once)."""
        if self._provenance is None:
            return {}
        files: dict[str, list[tuple[int, int]]] = {}
        for file, offset, length in where:
            if file:
                files.setdefault(file, []).append((offset, length))
        return {(file, span[0]): record for file, spans in files.items()
                for span, record in zip(spans, self._provenance.lines(file, spans))}

    def _anchored(self, symbol: str, limit: int, offset: int) -> RecallResult:
        """Every memory anchored to `symbol`, documents first: a symbol (`Class.method`, `path::Class.method`, a method's
        name) or a file, anywhere in it (`path`, `path::`); a leading `./` is the same path."""
        wanted, pairs = cited.plain(symbol), self._anchors.pairs()
        found = list(dict.fromkeys([*self._staleness.anchored_to(wanted), *((m, a) for m, a in pairs if cited.in_file(a, wanted))]))
        memories = list(dict.fromkeys(m for m, _ in found))
        hits: list[Hit] = []
        for memory in memories[offset : offset + limit]:
            cites = ", ".join(a for m, a in found if m == memory)
            kind, _, name = memory.partition(":")
            if kind in DOC_KINDS and "#" not in memory:
                row = self._docs.get(name, kind)
                if row is not None:
                    hits.append(Hit(id=memory, kind=kind, title=str(row["description"])[:200], snippet=f"cites {cites}", score=1.0,
                                    status=str(row["status"]), provenance={"origin": str(row["origin"] or "unknown"), "path": str(row["path"])},
                                    name=name))
            elif (r := self._activity.record(memory)) is not None:
                hits.append(Hit(id=memory, kind=r["kind"], snippet=f"cites {cites}: {str(r['text'] or '')[:200]}", score=1.0,
                                source={"actor": r["actor"], "harness": r["harness"], "tool": r["tool"]}, ts=when.stamp(r["ts"]), session=r["session"]))
        hits.sort(key=lambda h: (h.kind not in DOC_KINDS, h.id))
        more = len(memories) > offset + limit
        close = cited.near(wanted[:300], sorted({a for _, a in pairs})) if not memories else []
        said = f"No memory cites '{wanted[:200]}'. {SYMBOL_FORMS}" if not memories else ""
        said += f" Did you mean {' or '.join(close)}?" if close else ""
        return RecallResult(query=f"symbol:{symbol}", hits=self.framed(hits), suggestions=close, note=f"{said} {DATA_NOTE}".lstrip(),
                            next_cursor=f"offset:{offset + limit}" if more else None)


_PAST: dict[tuple[str, str], DocIndex] = {}


def docs_at(git: Git, root: Path, sources: tuple[str, ...], commit: str) -> DocIndex:
    """An in-memory index of the skills and loops as they were at `commit` (read from git objects; cached per commit)."""
    key = (str(root), commit)
    if key not in _PAST:
        with tempfile.TemporaryDirectory(prefix="repo-memory-as-of-") as tmp:
            base = Path(tmp)
            for rel in git.modes_at(commit, (*sources, loops.LOOPS_DIR)):
                if rel.endswith(f"/{skills.SKILL_FILE}") and rel.count("/") >= 3 or rel.startswith(f"{loops.LOOPS_DIR}/") and rel.endswith(".md"):
                    target = base / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(git.blob(commit, rel))
            index = DocIndex(Database(Path(":memory:")))
            index.sync([*skills.scan(base, sources), *loops.scan(base)])
        if len(_PAST) >= 4:
            _PAST.pop(next(iter(_PAST)))
        _PAST[key] = index
    return _PAST[key]
