"""The message of a memory commit: a subject, a line per change when there are several, and trailers naming the
sessions and the harness; a session's line gives the span of records the commit adds (and how a loop run ended)."""

from __future__ import annotations

import json
import os

from repo_memory.errors import UnsafePathError
from repo_memory.git.pending import Pending
from repo_memory.git.repo import Git
from repo_memory.guards import disk

LISTED = 20  # changes and sessions a commit message names one by one (a bulk import touches thousands)
COMMITTER = "repo-memory"  # the committer of every memory commit (its author is the person, committer.py)
NOBODY = ("repo-memory", "repo-memory@localhost")  # the author when nothing names the person (a fresh machine, a CI container)
NAME_YOURSELF = ('Set who you are: `git config --global user.name "Your Name"` and `git config --global user.email '
                 'you@example.com`, or name the author of memory commits in .agents/repo-memory.toml: '
                 '`author = {name = "...", email = "..."}`.')


def author(git: Git, name: str | None, email: str | None) -> tuple[str, str]:
    """The author of memory commits: the config's `author`, else who git says the person is, else NOBODY's parts."""
    return (name or os.environ.get("GIT_AUTHOR_NAME") or git.config("user.name") or NOBODY[0],
            email or os.environ.get("GIT_AUTHOR_EMAIL") or git.config("user.email") or NOBODY[1])


def identity(git: Git, name: str | None, email: str | None) -> dict[str, str]:
    """A memory commit's environment: the author is the person (`author`); the committer is repo-memory."""
    name, email = author(git, name, email)
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": COMMITTER, "GIT_COMMITTER_EMAIL": email}


def nameless(git: Git, name: str | None, email: str | None) -> str:
    """What to tell a person whose memory commits name no one (no `author`, user.name or user.email), else ''."""
    who = author(git, name, email)
    if who[0] != NOBODY[0] and who[1] != NOBODY[1]:
        return ""
    return (f"memory commits are authored as {who[0]} <{who[1]}>, no person: no git identity (user.name, user.email) "
            "is set here")


def compose(git: Git, entries: list[Pending], harness: str | None, default_harness: str) -> str:
    """The message of a commit of `entries`; `harness` names the harness(es) when not this process's (an import)."""
    first: dict[str, str] = {}
    for e in entries:
        if e.kind == "doc":
            first.setdefault(e.path, e.message)  # a skill added then updated in one commit was added
    messages = list(dict.fromkeys(first.values()))
    base = git.memory_head()
    sessions = list(dict.fromkeys(e.session for e in entries if e.kind == "experience" and e.session))
    for n, session in enumerate(sessions):
        logs = sorted({e.path for e in entries if e.session == session and e.path.endswith(".jsonl")})
        spans = [span for path in logs if (span := _span(git, base, path))] if n < LISTED else []
        low, high = min((a for a, _, _ in spans), default=0), max((b for _, b, _ in spans), default=0)
        ended = next((state for _, _, state in spans if state), "")  # a loop run's commit says how it ended
        messages.append(f"memory(experience): {session}" + (f"#{low}" if low else "") + (f"-{high}" if high > low else "")
                        + (f", run ended {ended}" if ended else ""))
    messages = list(dict.fromkeys(messages)) or ["memory: update"]
    subject = messages[0] if len(messages) == 1 else f"memory: {len(messages)} changes"
    listed = [f"- {m}" for m in messages[:LISTED]] + ([f"- … and {len(messages) - LISTED} more"] if len(messages) > LISTED else [])
    body = "" if len(messages) == 1 else "\n" + "\n".join(listed) + "\n"
    sessions = sorted({e.session for e in entries if e.session})
    trailers = "".join(f"Memory-Session: {s}\n" for s in sessions[:LISTED])
    if len(sessions) > LISTED:
        trailers += f"Memory-Sessions: {len(sessions)}\n"
    named = harness or default_harness
    if (sessions or harness) and named != "unknown":  # init's scaffolding, and a note typed at a terminal, name none
        trailers += f"Memory-Harness: {named}\n"
    return f"{subject}\n{body}\n{trailers}" if trailers else f"{subject}\n{body}"


def _span(git: Git, base: str | None, path: str) -> tuple[int, int, str] | None:
    """(first, last) seq of the records the log at `path` holds beyond its committed version (what this commit adds),
    and how the loop run they end ended ('' when they end none)."""
    try:
        data = disk.read_safely(git.root / path)
    except (OSError, UnsafePathError):
        return None
    now = _last_seq(data)
    if base and git.entry(base, path):
        before = _last_seq(git.blob(base, path))
        return (before + 1, now, _ended(data, before + 1)) if now > before else None
    first = _last_seq(data, first=True)  # a new file: a session's next (core/journal.py) begins past #1
    return (first, now, _ended(data, first)) if now else None


def _last_seq(log: bytes, first: bool = False) -> int:
    """The seq of the last (`first`: the first) record of an experience log (0 when it has none)."""
    for line in (log.splitlines() if first else reversed(log.splitlines())):
        try:
            seq = json.loads(line).get("seq")
        except (ValueError, AttributeError):
            continue
        if isinstance(seq, int):
            return seq
    return 0


def _ended(log: bytes, first: int) -> str:
    """How a loop run ended, when the records from seq `first` on hold its receipt (a `loop.end`); else ''."""
    for line in reversed(log.splitlines()):
        try:
            record = json.loads(line)
            seq, kind, state = record.get("seq"), record.get("kind"), record.get("data", {}).get("state")
        except (ValueError, AttributeError):
            continue
        if not isinstance(seq, int) or seq < first:
            return ""
        if kind == "loop.end" and isinstance(state, str):
            return state
    return ""
