"""Memory through time: the commits that changed a file, with their diffs, and a file as it stood at a date or commit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from repo_memory.git.repo import Git

DIFF_CHARS = 4000


@dataclass(frozen=True)
class Change:
    """One commit that touched a file, with its diff (rendered by the textconv driver when configured)."""

    sha: str
    date: str  # UTC, 2026-12-05T23:27:26Z
    author: str
    subject: str
    diff: str


def changes(git: Git, paths: list[str], since: str | None = None, limit: int = 20) -> list[Change]:
    """Commits that changed any of `paths` (pathspecs), newest first, each with its diff — one `git log -p` walk."""
    out = []
    for block in git.log(paths, since, limit).split("\x1e")[1:]:
        header, _, diff = block.partition("\n")
        sha, date, author, subject = header.split("\x1f", 3)
        diff = diff.strip("\n") + "\n" if diff.strip() else ""
        out.append(Change(sha, _utc(date), author, subject, diff if len(diff) <= DIFF_CHARS else diff[:DIFF_CHARS] + "\n… (diff truncated)"))
    return out


def _utc(date: str) -> str:
    """A commit's author date (ISO, with the author's offset) as every answer spells a time: 2026-12-05T23:27:26Z."""
    try:
        return datetime.fromisoformat(date).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return date


def at(git: Git, path: str, as_of: str, rest: list[str] | None = None) -> tuple[str, bytes]:
    """(commit, bytes) of `path` at a commit or a date (the last commit at or before it); read from objects, no checkout.
    The files in `rest` follow it, those the commit has (a session's later log files)."""
    commit, _ = git.resolve(as_of)
    data = git.blob(commit, path)
    for more in rest or []:
        if git.entry(commit, more) is not None:
            data += git.blob(commit, more)
    return commit, data
