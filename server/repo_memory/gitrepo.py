"""Git: find the repository a workspace belongs to (commits and history arrive with the git issue)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from repo_memory.errors import WorkspaceError


def discover(start: Path) -> tuple[Path, Path]:
    """Return (top level, absolute git dir) of the repository containing `start`."""
    if not start.exists():
        raise WorkspaceError(f"Workspace {start} does not exist. Pass --root PATH (or set REPO_MEMORY_ROOT) to a git repository.")
    cwd = start if start.is_dir() else start.parent
    try:
        # --absolute-git-dir resolves linked worktrees to their own git dir, so each worktree keeps its own index.
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "--absolute-git-dir"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except FileNotFoundError:
        raise WorkspaceError("git is not installed or not on PATH. Install git, then try again.") from None
    if out.returncode != 0:
        raise WorkspaceError(
            f"{cwd} is not inside a git repository. repo-memory keeps memory in a repository's files: "
            f"run `git init` there, or pass --root PATH (or set REPO_MEMORY_ROOT) to an existing repository."
        )
    lines = out.stdout.splitlines()
    if len(lines) != 2:
        raise WorkspaceError(f"{cwd} is inside a bare git repository; run repo-memory in a working tree instead.")
    return Path(lines[0]).resolve(), Path(lines[1]).resolve()
