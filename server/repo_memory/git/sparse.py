"""Whether a sparse checkout leaves memory out: `git sparse-checkout set src` (cone mode, the monorepo default) keeps
only the root's files and src/ on disk, so the team's skills and logs are not there to serve, and whatever repo-memory
wrote there a commit would take out of the sparse set (clearing its skip-worktree bit) and a later `git sparse-checkout
reapply` would delete mid-session: a log gone under a session that goes on reads as a broken hash chain."""

from __future__ import annotations

import os
from typing import TypeVar

from repo_memory.errors import WorkspaceError
from repo_memory.git.repo import Git

MEMORY = ".agents"
FIX = f"Run `git sparse-checkout add {MEMORY}`, then try again (it checks the team's memory out beside your code)."
T = TypeVar("T")
LEFT_OUT = (f"{MEMORY}/ is outside this clone's sparse checkout: the team's memory is not on disk, so repo-memory "
            "neither serves nor writes it here")


class Sparse:
    """This checkout's answer, asked of git again only when the sparse-checkout patterns or the index change."""

    def __init__(self, git: Git):
        self.git = git
        self._known: tuple[tuple[int, int], bool] | None = None

    def left_out(self) -> bool:
        """Whether the sparse checkout leaves `.agents/` out: skip-worktree entries there, or (nothing committed there
        yet) cone patterns that do not name it. No git process without a sparse-checkout file (one stat)."""
        try:
            stamp = (os.stat(self.git.git_dir / "info" / "sparse-checkout").st_mtime_ns, _mtime(self.git.git_dir / "index"))
        except OSError:
            return False
        if self._known is None or self._known[0] != stamp:
            self._known = (stamp, self._ask())
        return self._known[1]

    def said(self) -> str:
        """What a session's start tells the agent while memory is outside the checkout ('' when it is in)."""
        return f"repo-memory: {LEFT_OUT}. {FIX}" if self.left_out() else ""

    def check(self) -> None:
        """Refuse to go on while memory is outside the sparse checkout, saying how to bring it in."""
        if self.left_out():
            raise WorkspaceError(f"{LEFT_OUT}. {FIX}")

    def on_disk(self, book: T) -> T:
        """`book` (what reads or writes memory files), once `check` finds memory in the checkout."""
        self.check()
        return book

    def _ask(self) -> bool:
        if self.git.config("core.sparseCheckout").lower() != "true":
            return False
        # --sparse: a sparse index answers as it is (`S .agents/`, one entry for a folder left out); without it git
        # expands the whole index first, 0.8 s at 400,000 files, in every process and again after every memory commit
        tagged = self.git.run("ls-files", "--sparse", "-t", "--", MEMORY, check=False).stdout.splitlines()
        if tagged:
            return any(line.startswith("S ") for line in tagged)
        if self.git.config("core.sparseCheckoutCone").lower() == "false":
            return False  # free-form patterns: nothing committed there to tell by
        listed = self.git.run("sparse-checkout", "list", check=False).stdout.splitlines()
        return MEMORY not in (line.strip().strip("/") for line in listed)


def _mtime(path: os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
