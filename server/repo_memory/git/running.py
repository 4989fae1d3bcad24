"""A person's git command running in this worktree that moves its branch when it ends, found among the processes.

Plain `git commit` reads the branch tip, refreshes the index and lets go of index.lock, runs the pre-commit hook and the
editor (seconds, or as long as the person writes), then moves the branch only if it still points where it read it: a
memory commit landing meanwhile makes it fail ("cannot lock ref 'HEAD'"). Merge, cherry-pick, revert, am and rebase do
the same around their editor or hooks. Nothing in the git dir says such a command runs, so the processes do. Each needs
a work tree and moves to its top before anything else (also with `-C`, a subfolder, GIT_DIR or GIT_WORK_TREE), so a git
process whose working folder is this worktree's top and whose command is one of MOVERS holds memory commits up.

On Linux /proc is read: the program of each process (a readlink, about 2 µs), and the command line of the git processes
working in this folder. Elsewhere (macOS) `ps` lists the processes and `lsof` tells a git process's folder. Read-only
commands and repo-memory's own plumbing (commit-tree, update-ref) are not among MOVERS. Nor is a git command running
this process in a hook it runs once its branch moved (AFTER: post-commit loops): it waits for this process. Git tells a
hook nothing of which it is (2.39 gives pre-commit and post-commit the same variables), so the processes between that
git process and this one say it: the name the kernel gives a process that runs a script (comm: `post-commit` for
`#!/bin/sh -e`), or a word of a command line (`sh .git/hooks/post-commit`, pre-commit's `--hook-type=post-commit`).
A hook before the branch moves (pre-commit, commit-msg, reference-transaction …) or one not told holds the commit up:
it is deferred, not waited for (the git command waits for the hook), and the next repo-memory process commits it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

MOVERS = frozenset({"commit", "merge", "rebase", "cherry-pick", "revert", "am"})  # `git pull` runs merge or rebase
HELD = "`git "  # how a deferral for one of them begins: "`git commit` (process 123) is in progress; …"
# the hooks git runs once the branch moved, and those it runs before (reference-transaction's "committed" may be
# ORIG_HEAD's, written before a merge commit)
AFTER = frozenset({"post-commit", "post-merge", "post-rewrite", "post-checkout", "post-applypatch"})
BEFORE = frozenset({"pre-commit", "pre-merge-commit", "prepare-commit-msg", "commit-msg", "applypatch-msg", "pre-applypatch",
                    "pre-rebase", "reference-transaction", "post-index-change"})
_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"})  # + next word
PROC = Path("/proc")
LISTINGS = 4  # of /proc in one look at most (see _git_processes)


def under_way(root: Path, alias: Callable[[str], str]) -> str:
    """The person's git command that will move the branch of the worktree at `root` ("`git commit` (process 123)"),
    or ''. `alias` gives what a git alias stands for ('' for none): `git ci` may be `git commit` (Git.alias)."""
    top = os.path.realpath(root)
    for pid, argv in _git_processes(top):
        command = subcommand(argv)
        if command and command not in MOVERS:
            stands_for = alias(command)  # a shell alias ("!…") runs git processes of its own, seen on their own
            command = "" if stands_for.startswith("!") else subcommand([argv[0], *stands_for.split()])
        if command in MOVERS and pid != os.getpid() and not _runs_us_after(pid):
            return f"`git {subcommand(argv)}` (process {pid})"
    return ""


def subcommand(argv: list[str]) -> str:
    """The git command `argv` runs: `commit` of `git -C path -c k=v commit -m x`, or of `git-commit`."""
    name = os.path.basename(argv[0]) if argv else ""
    if name.startswith("git-"):
        return name[4:]
    words = iter(argv[1:])
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return ""


def _git_processes(top: str) -> Iterator[tuple[int, list[str]]]:
    """(process id, command line) of each git process working in the folder `top`."""
    if not (PROC / "self").is_dir():
        yield from _ps_git_processes(top)
        return
    # A process started while the others are read is not in the listing: /proc is listed again for those, until
    # a listing holds none (or LISTINGS did), so what the caller does next (a memory commit moving the branch)
    # follows the last listing at once, not the ms the whole look takes, in which a person's `git commit` could
    # start unseen.
    seen: set[str] = set()
    for _ in range(LISTINGS):
        names = [name for name in os.listdir(PROC) if name.isdigit() and name not in seen]
        if not names:
            return
        seen.update(names)
        for name in names:
            try:  # the program first (git's commands run in /usr/bin/git, or a git-<command> link to it): a readlink
                if not os.path.basename(os.readlink(f"/proc/{name}/exe")).startswith("git") \
                        or os.readlink(f"/proc/{name}/cwd") != top:
                    continue
                argv = _argv(int(name))
            except OSError:  # it ended, or is another user's
                continue
            if argv and os.path.basename(argv[0]).split("-")[0] == "git":
                yield int(name), argv


def _ps_git_processes(top: str) -> Iterator[tuple[int, list[str]]]:
    """`_git_processes` where there is no /proc: `ps` for the command lines, `lsof` for the working folder of each
    git command among MOVERS (a command line is split at spaces: an alias of `git commit` is not recognised here)."""
    try:
        listed = subprocess.run(["ps", "-A", "-ww", "-o", "pid=,args="], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return
    for line in listed.splitlines():
        pid, _, args = line.strip().partition(" ")
        argv = args.split()
        if not pid.isdigit() or not argv or os.path.basename(argv[0]).split("-")[0] != "git" or subcommand(argv) not in MOVERS:
            continue
        try:
            cwd = subprocess.run(["lsof", "-a", "-p", pid, "-d", "cwd", "-Fn"], capture_output=True, text=True, timeout=5).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        if any(out[1:] and os.path.realpath(out[1:]) == top for out in cwd.splitlines() if out.startswith("n")):
            yield int(pid), argv


def _runs_us_after(pid: int) -> bool:
    """Whether git process `pid` runs this process (through a shell or a few) in a hook among AFTER: the processes
    below the git process nearest above us are the hook it runs (`git pull` runs `git merge`, which runs the hook)."""
    at, hook, above_git = os.getpid(), [os.getpid()], False
    for _ in range(64):  # the chain of parents up to init
        at = _parent(at)
        if at == pid:
            return _hook(hook) in AFTER
        if at <= 1:
            return False
        if os.path.basename(next(iter(_argv(at)), "")).split("-")[0] == "git":
            above_git = True
        elif above_git:  # the hook of a git command further up, which ran the git commands below
            hook, above_git = [at], False
        else:
            hook.append(at)
    return False


def _hook(chain: list[int]) -> str:
    """Which git hook the processes `chain` (from this one up) run: the first name of one, from the top."""
    for pid in reversed(chain):
        try:
            names = [Path(f"/proc/{pid}/comm").read_text(encoding="utf-8", errors="replace").strip()] \
                if (PROC / "self").is_dir() else []
        except OSError:
            names = []
        names += (os.path.basename(word.rpartition("=")[2]) for word in _argv(pid))
        if hook := next((name for name in names if name in AFTER or name in BEFORE), ""):
            return hook
    return ""


def _parent(pid: int) -> int:
    """The parent of process `pid` (0 when it is gone)."""
    try:
        if (PROC / "self").is_dir():
            with open(f"/proc/{pid}/stat", "rb") as stat:
                return int(stat.read().rpartition(b")")[2].split()[1])  # after the name, which may hold spaces
        out = subprocess.run(["ps", "-o", "ppid=", "-p", str(pid)], capture_output=True, text=True, timeout=5).stdout
        return int(out.strip() or 0)
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return 0


def _argv(pid: int) -> list[str]:
    """The command line of process `pid` ([] when it is gone)."""
    try:
        if (PROC / "self").is_dir():
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                return [word.decode("utf-8", "surrogateescape") for word in cmdline.read().split(b"\0") if word]
        out = subprocess.run(["ps", "-ww", "-o", "args=", "-p", str(pid)], capture_output=True, text=True, timeout=5).stdout
        return out.split()
    except (OSError, subprocess.SubprocessError):
        return []
