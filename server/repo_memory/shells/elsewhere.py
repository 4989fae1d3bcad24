"""What the post-tool hook does for the other repositories a session's tools reach (shells/neighbours.py): a skill
there that an agent's file or shell call named goes back to draft in its own repository, by that repository's settings,
as its own hooks would have done."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

from repo_memory.config import SKILLS_DIR, Config
from repo_memory.core import mirror
from repo_memory.core.store import Store
from repo_memory.errors import RepoMemoryError
from repo_memory.shells import neighbours, pretool

log = logging.getLogger("repo_memory")


def redraft(store: Store, tool: str, payload: dict[str, Any]) -> list[str]:
    """Put back to draft the skills of other repositories holding memory that the call of `payload` named; the words
    telling the agent so."""
    notes = []
    for top, rels in named(store.root, tool, payload).items():
        try:
            names = _redraft(top, rels, tool)
        except (RepoMemoryError, OSError, sqlite3.Error) as exc:
            log.warning("hook post-tool: could not look at the skills %s names in %s: %s", tool, top, exc)
            continue
        if names:
            notes.append(f"repo-memory: {', '.join(f'skill:{n}' for n in names)} of the repository {top} changed by this "
                         "session's file edits, so it is a draft again there until a person runs `repo-memory accept` in it.")
    return notes


def named(root: Path, tool: str, payload: dict[str, Any]) -> dict[Path, list[str]]:
    """The paths a file tool writes or a shell line names in other repositories holding memory, relative to each."""
    tool_input = payload.get("tool_input")
    cwd = Path(payload["cwd"]) if isinstance(payload.get("cwd"), str) and payload["cwd"] else root
    if tool in pretool.FILE_TOOLS:
        paths = [neighbours.resolved(name, cwd) for name in pretool.named_files(tool_input)]
    elif tool in pretool.SHELL_TOOLS:
        command = tool_input.get("command") if isinstance(tool_input, dict) else tool_input
        text = " ".join(str(w) for w in command) if isinstance(command, list) else str(command or "")
        paths = list(neighbours.path_words(text, neighbours.shell_dir(tool_input, cwd)))
    else:
        return {}
    found: dict[Path, list[str]] = {}
    for path in paths:
        top = neighbours.top_of(path) if path is not None else None
        if path is not None and top is not None and top != root.resolve() and neighbours.with_memory(top):
            found.setdefault(top, []).append(path.relative_to(top).as_posix())
    return found


def _redraft(top: Path, rels: list[str], tool: str) -> list[str]:
    config = Config.load(top)
    if not any(rel.startswith(f"{source}/") for rel in rels for source in (SKILLS_DIR, *config.skill_dirs)):
        return []  # no Store opened for a file of no skill
    other = Store(config)
    try:
        taken = mirror.take(other.root, config.state_dir, rels, None)  # an edit of Claude Code's copy: to its skill
        names = other.redraft([*rels, *(t.skill for t in taken if t.skill)], tool)
        if names:
            mirror.withdraw(other.root, config.state_dir, names)
        return names
    finally:
        other.close()  # committed now: no session of that repository ends to commit it
