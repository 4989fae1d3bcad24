"""Experience logs: append-only, hash-chained JSON lines, one file per session, large content in blobs.

A record's id is `<session>#<seq>`. Its `sha256` covers its canonical JSON (sorted keys, no spaces)
without the `sha256` field, and `prev` is the previous record's `sha256`, so any edit behind our back
breaks a hash or the chain. Appends are one write of a complete line under an flock on the file.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import re
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repo_memory.guards import disk
from repo_memory.guards import paths as guard
from repo_memory.errors import InvalidRecordError, NotFoundError, Problem, UnsafePathError
from repo_memory.formats.schema import validate

EXPERIENCE_DIR = ".agents/experience"
BLOB_DIR = ".agents/experience/blobs"
INLINE_MAX = 64 * 1024
HARD_CAP = 8 * 1024 * 1024
PREVIEW_CHARS = 2000
KINDS = ("note", "action", "observation", "tool", "decision", "error", "summary", "skill.used", "outcome")
SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
REF = re.compile(r"^(?P<session>[A-Za-z0-9][A-Za-z0-9._-]{0,127})#(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?$")
_CHUNK = 64 * 1024
log = logging.getLogger("repo_memory")


def now() -> str:
    """The current UTC time in the records' ISO-8601 form."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_session_id() -> str:
    """A readable, unique session id: the date and six hex digits."""
    return f"{datetime.now(UTC):%Y-%m-%d}-{secrets.token_hex(3)}"


def check_session(session: str) -> str:
    """Return `session` if it is usable as a file name and an id prefix."""
    if (not isinstance(session, str) or not SESSION.match(session) or ".." in session
            or session.lower().split(".")[0] in guard.RESERVED):
        raise UnsafePathError(
            f"Session id {session!r} is not allowed: use letters, digits, '.', '_' and '-' (at most 128), starting with a letter or digit."
        )
    return session


def canonical(record: dict[str, Any]) -> bytes:
    """The bytes a record's hash covers and a log line holds."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def seal(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with its `sha256` set."""
    body = {k: v for k, v in record.items() if k != "sha256"}
    return {**body, "sha256": hashlib.sha256(canonical(body)).hexdigest()}


@dataclass(frozen=True)
class Ref:
    """A parsed experience id or range: session#start or session#start-end."""

    session: str
    start: int
    end: int

    def __str__(self) -> str:
        return f"{self.session}#{self.start}" + (f"-{self.end}" if self.end != self.start else "")


def parse_ref(text: str) -> Ref:
    """Parse `session#seq` or `session#first-last`."""
    match = REF.match(text.strip())
    if not match:
        raise NotFoundError(f"'{text}' is not an experience id: write it as SESSION#SEQ (e.g. 2026-12-02-a1b2c3#17) or SESSION#FIRST-LAST.")
    start = int(match["start"])
    end = int(match["end"] or start)
    if start < 1 or end < start:
        raise NotFoundError(f"'{text}' is not a valid range: the first number must be at least 1 and not above the last.")
    return Ref(match["session"], start, end)


@dataclass(frozen=True)
class Line:
    """One line of a log file as stored: its bytes, where they are, and the record they hold (if any)."""

    offset: int
    raw: bytes
    record: dict[str, Any] | None
    problem: str = ""
    torn: bool = False


def parse_line(raw: bytes, offset: int, torn: bool = False) -> Line:
    """Parse one line; a line that is not a valid record keeps a `problem` and no record."""
    if torn:
        return Line(offset, raw, None, "torn last line (an append was interrupted)", torn=True)
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        return Line(offset, raw, None, f"not JSON: {exc}")
    if not isinstance(record, dict):
        return Line(offset, raw, None, "not a JSON object")
    problems = validate("experience", record)
    if problems:
        return Line(offset, raw, None, "; ".join(str(p) for p in problems))
    return Line(offset, raw, record)


def parse_lines(data: bytes, base: int = 0) -> list[Line]:
    """Every line of `data` (bytes of a log file from offset `base`); a fragment without newline is torn."""
    lines = []
    position = 0
    while position < len(data):
        nl = data.find(b"\n", position)
        if nl < 0:
            lines.append(parse_line(data[position:], base + position, torn=True))
            break
        if nl > position:
            lines.append(parse_line(data[position:nl], base + position))
        position = nl + 1
    return lines


