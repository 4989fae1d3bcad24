"""Memory through time: the commits that changed a file, with their diffs, and a file as it stood at a date or commit."""

from __future__ import annotations

from dataclasses import dataclass

from repo_memory.git.repo import Git

DIFF_CHARS = 4000


@dataclass(frozen=True)
class Change:
    """One commit that touched a file, with its diff (rendered by the textconv driver when configured)."""

    sha: str
    date: str
    author: str
    subject: str
    diff: str


def changes(git: Git, path: str, since: str | None = None, limit: int = 20) -> list[Change]:
    """Commits that changed `path`, newest first, each with its diff — one `git log -p` walk."""
    out = []
    for block in git.log(path, since, limit).split("\x1e")[1:]:
        header, _, diff = block.partition("\n")
        sha, date, author, subject = header.split("\x1f", 3)
        diff = diff.strip("\n") + "\n" if diff.strip() else ""
        out.append(Change(sha, date, author, subject, diff if len(diff) <= DIFF_CHARS else diff[:DIFF_CHARS] + "\n… (diff truncated)"))
    return out


def at(git: Git, path: str, as_of: str) -> tuple[str, bytes]:
    """(commit, bytes) of `path` at a commit or a date (the last commit at or before it); read from objects, no checkout."""
    commit, _ = git.resolve(as_of)
    return commit, git.blob(commit, path)
