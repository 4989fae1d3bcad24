"""A person's review of a skill or a loop spec counts for the content they read (named by its sha), and turning a
draft down undoes the agent's change, never the person's work."""

from __future__ import annotations

import re
from pathlib import Path

from repo_memory.config import SKILLS_DIR
from repo_memory.core import codex_policy
from repo_memory.errors import ConflictError, InvalidArgumentError
from repo_memory.formats import skills
from repo_memory.git.committed import Committed
from repo_memory.git.committer import Committer
from repo_memory.git.repo import Git
from repo_memory.guards import disk


def reviewed(what: str, sha: str, current: str, show: str, other: str = "") -> None:
    """Raise unless `sha` (7+ hex digits) is a prefix of `current`: the content a person reviewed is the content now.
    `other`, a skill file's own sha256 (which `read` and `skill_write` give), is named as such, not as a change."""
    if not re.fullmatch(r"[0-9a-f]{7,64}", sha.lower()):
        raise InvalidArgumentError(f"--sha takes the hash `{show}` printed (7 to 64 hex digits), not {sha[:70]!r}.")
    if other and other.startswith(sha.lower()) and not current.startswith(sha.lower()):
        raise InvalidArgumentError(f"{sha[:12]} is the sha256 of {what}'s SKILL.md file; --sha takes the sha of the whole reviewed "
                                   f"folder, which `{show}` prints (now {current[:12]}). Nothing was accepted.")
    if not current.startswith(sha.lower()):
        raise ConflictError(f"{what} changed since the version you reviewed (sha {sha[:12]}; now {current[:12]}). "
                            f"Nothing was accepted. Review it again: `{show}` (or `git diff`), then accept with its new sha.")


def turn_down(git: Git, committed: Committed, name: str, path: Path, rel: str) -> tuple[list[str], str, str]:
    """Reject draft skill `name` (its SKILL.md at `path`, `rel`): back to the last version a commit holds as active,
    or, when none was ever accepted, deleted — but never a file beside it that no commit holds as it is (a person's,
    which nothing could bring back). Returns (changed paths, commit message, what was done)."""
    source = rel.rsplit("/", 2)[0]
    for commit, data in git.versions(rel):
        found = skills.parse(data, rel, source)
        if found.status == "active" and not found.problems:
            disk.write_atomic(path, data)
            return ([rel], f"memory(skill): reject {name}, back to {commit[:7]}",
                    f"rejected the draft: skill:{name} is back to its last accepted version (commit {commit[:7]})")
    if source != SKILLS_DIR:  # a person's own folder (.claude/skills): never deleted on the strength of an agent's draft
        raise ConflictError(f"skill:{name} in {source} was never committed as active, so git holds no version to go back to "
                            f"and reject would delete a folder of yours: edit {rel} by hand (`git diff -- {rel}`).")
    folder, head = path.parent, committed.head()
    entries = sorted(folder.rglob("*"), reverse=True)  # deepest first, so folders are empty when removed
    files = [p for p in entries if p.is_file() or p.is_symlink()]
    ours = codex_policy.ours_in(folder)  # written with the draft
    held = [p for p in files if p == path or p in ours or not p.is_symlink() and committed.file(f"{source}/{name}/{p.relative_to(folder).as_posix()}",
                                                                                      disk.read_safely(p), head)]
    if len(held) < len(files):
        unheld = ", ".join(p.relative_to(folder).as_posix() for p in files if p not in held)
        raise ConflictError(f"skill:{name} was never accepted, so reject deletes it, but {unheld} beside it is in no commit "
                            f"(a person's?). Move or delete it yourself, then run `repo-memory reject {name}` again.")
    for entry in entries:
        entry.rmdir() if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    folder.rmdir()
    return ([f"{source}/{name}/{p.relative_to(folder).as_posix()}" for p in files], f"memory(skill): reject {name}",
            f"rejected and deleted the draft skill:{name}")


def unsaved(committer: Committer, committed: Committed, path: Path, rel: str, doing: str) -> None:
    """Refuse `doing` to a skill whose file holds what no commit has and repo-memory did not write: a person's edit in
    progress, which the memory commit would take as the agent's, or a rejection would lose."""
    if committer.mode in ("auto", "private") and not committed.file(rel, disk.read_safely(path)) and not committer.waiting(rel):
        raise ConflictError(f"{rel} has changes that no commit holds and repo-memory did not write (a person's edit in "
                            f"progress?); {doing} would commit them. Commit or discard them first (`git diff -- {rel}`).")
