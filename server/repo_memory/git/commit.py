"""Committing memory paths beside the user's work: a temporary index, commit-tree, a compare-and-swap ref update.

The user's index, staged changes, untracked files and index.lock are never touched, except that after a
commit the user's index entries for exactly the committed memory paths are refreshed so `git status` stays
clean. While a rebase, merge, cherry-pick, revert, bisect or am is under way, or HEAD is detached, files are
still written but the commit is deferred and lands on a later flush.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from dataclasses import dataclass

from repo_memory.errors import GitError
from repo_memory.git.repo import INDEX_LOCK_WAIT, SIGN_TIMEOUT, CommitResult, Git
from repo_memory.guards import disk, secretscan

log = logging.getLogger("repo_memory")
PENDING_FILE = "pending-commit.json"
SCANNED_AT_COMMIT = (".md", ".toml", ".yaml", ".yml", ".json", ".txt")  # files a person may edit; logs are scanned at append
CAS_RETRIES = 5


def commit_paths(git: Git, state_dir: Path, paths: list[str], message: str, identity: dict[str, str], sign: str = "auto") -> CommitResult:
    """Commit the working-tree state of `paths` (added, changed or deleted) on top of HEAD's branch, or defer."""
    with disk.repo_lock(state_dir, "commit.lock"):
        for _ in range(CAS_RETRIES):
            busy = git.operation_in_progress()
            if busy == "a detached HEAD":
                return CommitResult(deferred="HEAD is detached; the memory commit lands once a branch is checked out")
            if busy:
                return CommitResult(deferred=f"{busy} is in progress; the memory commit lands when it is finished")
            if not _wait_for_index_lock(git.git_dir):
                return CommitResult(deferred="another git process holds .git/index.lock; the memory commit will be retried")
            ref, old = git.branch()
            tree = _tree_with(git, state_dir, old, paths)
            if old and tree == git.run("rev-parse", f"{old}^{{tree}}").stdout.strip():
                if not _refresh_index(git, paths):  # an earlier refresh may have lost a race with another git process
                    return CommitResult(deferred="committed, but .git/index stayed locked; its entries will be refreshed on the next flush")
                return CommitResult(unchanged=True)
            args = ["commit-tree", tree, "-m", message, *(["-p", old] if old else []), *_signing(git, sign)]
            new = git.run(*args, env=identity, timeout=SIGN_TIMEOUT).stdout.strip()
            # Compare-and-swap: the ref moves only if it still points where we built on.
            swapped = git.run("update-ref", "-m", f"repo-memory: {message.splitlines()[0]}", ref, new, old or "0" * 40, check=False)
            if swapped.returncode == 0:
                if not _refresh_index(git, paths):
                    log.warning("committed %s; .git/index stayed locked, so its entries for %d path(s) are refreshed later", new[:12], len(paths))
                    return CommitResult(sha=new, deferred="committed, but .git/index stayed locked; its entries will be refreshed on the next flush")
                return CommitResult(sha=new)
            log.info("HEAD moved while committing memory; retrying on the new HEAD")
        return CommitResult(deferred="HEAD kept moving while memory was being committed; it will be retried")


def _refresh_index(git: Git, paths: list[str]) -> bool:
    """Point the user's index entries for `paths` at what was just committed, so `git status` stays clean.

    Another git process (even `git status`) may hold index.lock for a moment: retry for a bounded time, never break it.
    """
    deadline = time.monotonic() + INDEX_LOCK_WAIT
    while True:
        if git.run("update-index", "-q", "--add", "--remove", "--", *paths, check=False).returncode == 0:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def _signing(git: Git, sign: str) -> list[str]:
    """commit-tree ignores commit.gpgSign, so `auto` applies it here (bounded by SIGN_TIMEOUT when it runs)."""
    if sign == "never" or git.run("config", "--bool", "commit.gpgSign", check=False).stdout.strip() != "true":
        return ["--no-gpg-sign"]
    key = git.run("config", "user.signingKey", check=False).stdout.strip()
    return [f"-S{key}" if key else "-S"]


def _tree_with(git: Git, state_dir: Path, base: str | None, paths: list[str]) -> str:
    """The tree of `base` with `paths` set to their working-tree state, built in a private index file."""
    index = state_dir / f"commit-index-{os.getpid()}-{threading.get_ident()}"
    env = {"GIT_INDEX_FILE": str(index)}
    try:
        git.run("read-tree", *([base] if base else ["--empty"]), env=env)
        git.run("update-index", "--add", "--remove", "--", *paths, env=env)
        return git.run("write-tree", env=env).stdout.strip()
    finally:
        index.unlink(missing_ok=True)
        Path(f"{index}.lock").unlink(missing_ok=True)


def _holds_secret(path: Path) -> bool:
    """Whether a memory file a person may have edited holds a secret (the last gate before a git object)."""
    if path.suffix not in SCANNED_AT_COMMIT or "/experience/" in path.as_posix():
        return False
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False  # deleted or unreadable: nothing of it reaches git
    return bool(secretscan.scan(text))


def _wait_for_index_lock(git_dir: Path) -> bool:
    """Wait a bounded time for someone else's index.lock to go; never delete it."""
    deadline = time.monotonic() + INDEX_LOCK_WAIT
    while (git_dir / "index.lock").exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@dataclass(frozen=True)