@dataclass(frozen=True)
class Checked:
    """A record with the result of checking its hash and its link to the previous record."""

    line: Line
    hash_ok: bool
    chain_ok: bool

    @property
    def verified(self) -> bool:
        return self.hash_ok and self.chain_ok

    @property
    def problem(self) -> str:
        if not self.hash_ok:
            return "its content does not match its sha256 (edited after it was written)"
        if not self.chain_ok:
            return "its prev hash does not match the record before it (a record was changed, removed or inserted)"
        return ""


def check_chain(lines: Sequence[Line]) -> list[Checked]:
    """Check each valid record's hash and its `prev` against the record before it."""
    out = []
    prev: str | None = None
    for line in lines:
        if line.record is None:
            continue
        record = line.record
        hash_ok = seal(record)["sha256"] == record["sha256"]
        out.append(Checked(line, hash_ok, record["prev"] == prev))
        prev = record["sha256"]
    return out


@dataclass
class Entry:
    """What a caller asks to append; the journal adds id, seq, ts, hashes."""

    kind: str
    text: str | None = None
    data: Any = None
    refs: list[str] = field(default_factory=list)
    covers: list[str] | None = None
    source: dict[str, str] = field(default_factory=lambda: {"actor": "agent"})
    ts: str | None = None
    anchors: dict[str, str] | None = None  # code hashes of refs that cite code (path::Symbol), pinned by the server


