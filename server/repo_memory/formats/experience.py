"""Experience records: append-only, hash-chained JSON lines, one log file per session, large content in blobs.

A record's id is `<session>#<seq>`. Its `sha256` covers its canonical JSON (sorted keys, no spaces) without the
`sha256` field, and `prev` is the previous record's `sha256`, so any edit behind our back breaks a hash or the
chain. This module is the format; core/journal.py appends to the files.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from repo_memory.formats import nesting
from repo_memory.formats.schema import rejected, validate

EXPERIENCE_DIR = ".agents/experience"
BLOB_DIR = ".agents/experience/blobs"
INLINE_MAX = 64 * 1024
HARD_CAP = 8 * 1024 * 1024
PREVIEW_CHARS = 2000
KINDS = ("note", "action", "observation", "tool", "decision", "error", "summary", "skill.used", "outcome")
PERSON_KINDS = ("redaction",)  # written only by a person's command (`log redact`, core/redacting.py): never `remember`ed or imported
# Kinds that carry the server's judgement: a loop run's records, the skills it credited, verdicts and feedback. Only
# the loop engine (tools loop_start, loop_step, loop) and the feedback tool (MCP `feedback`, CLI `skill feedback`)
# write them; a record of these kinds from any other tool is untrusted wherever it is read.
ENGINE_TOOLS = ("loop_start", "loop_step", "loop")
FEEDBACK_TOOLS = ("feedback", "cli")
FEEDBACK = ("helped", "misled", "outdated")
# The tool of the note `repo-memory stale --follow-renames` writes: repo-memory's word, in a command a person ran, that
# the code a record cites moved unchanged (a person checked nothing: it settles the record only while that code holds)
FOLLOW_TOOL = "follow-renames"


VERDICTS = ("loop.verify", "loop.decision", "loop.end", "skill.used", "outcome")  # the engine's judgements, not the driver's words


def author(kind: str, source: dict[str, Any]) -> str:
    """Who a record speaks for, in words: the loop engine for a verdict its tools wrote (the actor only drove the
    run: records keep it, as the schema's human/agent), else the actor."""
    actor = str(source.get("actor", "?"))
    if kind in VERDICTS and source.get("tool", "") in ENGINE_TOOLS:
        return f"repo-memory's loop engine, in a run driven by {'a person' if actor == 'human' else 'an agent'}"
    if kind == "note" and source.get("tool", "") == FOLLOW_TOOL:
        return f"repo-memory (`stale --follow-renames`, run by {'a person' if actor == 'human' else actor})"
    return actor


def server_kind(kind: str) -> bool:
    """Whether records of `kind` are the server's to write (loop.*, skill.used, outcome)."""
    return kind.startswith("loop.") or kind in ("skill.used", "outcome")


def untrusted(record: dict[str, Any]) -> str:
    """Why a record of a server kind was not written by the server ('' when it was, or its kind is anyone's)."""
    kind, tool = record["kind"], record["source"].get("tool", "")
    if not server_kind(kind):
        return ""
    data = record.get("data")
    said = data.get("outcome") if isinstance(data, dict) else None
    if kind == "outcome" and tool in FEEDBACK_TOOLS and said in FEEDBACK:
        return ""
    if tool in ENGINE_TOOLS and (kind != "outcome" or said not in FEEDBACK):
        return ""
    return f"untrusted: a {kind} record written by '{tool}', not by the server"


def now() -> str:
    """The current UTC time in the records' ISO-8601 form."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_session_id() -> str:
    """A readable, unique session id: the date and six hex digits."""
    return f"{datetime.now(UTC):%Y-%m-%d}-{secrets.token_hex(3)}"


# Session names a machine made unique, which no other clone will choose: a harness's own id (a UUID, kept in an imported
# transcript's claude-<uuid> and codex-<uuid>), new_session_id's date and hex, a loop run's <loop>-<date>-<time>-<hex>,
# and a name already kept per clone (<name>.<clone>).
_MADE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|^\d{4}-\d{2}-\d{2}-[0-9a-f]{6}$"
                   r"|-\d{8}-\d{6}-[0-9a-f]{4}$|\.[0-9a-f]{8}$", re.IGNORECASE)


def chosen(session: str) -> bool:
    """Whether `session` is a name a person or a job chose (`release-notes`, `claude-memory`, a CI job's), which another
    clone may choose too, rather than one a machine made unique."""
    return not _MADE.search(session)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads pairs what it can: any surrogate left in a str is alone


def scrub(value: Any) -> Any:
    """`value` with every lone UTF-16 surrogate in its strings (and keys) replaced by U+FFFD: a harness's JSON escapes
    bytes that were not UTF-8 as one (`\\udcff`), which UTF-8, and so a log line, cannot hold. Unchanged otherwise."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    return value


def canonical(record: dict[str, Any]) -> bytes:
    """The bytes a record's hash covers and a log line holds."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def seal(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with its `sha256` set (over everything but `sha256` and the writer's `mac`, which marks that hash)."""
    body = {k: v for k, v in record.items() if k not in ("sha256", "mac")}
    return {**body, "sha256": hashlib.sha256(canonical(body)).hexdigest()}


# A log's last bytes with no newline: an append cut short (a process killed, power lost), never acknowledged (an append is
# answered once it is on disk). Readers skip it, no append ends it with a newline (core/journal.py), so it is no break.
TORN = "torn last line: an append was cut short (a process killed, power lost) and never acknowledged; readers skip it"


# Bytes a record's line holds at least: its required fields at their shortest take 201 (sha256 alone 64 hex digits), and
# escapes and spaces only add. A shorter line is no record, whatever it holds (tests/formats/test_shortest_record.py).
SHORTEST = 128
TOO_SHORT = f"not a record: under {SHORTEST} bytes, shorter than any record's fields"


@dataclass(frozen=True, slots=True)  # slots: a log of a million lines is a million of these
class Line:
    """One line of a log file as stored: its bytes, where they are, and the record they hold (if any)."""

    offset: int
    raw: bytes
    record: dict[str, Any] | None
    problem: str = ""
    torn: bool = False


def parse_line(raw: bytes, offset: int, torn: bool = False, check: bool = True) -> Line:
    """Parse one line; a line that is not a valid record keeps a `problem` (said cheaply: `explained` words it in
    full) and no record. Without `check`, any JSON object is taken as the record (for readers that judge a line by
    something else, such as its writer's mark)."""
    if torn:
        return Line(offset, raw, None, TORN, torn=True)
    if check and len(raw) < SHORTEST:  # not even parsed: JSON parsing was most of what a flood of `{}` lines cost
        return Line(offset, raw, None, TOO_SHORT)
    try:
        record = nesting.loads(raw)
    except nesting.TooDeep as exc:  # any depth: the line is invalid, never a crash of its reader
        return Line(offset, raw, None, f"JSON {exc}")
    except (ValueError, UnicodeDecodeError) as exc:
        return Line(offset, raw, None, f"not JSON: {exc}")
    if not isinstance(record, dict):
        return Line(offset, raw, None, "not a JSON object")
    if check and (problem := rejected("experience", record)):
        return Line(offset, raw, None, problem)
    return Line(offset, raw, record)


def explained(line: Line) -> str:
    """The problem of `line`, a line that is no record, in full: every field it gets wrong, by the full schema walk (a
    hundred times what rejecting it costs: for the lines a person is shown)."""
    if line.torn:
        return line.problem
    try:
        record = nesting.loads(line.raw)
    except nesting.TooDeep as exc:
        return f"JSON {exc}"
    except (ValueError, UnicodeDecodeError) as exc:
        return f"not JSON: {exc}"
    if not isinstance(record, dict):
        return "not a JSON object"
    return "; ".join(str(p) for p in validate("experience", record)) or line.problem


def split_lines(data: bytes, base: int = 0) -> Iterator[tuple[int, bytes, bool]]:
    """(offset, bytes, torn) of every line of `data` (bytes of a log file from offset `base`), unparsed; a fragment
    without newline is torn."""
    position = 0
    while position < len(data):
        nl = data.find(b"\n", position)
        if nl < 0:
            yield base + position, data[position:], True
            return
        if nl > position:
            yield base + position, data[position:nl], False
        position = nl + 1


def parse_lines(data: bytes, base: int = 0) -> list[Line]:
    """Every line of `data` (bytes of a log file from offset `base`); a fragment without newline is torn."""
    return [parse_line(raw, offset, torn) for offset, raw, torn in split_lines(data, base)]


def records_in(data: bytes, base: int = 0) -> tuple[list[Line], int]:
    """The lines of `data` (a log's bytes from offset `base`) that hold a record, and the offset just past its last
    complete line (`base` when none). Lines too short to hold one are passed over unparsed: what an index of a log of
    ten million `{}` lines costs is then 1 s a million, not 3.4."""
    found: list[Line] = []
    end = base
    for offset, raw, torn in split_lines(data, base):
        if not torn:
            end = offset + len(raw) + 1
            if len(raw) >= SHORTEST and (line := parse_line(raw, offset)).record is not None:
                found.append(line)
    return found, end


def sifted(data: bytes, unread: int) -> tuple[list[Line], list[Line], int]:
    """The lines of a log's `data` that hold a record, and its torn end; its first `unread` complete lines that hold
    none; and how many hold none in all. What a check of every line keeps: a log may hold millions that are no record."""
    kept: list[Line] = []
    first: list[Line] = []
    count = 0
    for offset, raw, torn in split_lines(data):
        line = parse_line(raw, offset, torn) if torn or len(raw) >= SHORTEST or count < unread else None
        if line is not None and (line.record is not None or torn):
            kept.append(line)
            continue
        count += 1  # a line too short to hold a record is counted unparsed, past the first few
        first += [line] if line is not None and count <= unread else []
    return kept, first, count


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


def check_chain(lines: Sequence[Line], seen: dict[int, set[str]] | None = None, resumed: bool = False) -> list[Checked]:
    """Check each valid record's hash, and that its `prev` is the hash of an earlier record one seq before it.

    Usually that is the line just before. A log two clones both continued and git then union-merged holds two
    chains from the record where they forked; each record still links to an earlier one, so both verify. `seen` holds
    the hashes of each seq in the session's earlier files (core/journal.py), and gains this file's. `resumed`: the
    lines are a session's file whose file before it is not in this checkout (a branch switched to while the session
    went on; core/journal.py), so its first record links to one that cannot be checked here."""
    out: list[Checked] = []
    seen = {} if seen is None else seen
    for line in lines:
        if line.record is None:
            continue
        record = line.record
        hash_ok = seal(record)["sha256"] == record["sha256"]
        seq = int(record["seq"])
        chain_ok = record["prev"] is None if seq == 1 else record["prev"] in seen.get(seq - 1, set())
        if resumed and not out and seq > 1 and seq - 1 not in seen:
            chain_ok = isinstance(record["prev"], str)
        out.append(Checked(line, hash_ok, chain_ok))
        seen.setdefault(seq, set()).add(record["sha256"])
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
