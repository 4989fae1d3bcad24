"""Commits an agent made itself: a `git commit` in a shell call is made under the person's name, yet it is the agent's.

The pre-tool hook notes HEAD as a shell call starts (`began`); the post-tool hook lists the commits made since that
repo-memory did not make (`note`), in the clone's state folder. `reject` reads them (`made`) so that such a commit is
neither taken for the folder a person accepted nor kept as a person's work. A person who commits in another terminal
while an agent's shell call runs is taken for the agent (docs/security.md, "Not stopped").
"""

from __future__ import annotations

from pathlib import Path

from repo_memory.errors import GitError
from repo_memory.git import message
from repo_memory.git.repo import Git
from repo_memory.guards import disk

FILE = "agent-commits"  # in the state folder: one commit id a line, the newest last
KEPT = 5000  # ids kept (a reject looks back at what it gives back, not at all history)


def head(git: Git) -> str:
    """The commit HEAD points at ('' on an unborn branch or when git cannot say)."""
    try:
        return git.run("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).stdout.strip()
    except GitError:
        return ""


def note(git: Git, state_dir: Path, before: str) -> list[str]:
    """List as the agent's the commits HEAD gained since `before` (its id as the shell call started) that repo-memory did
    not make; returns them."""
    after = head(git)
    if not before or not after or after == before:
        return []
    try:
        out = git.run("log", "--format=%H%x00%cn", f"{before}..{after}", check=False).stdout
    except GitError:
        return []
    found = [sha for sha, _, who in (line.partition("\0") for line in out.splitlines()) if sha and who != message.COMMITTER]
    if found:
        path = state_dir / FILE
        kept = path.read_text(encoding="utf-8").split() if path.is_file() else []
        disk.write_atomic(path, "".join(f"{sha}\n" for sha in [*kept, *found][-KEPT:]).encode())
    return found


def made(state_dir: Path) -> frozenset[str]:
    """The ids of the commits agents made themselves in this clone, as far as the hooks saw."""
    path = state_dir / FILE
    try:
        return frozenset(path.read_text(encoding="utf-8").split())
    except OSError:
        return frozenset()
