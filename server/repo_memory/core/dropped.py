"""Records this clone wrote and committed that no branch holds any more: found from the clone's session tips.

A force push over pushed memory followed by the `git pull --rebase` README recommends drops the memory commits (git
takes them for upstream's, which upstream no longer has), and so does a `git reset`: the session's files leave the
working tree, the session goes on after its last id (core/journal.py), and every record left verifies. The tips
(core/session_files.py) say which files each session of this clone reached; one missing from the working tree and
from HEAD is looked up in HEAD's reflog, and a commit there that no ref (branch, tag, remote branch, stash) reaches
is a loss: verify and doctor name its records and the checkout that brings them back. A session checked out on
another branch is no loss (that branch reaches the commit), nor is a clone that never had the records (tips are per
clone). Records of a branch deleted before it was merged (HEAD's reflog left them by a checkout from a branch that
still held them and is gone now) are a deliberate act's, told as a note with the `git branch` that brings it back.
A person who dropped them on purpose accepts the loss (`repo-memory log accept-loss`), which is kept beside the tip
as the commits let go. Once git lets the commits go (the reflog expired, then a gc), nothing is said: nothing here
brings them back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from repo_memory.core.session_files import Tip, begun, number, segment
from repo_memory.formats.experience import EXPERIENCE_DIR, parse_lines
from repo_memory.git.repo import Git
from repo_memory.guards.shellwords import quoted

SAID = "records this clone wrote and committed are in no branch now"  # verify's words; doctor keys its fix on them
UNMERGED = "records this clone wrote and committed are only on a branch deleted before it was merged"  # a note
CHECKOUT = "checkout: moving from "  # how HEAD's reflog tells a checkout of another branch or commit
ACCEPTED = ".dropped"  # <tips>/<session>.dropped: commits whose records a person let go, one a line


@dataclass(frozen=True)
class Drop:
    """A session's records gone from every ref: the reflog's commit that held them last, their files there, their seqs."""

    session: str
    commit: str
    files: tuple[str, ...]
    seqs: tuple[int, ...]
    cause: str = "a force push then `git pull --rebase`, a `git reset`, or a branch deleted before it was merged"
    branch: str = ""  # the branch deleted before it was merged that held them, '' for another cause
    tip: str = ""  # that branch's last commit

    def ids(self) -> str:
        """The records as ids, runs joined: `s#1-2, s#5`."""
        runs: list[list[int]] = []
        for seq in self.seqs:
            if runs and seq == runs[-1][1] + 1:
                runs[-1][1] = seq
            else:
                runs.append([seq, seq])
        return ", ".join(f"{self.session}#{a}" + (f"-{b}" if b > a else "") for a, b in runs) or f"{self.session}"

    def said(self) -> str:
        if self.branch:
            return (f"{UNMERGED}: `{self.branch}`, whose last commit {self.tip[:12]} only the reflog reaches now; "
                    f"`git branch {quoted(self.branch)} {self.tip[:12]}` brings the branch back (merge it to keep them), or, "
                    f"if it was meant to go, `repo-memory log accept-loss {quoted(self.session)}` stops this note")
        files = quoted(*self.files)
        return (f"{SAID}: commit {self.commit[:12]} held them last and only the reflog reaches it ({self.cause}); bring "
                f"them back with `git checkout {self.commit[:12]} -- {files}` and commit them (`git commit -m "
                f"{quoted(f'memory: restore {self.session}')} -- {files}`), or, if they were dropped on purpose, accept it with "
                f"`repo-memory log accept-loss {quoted(self.session)}`")


def dropped(root: Path, tips: Path | None, git: Git, held: Callable[[str], bool] | None = None,
            only: str | None = None) -> list[Drop]:
    """The records of this clone's sessions (or session `only`) that no ref reaches, not yet accepted; reads each tip
    once and runs git only when some session's file is missing from the working tree."""
    if tips is None or not tips.is_dir():
        return []
    wanted = _missing(root, tips, held, only)
    if not wanted:
        return []
    walked = git.run("log", "-g", "--format=%x00%H", "--name-only", "HEAD", "--", EXPERIENCE_DIR, check=False)
    newest: dict[str, str] = {}  # a missing file -> the reflog's newest commit touching it
    commit = ""
    for line in walked.stdout.splitlines() if walked.returncode == 0 else ():
        if line.startswith("\0"):
            commit = line[1:]
        elif line in wanted and line not in newest:
            newest[line] = commit
    if not newest:
        return []
    # what the commits reach that no ref does: the reflog alone holds those (`--all` takes HEAD, tags, remotes, the stash)
    alone = git.run("rev-list", *sorted(set(newest.values())), "--not", "--all", check=False)
    gone = set(alone.stdout.split()) if alone.returncode == 0 else set()
    drops, moves = [], _moves(git)
    for session in dict.fromkeys(wanted[f] for f in newest):
        commits = [newest[f] for f in newest if wanted[f] == session and newest[f] in gone]
        if not commits or (last := commits[0]) in _accepted(tips, session):
            continue
        theirs = sorted(f for f in newest if wanted[f] == session and newest[f] in gone)
        listed = git.run("ls-tree", "--name-only", last, "--", *theirs, check=False)  # what the newest holds of them
        files = tuple(f for f in theirs if f in listed.stdout.splitlines())
        drops.append(Drop(session, last, files, _seqs(git, last, files), **_cause(git, last, moves)))
    return drops


