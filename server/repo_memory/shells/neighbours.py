"""The other repositories a session's tools reach (Gemini CLI's `--include-directories`, Claude Code's and Codex's
`--add-dir`): a path is judged by the rules of the repository it is in, not by the session's.

Light, as the pre-tool hook that asks is: a folder's `.git` found by looking up from the path, then one `git rev-parse`
per other repository for its git dirs (a linked worktree's are elsewhere).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from repo_memory.config import CONFIG_FILE
from repo_memory.errors import RepoMemoryError
from repo_memory.git.repo import discover
from repo_memory.guards import reserved

# A shell word naming a path: what holds a `/` between the characters that end a word (quotes, operators, `=`).
PATH_WORD = re.compile(r"[^\s'\"`;|&()<>=]*/[^\s'\"`;|&()<>]*")
MAX_WORDS = 64  # a shell line's path words looked at: enough for any command an agent types
DIR_KEYS = ("dir_path", "directory", "workdir", "cwd")  # Gemini's run_shell_command, Codex's exec_command


def top_of(path: Path) -> Path | None:
    """The working tree `path` (resolved) is in: the nearest folder above it holding a `.git`; None outside any."""
    for folder in (path, *path.parents):
        if folder.name != ".git" and os.path.lexists(folder / ".git"):
            return folder
    return None


def resolved(name: str, cwd: Path) -> Path | None:
    """`name` as a tool would reach it from `cwd`, links resolved (None when it cannot be: a loop of links, a NUL)."""
    try:
        path = Path(name).expanduser()
        return (path if path.is_absolute() else cwd / path).resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def other(own: reserved.Places, path: Path | None) -> Path | None:
    """The top of the repository `path` is in, when that is not the session's own (`own`)."""
    top = top_of(path) if path is not None else None
    return top if top is not None and top != own.root else None


@lru_cache(maxsize=32)
def places(top: Path, key_dir: Path) -> reserved.Places:
    """The reserved places of the repository at `top`, set up for repo-memory or not: the names are ours either way."""
    try:
        root, git_dir, common_dir = discover(top)
    except (RepoMemoryError, OSError):  # a `.git` git does not take: what it would hold is reserved all the same
        root, git_dir, common_dir = top, top / ".git", top / ".git"
    return reserved.Places(root, git_dir, key_dir, common_dir)


def in_repository(top: Path) -> str:
    """How a refusal names another repository."""
    return f"in the repository {top} (not this session's), "


def file_refusal(own: reserved.Places, name: str, cwd: Path) -> str:
    """Why a file tool may not write `name` in the repository it is in, when that is another ('' when it may)."""
    top = other(own, resolved(name, cwd))
    why = places(top, own.keys).path(name, cwd) if top is not None else ""
    return f"{name}: {in_repository(top)}{why}" if why and top is not None else ""


def shell_dir(tool_input: Any, cwd: Path) -> Path:
    """The folder a shell call runs in: the one its arguments name (Gemini, Codex), else the session's."""
    named = next((tool_input[k] for k in DIR_KEYS if isinstance(tool_input, dict) and isinstance(tool_input.get(k), str)
                  and tool_input[k].strip()), None)
    return resolved(named, cwd) or cwd if named else cwd


def path_words(text: str, cwd: Path) -> list[Path]:
    """The paths a shell line names (words holding a `/`, `~` expanded), as reached from `cwd`."""
    found = (resolved(word.lstrip("0123456789&>") or ".", cwd) for word in PATH_WORD.findall(text)[:MAX_WORDS])
    return list(dict.fromkeys(p for p in found if p is not None))


def shell_refusal(own: reserved.Places, text: str, cwd: Path) -> str:
    """Why a shell line may not run, by the rules of each other repository it stands in or names ('' when it may)."""
    top = other(own, cwd)
    if top is not None and text.strip() and (inside := places(top, own.keys).path(".", cwd)):
        return f"the shell's working directory is {in_repository(top)}reserved; {inside}"
    tops = dict.fromkeys(t for t in [top, *(other(own, p) for p in path_words(text, cwd))] if t is not None)
    for top in tops:
        if why := places(top, own.keys).command(text, cwd):
            return f"{in_repository(top)}{why}"
    return ""


def with_memory(top: Path) -> bool:
    """Whether the repository at `top` holds a memory layout (`repo-memory init` ran there, or its settings are)."""
    return (top / ".agents" / "experience").is_dir() or (top / CONFIG_FILE).is_file()
