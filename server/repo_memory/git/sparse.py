"""Whether a sparse checkout leaves memory out: `git sparse-checkout set src` (cone mode, the monorepo default) keeps
only the root's files and src/ on disk, so the team's skills and logs are not there to serve, and whatever repo-memory
wrote there a commit would take out of the sparse set (clearing its skip-worktree bit) and a later `git sparse-checkout
reapply` would delete mid-session: a log gone under a session that goes on reads as a broken hash chain. Free-form
(non-cone) patterns may leave out a part (`!/.agents/experience/`), which no later `add .agents` brings back."""

from __future__ import annotations

import os
from typing import TypeVar

from repo_memory.errors import WorkspaceError
from repo_memory.git.repo import Git

MEMORY = ".agents"
FIX = f"Run `git sparse-checkout add {MEMORY}`, then try again (it checks the team's memory out beside your code)."
# in non-cone mode the last pattern a path matches decides, and `add` appends one: `.agents` matches the folder, while
# a pattern excluding a folder under it (`!/.agents/experience/`) still matches that folder, so only a pattern matching
# every path under .agents comes after it and wins
FREE_FIX = (f"Run `git sparse-checkout add '/{MEMORY}/**'`, then try again (your patterns are not cone mode: a pattern "
            "after those that leave memory out checks it out beside your code).")
T = TypeVar("T")
LEFT_OUT = (f"{MEMORY}/ is outside this clone's sparse checkout: the team's memory is not on disk, so repo-memory "
            "neither serves nor writes it here")


class Sparse:
    """This checkout's answer, asked of git again only when the sparse-checkout patterns or the index change."""

    def __init__(self, git: Git):
        self.git = git
        self._known: tuple[tuple[int, int], tuple[str, ...], bool] | None = None  # stamp, parts left out, cone mode

    def left_out(self) -> bool:
        """Whether the sparse checkout leaves `.agents/` or a part of it out (no git process without a sparse-checkout
        file: one stat)."""
        return bool(self._asked()[0])

    def holds(self, part: str) -> bool:
        """Whether `part` of memory (`.agents/experience/`, or `.agents/` for any of it) is on disk: the patterns leave
        out neither it nor all of memory."""
        parts = self._asked()[0]
        return f"{MEMORY}/" not in parts and part not in parts

    def why(self) -> str:
        """What is not on disk ('' when nothing is): all of memory, or the parts of it the patterns leave out."""
        parts = self._asked()[0]
        if parts in ((), (f"{MEMORY}/",)):
            return LEFT_OUT if parts else ""
        named = ", ".join(parts)
        return (f"{named} {'is' if len(parts) == 1 else 'are'} outside this clone's sparse checkout (the rest of {MEMORY}/ "
                "is on disk): repo-memory neither serves nor writes memory while part of it is missing")

    def fix(self) -> str:
        """The command that brings memory into the checkout, for the mode the patterns are written in."""
        return FIX if self._asked()[1] else FREE_FIX

    def said(self) -> str:
        """What a session's start tells the agent while memory is outside the checkout ('' when it is in)."""
        return f"repo-memory: {self.why()}. {self.fix()}" if self.left_out() else ""

    def check(self) -> None:
        """Refuse to go on while memory is outside the sparse checkout, saying how to bring it in."""
        if self.left_out():
            raise WorkspaceError(f"{self.why()}. {self.fix()}")

    def on_disk(self, book: T) -> T:
        """`book` (what reads or writes memory files), once `check` finds memory in the checkout."""
        self.check()
        return book

    def _asked(self) -> tuple[tuple[str, ...], bool]:
        try:
            stamp = (os.stat(self.git.git_dir / "info" / "sparse-checkout").st_mtime_ns, _mtime(self.git.git_dir / "index"))
        except OSError:
            return (), True
        if self._known is None or self._known[0] != stamp:
            self._known = (stamp, *self._ask())
        return self._known[1], self._known[2]

    def _ask(self) -> tuple[tuple[str, ...], bool]:
        """The parts of memory left out (skip-worktree entries there, or, nothing committed there yet, cone patterns
        not naming it), and whether the patterns are cone mode."""
        if self.git.config("core.sparseCheckout").lower() != "true":
            return (), True
        cone = self.git.config("core.sparseCheckoutCone").lower() != "false"
        # --sparse: a sparse index answers as it is (`S .agents/experience/`, one entry for a folder left out); without
        # it git expands the whole index first, 0.8 s at 400,000 files, in every process and after every memory commit
        listed = self.git.run("ls-files", "--sparse", "-z", "-t", "--", MEMORY, check=False).stdout.split("\0")
        tagged = [(entry[:2], entry[2:]) for entry in listed if entry]
        skipped = [path for tag, path in tagged if tag == "S "]
        if len(skipped) == len(tagged) and tagged:
            return (f"{MEMORY}/",), cone
        if tagged:
            return tuple(sorted({_part(path) for path in skipped})), cone
        if not cone:
            return (), cone  # free-form patterns: nothing committed there to tell by
        named = self.git.run("sparse-checkout", "list", check=False).stdout.splitlines()
        return (() if MEMORY in (line.strip().strip("/") for line in named) else (f"{MEMORY}/",)), cone


def _part(path: str) -> str:
    """The part of memory `path` is in: `.agents/experience/` for a log (or that folder's sparse entry)."""
    bits = path.split("/")
    return "/".join(bits[:2]) + ("/" if len(bits) > 2 else "")


def _mtime(path: os.PathLike[str]) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