def accept(tips: Path, drop: Drop) -> None:
    """Let `drop`'s records go: verify no longer names them (the reflog keeps the commit until git expires it)."""
    with (tips / f"{drop.session}{ACCEPTED}").open("a", encoding="utf-8") as out:
        out.write(drop.commit + "\n")


def _missing(root: Path, tips: Path, held: Callable[[str], bool] | None, only: str | None) -> dict[str, str]:
    """Each file a tip's session reached (its tip's file and those before it) missing from the working tree and from
    HEAD (a file HEAD holds is a deletion verify tells already) -> its session."""
    wanted: dict[str, str] = {}
    for path in tips.glob(f"{only}.json" if only else "*.json"):
        session = path.name.removesuffix(".json")
        with Tip(tips, session, lock=False) as tip:
            got = tip.read()
        if got is None:
            continue
        last = root / got[0]
        for n in range(number(last, session), 0, -1):
            file = segment(last, session, n)
            rel = file.relative_to(root).as_posix()
            if not begun(file, session) and not (held and held(rel)):
                wanted[rel] = session
    return wanted


def _moves(git: Git) -> list[tuple[str, str]]:
    """HEAD's reflog, newest first: (commit, what moved HEAD there)."""
    walked = git.run("log", "-g", "--format=%H%x00%gs", "HEAD", check=False)
    return [(sha, said) for sha, _, said in (line.partition("\0") for line in walked.stdout.splitlines())]


def _cause(git: Git, commit: str, moves: list[tuple[str, str]]) -> dict[str, str]:
    """What dropped `commit`, as HEAD's reflog `moves` tells: a branch deleted before it was merged when HEAD left it
    for a checkout from a branch that is gone now and still held it when HEAD last left that branch (branch, tip);
    the current branch moving back past it when that branch's reflog holds it (cause); {} when neither is told."""
    shas = [sha for sha, _ in moves]
    after = [j for j in range(shas.index(commit) if commit in shas else 0) if moves[j][1].startswith(CHECKOUT)]
    name = moves[after[-1]][1].removeprefix(CHECKOUT).partition(" to ")[0] if after else ""  # ref names hold no space
    left = next((j for j, (_, said) in enumerate(moves) if said.startswith(f"{CHECKOUT}{name} to ")), -1)
    tip = shas[left + 1] if 0 <= left < len(shas) - 1 else ""  # where HEAD was just before: the branch's tip then
    if (tip and not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", name)  # a detached HEAD is no branch
            and git.run("show-ref", "-q", "--verify", f"refs/heads/{name}", check=False).returncode != 0
            and git.run("merge-base", "--is-ancestor", commit, tip, check=False).returncode == 0):
        return {"branch": name, "tip": tip}
    branch = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    held = git.run("log", "-g", "--format=%H", f"refs/heads/{branch}", check=False) if branch else None
    if held is not None and held.returncode == 0 and commit in held.stdout.split():
        return {"cause": f"branch {branch} held them and moved back past them: a force push then `git pull --rebase`, "
                         "or a `git reset`"}
    return {}


def _accepted(tips: Path, session: str) -> set[str]:
    try:
        return set((tips / f"{session}{ACCEPTED}").read_text(encoding="utf-8").split())
    except OSError:
        return set()


def _seqs(git: Git, commit: str, files: tuple[str, ...]) -> tuple[int, ...]:
    """The seqs of the records `files` hold in `commit`."""
    seqs: set[int] = set()
    for file in files:
        shown = git.run("cat-file", "blob", f"{commit}:{file}", check=False)
        if shown.returncode == 0:
            seqs.update(int(line.record["seq"]) for line in parse_lines(shown.stdout.encode()) if line.record)
    return tuple(sorted(seqs))
