"""Experience: appending records (remember, checkpoint, feedback), reading them back verified, checking every log.

Provenance (who, through which harness and tool) is set here, never taken from arguments. Content an agent wrote
is refused when it holds a secret; content a hook or a loop captured has each secret redacted instead.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from repo_memory.code.anchors import canonical
from repo_memory.config import client_harness
from repo_memory.core import audit
from repo_memory.core.journal import Journal, Moved
from repo_memory.core.provenance import Provenance
from repo_memory.core.redaction import redact_entries
from repo_memory.core.reading import DATA_NOTE, Item, RecordView, framed, paged, quarantined, record_cursor, verified_view
from repo_memory.core.session_files import logged, removal
from repo_memory.core.skillbook import Skillbook
from repo_memory.core.utility import FEEDBACK
from repo_memory.errors import InvalidArgumentError, InvalidRecordError, NotFoundError, Problem
from repo_memory.formats import experience
from repo_memory.formats import refs as grammar
from repo_memory.git.committer import Committer
from repo_memory.git.committed import Committed, describe
from repo_memory.guards import disk, paths, secretscan
from repo_memory.index.activity import Activity
from repo_memory.index.records import RecordIndex

ACTORS = ("human", "agent")


class Logbook:
    """The experience logs of one repository."""

    def __init__(self, root: Path, harness: str, journal: Journal, records: RecordIndex, activity: Activity, committer: Committer,
                 committed: Committed, skills: Skillbook, provenance: Provenance):
        self.root, self.harness, self.clone, self._provenance = root, harness, journal.clone, provenance
        self._journal, self._records, self._activity = journal, records, activity
        self._committer, self._committed, self._skills = committer, committed, skills

    def name_client(self, name: str, chosen: bool) -> None:
        """The MCP client's own name (clientInfo) names the harness of what this server writes and commits, unless
        REPO_MEMORY_HARNESS `chosen` one. It outranks the variables Claude Code and Codex set (config._harness): those
        may be inherited from a harness further up (a CODEX_HOME in a profile labelled Gemini CLI's records codex)."""
        harness = client_harness(name)
        if not chosen and harness not in ("unknown", self.harness):
            self.harness = harness
            self._committer.policy = dataclasses.replace(self._committer.policy, harness=harness)

    def source(self, actor: str, tool: str) -> dict[str, str]:
        """Provenance the server assigns to a record: who (human or agent), through which harness and tool."""
        if actor not in ACTORS:
            raise InvalidArgumentError(f"actor must be one of {ACTORS}")
        return {"actor": actor, "harness": self.harness, "tool": tool, **({"clone": self.clone} if self.clone else {})}

    def sync(self, budget: int | None = None) -> bool:
        """Index whatever was appended to any log since the last look; with `budget`, only when that is at most so many
        bytes (a fresh clone's first look at a year of logs is left to whoever may take the time). Whether it did."""
        files = list(self._journal.files())
        if budget is not None and self._records.behind(files) > budget:
            return False
        self._records.sync(files)
        return True

    def append(self, session: str, entries: Sequence[experience.Entry], captured: bool = False, first: str | None = None,
               moved: Moved | None = None) -> list[dict[str, Any]]:
        """Append records as one write and index them at once (`first`, `moved`: the id the first is to take, and what
        renumbers them when another writer took it, see Journal.append).

        Secrets: content an agent wrote is refused; `captured` content (tool output a hook or a loop recorded) has each
        secret replaced by `[REDACTED:<rule>]` and the record's data lists the rules under `redacted`.
        """
        session = self._journal.owned(grammar.check_session(session))
        entries = redact_entries(entries) if captured else list(entries)
        if self.clone:  # every record says which clone wrote it (see Journal.owned)
            entries = [e if e.source.get("clone") == self.clone else dataclasses.replace(e, source={**e.source, "clone": self.clone})
                       for e in entries]
        if not captured:
            for number, e in enumerate(entries, start=1):
                where = "the record" if len(entries) == 1 else f"record {number}"
                secretscan.refuse((f"{where}'s text", e.text), (f"{where}'s data", e.data), (f"{where}'s refs", e.refs))
        path, written = self._journal.append(session, entries, first, moved)
        self._records.note([path])
        span = f"{written[0]['id']}" + (f"-{written[-1]['seq']}" if len(written) > 1 else "")
        self._committer.record([path.relative_to(self.root).as_posix(), *self._journal.take_blobs()], f"memory(experience): {span}",
                               kind="experience", session=session, first=written[0]["seq"], last=written[-1]["seq"],
                               tip=written[-1]["sha256"])  # a log a stash took stays pending (git/written.py)
        return written

    def remember(self, session: str, text: str | None, kind: str = "note", refs: Sequence[str] = (), data: Any = None,
                 actor: str = "agent", tool: str = "remember", ts: str | None = None) -> list[dict[str, Any]]:
        """Append one record to `session`'s log; refs that cite code (path::Symbol) have their hashes pinned."""
        if kind == "summary":
            raise InvalidArgumentError("A summary cites the records it compresses: write it with checkpoint(summary, covers).")
        if kind not in experience.KINDS and not experience.server_kind(kind):
            raise InvalidArgumentError(f"kind '{kind[:40]}' is not one to remember: use note, action, observation, tool, decision or error.")
        if not (text or "").strip() and data is None:
            raise InvalidRecordError("record", [Problem("text is empty: say what happened (or pass data)", field="text")])
        if experience.server_kind(kind):
            raise InvalidArgumentError(
                f"Records of kind '{kind}' are written only by the server: a loop run records its own verdicts and the skills it "
                "used. To say whether a skill or record helped, misled or was outdated, use feedback(ref, outcome); for your "
                "own records use note, decision, action, observation, error or tool.")
        secretscan.refuse(("refs", list(refs)))  # before they are read as ids: said of refs, not of a session id or name
        refs = [canonical(r) if "::" in r else r for r in refs]  # code cited one way: `./a.py::f` is `a.py::f`
        self._cited(refs)
        cited = [r for r in refs if "::" in r]
        entry = experience.Entry(kind=kind, text=text, data=data, refs=list(refs), source=self.source(actor, tool), ts=ts,
                                 anchors=self._skills.pin(cited, "refs") if cited else None)
        return self.append(session, [entry])

    def _cited(self, refs: Sequence[str]) -> None:
        """Refuse refs naming a record or a skill that does not exist, as checkpoint and feedback do (a typo'd id was
        written as a citation of nothing); refs of other forms (code, a URL, a ticket) are kept as given."""
        problems = []
        for ref in refs:
            try:
                parsed = grammar.parse(ref)
            except InvalidArgumentError:
                continue
            if parsed.kind == "record" and (missing := self.missing(str(parsed))):
                problems.append(Problem(missing, field="refs"))
            elif parsed.kind == "skill" and not parsed.inner and not self._skills.exists(parsed.name):
                similar = self._skills.similar_names(parsed.name)
                problems.append(Problem(f"No skill '{parsed.name}'." + (f" Did you mean {similar[0]}?" if similar else ""), field="refs"))
        if problems:
            raise InvalidRecordError("record", problems)

    def checkpoint(self, session: str, summary: str, covers: Sequence[str], actor: str = "agent", tool: str = "checkpoint") -> dict[str, Any]:
        """Write a summary record citing the ids and ranges it compresses; every cited record must exist."""
        if not summary.strip():
            raise InvalidRecordError("checkpoint", [Problem("summary is empty: say what the covered records add up to", field="summary")])
        if not covers:
            raise InvalidRecordError("checkpoint", [Problem("covers must list the ids or ranges the summary compresses, e.g. ['s#1-20']",
                                                            field="covers")])
        secretscan.refuse(("covers", list(covers)))  # said of covers, not of the session id it would be read as
        missing = [problem for ref in covers if (problem := self.missing(ref))]
        if missing:
            raise InvalidRecordError("checkpoint", [Problem(m, field="covers") for m in missing])
        entry = experience.Entry(kind="summary", text=summary, covers=[str(grammar.record(c)) for c in covers], refs=[],
                                 source=self.source(actor, tool))
        record = self.append(session, [entry])[0]
        self._committer.flush(session=record["session"])  # a checkpoint is when a session's experience is committed
        return record

    def feedback(self, session: str, ref: str, outcome: str, note: str | None = None, actor: str = "agent",
                 tool: str = "feedback") -> dict[str, Any]:
        """Record whether a memory helped, misled or was outdated: an `outcome` record citing it, which ranks skills."""
        if outcome not in FEEDBACK:
            raise InvalidRecordError("feedback", [Problem(f"outcome must be one of {', '.join(FEEDBACK)}", field="outcome")])
        data: dict[str, Any] = {"outcome": outcome, "ref": ref}
        parsed = grammar.parse(ref)
        if parsed.kind == "record":
            cited = str(parsed)
            if problem := self.missing(cited):  # with the record nearest it: a session named ops is kept as ops.<clone>
                raise NotFoundError(f"{problem} Feedback cites a skill (skill:NAME) or an experience record id.")
        elif parsed.kind in ("skill", "name") and not parsed.inner:
            if not self._skills.exists(parsed.name):
                raise NotFoundError(f"No skill '{parsed.name}'.", self._skills.similar_names(parsed.name))
            cited, data["skill"] = f"skill:{parsed.name}", parsed.name
        else:
            raise InvalidArgumentError(f"feedback cites a skill (skill:NAME) or an experience record id (SESSION#SEQ), not '{ref[:80]}'.")
        if note:
            data["note"] = note
        text = f"{cited}: {outcome}" + (f" — {note}" if note else "")
        entry = experience.Entry(kind="outcome", text=text, data=data, refs=[cited], source=self.source(actor, tool))
        return self.append(session, [entry])[0]

    def missing(self, ref: str) -> str:
        """Why `ref` (an id or range) does not name existing records, or '' when every record exists."""
        try:
            parsed = grammar.record(ref)
        except InvalidArgumentError as exc:
            return str(exc)
        present: set[int] = set()
        for look in ("index", "disk"):  # a log pulled or written by another process may not be indexed yet: its files say
            if look == "disk":
                self._records.sync(self._journal.segments(parsed.session), complete=False)
            located = self._activity.locate(parsed.session, parsed.start, parsed.end)
            here = {file for file in {row[0] for row in located} if (self.root / file).is_file()}  # a reset, a clean, a stash takes files
            present = {row[3] for row in located if row[0] in here}
            if len(present) == parsed.end - parsed.start + 1:
                return ""
        absent = next(n for n in range(parsed.start, parsed.end + 1) if n not in present)
        nearest, hint = self._absent(parsed.session, absent)
        if nearest == f"{parsed.session}#{absent}":  # indexed, but its file is gone: a reset or a rebase took it
            hint = " Its log is gone from this checkout (a git reset, clean or stash took it; `repo-memory verify` says more)."
        return f"{parsed.session}#{absent} does not exist.{hint}"

    def _absent(self, session: str, seq: int) -> tuple[str, str]:
        """The record here nearest to `seq` of `session` (ops#1 may be kept as ops.<clone>#1), and what to do: cite it, or pull."""
        nearest = self._activity.nearest(session, seq) or self._activity.nearest(self._journal.named(session), seq) or ""
        if nearest:
            return nearest, f" The nearest existing record is {nearest}."
        if gone := self._gone(session):
            return "", gone
        where = f", from {upstream}" if (upstream := self._committed.upstream()) else ""
        return "", (f" Session '{session}' has no records here: if another clone wrote it, pull first (`git pull`{where}), "
                    "then cite or read it.")

    def _gone(self, session: str) -> str:
        """Which commit removed `session`'s log, none of whose files is here, and how to read it as it was ('' when none)."""
        found = logged(self._committed.git, session, self._journal.owned)
        return removal(*found) if found else ""

    def read(self, ref: str, cursor: str | None = None) -> Item:
        """Dereference an id or range to the records on disk, each re-verified (hash and chain), one page at a time."""
        parsed = grammar.record(ref)
        start, char = record_cursor(cursor, parsed.start)
        located = self._activity.locate(parsed.session, max(1, start - 1), parsed.end)
        if _stale(self.root, located, start, parsed.end):
            self.sync()  # not indexed yet, or a branch checked out before the watcher saw it
            located = self._activity.locate(parsed.session, max(1, start - 1), parsed.end)
        if not any(row[3] >= start for row in located):
            nearest, hint = self._absent(parsed.session, parsed.start)
            raise NotFoundError(f"No record {parsed}." + ("" if nearest else hint), [nearest] if nearest else [])
        located = self._across(parsed.session, max(1, start - 1), parsed.end) or located
        if parsed.fork:
            located = [row for row in located if row[3] < start or row[4] == str(parsed)]
        seen: dict[int, set[str]] = {}  # the hashes of each seq read so far: a record's prev must be one of seq - 1's
        head = self._committed.head()

        def views() -> Iterator[tuple[int, RecordView]]:  # each verified only when the page takes it
            for file, offset, length, seq, record_id in located:
                line = self._line_at(file, offset, length)
                if line.record:
                    seen.setdefault(seq, set()).add(line.record["sha256"])
                if seq < start:
                    continue
                resumed = offset == 0 and seq - 1 not in seen and self._journal.resumes(paths.inside(self.root, *file.split("/")))
                view = verified_view(self._journal, line, seen.get(seq - 1, set()), seq, parsed.session, record_id, resumed,
                                     self._provenance.redacted, alone=parsed.start == parsed.end)
                if view.record:
                    source = view.record.get("source", {})
                    done = self._committed.record(file, offset + length, head)
                    recorded = describe(source.get("actor", ""), done, source.get("harness", ""), source.get("tool", ""),
                                        view.record.get("kind", "")) + (f"; {view.recorded}" if view.recorded else "")
                    outside = self._provenance.judge(view.record, file, offset + length, head)
                    if outside:  # its hash and chain may verify: anyone can recompute those
                        recorded = f"{outside}; it claims: {recorded}"
                        view = dataclasses.replace(view, verified=False, problem=view.problem or outside)
                    view = quarantined(dataclasses.replace(view, committed=done, recorded=recorded))
                yield seq, view

        page, next_cursor = paged(views(), char, located[-1][3])
        page, recorded = framed(page)
        return Item(id=str(parsed), kind="experience", records=page, next_cursor=next_cursor, committed=all(v.committed for v in page),
                    recorded=recorded, note=DATA_NOTE)

    def _across(self, session: str, first: int, last: int) -> list[tuple[str, int, int, int, str]]:
        """(file, offset, length, seq, id) of records first..last of a session kept in more than one file, read from the
        files when some line has no row of its own: the index keeps one row per id, so a record of a number another file
        also holds (a line left torn in the log HEAD holds, made whole after the session went on in a `+n` file) would
        hide the other. As an `as_of` read does (core/past.py), the later of two gets `~` and 8 hex digits of its hash.
        Empty when the index has a row for every line."""
        files = self._journal.segments(session)
        if len(files) < 2:
            return []
        if all(self._activity.rows_in(path.relative_to(self.root).as_posix()) == disk.read_safely(path).count(b"\n") for path in files):
            return []  # every line of every file has its own row: no record is hidden (a scan costs 50 ms per 1,000 records)
        found, taken = [], set()
        for n, path in enumerate(files):
            rel = path.relative_to(self.root).as_posix()
            for line in self._journal.lines(path):
                record = line.record
                if record is None or record.get("session") != session:
                    continue
                rid = record["id"] if record["id"] not in taken else f"{record['id']}~{record['sha256'][:8]}"
                taken.add(rid)
                if first <= int(record["seq"]) <= last:
                    found.append((int(record["seq"]), n, line.offset, (rel, line.offset, len(line.raw), int(record["seq"]), rid)))
        return [row for *_, row in sorted(found)]

    def read_session(self, session: str, cursor: str | None = None) -> Item:
        """Every record of `session`, as `read` gives a range (its first records may be on another branch)."""
        session = self._journal.named(grammar.check_session(session))
        last = max((int(ln.record["seq"]) for ln in self.lines(session) if ln.record), default=1)
        return self.read(f"{session}#1-{last}", cursor)

    def _line_at(self, file: str, offset: int, length: int) -> experience.Line:
        path = paths.inside(self.root, *file.split("/"))
        with os.fdopen(disk.open_safely(path), "rb") as handle:
            handle.seek(offset)
            raw = handle.read(length)
        return experience.parse_line(raw, offset)

    def lines(self, session: str) -> list[experience.Line]:
        """Every line of `session`'s log, its files in order (NotFoundError naming recent sessions when there is none)."""
        return [line for _, line in self._lines(session)]

    def files(self, session: str) -> list[tuple[list[experience.Line], bool]]:
        """The lines of each of `session`'s files, and whether the file before it is missing here (Journal.resumes)."""
        return [(self._journal.lines(path), self._journal.resumes(path)) for path in self._segments(session)]

    def _lines(self, session: str) -> list[tuple[str, experience.Line]]:
        """(file, line) of every line of `session`'s files."""
        return [(path.relative_to(self.root).as_posix(), line) for path in self._segments(session) for line in self._journal.lines(path)]

    def _segments(self, session: str) -> list[Path]:
        found = self._journal.segments(self._journal.named(grammar.check_session(session)))
        if not found:
            self.sync()
            kept, known = self._journal.kept(session), [s[0] for s in self._activity.sessions()]
            recent = f" Recent sessions: {', '.join(known[:5])}." if known else ""
            raise NotFoundError(f"No session '{session}'." + (f" Each clone keeps its own log under that name: {', '.join(kept[:5])}."
                                if kept else self._gone(session) or recent))
        return found

    def trusted(self, session: str) -> list[dict[str, Any]]:
        """The valid records of `session`, and of the logs clones went on with it in (`<session>.<clone>`: a loop run
        another clone aborted), that count as what they say: a record of a server kind (a verdict, an outcome, skill use)
        only when a server tool wrote it and it is authentic (core/provenance.py). In time order across the logs."""
        head, kept = self._committed.head(), [pair for name in self._journal.kept(session) for pair in self._lines(name)]
        found = [line.record for rel, line in [*self._lines(session), *kept]
                 if line.record and not self._provenance.server_kind(line.record, rel, line.offset + len(line.raw), head)]
        return sorted(found, key=lambda r: (r["ts"], r["session"], r["seq"])) if kept else found

    def verify(self, progress: Callable[[int, int], None] | None = None, only: Sequence[Path] | None = None) -> list[tuple[str, str]]:
        """Every break in every log, or in `only` (core/audit.py): (where, what), empty when all are intact."""
        return audit.verify(self.root, self._journal, self._committed, self._provenance, progress, only)


def _stale(root: Path, located: Sequence[tuple[str, int, int, int, str]], start: int, end: int) -> bool:
    """Whether the index may be behind the files for records `start`..`end`: some or the last are not there, one is
    missing in between, or a file they are in is gone."""
    seqs = sorted({row[3] for row in located if row[3] >= start})
    return (not seqs or seqs[-1] < end or len(seqs) != seqs[-1] - seqs[0] + 1
            or not all((root / file).is_file() for file in {row[0] for row in located}))


