"""Whether an agent's tool call that named a skill's files changed them: a read (`cat`, the way Codex reads every
file) is no edit, and only an edit puts an active skill back to draft (Skillbook.redraft).

The pre-tool hook notes the fingerprint of each skill folder a call names (`note`); the post-tool hook compares
(`changed`). A call no pre-tool hook saw (an older setup, a call recorded from a transcript) is compared with what HEAD
holds instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from repo_memory.errors import UnsafePathError
from repo_memory.formats.skills import SKILL_FILE
from repo_memory.git.committed import Committed
from repo_memory.guards import disk

MAX_UP = 8  # folders looked up from a named path for its skill's SKILL.md (a script deep in the skill's folder)


def folders(paths: Iterable[Path]) -> list[Path]:
    """The skill folders (holding a SKILL.md) that `paths` (resolved) are or are in, below their repository's top."""
    found = []
    for path in paths:
        for folder in [path, *path.parents][:MAX_UP]:
            if (folder / SKILL_FILE).is_file():
                found.append(folder)
                break
            if os.path.lexists(folder / ".git"):
                break
    return list(dict.fromkeys(found))


def note(paths: Iterable[Path]) -> dict[str, str]:
    """The fingerprint of each skill folder `paths` name, by its resolved path."""
    from repo_memory.core import reviewing  # only when a call names a skill: the pre-tool hook stays light

    found = {}
    for folder in folders(paths):
        try:
            found[str(folder)] = reviewing.fingerprint(folder)
        except (OSError, UnsafePathError):
            continue  # not noted: compared with HEAD after the call
    return found


def changed(folder: Path, rel: str, before: Mapping[str, str] | None, committed: Committed) -> bool:
    """Whether the skill in `folder` (at `rel` in its repository) changed during the call: against its fingerprint noted
    `before` it, else against HEAD (a file HEAD does not hold as it is now is a change)."""
    from repo_memory.core import codex_policy, reviewing

    if not folder.is_dir():
        return True  # gone: nothing to read, and the redraft finds nothing to change either
    noted = (before or {}).get(str(folder.resolve()))
    if noted is not None:
        return reviewing.fingerprint(folder) != noted
    head, ours = committed.head(), codex_policy.ours_in(folder)  # Codex's file as offering.settle wrote it is no edit
    files = [Path(where, name) for where, _, names in os.walk(folder) for name in names]
    try:
        return not all(committed.file(f"{rel}/{path.relative_to(folder).as_posix()}", disk.read_safely(path), head)
                       for path in files if not path.is_symlink() and path not in ours)
    except (OSError, UnsafePathError):
        return True


def skill_of(rel: str, sources: Iterable[str]) -> str | None:
    """The skill folder (`source/name`) repository path `rel` is in, or None outside every skill."""
    for source in sources:
        if rel.startswith(f"{source}/") and (name := rel[len(source) + 1:].split("/")[0]):
            return f"{source}/{name}"
    return None
