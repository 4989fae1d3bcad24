"""Importing experience in bulk: JSONL records, and the past Claude Code and Codex sessions of this repository.

Imported records take the write path every captured record takes (`Store.log(..., captured=True)`): each secret is
redacted rather than refused, the index flags injection markers, and the source says `tool: import`. Records of a
session are appended in large batches, one write and one index update per batch, and recorded as pending; the caller
commits once at the end (`Store.flush("import")`). Each record keeps the key of what it came from under
`data.source_id` (a transcript message's uuid, a rollout line's hash, a record's id and hash), so importing the same
file again adds nothing, and a transcript that grew since adds only its new part. A record another clone wrote (its
source names that clone, or its session is that clone's `NAME.<clone>`) goes to this clone's own `NAME.<clone>`: under
the other clone's name it took ids that clone's log holds, and a pull union-merged the two into one log of two chains.
A record's id here is known when it is read (the next id of its session's log), so what cites it is rewritten to that
id without writing it first; if another writer (a running server) appended to the log meanwhile, the append renumbers
the records not written yet under the log's lock, and what cites them, and goes on (_moved).
The formats are read by formats/harness_logs.py.
"""

from __future__ import annotations

import dataclasses
import functools
import graphlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from repo_memory.core.intake import CountedLines, Imported, Report, Source, default_session
from repo_memory.core.intake import sources as sources  # what to import, as the CLI finds it
from repo_memory.core.reading import Item as ReadItem
from repo_memory.core.journal import Moved
from repo_memory.core.renumbering import Renumbering, Shift
from repo_memory.code.anchors import canonical
from repo_memory.errors import ConflictError, InvalidRecordError, NotFoundError
from repo_memory.formats import harness_logs, nesting
from repo_memory.formats.experience import HARD_CAP, Entry, Line
from repo_memory.formats.harness_logs import CLAUDE, RECORDS, Item

BATCH = 5000  # records per append: one write, one index update and one pending line each
BUFFERED = 200_000  # records of a records file held at most before they are written
KEPT = re.compile(r"(.+)\.([0-9a-f]{8})")  # NAME.<clone>: a clone's log under a name (Journal.owned)
Progress = Callable[[int, int], None]  # (bytes read, bytes in all files)


class Memory(Protocol):
    """What an import needs of the Store (core/store.py)."""

    def log(self, session: str, entries: Sequence[Entry], captured: bool = False, first: str | None = None,
            moved: Moved | None = None) -> list[dict[str, Any]]: ...

    def following(self, session: str) -> str: ...

    def lines(self, session: str) -> list[Line]: ...

    def sessions(self) -> list[tuple[str, int, str, str]]: ...

    def refresh(self) -> Any: ...

    def read(self, ref: str, cursor: str | None = None, as_of: str | None = None) -> ReadItem: ...

    def source(self, actor: str, tool: str) -> dict[str, str]: ...

    def batched(self) -> AbstractContextManager[None]: ...

    def pin(self, cited: Sequence[str]) -> dict[str, str]: ...


def _cited_first(names: list[str], held: dict[str, list[tuple[Item, bool]]]) -> list[str]:
    """`names` ordered so that the records of a session are written before those of another citing them, when no two
    cite each other: a record written already that cites one not written yet could not follow it to other ids (_moved)."""
    cited = {name: {t.rpartition("#")[0] for item, _ in held[name] for t in (*item.refs, *(item.covers or ()))} for name in names}
    try:
        return list(graphlib.TopologicalSorter({name: cited[name] & set(names) - {name} for name in names}).static_order())
    except graphlib.CycleError:
        return names


def _redacted(entry: Entry, record: dict[str, Any]) -> bool:
    """Whether writing `entry` redacted a secret (the write path lists the rules under data.redacted; a record exported
    from another clone may list those that clone redacted)."""
    data = record.get("data")
    before = (entry.data or {}).get("redacted")
    return isinstance(data, dict) and bool(data.get("redacted")) and data.get("redacted") != before


def pinned(item: Item, pin: Callable[[Sequence[str]], dict[str, str]] | None) -> Item | str:
    """`item` with the code it cites (path::Symbol) written and hashed as `log add -r` does it (an exported record keeps
    the hashes pinned where it was written), or what it cites that names no code here (`pin`: Memory.pin)."""
    if pin is None or not any("::" in ref for ref in item.refs):
        return item
    refs = tuple(dict.fromkeys(canonical(r) if "::" in r else r for r in item.refs))
    anchors = {ref: item.anchors[ref] for ref in refs if ref in item.anchors}
    for ref in (r for r in refs if "::" in r and r not in anchors):
        try:
            anchors.update(pin([ref]))
        except InvalidRecordError as exc:
            return f"ref {exc.problems[0].message}"
    return dataclasses.replace(item, refs=refs, anchors=anchors)


