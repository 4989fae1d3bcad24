"""A person's way out of staleness for a record, which cannot be edited: `stale --pin ID` says it was checked against
the code. It writes a note (kind `note`, by the person, tool `stale`) citing the record and the code as it is now: the
record is settled by it (code/staleness.py), the note is committed like any experience, and when that code changes
again the note is what goes stale.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from pathlib import Path

from repo_memory.code.anchors import Code
from repo_memory.code.staleness import PIN_TOOL, Stale, Staleness
from repo_memory.core.logbook import Logbook
from repo_memory.errors import ConflictError, NotFoundError
from repo_memory.formats import experience
from repo_memory.git.committer import Committer
from repo_memory.index.docs import DocIndex

# Past.code_changes says "moved to NEW in HASH SUBJECT"; the path ends at the first " in <hash>" (a path holding that is
# not worth the doubt)
MOVED = re.compile(r"moved to (?P<new>.+?) in (?P<commit>[0-9a-f]{4,40})(?: |$)")
HOPS = 5  # a file moved again after its move: followed this many times


class Settling:
    """Pins of records, for one repository."""

    def __init__(self, *, root: Path, state_dir: Path, staleness: Staleness, code: Code, logs: Logbook, docs: DocIndex,
                 committer: Committer, changes: Callable[[Collection[str]], dict[str, str]]):
        self.root, self.state_dir, self._staleness, self._code, self._logs = root, state_dir, staleness, code, logs
        self._docs, self._committer, self._changes = docs, committer, changes

    def moves(self, files: Collection[str]) -> dict[str, str]:
        """Where git moved each of `files` that is gone: old path -> the path it has now (a move after a move followed)."""
        out: dict[str, str] = {}
        asked = {f: f for f in files if not (self.root / f).exists()}
        for _ in range(HOPS):
            found = {asked[f]: m["new"] for f, change in self._changes(list(asked)).items() if (m := MOVED.match(change))}
            out.update(found)
            asked = {new: old for old, new in found.items() if not (self.root / new).exists()}
            if not asked:
                break
        return out

    def moved_anchors(self, items: list[Stale]) -> dict[str, str]:
        """Stale anchor -> the same symbol at the path its file moved to, when it is found there."""
        moved = self.moves({s.anchor.partition("::")[0] for s in items})
        out = {}
        for item in items:
            path, _, symbol = item.anchor.partition("::")
            if path in moved and self._code.resolve(new := f"{moved[path]}::{symbol}").hash:
                out[item.anchor] = new
        return out

    def pin_record(self, record: str, session: str) -> tuple[list[str], str]:
        """A person checked `record` against the code: a note citing it and the code as it is now (a moved file at its
        new path); returns the anchors cited and the note's id."""
        if missing := self._logs.missing(record):
            raise NotFoundError(f"{missing} `repo-memory stale` lists the stale records.")
        stale = self._staleness.stale([record], check=True)
        moved = self.moved_anchors(stale)
        now = dict(self._staleness.resolvable(record))
        now.update({new: h for new in moved.values() if (h := self._code.resolve(new).hash)})
        if not now and not stale:
            raise ConflictError(f"{record} cites no code (path/to/file.py::Name in its refs): there is nothing to pin.")
        lost = [s.anchor for s in stale if s.anchor not in now and s.anchor not in moved]
        text = f"Checked against the code by a person: {record} still holds." + (f" It cites code that is gone: {', '.join(lost)}." if lost else "")
        note = self._note(session, [(record, text, now)])[0]
        return list(now), note

    def _note(self, session: str, notes: list[tuple[str, str, dict[str, str]]]) -> list[str]:
        """Append one note per (record, text, code it cites now) in one write; their ids."""
        source = self._logs.source("human", PIN_TOOL)
        entries = [experience.Entry(kind="note", text=text, refs=[record, *cited], source=source, anchors=cited or None)
                   for record, text, cited in notes]
        return [r["id"] for r in self._logs.append(session, entries)]
