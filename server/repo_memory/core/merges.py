"""The review gate after a merge git made without our driver (a clone whose .git/config lacks it, git/skill_merge.py).

A merge commit that made a skill active with a folder (SKILL.md and the files beside it, what `accept --sha` covers)
that no parent held active, while a parent held it as a draft, joined an agent's unreviewed change to what a person
accepted: while the skill has not been a draft since, it goes back to draft (committed, as an agent's edit of a skill
is), so recall, the briefing, skills/list and the mirror do not serve it and doctor lists it for a person's accept or
reject. Git's rename detection follows a folder a side renamed. Each new commit is looked at once: when HEAD moves,
the merges it brought (one `git log` of each merge's diff against each parent names the folders it touched; then only
those are read, from git's objects); the first time in a clone, its whole history once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory.errors import GitError, NotFoundError
from repo_memory.core.codex_policy import SETTLED
from repo_memory.formats import skills
from repo_memory.git import underway
from repo_memory.git.committed import Committed
from repo_memory.git.repo import Git
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
                 redraft: Callable[[list[str], str], tuple[list[str], list[str]]]):
        self._committed, self._seen, self._sources, self._review = committed, state_dir / SEEN, sources, review
        self._redraft = redraft

    def check(self) -> list[str]:
        """Back to draft every skill whose current folder a new merge made active unreviewed; returns their names."""
        head = self._committed.head()
        if self._review != "required" or head is None:
            return []
        seen = self._seen.read_text(encoding="utf-8").strip() if self._seen.is_file() else ""
        git = self._committed.git
        if seen == head or underway.blocker(git) not in ("", "the index lock"):
            return []  # nothing new, or a rebase or merge under way: looked at once it is done
        known = seen and git.run("cat-file", "-e", f"{seen}^{{commit}}", check=False).returncode == 0
        try:  # each merge's diff against each parent, renames followed: every folder it took from some side
            found = git.run("log", "--merges", "-m", "--name-status", "-z", "-M", "--format=%x1e%H %P",
                            f"{seen}..{head}" if known else head, "--", *self._sources).stdout
        except GitError:
            return []
        done: set[str] = set()
        names = []
        for commit, parents, folders in _touched(found, self._sources):
            for folder, renamed in folders.items():
                if folder in done:
                    continue
                done.add(folder)  # newest first: an older merge's folder is not current
                if joined(git, commit, folder, parents, renamed) and self._current(commit, folder):
                    names += self._redraft([f"{folder}/{skills.SKILL_FILE}"], f"merge {commit[:7]}, which no person reviewed")[0]
        disk.write_atomic(self._seen, head.encode())
        return names

    def _current(self, commit: str, folder: str) -> bool:
        """Whether the skill in `folder` is still what merge `commit` made it: SKILL.md on disk as HEAD holds it (never a
        person's edit in progress to commit), and no commit since held it as a draft (a redraft a person then accepted)."""
        git, rel = self._committed.git, f"{folder}/{skills.SKILL_FILE}"
        try:
            if not self._committed.file(rel, disk.read_safely(git.root / rel)):
                return False
        except OSError:
            return False
        head = self._committed.head()
        if head is None or _folder_at(git, head, folder) == _folder_at(git, commit, folder):
            return head is not None
        since = git.run("log", "--format=%H", f"{commit}..{head}", "--", rel, check=False).stdout.split()
        return all(_status_at(git, c, rel) not in ("draft", "") for c in since)


def _touched(found: str, sources: tuple[str, ...]) -> list[tuple[str, list[str], dict[str, set[str]]]]:
    """From `git log -m --name-status -z -M` of merges: (merge, its parents, {skill folder: the folders it was renamed
    from}), newest first."""
    merges: dict[str, tuple[list[str], dict[str, set[str]]]] = {}
    for entry in found.split("\x1e")[1:]:
        header, *fields = entry.split("\0")
        commit, *parents = header.split()
        folders = merges.setdefault(commit, (parents, {}))[1]
        fields = [f.strip("\n") for f in fields]
        at = 0
        while at < len(fields) and fields[at]:
            paths = fields[at + 1:at + (3 if fields[at][0] in "RC" else 2)]
            at += 1 + len(paths)
            now, was = _folder(paths[-1], sources), _folder(paths[0], sources)
            if now:
                folders.setdefault(now, set()).update({was} if was and was != now else set())
    return [(commit, parents, folders) for commit, (parents, folders) in merges.items()]


def _folder(path: str, sources: tuple[str, ...]) -> str:
    """The skill folder `path` is in ('' for none)."""
    for source in sources:
        if path.startswith(f"{source}/") and "/" in path[len(source) + 1:]:
            return f"{source}/{path[len(source) + 1:].split('/', 1)[0]}"
    return ""


def joined(git: Git, commit: str, folder: str, parents: list[str] | None = None, renamed: set[str] | None = None) -> bool:
    """Whether merge `commit` made the skill in `folder` active with a folder (SKILL.md and the files beside it, as a
    person reviews it) that no parent held active, while a parent held it as a draft, or held files there but no
    SKILL.md: an unreviewed change joined to what a person accepted. `renamed`: the folders git found it renamed from."""
    if parents is None:
        parents = git.run("rev-list", "--parents", "-n1", commit, check=False).stdout.split()[1:]
    rel = f"{folder}/{skills.SKILL_FILE}"
    if len(parents) < 2 or _status_at(git, commit, rel) != "active":
        return False
    merged, unreviewed, reviewed = _folder_at(git, commit, folder), False, []
    for parent in parents:
        held = next((f for f in (folder, *sorted(renamed or ())) if _folder_at(git, parent, f)), "")
        status = _status_at(git, parent, f"{held}/{skills.SKILL_FILE}") if held else "none"
        unreviewed = unreviewed or status in ("draft", "")
        if status == "active":
            reviewed.append(_folder_at(git, parent, held))
    return unreviewed and merged not in reviewed


def _status_at(git: Git, commit: str, rel: str) -> str:
    """The status of the SKILL.md at `rel` at `commit` ('' when there is none)."""
    try:
        data = git.blob(commit, rel)
    except NotFoundError:
        return ""
    return skills.parse(data, rel, rel.rsplit("/", 2)[0]).status  # no status at all reads as active


def _folder_at(git: Git, commit: str, folder: str) -> frozenset[tuple[str, str]]:
    """What a person reviews of the skill in `folder` at `commit`: each file's path in it and blob id, but Codex's file
    (offering.settle's)."""
    inside = [f for f in git.modes_at(commit, (folder,)) if not f[len(folder) + 1:].startswith(SETTLED)]
    return frozenset((f, entry[0]) for f in inside if (entry := git.entry(commit, f)))
