"""What doctor says of a skill file holding what looks like a secret (the index flagged it; recall leaves it out):
whether a commit holds it decides what comes first. repo-memory never commits such a file, but a person's `git commit`
does, and a push gives it to every clone: then the secret is to be rotated before anything else."""

from __future__ import annotations

from pathlib import Path

from repo_memory.errors import GitError, UnsafePathError
from repo_memory.git.committed import Committed
from repo_memory.git.repo import Git
from repo_memory.guards import disk

REMOVE = "remove it from the file (refer to where it lives, e.g. an environment variable name)"


def said(root: Path, git_dir: Path, rel: str) -> tuple[str, str]:
    """(what to say of the file `rel` after "holds what looks like a secret", the fix)."""
    try:
        git = Git(root, git_dir)
        held, earlier = Committed(git).file(rel, disk.read_safely(root / rel)), git.holds(rel)
    except (OSError, UnsafePathError, GitError):
        held = earlier = False
    if held:
        return ("it is committed (HEAD holds it) and stays out of recall",
                f"Rotate it first (revoke it where it was issued), then {REMOVE} and take it out of history: "
                'docs/security.md, "A secret got committed anyway".')
    return ("it is not committed and stays out of recall",
            REMOVE[0].upper() + REMOVE[1:] + ("; HEAD holds an earlier version of the file: if that one held it too, rotate it."
                                              if earlier else "; if it was ever committed or pushed, rotate it."))