class Policy:
    """How memory is committed here: the `commit` mode, the coalescing window, signing, the author, the harness."""

    mode: str = "auto"
    window: float = 2.0
    sign: str = "auto"
    author_name: str | None = None
    author_email: str | None = None
    harness: str = "unknown"


class Committer:
    """Collects memory writes and commits them in coalesced bursts, per the `commit` mode (auto, stage, off)."""

    def __init__(self, git: Git, state_dir: Path, policy: Policy, session: str | None = None):
        self.git, self.state_dir, self.policy, self.session = git, state_dir, policy, session
        self.root, self.window = git.root, policy.window
        self._lock = threading.Lock()
        self._pending: dict[str, str] = {}  # path -> message of its latest change
        self._timer: threading.Timer | None = None
        self.last: CommitResult | None = None
        self.held: list[str] = []  # pending paths kept out of commits because they hold a secret
        self._load_pending()

    @property
    def mode(self) -> str:
        return self.policy.mode

    def record(self, paths: Iterable[str], message: str) -> None:
        """Note changed memory paths; they are committed within `window` seconds (or at flush/close)."""
        if self.mode == "off":
            return
        with self._lock:
            for path in paths:
                self._pending[path] = message
            if self._timer is None:
                self._timer = threading.Timer(self.window, self._flush_from_timer)
                self._timer.daemon = True
                self._timer.start()

    def _flush_from_timer(self) -> None:
        with self._lock:
            self._timer = None
        try:
            self.flush()
        except (GitError, OSError) as exc:
            log.warning("memory commit failed: %s", exc)

    def flush(self) -> CommitResult | None:
        """Commit (or stage) everything pending now; a deferral keeps it pending and retries later."""
        with self._lock:
            pending = dict(self._pending)
        if not pending:
            return None
        self.held = [p for p in sorted(pending) if _holds_secret(self.root / p)]
        if self.held:  # a person's edit put a secret in a file we were about to commit: it stays pending, uncommitted
            log.warning("not committing %s: it contains what looks like a secret (see `repo-memory doctor`)", ", ".join(self.held))
        paths = [p for p in sorted(pending) if p not in self.held]
        if not paths:
            return None
        if self.mode == "stage":
            staged = _refresh_index(self.git, paths)
            result = CommitResult(unchanged=True) if staged else CommitResult(deferred="another git process holds .git/index.lock; staging will be retried")
        else:
            try:
                result = commit_paths(self.git, self.state_dir, paths, self._message(pending), self._identity(), self.policy.sign)
            except GitError:
                with self._lock:
                    self._save_pending()  # the files are written; whoever flushes next commits them
                raise
        with self._lock:
            self.last = result
            if result.deferred:
                self._save_pending()
                if self._timer is None:  # try again later; the operation in the way may be over by then
                    self._timer = threading.Timer(self.window * 5, self._flush_from_timer)
                    self._timer.daemon = True
                    self._timer.start()
            else:
                for path in paths:
                    if self._pending.get(path) == pending[path]:
                        del self._pending[path]
                self._save_pending()
        return result

    def describe(self) -> str:
        """One line for tool results: where the latest writes stand with respect to git."""
        if self.mode == "off":
            return "not committed (commit = off): commit .agents/ with your code"
        last = self.last
        if last is not None and last.deferred and self._pending:
            return f"deferred: {last.deferred}"
        if self.held:
            return f"not committed: {', '.join(self.held)} contains what looks like a secret; remove it (see `repo-memory doctor`)"
        if self._pending:
            return f"pending: {'staged' if self.mode == 'stage' else 'committed'} within {self.window:g} s"
        return "up to date"

    def pending(self) -> tuple[int, str]:
        """(memory paths written but not committed yet, in this process or left by another, and why they wait)."""
        with self._lock:
            self._load_pending()
            count = len(self._pending)
        last = self.last
        return count, last.deferred if last is not None and last.deferred else ""

    def close(self, commit: bool = True) -> None:
        """Cancel the timer and flush what is pending — or, with `commit=False`, leave it recorded for the next flush."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not commit:
                self._save_pending()
                return
        try:
            self.flush()
        except (GitError, OSError) as exc:
            log.warning("memory commit at close failed: %s", exc)

    def _message(self, pending: dict[str, str]) -> str:
        messages = list(dict.fromkeys(pending.values()))
        subject = messages[0] if len(messages) == 1 else f"memory: {len(messages)} changes"
        body = "" if len(messages) == 1 else "\n" + "\n".join(f"- {m}" for m in messages) + "\n"
        return f"{subject}\n{body}\nMemory-Session: {self.session or 'none'}\nMemory-Harness: {self.policy.harness}\n"

    def _identity(self) -> dict[str, str]:
        name = self.policy.author_name or self.git.config("user.name") or "repo-memory"
        email = self.policy.author_email or self.git.config("user.email") or "repo-memory@localhost"
        return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": "repo-memory", "GIT_COMMITTER_EMAIL": email}

    def _load_pending(self) -> None:
        path = self.state_dir / PENDING_FILE
        if path.is_file():
            try:
                self._pending.update(json.loads(path.read_text(encoding="utf-8")))
            except ValueError:
                log.warning("ignoring unreadable %s", path)

    def _save_pending(self) -> None:
        path = self.state_dir / PENDING_FILE
        if self._pending:
            disk.write_atomic(path, json.dumps(self._pending, indent=2, sort_keys=True).encode())
        else:
            path.unlink(missing_ok=True)
