"""The whole output of a tool call whose record holds only its opening (shells/tool_records.py), read back with the
record: from the blob the hook stored of the response (`output_blob`), or from git for a file a file tool read as HEAD
held it (`output_file`, by its git blob id). `read` of the record alone gives up to CHARS of it and says where the rest
is, so an agent reading its earlier evidence needs no git command of its own; a read of a range says only how long it is."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repo_memory.errors import InvalidArgumentError, NotFoundError
from repo_memory.formats import tool_output
from repo_memory.formats.experience import BLOB_DIR
from repo_memory.git.repo import run_at
from repo_memory.guards.shellwords import quoted

if TYPE_CHECKING:
    from repo_memory.core.journal import Journal

CHARS = 10_000  # of the output in a `read` answer: with the record's own 2,000 it stays within a page (reading.PAGE_CHARS)
_GIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # sha1 or sha256 repositories


def told(record: dict[str, Any], record_id: str) -> str:
    """What a record read among others says of the whole output it cites, reading none of it: how long it is, and to
    read the record alone for it ('' for any other record). A range inlining each record's output held one a page."""
    data = record.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("output_blob"), str) and not isinstance(data.get("output_file"), dict):
        return ""
    chars = data.get("output_chars")
    size = f"{chars:,} characters" if isinstance(chars, int) else "longer than output_text"
    return f"the call's whole output is {size}: read {record_id} alone for it (its first {CHARS:,} characters)"


def whole(record: dict[str, Any], journal: Journal, root: Path) -> tuple[str, str] | None:
    """(the output, a note saying what it is and where the rest is) of a tool record that cites its whole output, for
    a read of that record alone; None for any other record."""
    data = record.get("data")
    if not isinstance(data, dict):
        return None
    blob, file = data.get("output_blob"), data.get("output_file")
    if isinstance(blob, str):
        where = f"{BLOB_DIR}/{blob}"
        try:
            raw, intact = journal.blob(blob)
        except (InvalidArgumentError, NotFoundError) as exc:
            return "", f"the whole output is not in this checkout: {exc}"
        stored = raw.decode("utf-8", errors="replace")
        text = tool_output.said(stored, str(data.get("output_text", "")))  # as output_text holds its opening
        source = f"the blob {where}" + ("" if intact else " (it does not match its hash: edited since)" if raw else
                                        " (a redaction emptied it: what it held is gone on purpose)")
        rest = f"`cat {quoted(where)}` (the response as the harness gave it)"
    elif isinstance(file, dict) and isinstance(file.get("git_blob"), str) and _GIT_ID.fullmatch(file["git_blob"]):
        gid, path = file["git_blob"], str(file.get("path", ""))
        raw_file = _held(root, gid)
        if raw_file is None:
            return "", (f"the whole output ({path} as the tool read it) is not in this clone, and read does not fetch it: "
                        f"`git cat-file -p {gid}` fetches it in a partial clone; elsewhere fetch the commit that holds it")
        text = raw_file.decode("utf-8", errors="replace")
        source, rest = f"{path} as git holds it (blob {gid})", f"`git cat-file -p {gid}`"
    else:
        return None
    if len(text) <= CHARS:
        return text, f"the whole output of the call ({len(text):,} characters), from {source}"
    return text[:CHARS], f"the first {CHARS:,} of {len(text):,} characters of the call's output, from {source}; the rest: {rest}"


def _held(root: Path, gid: str) -> bytes | None:
    """The bytes of git's object `gid` when this clone holds it, else None. A partial clone's `git cat-file` of an
    object it lacks fetches it from the remote, waiting on the network: a read must not, for this convenience."""
    local = {"GIT_NO_LAZY_FETCH": "1"}  # git 2.44+; before it only some commands turn lazy fetching off
    try:  # rev-list's --missing=print is one of them (git 2.20+): it exits non-zero on an object not here
        if run_at(root, "rev-list", "--objects", "--no-walk", "--missing=print", gid, env=local) is None:
            return None  # the id, checked by the caller, never passes for an option
        return run_at(root, "cat-file", "blob", gid, env=local)
    except subprocess.TimeoutExpired:
        return None
