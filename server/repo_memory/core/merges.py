"""The review gate after a merge git made without our driver (a clone whose .git/config lacks it, git/skill_merge.py).

A merge commit that holds a SKILL.md neither parent held, reading as active while a parent held it as a draft, joined
an agent's unreviewed change to text a person accepted: while it is the skill's current text, it goes back to draft
(committed, as an agent's edit of a skill is), so recall, the briefing, skills/list and the mirror do not serve it and
doctor lists it for a person's accept or reject. Each new commit is looked at once: when HEAD moves, the merges it
brought (one `git log`, whose combined diff names just the files a merge took from neither parent); the first time in
a clone, its whole history once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory.errors import GitError, NotFoundError
from repo_memory.formats import skills
from repo_memory.git import underway
from repo_memory.git.committed import Committed
from repo_memory.git.repo import Git
from repo_memory.git.skill_merge import unreviewed
from repo_memory.guards import disk
from repo_memory.index.docs import SyncReport

if TYPE_CHECKING:
    from repo_memory.core.skillbook import Skillbook

SEEN = "merges-seen"  # in the state folder: the last HEAD whose merges were looked at


def after(report: SyncReport, git: Git, book: Skillbook) -> SyncReport:
    """Look at the merges new since the last look, after an index refresh (its `report`, passed on)."""
    Merges(committed=Committed(git), state_dir=book.state_dir, sources=book.sources, review=book.review_policy,
           redraft=book.redraft).check()
    return report


class Merges:
    """The merges that brought skills to one clone, looked at for text no person accepted."""

    def __init__(self, *, committed: Committed, state_dir: Path, sources: tuple[str, ...], review: str,
                 redraft: Callable[[list[str], str], list[str]]):
        self._committed, self._seen, self._sources, self._review = committed, state_dir / SEEN, sources, review
        self._redraft = redraft

    def check(self) -> list[str]:
        """Back to draft every skill whose current text a new merge made active unreviewed; returns their names."""
        head = self._committed.head()
        if self._review != "required" or head is None:
            return []
        seen = self._seen.read_text(encoding="utf-8").strip() if self._seen.is_file() else ""
        git = self._committed.git
        if seen == head or underway.blocker(git) not in ("", "the index lock"):
            return []  # nothing new, or a rebase or merge under way: looked at once it is done
        known = seen and git.run("cat-file", "-e", f"{seen}^{{commit}}", check=False).returncode == 0
        try:
            found = git.run("log", "--merges", "-c", "--name-only", "--no-renames", "--format=%x1e%H",
                            f"{seen}..{head}" if known else head, "--", *self._sources).stdout
        except GitError:
            return []
        done: set[str] = set()
        names = []
        for entry in found.split("\x1e")[1:]:
            commit, *paths = entry.split()
            for rel in [p for p in paths if p.endswith(f"/{skills.SKILL_FILE}") and p not in done]:
                done.add(rel)  # newest first: an older merge's text is not current
                if self._current(commit, rel) and joined(git, commit, rel):
                    names += self._redraft([rel], f"merge {commit[:7]}, which no person reviewed")
        disk.write_atomic(self._seen, head.encode())
        return names

    def _current(self, commit: str, rel: str) -> bool:
        """Whether the file at `rel` is, on disk and at HEAD, what merge `commit` made of it."""
        try:
            data = disk.read_safely(self._committed.git.root / rel)
        except OSError:
            return False
        made = self._committed.git.entry(commit, rel)
        return made is not None and self._committed.file(rel, data) and self._committed.file(rel, data, commit)


def joined(git: Git, commit: str, rel: str) -> bool:
    """Whether `commit` is a merge that made the SKILL.md at `rel` active from a parent's draft, with text no active
    parent held (an unreviewed change joined to accepted text)."""
    parents = git.run("rev-list", "--parents", "-n1", commit, check=False).stdout.split()[1:]
    if len(parents) < 2:
        return False
    try:
        merged = git.blob(commit, rel)
    except NotFoundError:
        return False
    sides = []
    for parent in parents:
        try:
            sides.append(git.blob(parent, rel))
        except NotFoundError:
            sides.append(b"")
    return unreviewed(merged, tuple(sides), rel)
