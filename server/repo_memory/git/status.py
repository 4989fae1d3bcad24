"""Where the memory folders stand with git, for doctor: written but not committed, deleted, changed by hand, or left
in a merge conflict, and the git operation under way that a conflict belongs to."""

from __future__ import annotations

from dataclasses import dataclass, field

from repo_memory.git.repo import Git
from repo_memory.guards.shellwords import quoted

# `git status --porcelain` codes of a path a merge, rebase or cherry-pick left unmerged: the file on disk is whatever git
# left (with conflict markers, or one side's version), and `git restore` and `git commit` refuse it until it is added or
# removed.
UNMERGED = {"DD", "AU", "UD", "UA", "DU", "AA", "UU"}
_KEEP, _EDIT = ("Keep it with `git add {quoted}`, drop it with `git rm {quoted}`",
                "Edit {path} to the one version you want (no `<<<<<<<` lines left), then `git add {quoted}`")
_SETTLED = {"UD": ("deleted by them", _KEEP), "DU": ("deleted by us", _KEEP), "AU": ("added by us", _KEEP),
            "UA": ("added by them", _KEEP), "DD": ("both deleted", "Drop it with `git rm {quoted}`"),
            "UU": ("both modified", _EDIT), "AA": ("both added", _EDIT)}


def unmerged(code: str, path: str) -> tuple[str, str]:
    """git status's words for unmerged `code`, and how `path` is settled before the operation under way can go on."""
    words, settle = _SETTLED[code]
    return words, settle.format(path=path, quoted=quoted(path))


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
    held: list[str] = field(default_factory=list)  # of the pending paths, those the last flush held back (foreign, a secret)
    staged: list[str] = field(default_factory=list)  # with commit = "stage": memory files staged whole, for the person's commit
    nameless: str = ""  # what to say when memory commits would name no person as their author (no git identity), else ''
    why: dict[str, str] = field(default_factory=dict)  # each held path: why, and how it is settled


def worktree(git: Git, folders: tuple[str, ...]) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """(changed or new, deleted, unmerged with their codes) memory files under `folders`, as `git status` says."""
    status = git.run("status", "--porcelain", "-z", "--untracked-files=all", "--", *folders, check=False).stdout
    entries = entries_of(status)
    conflicted = sorted((path, code) for code, path, _ in entries if code in UNMERGED)
    settled = [(code, path, source) for code, path, source in entries if code not in UNMERGED]
    deleted = {path for code, path, _ in settled if code[1] == "D"}
    renamed = {source for code, _, source in settled if source and "R" in code}  # gone from its old path: part of the change
    return sorted(({path for _, path, _ in settled} | renamed) - deleted), sorted(deleted), conflicted


def staged(git: Git, folders: tuple[str, ...]) -> set[str]:
    """Memory files under `folders` staged whole: the index differs from HEAD and the working tree from neither."""
    status = git.run("status", "--porcelain", "-z", "--untracked-files=no", "--", *folders, check=False).stdout
    return {path for code, path, _ in entries_of(status) if code[0] in "AMR" and code[1] == " "}


def entries_of(porcelain: str) -> list[tuple[str, str, str]]:
    """(XY code, path, source path of a rename or copy, else '') of each entry of `git status --porcelain -z`.

    A rename or copy is `XY new\0old\0`: its source is the next field, bare, with no `XY ` before it."""
    fields, out = iter(porcelain.split("\0")), []
    for entry in fields:
        if len(entry) < 4:
            continue  # the empty field after the last NUL
        code, path = entry[:2], entry[3:]
        out.append((code, path, next(fields, "") if "R" in code or "C" in code else ""))
    return out
