"""Hook deliveries: one event a harness delivered twice (two registrations of our hooks) told from two events, and
the tool calls Claude Code never delivered (its `mcp_tool` hook skipped while the server was not connected), read back
from its transcript."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repo_memory.core.store import Store
from repo_memory.errors import InvalidRecordError, NotFoundError
from repo_memory.formats import nesting, refs
from repo_memory.git.pending import SESSIONS_DIR, alive
from repo_memory.shells import hookcalls, pretool
from repo_memory.guards.shellwords import quoted

DUPLICATE_WINDOW = 10.0  # seconds within which an identical hook payload is one event delivered twice (registrations run together)
# Kept whatever the event: what a harness without call ids puts in every registration's copy of one event, and differs
# between two identical calls (Gemini CLI's time of the event, in ms; Claude Code sends none), and our loop run's id.
MARKS = ("timestamp", "run")
EVENT_NAMES = {handler: event for event, handler in hookcalls.HANDLER.items()}
EVENTS_DIR = "hook-events"  # in the state folder: a marker per event delivered (first_delivery)


def first_delivery(state_dir: Path, event: str, payload: dict[str, Any]) -> bool:
    """Whether this is the first delivery of this event: a harness runs every registration of a hook at the same moment,
    so a marker named by what identifies the event, created exclusively, lets exactly one through. A marker older than
    DUPLICATE_WINDOW seconds is a past event that happened to look the same, not a duplicate."""
    digest = hashlib.sha256(json.dumps(identity(event, payload), sort_keys=True, default=str).encode()).hexdigest()[:40]
    folder = state_dir / EVENTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / digest
    for _ in range(2):
        try:
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            forget_past(folder)
            return True
        except FileExistsError:
            try:
                if time.time() - marker.stat().st_mtime < DUPLICATE_WINDOW:
                    return False
                marker.unlink()
            except FileNotFoundError:
                pass
    return False


def forget_past(folder: Path) -> None:
    """Delete the markers in `folder` older than DUPLICATE_WINDOW seconds: no longer of use, and one is made per tool
    call (about 800 an hour), so each new one takes those past with it and a session of any length leaves few."""
    horizon = time.time() - DUPLICATE_WINDOW
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):  # another process's delivery took it first
                if entry.stat().st_mtime < horizon:
                    os.unlink(entry.path)


def identity(event: str, payload: dict[str, Any]) -> list[Any]:
    """What is the same in every registration's delivery of one event, and differs between two events. A command hook
    gets the harness's whole input, an `mcp_tool` hook the fields it names (hookcalls.FIELDS): so a tool call is its
    session and the harness's id of the call, and any other event those fields and MARKS, plus the transcript's size,
    which tells apart two events that look the same a turn apart (an agent saying the same words at two stops: the
    harness writes each turn to it before it runs the hooks)."""
    call = payload.get("tool_use_id")
    if isinstance(call, str) and call:
        return [event, payload.get("session_id"), call]
    fields = hookcalls.FIELDS.get(EVENT_NAMES.get(event, ""))
    shared = {k: v for k, v in payload.items() if fields is None or (k in fields and v not in ("", None)) or k in MARKS}
    return [event, shared, size(payload.get("transcript_path"))]


def size(path: object) -> int:
    """The size of the file at `path` (-1 when there is none)."""
    try:
        return os.stat(path).st_size if isinstance(path, str) and path else -1
    except OSError:
        return -1


def claude_transcript(session: str) -> Path | None:
    """Claude Code's transcript of `session` ($CLAUDE_CONFIG_DIR or ~/.claude, projects/<folder>/<session>.jsonl)."""
    if not refs.SESSION.match(session):
        return None
    projects = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"
    with contextlib.suppress(OSError):
        return next(iter(projects.glob(f"*/{session}.jsonl")), None)
    return None


