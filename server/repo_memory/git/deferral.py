"""What lets a deferred memory commit land: the next step for each reason commit.py and committer.py give for waiting.

Said by the CLI after a write whose commit waits and by doctor's finding on pending memory, processes that end: what
they defer is committed by the next repo-memory process (or a running server), so they say that, never that it lands
by itself. `repo-memory doctor --fix` is named only where it can commit, i.e. once the step is done. Memory written
while `commit = "off"` is not deferred but left to the person: `leave` notes it, so doctor says so, not that a note
that it awaits a commit was lost; `prune` forgets what a commit has since taken as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from repo_memory.git import running, status
from repo_memory.git.repo import Git
from repo_memory.guards import disk

# how a person finishes each git operation under way that holds memory commits (and merge conflicts) up
FINISH = {"a merge": "`git commit`", "a rebase": "`git rebase --continue`", "a rebase or am": "`git rebase --continue` (or `git am "
          "--continue`)", "a cherry-pick": "`git cherry-pick --continue`", "a revert": "`git revert --continue`"}
THEN = "the next repo-memory command (or `repo-memory doctor --fix`) commits it"
SIGNING = ("Make signing work (`git commit --allow-empty -m test` shows git's own error: the gpg agent, user.signingkey), "
           "or run `git config repo-memory.sign never` to commit memory unsigned; then " + THEN + ".")


LANDS = "; the memory commit lands when it is finished"  # true for a server, which watches for the end; not at exit
# a server hears the end of what a person must finish only while it runs; of a git command that runs, its finisher
# waits for the end too (shells/finish.py)
AFTER_EXIT = ", or by the next repo-memory command if this session has ended by then"


def lands(busy: str, then: str) -> str:
    """What a server's tool answers while `busy` (Git.operation_in_progress) holds its memory commit up; `then` says
    when it lands ("when it is finished")."""
    if busy == "a detached HEAD":
        return f"deferred: HEAD is detached; the memory commit lands once a branch is checked out{AFTER_EXIT}"
    return f"deferred: {busy} is in progress; the memory commit lands {then}{'' if busy.startswith(running.HELD) else AFTER_EXIT}"


def held_up(busy: str, private: bool = False) -> str:
    """Why a memory commit waits while `busy` (Git.operation_in_progress) is under way, or '' when it need not wait:
    a private ref waits only for a branch to be checked out."""
    if busy == "a detached HEAD":
        return "HEAD is detached; the memory commit lands once a branch is checked out"
    return f"{busy} is in progress{LANDS}" if busy and not private else ""


def why(deferred: str) -> str:
    """`deferred` (a CommitResult's reason) as a process that ends now says it: without what would land by itself, as
    nothing does once it has ended; `next_step` says what commits it."""
    return deferred.replace(LANDS, "")


def next_step(deferred: str) -> str:
    """The step that lets a commit deferred for `deferred` (a CommitResult's reason) land, in one or two sentences."""
    if deferred.startswith("HEAD is detached"):
        return f"Check out a branch (`git switch BRANCH`, or `git switch -c NAME` to keep what was committed here); then {THEN}."
    if " is in progress" in deferred:
        busy = deferred.partition(" is in progress")[0]
        if finish := FINISH.get(busy) or ("`git bisect reset`" if busy == "a bisect" else ""):
            return f"Finish {busy} with {finish} (or abort it); then {THEN}."
        return f"Once {busy} ends (finish or abort it if it was left open), {THEN}."  # a person's `git commit` (running.py)
    if "signing" in deferred:  # failed now, or hung earlier (commit.signing_stalled's reason names the step itself)
        return "" if deferred.startswith("commit signing hung") else SIGNING
    if "index.lock" in deferred:
        return ("It is retried by itself; if no git command is running, a crashed one left the lock: remove .git/index.lock, "
                f"then {THEN}.")
    if deferred.startswith("a git hook refused"):
        return ("Let the reference-transaction hook pass memory commits, or set `commit = \"stage\"` in .agents/repo-memory.toml "
                f"(memory is then staged for your own commits); then {THEN}.")
    if deferred.startswith("the file system refused"):
        return f"Make it writable (free space, permissions); then {THEN}."
    return f"{THEN[0].upper()}{THEN[1:]}."


LEFT = "left-while-off"  # in the state folder: memory paths written while `commit = "off"`, one a line


def leave(state_dir: Path, paths: Iterable[str]) -> None:
    """Note `paths`, written while `commit = "off"`: the person's to commit, whatever the mode is when doctor runs."""
    noted = left(state_dir)
    new = [p for p in dict.fromkeys(paths) if p not in noted]
    if not new:
        return
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        with open(state_dir / LEFT, "a", encoding="utf-8") as f:
            f.write("".join(f"{p}\n" for p in new))
    except OSError:
        pass  # only what doctor says of them depends on it: never a reason to fail the write itself


def left(state_dir: Path) -> set[str]:
    """The memory paths `leave` noted."""
    try:
        return set((state_dir / LEFT).read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        return set()


def prune(git: Git, state_dir: Path) -> set[str]:
    """Forget the noted paths a commit holds as they are now (the person committed them): a later change of one is a
    change like any other, not the off period's. Returns what is still noted (a git status only while anything is)."""
    noted = left(state_dir)
    if not noted:
        return noted
    changed, deleted, conflicted = status.worktree(git, tuple(sorted(noted)))
    kept = noted & {*changed, *deleted, *(path for path, _ in conflicted)}
    try:
        if not kept:
            (state_dir / LEFT).unlink()
        elif kept != noted:
            disk.write_atomic(state_dir / LEFT, "".join(f"{p}\n" for p in sorted(kept)).encode("utf-8"))
    except OSError:
        pass  # noted again the next time: only what doctor says of them depends on it
    return kept
