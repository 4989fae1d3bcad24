"""Where the memory folders stand with git, for doctor: written but not committed, deleted, changed by hand, or left
in a merge conflict, and the git operation under way that a conflict belongs to."""

from __future__ import annotations

from dataclasses import dataclass, field

from repo_memory.git.repo import Git

# `git status --porcelain` codes of a path a merge, rebase or cherry-pick left unmerged: the file on disk is whatever git
# left (with conflict markers, or one side's version), and `git restore` and `git commit` refuse it until it is added or
# removed.
UNMERGED = {"DD", "AU", "UD", "UA", "DU", "AA", "UU"}


@dataclass(frozen=True)
class Health:
    """Where memory stands with git, for doctor."""

    pending: int  # memory paths written but not committed yet (any process)
    deferred: str  # why the last commit attempt waits, if it does
    repaired: list[str]  # index entries an interrupted commit had left out, put back when this process started
    at_risk: list[str]  # memory files staged for deletion although they are in HEAD and on disk
    uncommitted: list[str]  # memory files that differ from HEAD (changed or new) and are not pending
    deleted: list[str]  # memory files git holds that are gone from the working tree (not staged for deletion)
    conflicted: list[tuple[str, str]] = field(default_factory=list)  # (path, status code) of memory files left unmerged
    underway: str = ""  # the git operation under way ('a merge', 'a rebase', …), '' when none


def worktree(git: Git, folders: tuple[str, ...]) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """(changed or new, deleted, unmerged with their codes) memory files under `folders`, as `git status` says."""
    status = git.run("status", "--porcelain", "-z", "--untracked-files=all", "--", *folders, check=False).stdout
    entries = [entry for entry in status.split("\0") if len(entry) > 3]
    conflicted = sorted((entry[3:], entry[:2]) for entry in entries if entry[:2] in UNMERGED)
    settled = [entry for entry in entries if entry[:2] not in UNMERGED]
    deleted = sorted({entry[3:] for entry in settled if entry[1] == "D"})
    return sorted({entry[3:] for entry in settled} - set(deleted)), deleted, conflicted
