"""Git: find the repository, and plumbing that commits memory without touching the user's index, work or refs in use."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from repo_memory.errors import RepoMemoryError, WorkspaceError


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


# --- committing memory beside the user's work ------------------------------------------------------

IN_PROGRESS = {
    "rebase-merge": "a rebase", "rebase-apply": "a rebase or am", "MERGE_HEAD": "a merge", "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert", "BISECT_LOG": "a bisect",
}
GIT_TIMEOUT = 30.0
SIGN_TIMEOUT = 15.0
INDEX_LOCK_WAIT = 5.0


@dataclass(frozen=True)
class CommitResult:
    """What one commit attempt did: a new commit, nothing to commit, or a deferral with its reason."""

    sha: str | None = None
    deferred: str = ""
    unchanged: bool = False


class Git:
    """Plumbing calls on one repository, with bounded time and an environment that never prompts."""

    def __init__(self, root: Path, git_dir: Path):
        self.root, self.git_dir = root, git_dir

    def run(self, *args: str, env: dict[str, str] | None = None, timeout: float = GIT_TIMEOUT, check: bool = True,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", **(env or {})}
        try:
            proc = subprocess.run(["git", *args], cwd=self.root, env=full_env, capture_output=True, text=True, timeout=timeout,
                                  input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise GitError(f"`git {args[0]}` did not finish within {timeout:g} s" + (
                " (commit signing may be waiting for a passphrase or an agent; set `sign = \"never\"` in "
                ".agents/repo-memory.toml to commit memory unsigned)" if args[0] == "commit-tree" else "")) from None
        if check and proc.returncode != 0:
            raise GitError(f"`git {' '.join(args[:2])}` failed: {proc.stderr.strip() or proc.stdout.strip()}")
        return proc

    def blob(self, commit: str, path: str) -> bytes:
        """The exact bytes of `path` at `commit`."""
        proc = subprocess.run(["git", "cat-file", "blob", f"{commit}:{path}"], cwd=self.root, capture_output=True, timeout=GIT_TIMEOUT,
                              stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise GitError(f"`git cat-file` failed: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout

    def operation_in_progress(self) -> str:
        """The git operation under way ('a rebase', …), 'a detached HEAD', or '' when memory may be committed."""
        for name, what in IN_PROGRESS.items():
            if (self.git_dir / name).exists():
                return what
        if self.run("symbolic-ref", "-q", "HEAD", check=False).returncode != 0:
            return "a detached HEAD"
        return ""

    def head(self) -> tuple[str, str | None]:
        """(the branch ref HEAD points at, its commit or None on an unborn branch)."""
        ref = self.run("symbolic-ref", "-q", "HEAD").stdout.strip()
        proc = self.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", check=False)
        return ref, proc.stdout.strip() or None


class GitError(RepoMemoryError):
    """A git command failed or timed out; the message says which and why."""