def check(found: Sequence[Source], memory: Memory | None = None, session: str | None = None) -> list[str]:
    """Every line of the records files that cannot be imported, as `file:line: problem` (empty: all can): `session`
    takes entries that name none (as Importer's), a ref or cover must cite an earlier record of its file or one
    `memory` holds, and code a ref cites must be in `memory`'s checkout (without `memory`, both are taken to be)."""
    problems = []
    for source in (s for s in found if s.format == RECORDS):
        numbering = Renumbering(memory.lines if memory else None)
        for n, item in harness_logs.records(source.lines(), session or default_session(source)):
            cited = item if isinstance(item, str) else numbering.cite(item)
            cited = cited if isinstance(cited, str) else pinned(cited, memory.pin if memory else None)
            if isinstance(cited, str):
                problems.append(f"{source.label}:{n}: {cited}")
            else:
                numbering.became(cited.origin, cited.origin)
    return problems


class Importer:
    """Imports files into one repository's experience, skipping what it already holds."""

    def __init__(self, memory: Memory, session: str | None = None, progress: Progress | None = None, write: bool = True):
        self._memory, self._session, self._write = memory, session, write
        self._progress = progress or (lambda done, total: None)
        self._keys: dict[str, dict[str, str]] = {}  # per name (_home): each key its logs hold or will -> the record's id
        self._numbering = Renumbering(memory.lines)
        self._families: dict[str, str] = {}  # a session written to -> the name whose logs hold what it has (_home)
        self._targets: dict[str, str] = {}  # a session named -> the log this clone appends it to (Journal.owned)
        self._next: dict[str, str] = {}  # a log written to -> the id its next record takes
        self._held: dict[str, list[tuple[Item, bool]]] = {}  # a log -> records of the file read, not written yet
        self._cited: dict[str, int] = {}  # a log written to -> the highest seq of it that a written record of another cites
        self._known: set[str] | None = None
        self._source = memory.source("human", "import")  # this clone and harness, as every record of this process names them
        self._clone = self._source.get("clone", "")

    def run(self, found: Sequence[Source], checked: bool = False) -> Report:
        """Import every source, in order; records files are read as a stream, a transcript at a time. `checked`: `check`
        found no problem in them (lines are then not checked again)."""
        report, done, total = Report(), 0, sum(s.size for s in found)
        self._progress(0, total)
        for source in found:
            if source.format == RECORDS:
                for read in self._records(source, report, checked):
                    self._progress(done + read, total)
            else:
                self._transcript(source, report)
            done += source.size
            self._progress(done, total)
        return report

    def _transcript(self, source: Source, report: Report) -> None:
        """A transcript becomes a session of its own, or joins the log its session already has here: a session
        repo-memory recorded live (its hooks and tools name it by the harness's id) gets what it lacks, the
        conversation, and no second copy of the tool calls its hooks recorded."""
        parse = harness_logs.claude_code if source.format == CLAUDE else harness_logs.codex
        lines = CountedLines(source.lines())
        transcript = parse(lines, source.path.stem if source.path else "")
        report.undecodable += [(source.label, number, count) for number, count in lines.undecodable]
        session, items = transcript.session, transcript.items
        if self._is_known(transcript.harness_id):
            session = transcript.harness_id
            recorded = self._calls_of(session)
            items = [i for i in items if not (i.data.get("call_id") and i.data["call_id"] in recorded)]
        target = self._target(session)
        planned = [(item, self._plan(target, session, item)) for item in items]
        report.sessions.append(self._append(target, session, planned, source, transcript.harness))

    def _is_known(self, session: str) -> bool:
        if not session or harness_logs.session_problem(session):
            return False
        self._keys_of(session)  # indexes the sessions on disk once
        return session in (self._known or set())

    def _calls_of(self, session: str) -> set[str]:
        """The tool-call ids the live records of `session` name (hooks record each call with its id)."""
        calls = set()
        for line in self._memory.lines(session):
            data = line.record.get("data") if line.record else None
            if isinstance(data, dict) and isinstance(data.get("call_id"), str):
                calls.add(data["call_id"])
        return calls

    def _records(self, source: Source, report: Report, checked: bool) -> Iterator[int]:
        """Import a records file as a stream, yielding how many bytes were read after each write.

        Items are held per session until a session has a batch (records of many sessions may be interleaved in the
        file, and a write per few records would cost a write, an index update and a pending line each), or until
        BUFFERED items are held in all. A held item's id here is known already (_plan): what cites it does not wait."""
        self._held = held = dict[str, list[tuple[Item, bool]]]()
        count = 0
        results: dict[str, Imported] = {}
        lines = CountedLines(source.lines())
        self._numbering = numbering = Renumbering(self._memory.lines)
        for number, read in harness_logs.records(lines, self._session or default_session(source), checked):
            unresolved = numbering.unresolved
            item = read if isinstance(read, str) else numbering.cite(read)
            item = item if isinstance(item, str) else pinned(item, self._memory.pin)
            if isinstance(item, str):
                report.skipped.append(f"{source.label}:{number}: {item}")
                continue
            named, family = self._home(item)
            session = self._target(named)
            self._families[session] = family
            held.setdefault(session, []).append((item, new := self._plan(session, family, item)))
            report.unresolved += (numbering.unresolved - unresolved) if new else 0
            count += 1
            if len(held[session]) >= BATCH or count >= BUFFERED:
                names = [session] if len(held[session]) >= BATCH else list(held)
                count -= sum(len(held[name]) for name in names)
                yield from self._append_all(names, held, source, results, lines)
        yield from self._append_all(list(held), held, source, results, lines)
        report.sessions += results.values()
        report.undecodable += [(source.label, number, count) for number, count in lines.undecodable]
        yield lines.bytes

    def _append_all(self, names: list[str], held: dict[str, list[tuple[Item, bool]]], source: Source, results: dict[str, Imported],
                    lines: CountedLines) -> Iterator[int]:
        """Append what is held of each session of `names`, the index updated in one transaction per BATCH records
        (one per session cost a commit of the index each: 6% of an import of short sessions)."""
        groups: list[list[str]] = []
        size = 0
        for name in _cited_first(names, held):
            if not groups or size + len(held[name]) > BATCH:
                groups.append([])
                size = 0
            groups[-1].append(name)
            size += len(held[name])
        for group in groups:
            with self._memory.batched():
                for name in group:
                    self._merge(results, self._append(name, self._families[name], held.pop(name), source, None))
            yield lines.bytes

    @staticmethod
    def _merge(results: dict[str, Imported], done: Imported) -> None:
        if done.session not in results:
            results[done.session] = done
            return
        merged = results[done.session]
        merged.added, merged.present = merged.added + done.added, merged.present + done.present
        merged.redacted += done.redacted
        merged.first, merged.last = merged.first or done.first, done.last or merged.last

    def _home(self, item: Item) -> tuple[str, str]:
        """The session a record of a records file goes to, and the name whose logs (NAME and each NAME.<clone>) hold
        what is already here: a record another clone wrote, or of a log another clone keeps, goes to this clone's
        NAME.<clone>, so no two clones ever write one log (a session's ids are its writer's to give)."""
        session = item.session or ""
        kept = KEPT.fullmatch(session)
        name = kept.group(1) if kept else session
        theirs = kept.group(2) if kept and kept.group(2) != self._clone else item.writer
        if not self._clone or theirs in ("", self._clone):
            return session, name
        return f"{name[: 127 - len(self._clone)]}.{self._clone}", name

    def _target(self, session: str) -> str:
        """The log this clone appends `session`'s records to (read once: an import writes to it alone)."""
        if session not in self._targets:
            following = self._memory.following(session)
            self._targets[session] = target = following.rpartition("#")[0]
            self._next.setdefault(target, following)
        return self._targets[session]

    def _plan(self, session: str, family: str, item: Item) -> bool:
        """Whether `session` (a log _target names) lacks `item` (its `family`'s logs do not hold it, see _home); a new
        item takes the next id of the log now, so what cites it is rewritten before it is written."""
        keys = self._keys_of(family)
        new = item.key not in keys
        if new:
            keys[item.key] = taken = self._next[session]
            name, _, seq = taken.rpartition("#")
            self._next[session] = f"{name}#{int(seq) + 1}"
        self._numbering.became(item.origin, keys[item.key])
        return new

    def _append(self, session: str, family: str, planned: Sequence[tuple[Item, bool]], source: Source, harness: str | None
                ) -> Imported:
        """Append the items _plan found new, a batch per write, each batch taking the ids _plan gave it."""
        keys = self._keys_of(family)
        fresh = [item for item, new in planned if new]
        new = [self._entry(item, harness) for item in fresh]
        result = Imported(session, source.label, source.format, added=len(new), present=len(planned) - len(new))
        for start in range(0, len(new), BATCH) if self._write else ():
            first, after = keys[fresh[start].key], min(start + BATCH, len(new))
            try:
                written = self._memory.log(session, new[start:after], captured=True, first=first,
                                           moved=functools.partial(self._moved, session, first, new, after))
            except ConflictError as exc:
                raise ConflictError(f"{exc} The import stopped there; run it again: it adds only what is missing.") from exc
            self._note_cited(session, new[start:after])
            result.first, result.last = result.first or written[0]["id"], written[-1]["id"]
            result.redacted += sum(map(_redacted, new[start : start + BATCH], written))
        return result

    def _moved(self, session: str, first: str, new: list[Entry], after: int, taken: str) -> Callable[[str], list[str]]:
        """Another writer appended to `session` after its next ids were given out (the append calls this under the log's
        lock): the records not written yet take the ids from `taken` on, and what cites them follows (the records held,
        the entries of this append from `after` on, the ids kept per key and per record of the file); returns how a ref
        or cover of the records being written reads now. A record written already that cites one cannot follow."""
        start = int(first.rpartition("#")[2])
        shift = Shift(session, start, int(self._next[session].rpartition("#")[2]), int(taken.rpartition("#")[2]) - start)
        if self._cited.get(session, 0) >= start:
            raise ConflictError(f"{first} was to be the id of the next record, but another writer appended to {session} "
                                f"meanwhile, and a record imported already cites {session}#{self._cited[session]}"
                                ": nothing more was written.")
        self._next[session] = f"{session}#{shift.end + shift.by}"
        for keys in self._keys.values():
            keys.update({key: shift.id(here) for key, here in keys.items() if here.startswith(session + "#")})
        self._numbering.moved(shift)
        for held in self._held.values():
            held[:] = [(shift.item(item), fresh) for item, fresh in held]
        for n, entry in enumerate(new[after:], start=after):
            covers = shift.texts(entry.covers) if entry.covers is not None else None
            new[n] = dataclasses.replace(entry, refs=shift.texts(entry.refs), covers=covers)
        return shift.cite

    def _note_cited(self, session: str, written: list[Entry]) -> None:
        """Note the highest seq of each other log this import writes to that the `written` records cite (one given out
        to a record held, if another writer appends to that log, cannot move with it)."""
        for text in (text for entry in written for text in (*entry.refs, *(entry.covers or ()))):
            name, _, seqs = text.rpartition("#")
            last = seqs.rpartition("-")[2]
            if name != session and name in self._next and last.isdigit():
                self._cited[name] = max(self._cited.get(name, 0), int(last))

    def _entry(self, item: Item, harness: str | None) -> Entry:
        text = item.text
        if text is not None and len(text) * 4 > HARD_CAP and len(encoded := text.encode("utf-8")) > HARD_CAP - 1024:
            text = encoded[: HARD_CAP - 1024].decode("utf-8", errors="ignore") + f"\n… [cut at import: {len(encoded)} bytes in all]"
        source = {**self._source, "actor": item.actor, "harness": harness or item.harness or self._source.get("harness", "unknown")}
        return Entry(kind=item.kind, text=text, data={**item.data, "source_id": item.key}, refs=list(item.refs),
                     covers=list(item.covers) if item.covers is not None else None, source=source, ts=item.ts,
                     anchors=item.anchors or None)

    def _keys_of(self, session: str) -> dict[str, str]:
        """The keys of everything `session` holds (with the logs clones keep under its name, `<session>.<clone>`), each
        with the id of its record."""
        if session in self._keys:
            return self._keys[session]
        if self._known is None:  # every session on disk, indexed once: a new session is then known to hold nothing
            self._memory.refresh()
            self._known = {s[0] for s in self._memory.sessions()}
        keys: dict[str, str] = {}
        fork = re.compile(re.escape(session) + r"\.[0-9a-f]{8}")
        for name in (s for s in self._known if s == session or fork.fullmatch(s)):
            try:
                lines = self._memory.lines(name)
            except NotFoundError:
                continue
            for line in lines:
                keys.update(dict.fromkeys(self._keys_in(line.record), line.record["id"]) if line.record else {})
        self._keys[session] = keys
        return keys

    def _keys_in(self, record: dict[str, Any]) -> set[str]:
        found = {f"{record['id']}@{record['sha256'][:12]}"}  # a record exported from here and imported back is the same one
        data = record.get("data")
        if isinstance(data, dict) and isinstance(data.get("source_id"), str):
            found.add(data["source_id"])
        elif record.get("blob", {}).get("field") == "data":  # data too large to inline went to a blob, its key with it
            content = self._memory.read(record["id"]).records[0].content or "{}"
            inner = nesting.loads(content).get("data")
            if isinstance(inner, dict) and isinstance(inner.get("source_id"), str):
                found.add(inner["source_id"])
        return found
