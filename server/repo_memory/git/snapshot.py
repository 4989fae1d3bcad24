"""The files a loop's check sees, as a git tree id: the working tree's tracked files (as `git add -u` would stage them:
what is staged, and each tracked file as it is on disk) or a commit's, one folder left out of both so the two compare
by id. Built in a private index file, so the person's index, and what they staged, is never touched. Untracked files
are no part of it: a scratch file or an unignored node_modules would make every check differ from every commit (the
pushes never settled) and `git add -A` wrote each of them into .git."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

from repo_memory.errors import GitError
from repo_memory.git.repo import Git


def of_worktree(git: Git, scratch: Path, leave_out: str) -> str:
    """The tree of the working tree's tracked files, `leave_out` (a folder) left out; '' when git cannot build it."""
    def fill(env: dict[str, str]) -> None:
        person = git.root / git.run("rev-parse", "--git-path", "index").stdout.strip()
        if person.is_file():  # its stat data: a file unchanged since it was staged is not read again
            shutil.copy2(person, env["GIT_INDEX_FILE"])  # and its time: git re-reads an entry no older than the index
        git.run("add", "-u", "--", ".", env=env)
    return _tree(git, scratch, leave_out, fill)


def of_commit(git: Git, scratch: Path, rev: str, leave_out: str) -> str:
    """The tree of commit `rev`, `leave_out` left out; '' when there is no such commit (an unborn branch)."""
    def fill(env: dict[str, str]) -> None:
        git.run("read-tree", f"{rev}^{{commit}}", env=env)
    return _tree(git, scratch, leave_out, fill)


def _tree(git: Git, scratch: Path, leave_out: str, fill: Callable[[dict[str, str]], None]) -> str:
    # named as commit.py names its private indexes, so `clean_temp_indexes` removes one a dead process left
    index = scratch / f"commit-index-{os.getpid()}-{threading.get_ident()}-snapshot"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        fill(env)
        git.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", leave_out, env=env)
        return git.run("write-tree", env=env).stdout.strip()
    except (GitError, OSError):
        return ""  # nothing to compare: a caller that needs the tree to skip work does the work
    finally:
        index.unlink(missing_ok=True)
        Path(f"{index}.lock").unlink(missing_ok=True)
