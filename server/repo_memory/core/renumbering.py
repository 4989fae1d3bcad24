"""The ids a records file cites, and the records they became here.

A records file cites its own records: an exported record by its id, an entry by SESSION#N, the Nth entry of that
session in the file. Imported, a record takes the next id of the log this clone keeps for it (entries of `ops` become
`ops.<clone>#4` when that log holds three records), so each ref and cover citing an earlier record of the file is
rewritten to the id its record gets (known before it is written: core/importing.py). Any other id of an entry must
name a record here, as remember and checkpoint require; an exported record's is kept as it is when it names none (it
names a record of the clone that exported it, one outside the exported window or of another session), and counted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from repo_memory.errors import InvalidArgumentError, NotFoundError
from repo_memory.formats import refs as grammar
from repo_memory.formats.experience import Line
from repo_memory.formats.harness_logs import Item


class Renumbering:
    """Where the records of one file went: each one's id in the file -> its id here. `lines` reads a session's log
    (Store.lines), to tell whether an id the file does not hold names a record here."""

    def __init__(self, lines: Callable[[str], list[Line]] | None):
        self._lines = lines
        self._seqs: dict[str, set[int]] = {}  # per session read: the seqs of its records here
        self._ids: dict[str, str] = {}
        self._sessions: set[str] = set()  # sessions as the file names them, of records read so far
        self.unresolved = 0  # refs and covers of exported records kept as they were, naming no record here

    def became(self, origin: str, here: str) -> None:
        """The record the file names `origin` is `here` (a record here already, or the id it takes when written)."""
        if origin:
            self._ids[origin] = here
            self._sessions.add(origin.rpartition("#")[0])

    def moved(self, shift: Shift) -> None:
        """The records `shift` moves take their new ids."""
        self._ids = {origin: shift.id(here) for origin, here in self._ids.items()}

    def cite(self, item: Item) -> Item | str:
        """`item` with each ref and cover naming the records it cites here, or what it cites that names no record."""
        if not item.refs and not item.covers:
            return item
        cited: dict[str, list[str]] = {"ref": [], "cover": []}
        for what, texts in (("ref", item.refs), ("cover", item.covers or ())):
            for text in texts:
                here, problem = self._rewrite(text, what, item.exported)
                if problem:
                    return problem
                cited[what] += here
        covers = tuple(cited["cover"]) if item.covers is not None else None
        return dataclasses.replace(item, refs=tuple(cited["ref"]), covers=covers)

    def _rewrite(self, text: str, what: str, exported: bool) -> tuple[list[str], str]:
        """The ids here that `text` cites, or why it cites none: a ref of another form (code, a skill, a URL) stays as
        it is; a cover must be an id or a range; ids naming nothing here stay as they are in an `exported` record."""
        before = self.unresolved
        here, problem = self._cited(text, what, exported)
        self.unresolved = min(self.unresolved, before + 1)  # one per ref or cover, however many of its runs name nothing
        return here, problem

    def _cited(self, text: str, what: str, exported: bool) -> tuple[list[str], str]:
        try:
            ref = grammar.parse(text) if what == "ref" else grammar.record(text)
        except InvalidArgumentError as exc:
            return ([text], "") if what == "ref" else ([], f"cover {text}: {exc}")
        if ref.kind != "record":
            return [text], ""
        if ref.fork or ref.session not in self._sessions:  # no record of the file: one here, or nothing
            return self._here(text, str(ref), what, exported)
        here: list[str] = []
        absent: list[int] = []  # seqs no record of the file had so far: records here, looked up a run at a time
        for n in [*range(ref.start, ref.end + 1), 0]:  # 0: the end, which looks up the last run
            found = self._ids.get(f"{ref.session}#{n}") if n else None
            if absent and (found is not None or not n):
                run = f"{ref.session}#{absent[0]}" + (f"-{absent[-1]}" if len(absent) > 1 else "")
                kept, problem = self._here(text, run, what, exported)
                if problem:
                    return [], problem
                here += kept
                absent = []
            if found is not None:
                here.append(found)
            elif n:
                absent.append(n)
        return _ranges(here), ""

    def _here(self, text: str, ref: str, what: str, exported: bool) -> tuple[list[str], str]:
        problem = self._missing(grammar.record(ref))
        if problem and exported:
            self.unresolved += 1
        elif problem:
            return [], f"{what} {text} cites a record neither earlier in this file nor in memory: {problem}"
        return [ref], ""

    def _missing(self, ref: grammar.Ref) -> str:
        """Why `ref` names no record here ('' when it names one; without `lines`, every id is taken to name one)."""
        if self._lines is None:
            return ""
        if ref.session not in self._seqs:
            try:
                lines = self._lines(ref.session)
            except NotFoundError:
                lines = []
            records = (line.record for line in lines if line.record)
            self._seqs[ref.session] = {r["seq"] for r in records if r.get("session") == ref.session}
        seqs = self._seqs[ref.session]
        absent = next((n for n in range(ref.start, ref.end + 1) if n not in seqs), 0)
        if not absent:
            return ""
        if not seqs:
            return f"{ref.session}#{absent} does not exist. Session '{ref.session}' has no records here."
        nearest = min(seqs, key=lambda n: abs(n - absent))
        return f"{ref.session}#{absent} does not exist. The nearest existing record is {ref.session}#{nearest}."


def _ranges(ids: list[str]) -> list[str]:
    """Ids as few refs as they make: consecutive records of one session as one range (`s#1-3`)."""
    runs: list[tuple[str, int, int]] = []
    for found in ids:
        session, _, seq = found.rpartition("#")
        if not seq.isdigit():  # a fork's id (s#3~hash8): itself
            runs.append((found, 0, 0))
        elif runs and runs[-1][0] == session and runs[-1][2] == int(seq) - 1:
            runs[-1] = (session, runs[-1][1], int(seq))
        else:
            runs.append((session, int(seq), int(seq)))
    return [s if a == 0 else f"{s}#{a}" + (f"-{b}" if b > a else "") for s, a, b in runs]


@dataclasses.dataclass(frozen=True)
class Shift:
    """Ids an import gave records it has not written yet, `session#start` to `session#end - 1`, each moved `by` seqs:
    another writer appended to the session meanwhile (core/importing.py)."""

    session: str
    start: int
    end: int
    by: int

    def id(self, here: str) -> str:
        """One record's id as it reads after the shift."""
        session, _, seq = here.rpartition("#")
        moves = session == self.session and seq.isdigit() and self.start <= int(seq) < self.end
        return f"{session}#{int(seq) + self.by}" if moves else here

    def cite(self, text: str) -> list[str]:
        """A ref or cover as it reads after the shift: the part of a range naming records that moved moves with them."""
        if not text.startswith(self.session + "#"):
            return [text]
        try:
            ref = grammar.record(text)
        except InvalidArgumentError:
            return [text]
        if ref.fork or ref.session != self.session or ref.end < self.start or ref.start >= self.end:
            return [text]
        parts = ((ref.start, self.start - 1, 0), (max(ref.start, self.start), min(ref.end, self.end - 1), self.by),
                 (self.end, ref.end, 0))
        return _ranges([f"{self.session}#{n + by}" for first, last, by in parts for n in range(first, last + 1)])

    def texts(self, texts: Iterable[str]) -> list[str]:
        return [moved for text in texts for moved in self.cite(text)]

    def item(self, item: Item) -> Item:
        """`item` citing the records where they went."""
        if not item.refs and not item.covers:
            return item
        covers = tuple(self.texts(item.covers)) if item.covers is not None else None
        return dataclasses.replace(item, refs=tuple(self.texts(item.refs)), covers=covers)
