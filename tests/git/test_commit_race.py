"""A person's `git commit` that begins while a memory commit is being made (after its first look for one, before its
branch moves) succeeds: it read the branch tip as it was, so the memory commit must not land until it has ended."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.git.commit import CommitResult
from repo_memory.git.repo import Git
from repo_memory.git.swap import swap
from tests.conftest import git
from tests.git.test_running import committed, open_commit  # noqa: F401  (committed is a fixture)


def pause_in_the_next_memory_commit(repo: Path) -> tuple[Path, Path, Path]:
    """(arm, paused, resume): once `arm` exists, the next index git writes (a memory commit's own temporary index,
    built after its first look for a person's git command) makes a post-index-change hook touch `paused` and wait,
    a minute at most, for `resume`. Later index writes (the person's `git add`) pass."""
    arm, taken, paused, resume = (repo.parent / name for name in ("arm", "taken", "paused", "resume"))
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\nmv '{arm}' '{taken}' 2>/dev/null || exit 0\ntouch '{paused}'\n"
                    f"for _ in $(seq 3000); do [ -e '{resume}' ] && exit 0; sleep 0.02; done\n",
                    encoding="utf-8")
    hook.chmod(0o755)
    return arm, paused, resume


def test_a_persons_git_commit_begun_while_memory_is_being_committed_succeeds_and_the_memory_lands_after_it(
        committed: Path):  # noqa: F811
    arm, paused, resume = pause_in_the_next_memory_commit(committed)
    store = Store(Config.load(committed), session="s-agent")
    flushed: list[CommitResult | None] = []
    try:
        store.remember("The parser drops the last line of a file that has no newline at its end.")
        arm.touch()
        flushing = threading.Thread(target=lambda: flushed.append(store.flush("final")))
        flushing.start()
        deadline = time.monotonic() + 60
        while not paused.exists() and flushing.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert paused.exists(), f"the memory commit wrote no index of its own: {flushed}"
        with open_commit(committed, "commit") as person:  # it reads the branch tip now, mid memory commit
            resume.touch()
            flushing.join(60)
            assert flushed and flushed[0] is not None and not flushed[0].sha, f"the memory commit landed: {flushed}"
            assert flushed[0].deferred.startswith(f"`git commit` (process {person.pid}) is in progress"), flushed
        # open_commit has checked that the person's commit succeeded
        landed = store.flush("final")
        assert landed is not None and landed.sha, landed
    finally:
        store.close()
    subjects = git(committed, "log", "-3", "--format=%s").splitlines()
    assert subjects[1:] == ["feat: a person wrote this", "base"] and subjects[0].startswith("memory("), subjects
    assert git(committed, "status", "--porcelain", "--", ".agents") == ""


def child(repo: Path, parent: str, message: str) -> str:
    """A new commit on `parent`, holding its tree."""
    return git(repo, "commit-tree", "-p", parent, "-m", message, f"{parent}^{{tree}}").strip()


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def test_the_ref_moves_only_when_the_last_look_finds_nothing_and_it_is_still_where_it_was(
        committed: Path):  # noqa: F811
    main, base = Git(committed, committed / ".git"), head(committed)
    tip = child(committed, base, "memory: next")
    busy = "a person's `git commit` is in progress"
    assert swap(main, "refs/heads/main", tip, base, "repo-memory: next", lambda: busy) == (busy, 0, "")
    assert head(committed) == base
    theirs = child(committed, base, "a person's")
    git(committed, "update-ref", "refs/heads/main", theirs)
    waits, code, err = swap(main, "refs/heads/main", tip, base, "repo-memory: next", lambda: "")
    assert (waits, code) == ("", 128) and "expected" in err, err
    assert head(committed) == theirs
    assert swap(main, "refs/heads/main", tip, theirs, "repo-memory: next", lambda: "") == ("", 0, "")
    assert head(committed) == tip
    assert git(committed, "reflog", "-1", "--format=%gs", "refs/heads/main").strip() == "repo-memory: next"


def test_a_reference_transaction_hook_that_refuses_is_heard(committed: Path):  # noqa: F811
    hook = committed / ".git" / "hooks" / "reference-transaction"
    hook.write_text('#!/bin/sh\ncat >/dev/null\n[ "$1" = prepared ] || exit 0\necho "policy: no" >&2\nexit 1\n',
                    encoding="utf-8")
    hook.chmod(0o755)
    base = head(committed)
    waits, code, err = swap(Git(committed, committed / ".git"), "refs/heads/main", child(committed, base, "memory: x"),
                            base, "repo-memory: x", lambda: "")
    assert (waits, code) == ("", 128) and "policy: no" in err and "hook" in err, err
    assert head(committed) == base


def test_with_a_git_before_update_ref_transactions_the_ref_still_moves_after_the_look(
        committed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: F811
    """git before 2.27 ends at `start`, a command `update-ref --stdin` does not know yet."""
    old = tmp_path / "old-git"
    old.mkdir()
    (old / "git").write_text(f"#!/bin/sh\nsub=\"$1 $2\"\n[ \"$1\" = -c ] && sub=\"$3 $4\"  # past our -c safe.bareRepository\n"
                             f"if [ \"$sub\" = 'update-ref --stdin' ]; then\n  read -r first\n"
                             f"  echo \"$first\" > '{old / 'refused'}'\n"
                             "  echo \"fatal: unknown command: $first\" >&2\n  exit 128\nfi\n"
                             f"exec '{shutil.which('git')}' \"$@\"\n", encoding="utf-8")
    (old / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{old}{os.pathsep}{os.environ['PATH']}")
    base = head(committed)
    tip, looked = child(committed, base, "memory: next"), []
    assert swap(Git(committed, committed / ".git"), "refs/heads/main", tip, base, "repo-memory: next",
                lambda: looked.append("looked") or "") == ("", 0, "")
    assert looked == ["looked"] and head(committed) == tip
    assert (old / "refused").read_text(encoding="utf-8") == "start\n"
