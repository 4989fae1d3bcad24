"""Whether an experience record is what it says it is: written by repo-memory, or held by git as committed.

A record's `source` (actor, harness, tool) is a claim any writer of the file can make, and its hash chain can be
recomputed by anyone who knows the format. Two things cannot be faked by an agent's file tools: this clone's mark
(`mac`, guards/authorship.py) and the bytes git already holds. A record with neither is reported as written outside
repo-memory: `read` never calls it verified, `recall` frames it as such, and a record of a server kind (a verdict,
an outcome, skill use) counts for nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repo_memory.core import redacting
from repo_memory.errors import UnsafePathError
from repo_memory.formats import experience
from repo_memory.git.committed import Committed
from repo_memory.guards import authorship, disk, paths

if TYPE_CHECKING:
    from repo_memory.core.journal import Journal

OUTSIDE = ("written outside repo-memory: it carries no mark of this clone's repo-memory and is not committed (a hand "
           "edit or an agent's file tool wrote it)")


UNMARKED = ("written outside repo-memory, or by a version from before 2026-12-04 (which marked no record): it carries no "
            "mark and is not committed")


FILES_KEPT, LINES_KEPT = 64, 512  # log files whose lines read by `lines` are kept, and lines kept of each
UNSEALED = "its text does not match its hash: read it to see the problem"  # a record edited after it was written


def unsealed(record: dict[str, Any]) -> bool:
    """Whether `record`'s content no longer hashes to its sha256. Its mark is of that stored hash, and git holds what a
    person committed, so neither says the text is the one written: a hand edit keeps both."""
    return experience.seal(record)["sha256"] != record["sha256"]


class Provenance:
    """Judges records by this clone's key and by what git holds."""

    def __init__(self, root: Path, key: authorship.Key | None, committed: Committed, journal: Journal | None = None):
        self.root, self.key, self._committed, self._journal = root, key, committed, journal
        self._claims: dict[str, tuple[tuple[tuple[str, int, int], ...], list[tuple[str, experience.Line]]]] = {}  # redacted()
        self._read: dict[str, tuple[tuple[int, int], dict[tuple[int, int], dict[str, Any] | None]]] = {}  # lines()

    def judge(self, record: dict[str, Any], rel: str, end: int, head: str | None | object = None) -> str:
        """'' when `record` (the line of log `rel` ending at byte `end`) was written by repo-memory on this clone or is
        committed as it stands; otherwise why it cannot be trusted. `head`: one `Committed.head()` for many calls."""
        if authorship.signed(record, self.key):
            return ""
        at = self._committed.head() if head is None else head
        if self._committed.record(rel, end, at) or self._committed.incoming(rel, experience.canonical(record)):
            return ""
        return OUTSIDE if "mac" in record else UNMARKED

    def redacted(self, record: dict[str, Any]) -> str:
        """'redacted on DATE by the person (ID)…' when `record` no longer matches its hash because a person's `log redact`
        attested its content as it stands (core/redacting.py), else ''."""
        if self._journal is None or not unsealed(record):
            return ""
        session, head = record["session"], self._committed.head()
        files = [p for name in (session, *self._journal.kept(session)) for p in self._journal.segments(name)]
        stamp = tuple((str(p), st.st_size, st.st_mtime_ns) for p in files if (st := p.lstat()))
        if (known := self._claims.get(session)) is None or known[0] != stamp:  # a broken log names many records: read once
            found = [(p.relative_to(self.root).as_posix(), line) for p in files for line in self._journal.lines(p)
                     if line.record and redacting.claims(line.record)]
            known = self._claims[session] = (stamp, found)
        return redacting.attested(record, known[1], lambda found, rel, end: self.judge(found, rel, end, head))

    def vouched(self, rel: str, offset: int, length: int) -> dict[str, Any] | None:
        """The record at (offset, length) of log `rel` when it is authentic (`judge`) and its text matches its hash, else
        None: a person's word read back (code/staleness.py) must be one repo-memory wrote, not a line a file tool added."""
        record = self.lines(rel, [(offset, length)])[0]
        if record is None or unsealed(record) or self.judge(record, rel, offset + length):
            return None
        return record

    def server_kind(self, record: dict[str, Any], rel: str, end: int, head: str | None | object = None) -> str:
        """Why a record of a server kind (loop.*, outcome, skill.used) does not count, or '' when it does: the server's
        tools wrote it (experience.untrusted) and it is authentic (`judge`). Other kinds always count ('')."""
        if not experience.server_kind(record["kind"]):
            return ""
        return experience.untrusted(record) or (f"untrusted: a {record['kind']} record {why}" if (why := self.judge(record, rel, end, head)) else "")

    def lines(self, rel: str, spans: list[tuple[int, int]]) -> list[dict[str, Any] | None]:
        """The record stored at each (offset, length) of `rel`, or None where it is not there (moved, rewritten, a
        link, or no longer ended by its newline: a torn line is no record). Kept per file while its size and
        modification time stay the same (as git/committed.py keeps whether a log is intact): opening a log safely and
        parsing a line cost 55 us a record, which took recall's framing of a page of 8 committed hits from 0.13 to 0.37
        ms; kept, 0.30 ms."""
        try:
            st = os.lstat(path := paths.inside(self.root, *rel.split("/")))
        except (OSError, UnsafePathError):
            return [None] * len(spans)
        known = self._read.get(rel)
        if known is None or known[0] != (st.st_size, st.st_mtime_ns) or len(known[1]) > LINES_KEPT:
            if len(self._read) >= FILES_KEPT:
                self._read.pop(next(iter(self._read)), None)
            known = self._read[rel] = ((st.st_size, st.st_mtime_ns), {})
        if missing := [span for span in spans if span not in known[1]]:
            try:
                fd = disk.open_safely(path)
            except (OSError, UnsafePathError):
                return [None] * len(spans)
            try:
                known[1].update({(offset, length): _whole(os.pread(fd, length + 1, offset), length, offset)
                                 for offset, length in missing})
            finally:
                os.close(fd)
        return [known[1].get(span) for span in spans]


def _whole(raw: bytes, length: int, offset: int) -> dict[str, Any] | None:
    """The record of a line read with the byte after it, which must be its newline."""
    if len(raw) != length + 1 or raw[-1:] != b"\n" or b"\n" in raw[:-1]:
        return None
    return experience.parse_line(raw[:-1], offset).record