class Journal:
    """The experience files of one repository."""

    def __init__(self, root: Path, inline_max: int = INLINE_MAX):
        self.root = root
        self.inline_max = inline_max
        self._paths: dict[str, Path] = {}
        self._torn_reported: set[Path] = set()
        self._new_blobs: set[str] = set()

    def files(self) -> Iterator[Path]:
        """Every session log, oldest month first."""
        base = self.root / EXPERIENCE_DIR
        if base.is_dir():
            yield from sorted(p for p in base.glob("*/*.jsonl") if p.parent.name != "blobs" and not p.is_symlink())

    def path(self, session: str, create: bool = False) -> Path | None:
        """The log file of `session` (in the month it started), optionally choosing one for a new session."""
        check_session(session)
        if session in self._paths and self._paths[session].exists():
            return self._paths[session]
        found = sorted((self.root / EXPERIENCE_DIR).glob(f"*/{session}.jsonl"))
        if found:
            self._paths[session] = found[0]
            return found[0]
        if not create:
            return None
        path = guard.inside(self.root, EXPERIENCE_DIR, f"{datetime.now(UTC):%Y-%m}", f"{session}.jsonl")
        self._paths[session] = path
        return path

    def append(self, session: str, entries: Sequence[Entry]) -> list[dict[str, Any]]:
        """Append `entries` to the session's log as one write under the file's lock; return the records."""
        path = self.path(session, create=True)
        assert path is not None
        prepared = [self._prepare(entry) for entry in entries]
        path.parent.mkdir(parents=True, exist_ok=True)
        guard.inside(self.root, *path.relative_to(self.root).parts)  # refuse links on the way, at write time
        fd = disk.open_safely(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)  # no link, no hard link: appends stay in the repo
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            last_seq, last_sha, clean_end = _tail(fd)
            if not clean_end and path not in self._torn_reported:
                self._torn_reported.add(path)
                log.warning("%s ends with a torn line; it is kept as is and skipped by readers", path)
            records, chunks = [], [] if clean_end else [b"\n"]
            for offset, body in enumerate(prepared, start=1):
                seq = last_seq + offset
                record = seal({**body, "id": f"{session}#{seq}", "session": session, "seq": seq, "prev": last_sha})
                last_sha = record["sha256"]
                records.append(record)
                chunks.append(canonical(record) + b"\n")
            _write_all(fd, b"".join(chunks))
            os.fsync(fd)
        finally:
            os.close(fd)  # closing releases the lock
        return records

    def _prepare(self, entry: Entry) -> dict[str, Any]:
        if entry.kind not in KINDS and not re.match(r"^loop\.[a-z_]+$", entry.kind):
            raise InvalidRecordError("record", [Problem(f"kind '{entry.kind}' is not one of {', '.join(KINDS)} (or loop.*)", field="kind")])
        if entry.text is None and entry.data is None:
            raise InvalidRecordError("record", [Problem("give text or data", field="text")])
        body: dict[str, Any] = {"ts": entry.ts or now(), "kind": entry.kind, "refs": list(entry.refs), "source": dict(entry.source)}
        if entry.covers is not None:
            body["covers"] = list(entry.covers)
        if entry.anchors:
            body["anchors"] = dict(entry.anchors)
        if entry.text is not None:
            encoded = entry.text.encode("utf-8")
            if len(encoded) > HARD_CAP:
                raise InvalidRecordError("record", [Problem(f"text is {len(encoded)} bytes; the limit is {HARD_CAP} (8 MiB)", field="text")])
            if len(encoded) > self.inline_max:
                body["blob"] = {"sha256": self.put_blob(encoded), "bytes": len(encoded), "field": "text"}
                body["text"] = entry.text[:PREVIEW_CHARS] + "…"
            else:
                body["text"] = entry.text
        if entry.data is not None:
            encoded = canonical({"data": entry.data})
            if len(encoded) > HARD_CAP:
                raise InvalidRecordError("record", [Problem(f"data is {len(encoded)} bytes; the limit is {HARD_CAP} (8 MiB)", field="data")])
            if len(encoded) > self.inline_max:
                if "blob" in body:
                    raise InvalidRecordError("record", [Problem("text and data are both too large to inline; split them into two records", field="data")])
                body["blob"] = {"sha256": self.put_blob(encoded), "bytes": len(encoded), "field": "data"}
            else:
                body["data"] = entry.data
        return body

    def put_blob(self, data: bytes) -> str:
        """Store `data` content-addressed (write-once) and return its sha256."""
        digest = hashlib.sha256(data).hexdigest()
        path = guard.inside(self.root, BLOB_DIR, digest)
        if not path.exists():
            disk.write_atomic(path, data)
        self._new_blobs.add(f"{BLOB_DIR}/{digest}")
        return digest

    def take_blobs(self) -> list[str]:
        """Paths of blobs stored since the last call (for the commit that follows)."""
        taken, self._new_blobs = sorted(self._new_blobs), set()
        return taken

    def blob(self, digest: str) -> tuple[bytes, bool]:
        """A blob's bytes and whether they still hash to its name."""
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise NotFoundError(f"'{digest}' is not a blob hash.")
        path = guard.inside(self.root, BLOB_DIR, digest)
        if not path.is_file():
            raise NotFoundError(f"Blob {digest} is missing from {BLOB_DIR}/ (was it deleted, or not pulled?).")
        data = disk.read_safely(path)
        return data, hashlib.sha256(data).hexdigest() == digest

    def lines(self, path: Path) -> list[Line]:
        """Every line of a log file."""
        return parse_lines(disk.read_safely(path))


def _tail(fd: int) -> tuple[int, str | None, bool]:
    """(last valid seq, its sha256, whether the file ends with a newline), reading backwards from the end."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0, None, True
    clean_end = os.pread(fd, 1, size - 1) == b"\n"
    buf, buf_start = b"", size

    def newline_before(position: int) -> int:
        nonlocal buf, buf_start
        while True:
            index = buf.rfind(b"\n", 0, max(0, position - buf_start))
            if index >= 0:
                return buf_start + index
            if buf_start == 0:
                return -1
            start = max(0, buf_start - _CHUNK)
            buf = os.pread(fd, buf_start - start, start) + buf
            buf_start = start

    end = size - 1 if clean_end else newline_before(size)  # the newline ending the last complete line
    while end >= 0:
        start = newline_before(end) + 1
        raw = buf[start - buf_start : end - buf_start]
        if raw:
            line = parse_line(raw, start)
            if line.record is not None:
                return int(line.record["seq"]), str(line.record["sha256"]), clean_end
        end = start - 1
    return 0, None, clean_end


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
