"""What the post-tool hook does for the other repositories a session's tools reach (shells/neighbours.py): a skill
there that an agent's file or shell call named goes back to draft in its own repository, by that repository's settings,
as its own hooks would have done."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

from repo_memory.config import SKILLS_DIR, Config
from repo_memory.core import mirror, skill_changes
from repo_memory.core.store import Store
from repo_memory.errors import RepoMemoryError
from repo_memory.formats import skills
from repo_memory.git.committed import Committed
from repo_memory.git.repo import IN_PROGRESS, Git
from repo_memory.shells import neighbours, pretool

log = logging.getLogger("repo_memory")


def redraft(store: Store, tool: str, payload: dict[str, Any], before: dict[str, str]) -> list[str]:
    """Put back to draft the skills of other repositories holding memory that the call of `payload` named and changed
    (from their fingerprints `before` it; core/skill_changes.py); the words telling the agent so. A repository in the
    middle of a rebase or merge is not written: its person is told through the agent instead."""
    notes = []
    for top, rels in named(store.root, tool, payload).items():
        try:
            names, busy = _redraft(top, rels, tool, before)
        except (RepoMemoryError, OSError, sqlite3.Error) as exc:
            log.warning("hook post-tool: could not look at the skills %s names in %s: %s", tool, top, exc)
            continue
        if names and busy:
            notes.append(f"repo-memory: {', '.join(f'skill:{n}' for n in names)} of the repository {top} changed by this "
                         f"session, which repo-memory did not put back to draft: {busy} is under way there and its files are "
                         "left alone. Tell the user: the change is not reviewed, so it should not be committed unseen.")
        elif names:
            notes.append(f"repo-memory: {', '.join(f'skill:{n}' for n in names)} of the repository {top} changed by this "
                         "session's file edits, so it is a draft again there until a person runs `repo-memory accept` in it.")
    return notes


def named(root: Path, tool: str, payload: dict[str, Any]) -> dict[Path, list[str]]:
    """The paths a file tool writes or a shell line names in other repositories holding memory, relative to each."""
    cwd = Path(payload["cwd"]) if isinstance(payload.get("cwd"), str) and payload["cwd"] else root
    found: dict[Path, list[str]] = {}
    for path in pretool.named_paths(tool, payload.get("tool_input"), cwd):
        top = neighbours.top_of(path)
        if top is not None and top != root.resolve() and neighbours.with_memory(top):
            found.setdefault(top, []).append(path.relative_to(top).as_posix())
    return found


def _redraft(top: Path, rels: list[str], tool: str, before: dict[str, str]) -> tuple[list[str], str]:
    """The skills of `top` put back to draft; or, while a rebase or merge is under way there, those changed, and what is."""
    config = Config.load(top)
    sources = (SKILLS_DIR, *config.skill_dirs)
    if not any(rel.startswith(f"{source}/") for rel in rels for source in sources):
        return [], ""  # no Store opened for a file of no skill
    git = Git(config.root, config.git_dir)
    if busy := next((what for name, what in IN_PROGRESS.items() if (config.git_dir / name).exists()), ""):
        committed = Committed(git)  # the person's files mid-operation are theirs: a write would be in their next commit
        folders = {f for rel in rels if (f := skill_changes.skill_of(rel, sources)) and (top / f / skills.SKILL_FILE).is_file()}
        return sorted(f.rsplit("/", 1)[-1] for f in folders if skill_changes.changed(top / f, f, before, committed)), busy
    other = Store(config)
    try:
        taken = mirror.take(other.root, config.state_dir, rels, None)  # an edit of Claude Code's copy: to its skill
        names = other.redraft([*rels, *(t.skill for t in taken if t.skill)], tool, before=before)[0]
        if names:
            mirror.withdraw(other.root, config.state_dir, names)
        return names, ""
    finally:
        other.close()  # committed now: no session of that repository ends to commit it
