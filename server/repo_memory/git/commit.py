"""Committing memory paths beside the user's work: a temporary index, commit-tree, a compare-and-swap ref update.

The user's index, staged changes, untracked files and index.lock are never touched, except that after a commit on
the user's branch the index entries for exactly the committed memory paths are refreshed so `git status` stays clean.
While a rebase, merge, cherry-pick, revert, bisect or am is under way, HEAD is detached, or a person's `git commit`
(merge, …) runs in this worktree (its editor or hooks open, running.py), files are still written but the commit is
deferred and lands on a later flush. With a private ref (`commit = "private"`) memory is committed
to `refs/memory/<branch>` instead, and the user's branch and index are never touched at all.

A crash between moving the branch and refreshing the index would leave the memory file staged for deletion (it is
in HEAD and on disk, not in the index), and the user's next `git commit` would delete it. So the paths are written
to `inflight.json` before the ref moves and the marker is removed after the refresh; any later process finding a
marker whose owner is dead repairs those index entries (`repair`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from repo_memory.git.deferral import held_up
from repo_memory.git.pending import alive, start_time
from repo_memory.errors import GitError
from repo_memory.git.repo import INDEX_LOCK_WAIT, SIGN_TIMEOUT, CommitResult, Git
from repo_memory.git.swap import swap
from repo_memory.guards import disk

log = logging.getLogger("repo_memory")
CAS_RETRIES = 5
GC_TIMEOUT = 300  # git gc --auto: seconds when git packs in the foreground (gc.autoDetach false)
INFLIGHT = "inflight.json"
SIGNING_STALLED = "signing-stalled.json"
SIGNING_RETRY = 600.0  # seconds before memory commits try a signer that hung again
PRIVATE_PREFIX = "refs/memory/"
Blobs = dict[str, tuple[str, str] | None]  # path: (mode, blob id) to commit, None to delete; see write_blob


def commit_lock(state_dir: Path) -> contextlib.AbstractContextManager[None]:
    """The per-repository lock every memory commit holds (an flock: released by the kernel if its holder dies)."""
    return disk.repo_lock(state_dir, "commit.lock")


def commit_paths(git: Git, state_dir: Path, paths: list[str], message: str, identity: dict[str, str], sign: str = "auto",
                 private: bool = False, blobs: Blobs | None = None, checked_on: str | None = None,
                 parts: Sequence[tuple[list[str], str]] = ()) -> CommitResult:
    """Commit the working-tree state of `paths` (added, changed or deleted) on top of the branch (or its private
    memory ref), or defer. The caller holds `commit_lock`. A path in `blobs` is committed as that blob (None: deleted)
    whatever its file holds by then (see `write_blob`), and only on a tip that holds it as `checked_on` did, where its
    bytes were checked: a tip that took the path on since (a person's `git commit -a`) may hold more of it.
    `parts` (paths, message), when given in place of `paths` and `message`, become a chain of commits, one each (one
    per session), that the ref moves to at once: all of them or none."""
    blobs = blobs or {}
    parts = parts or [(paths, message)]
    paths = [p for part, _ in parts for p in part]
    if not private and settle(git, state_dir) is None:
        return CommitResult(deferred="an earlier memory commit's index entries are not refreshed yet and .git/index stays "
                                     "locked; the memory commit will be retried")
    for _ in range(CAS_RETRIES):
        if waits := _in_the_way(git, private):
            return CommitResult(deferred=waits)
        branch, head = git.branch()
        ref = PRIVATE_PREFIX + branch.removeprefix("refs/heads/") if private else branch
        old = head
        if private:
            old = git.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", check=False).stdout.strip() or None
        if blobs and old != checked_on and any(_entry(git, old, p) != _entry(git, checked_on, p) for p in blobs):
            return CommitResult(deferred="the branch took a log with it while memory was being committed; the log is checked again "
                                         "and committed on a later flush")
        trees = _trees_with(git, state_dir, old, [part for part, _ in parts], blobs)
        was = git.run("rev-parse", f"{old}^{{tree}}").stdout.strip() if old else None
        if trees[-1] == was:
            if not private and not refresh_index(git, paths, blobs):  # an earlier refresh may have lost a race with another git process
                return CommitResult(deferred="committed, but .git/index stayed locked; its entries will be refreshed on the next flush")
            return CommitResult(unchanged=True)
        signing = _signing(git, sign)
        stalled = signing_stalled(state_dir) if signing != ["--no-gpg-sign"] else ""
        if stalled:
            return CommitResult(deferred=stalled)
        new = old
        try:
            for tree, (_, text) in zip(trees, parts):
                if tree == was:
                    continue  # a part that changes nothing the commit before it holds makes no empty commit
                new, was = git.run("commit-tree", tree, *(["-p", new] if new else []), *signing, env=identity,
                                   stdin=text, timeout=SIGN_TIMEOUT).stdout.strip(), tree  # stdin: an argument is bounded
            assert new is not None
        except GitError as exc:
            if signing == ["--no-gpg-sign"]:
                raise
            if "did not finish" in str(exc):  # a hung signer: no process waits for it again for a while (see _signing_stalled)
                disk.write_atomic(state_dir / SIGNING_STALLED, json.dumps({"at": time.time(), "why": str(exc)}).encode())
            return CommitResult(deferred=f"commit signing failed ({exc}); memory stays pending and is committed once signing works")
        marker = state_dir / INFLIGHT
        if not private:
            disk.write_atomic(marker, json.dumps({"owner": os.getpid(), "started": start_time(os.getpid()), "paths": paths}).encode())
        # Compare-and-swap: the ref moves only if it still points where we built on, and only if a last look, as
        # late as can be, finds nothing in the way: a person's `git commit` begun since the first look (building the
        # trees and commits takes tens of ms) read the branch tip as it was, and would fail with "cannot lock ref
        # 'HEAD'" once ours moved it (swap.py). Its process is seen from its start; the lock `git commit -a` takes
        # just after.
        said = parts[-1][1].splitlines()[0]
        waits, code, err = swap(git, ref, new, old, f"repo-memory: {said}",
                                lambda: _in_the_way(git, private, quick=True))
        if waits:
            marker.unlink(missing_ok=True)
            return CommitResult(deferred=waits)
        if code == 0:
            if not private and not refresh_index(git, paths, blobs):
                log.warning("committed %s; .git/index stayed locked, so its entries for %d path(s) are refreshed later", new[:12], len(paths))
                return CommitResult(sha=new, deferred="committed, but .git/index stayed locked; its entries will be refreshed on the next flush")
            marker.unlink(missing_ok=True)
            # What git does after a commit of its own: pack loose objects once there are many (quick when there are not;
            # when there are, git goes on in the background unless gc.autoDetach is off). Plumbing never asks.
            try:
                git.run("gc", "--auto", "--quiet", check=False, timeout=GC_TIMEOUT)
            except GitError as exc:  # the commit stands; packing is git's housekeeping, tried again after the next one
                log.warning("git gc --auto after a memory commit: %s", exc)
            return CommitResult(sha=new)
        marker.unlink(missing_ok=True)
        if "hook" in err:  # a reference-transaction hook said no: retrying cannot help
            return CommitResult(deferred=f"a git hook refused the memory commit: {err.strip()[:300]}", refused=True)
        log.info("the branch moved while committing memory; retrying on its new tip")
    return CommitResult(deferred="HEAD kept moving while memory was being committed; it will be retried")


def repair(git: Git, state_dir: Path) -> list[str]:
    """Put back the index entries a killed commit left out (the file in HEAD and on disk, not in the index); returns them."""
    try:
        left = json.loads((state_dir / INFLIGHT).read_text(encoding="utf-8"))
        if alive(int(left.get("owner", 0)), int(left.get("started", 0))):
            return []  # at work, or it found the index locked: its next commit, or whoever commits next, settles it
    except (OSError, ValueError, AttributeError, TypeError):
        return []
    with commit_lock(state_dir):
        return settle(git, state_dir) or []


def settle(git: Git, state_dir: Path) -> list[str] | None:
    """Make the index refresh an earlier memory commit owes (its branch moved, then its process died or found
    .git/index locked for INDEX_LOCK_WAIT): those paths' entries set to HEAD's. Returns the paths whose entries were
    staged for deletion, or None when the index stayed locked. The caller holds `commit_lock`, so a marker left is
    never a commit under way."""
    marker = state_dir / INFLIGHT
    try:
        owed = [str(p) for p in json.loads(marker.read_text(encoding="utf-8")).get("paths", [])]
    except (OSError, ValueError, AttributeError, TypeError):
        marker.unlink(missing_ok=True)
        return []
    broken = staged_deletions(git, owed)
    if not put_back(git, owed):
        return None
    marker.unlink(missing_ok=True)
    return broken


def put_back(git: Git, paths: list[str]) -> bool:
    """Set the index entries of `paths` to HEAD's, as `git reset -q HEAD -- PATHS` would, but under the index lock
    throughout: `git reset` reads the index before it locks it, and writing back what it read would drop an entry
    another git process added in between. Waits a bounded time for the lock; False if it stayed taken."""
    differ = [p for p in git.run("--literal-pathspecs", "diff", "--cached", "--name-only", "--no-renames", "-z", "HEAD",
                                 "--", *paths, check=False).stdout.split("\0") if p] if paths else []
    if not differ:
        return True
    listed = git.run("--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", *differ).stdout
    entries: Blobs = dict.fromkeys(differ)
    for line in filter(None, listed.split("\0")):
        meta, path = line.split("\t", 1)
        mode, _, blob = meta.split(" ")
        entries[path] = (mode, blob)
    return _while_locked(lambda: _set(git, differ, entries))


def staged_deletions(git: Git, paths: list[str]) -> list[str]:
    """Of `paths`, those in HEAD and on disk but missing from the index: a commit that will delete them."""
    if not paths:
        return []
    out = git.run("diff", "--cached", "--name-only", "-z", "--diff-filter=D", "HEAD", "--", *paths, check=False).stdout
    return [p for p in out.split("\0") if p and (git.root / p).is_file()]


def refresh_index(git: Git, paths: list[str], blobs: Blobs | None = None) -> bool:
    """Point the user's index entries for `paths` at what was just committed, so `git status` stays clean: a path in
    `blobs` at that blob, never at bytes its file gained since (they show as a change not staged, as any write after a
    commit), with the file's state recorded when it holds just that blob.

    Another git process (even `git status`) may hold index.lock for a moment: retry for a bounded time, never break it.
    """
    given = _nul([p for p, blob in (blobs or {}).items() if blob])
    # `add --refresh` records the file's state (a cache: `git status` would, but plumbing that trusts it would not)
    return _while_locked(lambda: _set(git, paths, blobs or {}) and (not given or git.run(
        "--literal-pathspecs", "add", "--refresh", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=given,
        check=False).returncode == 0))


def write_blob(git: Git, path: str, data: bytes, st_mode: int) -> tuple[str, str]:
    """(mode, id) of the blob git makes of the file `path` holding `data` (the path's filters applied) with `st_mode`.
    A log is committed as the bytes checked under its lock: git reading the file a moment later would take what came
    since. The mode is the one `git add` gives: 100755 for an executable file, unless core.fileMode is false."""
    mode = "100755" if st_mode & stat.S_IXUSR else "100644"
    if mode == "100755" and git.run("config", "--type=bool", "core.fileMode", check=False).stdout.strip() == "false":
        mode = "100644"  # git keeps an entry's mode then: a log is never committed executable by us
    return mode, git.run("hash-object", "-w", "--stdin", f"--path={path}", stdin=data).stdout.strip()


def _entry(git: Git, commit: str | None, path: str) -> tuple[str, int] | None:
    return git.entry(commit, path) if commit else None


def _beyond_link(root: Path, path: str) -> bool:
    """Whether a folder on the way to `path` is a link (or no folder at all): git no longer has a file there."""
    parent = root
    for part in path.split("/")[:-1]:
        parent = parent / part
        if parent.is_symlink() or not parent.is_dir():
            return os.path.lexists(parent)
    return False


def _set(git: Git, paths: list[str], blobs: Blobs, env: dict[str, str] | None = None, check: bool = False) -> bool:
    """Set the index entries of `paths`: those in `blobs` to their blob (None: removed), the others to their files."""
    rest, gone = [p for p in paths if p not in blobs], [p for p, blob in blobs.items() if blob is None]
    gone += [p for p in rest if _beyond_link(git.root, p)]  # a folder became a link: what was inside is gone (git: "beyond a symbolic link")
    rest = [p for p in rest if p not in gone]
    info = "".join(f"{blob[0]} {blob[1]}\t{p}\0" for p, blob in blobs.items() if blob)
    # removals first, and --replace: a path that changed kind (a folder now a link or a file, or the reverse) takes the old entries' place
    runs = ((["--force-remove", "--stdin"], _nul(gone)), (["--add", "--remove", "--replace", "--stdin"], _nul(rest)), (["--index-info"], info))
    return all(git.run("update-index", "-q", "-z", *args, env=env, stdin=stdin, check=check).returncode == 0 for args, stdin in runs if stdin)


def signing_stalled(state_dir: Path) -> str:
    """Why memory commits are not signed (so not made) right now: a signer hung within the last SIGNING_RETRY seconds,
    in this process or another. Each hang costs SIGN_TIMEOUT once; later commits defer at once until it is retried."""
    try:
        stalled = json.loads((state_dir / SIGNING_STALLED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    since = time.time() - float(stalled.get("at", 0))
    if since > SIGNING_RETRY:
        return ""
    return (f"commit signing hung {since:.0f} s ago ({stalled.get('why', '')}); memory stays pending, and signing is tried again "
            f"in {SIGNING_RETRY - since:.0f} s. Start your gpg agent, or run `git config repo-memory.sign never` "
            "and `repo-memory doctor --fix` to commit it unsigned.")


def _signing(git: Git, sign: str) -> list[str]:
    """commit-tree ignores commit.gpgSign, so `auto` applies it here (bounded by SIGN_TIMEOUT when it runs), unless the
    person turned it off for memory: REPO_MEMORY_SIGN=never (`sign`) or `git config repo-memory.sign never`."""
    if sign == "never" or git.config("commit.gpgSign").lower() != "true" or git.config("repo-memory.sign").lower() == "never":
        return ["--no-gpg-sign"]
    key = git.config("user.signingKey")
    return [f"-S{key}" if key else "-S"]


def _trees_with(git: Git, state_dir: Path, base: str | None, parts: list[list[str]], blobs: Blobs) -> list[str]:
    """The trees of `base` with each part's paths set in turn to their working-tree state (or blob), each tree holding
    the parts before it too, built in a private index file."""
    index = state_dir / f"commit-index-{os.getpid()}-{threading.get_ident()}"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        git.run("read-tree", *([base] if base else ["--empty"]), env=env)
        trees = []
        for paths in parts:
            chosen = set(paths) if len(parts) > 1 else None  # one part: every blob is its own
            _set(git, paths, blobs if chosen is None else {p: b for p, b in blobs.items() if p in chosen}, env, check=True)
            trees.append(git.run("write-tree", env=env).stdout.strip())
        return trees
    finally:
        index.unlink(missing_ok=True)
        Path(f"{index}.lock").unlink(missing_ok=True)


def clean_temp_indexes(state_dir: Path) -> list[str]:
    """Delete the temporary index files of processes that died while committing; returns their names."""
    removed = []
    for path in state_dir.glob("commit-index-*"):
        pid = path.name.split("-")[2]
        if pid.isdigit() and not alive(int(pid), 0):
            path.unlink(missing_ok=True)
            removed.append(path.name)
    return removed


def _in_the_way(git: Git, private: bool, quick: bool = False) -> str:
    """Why the branch must not move now (deferral.held_up: a git operation, a person's git command; the index
    lock held longer than INDEX_LOCK_WAIT), or ''. `quick`: HEAD read as a file (Git.operation_in_progress)."""
    deadline = time.monotonic() + INDEX_LOCK_WAIT
    while not (waits := held_up(git.operation_in_progress(quick), private)):
        if private or not (git.git_dir / "index.lock").exists():
            return ""  # someone else's index.lock is waited for, never deleted; then all is looked at again
        if time.monotonic() > deadline:
            return "another git process holds .git/index.lock; the memory commit will be retried"
        time.sleep(0.05)
    return waits


def _while_locked(attempt: Callable[[], bool]) -> bool:
    """Try `attempt` (an index write) until it succeeds, for at most INDEX_LOCK_WAIT: another git process (even `git
    status`) may hold index.lock for a moment; it is waited for, never broken. False if it stayed taken."""
    deadline = time.monotonic() + INDEX_LOCK_WAIT
    while not attempt():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _nul(paths: list[str]) -> str:
    """Paths for a git `-z --stdin` (any number of them: arguments would be bounded by the kernel's limits)."""
    return "".join(f"{p}\0" for p in paths)