@dataclass
class Readback:
    """What Claude Code's transcript of a session holds that its PostToolUse hooks may not have delivered."""

    calls: list[dict[str, Any]] = field(default_factory=list)  # the PostToolUse input of each call, in order
    others: set[str] = field(default_factory=set)  # the other sessions its lines name (a resumed or forked conversation's)
    unreadable: int = 0  # lines that are no JSON object, or hold a message of another shape
    cut: bool = False  # the deadline came before the end of the file

    def said(self, left: int, transcript: Path) -> str:
        """What the session's end record adds: the calls `left` unrecorded, the lines not read."""
        notes = [f"{left} tool call(s) its hooks missed were not recorded (time ran out)" if left else "",
                 "the transcript was not read to its end (time ran out)" if self.cut else "",
                 f"{self.unreadable} transcript line(s) could not be read" if self.unreadable else ""]
        told = "; ".join(filter(None, notes))
        more = f": `repo-memory log import {quoted(str(transcript))}` adds what is missing" if left or self.cut else ""
        return f" {told[0].upper()}{told[1:]}{more}." if told else ""


def undelivered(transcript: Path, session: str, deadline: float) -> Readback:
    """Each main-thread call of `session` in Claude Code's `transcript` that succeeded (PostToolUse fires for no other),
    read until `deadline` (time.monotonic). A call made in another session is that session's: `--fork-session` copies
    the earlier conversation into the new transcript, each copied request naming its session (`requestSessionId`)."""
    back, calls = Readback(), dict[str, dict[str, Any]]()
    with contextlib.suppress(OSError), transcript.open("rb") as lines:
        for number, raw in enumerate(lines):
            if number % 256 == 0 and time.monotonic() > deadline:
                back.cut = True
                break
            try:
                _read(nesting.loads(raw), session, calls, back)
            except (ValueError, TypeError, AttributeError, KeyError):
                back.unreadable += 1  # a line cut short, or of a shape this version of repo-memory does not know
    return back


def recorded(records: Iterable[dict[str, Any] | None]) -> set[str]:
    """The tool-call ids `records` name (hooks record each call with its id)."""
    return {r["data"]["call_id"] for r in records if r and isinstance(r.get("data"), dict) and isinstance(r["data"].get("call_id"), str)}


def recorded_in(store: Store, sessions: Iterable[str]) -> set[str]:
    """The tool-call ids the logs of `sessions` here name (a few: the ones a transcript's lines name)."""
    found: set[str] = set()
    for session in sorted(s for s in sessions if refs.SESSION.match(s))[:20]:
        with contextlib.suppress(NotFoundError, InvalidRecordError):
            found |= recorded(line.record for line in store.lines(session))
    return found


def _read(line: Any, session: str, calls: dict[str, dict[str, Any]], back: Readback) -> None:
    if not isinstance(line, dict):
        raise TypeError("not an object")
    made_in = line.get("requestSessionId") or line.get("sessionId")
    if isinstance(made_in, str) and made_in and made_in != session:
        back.others.add(made_in)
    message = line.get("message")
    if "message" in line and not isinstance(message, dict):
        raise TypeError("a message that is no object")
    content = message.get("content") if message and not line.get("isSidechain") else None
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue  # a block of another shape in a line Claude Code wrote: its other blocks still count
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str) and made_in in (session, None, ""):
            calls[block["id"]] = {"session_id": session, "cwd": line.get("cwd"), "tool_use_id": block["id"],
                                  "tool_name": block.get("name"), "tool_input": block.get("input")}
        elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls and not block.get("is_error"):
            back.calls.append({**calls.pop(block["tool_use_id"]), "tool_response": line.get("toolUseResult", block.get("content")),
                               "ended": line.get("timestamp")})  # when its result came: a window for what it changed


def forget_old(state_dir: Path) -> None:
    """Markers of events delivered past DUPLICATE_WINDOW, of tool calls whose PostToolUse never came (refused by another
    hook) over an hour old, and the sessions noted for harness processes that have ended."""
    forget_past(state_dir / EVENTS_DIR)
    horizon = time.time() - 3600
    with contextlib.suppress(OSError):  # the sessions noted for harness processes that have ended
        for entry in os.scandir(state_dir / SESSIONS_DIR):
            pid, _, started = entry.name.partition("-")
            if not (pid.isdigit() and started.isdigit() and alive(int(pid), int(started))):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
    with contextlib.suppress(OSError), os.scandir(state_dir / pretool.CALLS_DIR) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < horizon:
                    os.unlink(entry.path)
