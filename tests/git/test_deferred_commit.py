"""A memory commit deferred by a git operation lands as soon as the operation ends, with the server running: the answer
said "lands when it is finished", and until it does a person's `git add -A && git commit` can sweep the memory into a
code commit."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from tests.shells.stdio_server import StdioServer

pytestmark = pytest.mark.slow
LANDS_WITHIN = 5.0  # the commit window is 2 s; a deferred commit used to be retried 10 s after it was deferred
QUIET = {"GIT_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no"}


def run(where: Path, *args: str, env: dict[str, str] | None = None, ok: bool = True) -> None:
    env = {**os.environ, **QUIET, **(env or {})}
    proc = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, env=env)
    assert proc.returncode == 0 or not ok, f"git {' '.join(args)}: {proc.stderr}"


def commit_file(where: Path, name: str, text: str) -> None:
    (where / name).write_text(text, encoding="utf-8")
    run(where, "add", name)
    run(where, "commit", "-q", "-m", f"{name}: {text.strip()}")


def stopped_rebase(where: Path, branch: str) -> Callable[[], None]:
    """An interactive rebase stopped at an `edit` line; finishing it is `git rebase --continue`."""
    commit_file(where, "b.txt", "b\n")
    run(where, "rebase", "-q", "-i", "HEAD~1", env={"GIT_SEQUENCE_EDITOR": "sed -i 1s/^pick/edit/"})
    assert (Path(git(where, "rev-parse", "--absolute-git-dir").strip()) / "rebase-merge").is_dir()
    return lambda: run(where, "rebase", "--continue")


def conflict(where: Path, branch: str) -> None:
    """`app.py` changed one way on a new branch `topic`, another way on `branch`, which is checked out."""
    run(where, "checkout", "-q", "-b", "topic")
    commit_file(where, "app.py", "theirs\n")
    run(where, "checkout", "-q", branch)
    commit_file(where, "app.py", "ours\n")


def conflicted_merge(where: Path, branch: str) -> Callable[[], None]:
    """A merge stopped by a conflict in a code file; finishing it is resolving the file and `git commit`."""
    conflict(where, branch)
    run(where, "merge", "-q", "topic", ok=False)

    def finish() -> None:
        (where / "app.py").write_text("both\n", encoding="utf-8")
        run(where, "add", "app.py")
        run(where, "commit", "-q", "--no-edit")
    return finish


def conflicted_cherry_pick(where: Path, branch: str) -> Callable[[], None]:
    """A cherry-pick stopped by a conflict; finishing it is resolving the file and `git cherry-pick --continue`."""
    conflict(where, branch)
    run(where, "cherry-pick", "topic", ok=False)

    def finish() -> None:
        (where / "app.py").write_text("both\n", encoding="utf-8")
        run(where, "add", "app.py")
        run(where, "cherry-pick", "--continue")
    return finish


def bisect(where: Path, branch: str) -> Callable[[], None]:
    """A bisect under way (HEAD detached on the commit to test); finishing it is `git bisect reset`."""
    commit_file(where, "b.txt", "b\n")
    commit_file(where, "c.txt", "c\n")
    run(where, "bisect", "start", "HEAD", "HEAD~2")
    return lambda: run(where, "bisect", "reset")


def detached(where: Path, branch: str) -> Callable[[], None]:
    """HEAD detached; the commit lands once a branch is checked out."""
    run(where, "checkout", "-q", "--detach")
    return lambda: run(where, "checkout", "-q", branch)


def held_index(where: Path, branch: str) -> Callable[[], None]:
    """Another git process holding index.lock longer than a commit waits for it; finishing it is the lock going."""
    lock = Path(git(where, "rev-parse", "--absolute-git-dir").strip()) / "index.lock"
    lock.touch()
    return lock.unlink


def waiter(where: Path) -> tuple[Path, Path, Path]:
    """(a program that waits for a file (a minute at most), then writes a commit message to its argument if it has one;
    the file; the file it touches when it starts)."""
    go, started, program = (where.parent / f"{name}-{where.name}" for name in ("go", "started", "wait-for-go"))
    program.write_text(f"#!/bin/sh\ntouch '{started}'\nfor _ in $(seq 3000); do [ -e '{go}' ] && break; sleep 0.02; done\n"
                       "[ -z \"$1\" ] || echo 'feat: the change a person made' > \"$1\"\n", encoding="utf-8")
    program.chmod(0o755)
    return program, go, started


def held_open(where: Path, flags: list[str], env: dict[str, str]) -> Callable[[], None]:
    """A person's `git commit` (with `flags` and `env`) held open by `waiter`'s program, after git read the branch tip
    and let go of index.lock; finishing it is the file appearing, and the person's commit must then succeed."""
    (where / "app.py").write_text("a person's change\n", encoding="utf-8")
    run(where, "add", "app.py")
    _, go, started = waiter(where)
    person = subprocess.Popen(["git", "commit", *flags], cwd=where, env={**os.environ, **env}, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 30
    while not started.exists() and person.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert started.exists(), f"the person's commit did not get as far as its editor or hook: {person.communicate()[0]}"

    def finish() -> None:
        go.touch()
        said, _ = person.communicate(timeout=30)
        assert person.returncode == 0, f"the person's `git commit` failed: {said}"
        assert "feat: the change a person made" in git(where, "log", "-2", "--format=%s"), "the person's commit is not there"
    return finish


def editor_open(where: Path, branch: str) -> Callable[[], None]:
    """A plain `git commit` whose message editor is still open (the person is writing the message)."""
    return held_open(where, [], {"GIT_EDITOR": str(waiter(where)[0])})


def slow_pre_commit_hook(where: Path, branch: str) -> Callable[[], None]:
    """`git commit -m` while a slow pre-commit hook runs (the pre-commit framework, husky + lint-staged)."""
    hooks = where.parent / f"hooks-{where.name}"
    hooks.mkdir()
    (hooks / "pre-commit").write_text(f"#!/bin/sh\nexec '{waiter(where)[0]}'\n", encoding="utf-8")
    (hooks / "pre-commit").chmod(0o755)
    return held_open(where, ["-q", "-m", "feat: the change a person made"], {"GIT_CONFIG_COUNT": "1",
                     "GIT_CONFIG_KEY_0": "core.hooksPath", "GIT_CONFIG_VALUE_0": str(hooks)})


def watches(pid: int) -> int:
    """How many inotify instances process `pid` holds (each watchdog observer has one); 0 where /proc has none."""
    found = 0
    for fd in Path(f"/proc/{pid}/fd").glob("*"):
        with contextlib.suppress(FileNotFoundError):  # closed since it was listed
            found += os.readlink(fd) == "anon_inode:inotify"
    return found


def untracked(where: Path) -> list[str]:
    return [line for line in git(where, "status", "--porcelain", "--untracked-files=all").splitlines() if ".agents/" in line]


OPERATIONS = [stopped_rebase, conflicted_merge, conflicted_cherry_pick, bisect, detached, held_index, editor_open,
              slow_pre_commit_hook]


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("linked", [False, True], ids=["main worktree", "linked worktree"])
def test_a_deferred_memory_commit_lands_soon_after_the_operation_ends(repo: Path, linked: bool,
                                                                     operation: Callable[[Path, str], Callable[[], None]]):
    commit_file(repo, "app.py", "base\n")
    run(repo, "add", "-A")
    run(repo, "commit", "-q", "-m", "repo-memory set up")
    where, branch = repo, "main"
    if linked:  # its HEAD, index and operation state are in a git dir of its own (.git/worktrees/linked)
        where, branch = repo.parent / "linked", "linked"
        run(repo, "worktree", "add", "-q", "-b", branch, str(where))
    finish = operation(where, branch)
    server = StdioServer(where)
    try:
        server.initialize()
        recorded = server.call("remember", {"text": "Found mid-operation: the parser drops the last line."})
        session = recorded["structuredContent"]["session"]
        idle = watches(server.proc.pid)  # the memory folders' watch, kept for the server's life
        answer = server.call("checkpoint", {"summary": "The parser bug, found mid-operation.", "covers": [f"{session}#1"]})
        assert "deferred" in answer["structuredContent"]["commit"], answer
        assert untracked(where), "the checkpoint should have waited for the operation"
        finish()
        ended = time.monotonic()
        while untracked(where) and time.monotonic() - ended < LANDS_WITHIN:
            time.sleep(0.02)  # `git status` in a tight loop (an editor's git panel may run it so) must not put it off
        assert not untracked(where), f"the memory commit had not landed {LANDS_WITHIN:g} s after the operation ended"
        assert ".agents/experience/" in git(where, "show", "--name-only", "--format=", "HEAD")
        while watches(server.proc.pid) > idle and time.monotonic() - ended < LANDS_WITHIN:
            time.sleep(0.05)
        assert watches(server.proc.pid) == idle, "the git dir is still watched, though no commit waits any more"
    finally:
        server.close_input()
        server.wait(30)


RETRY_AFTER = 10.0  # the ordinary retry of a deferred commit: 5 commit windows after the deferral


def failing_signer(repo: Path) -> Path:
    """Commits here are signed (commit.gpgSign) by a program that fails; returns the file it adds a line to per call."""
    calls, program = repo.parent / "gpg-calls", repo.parent / "gpg-fails"
    program.write_text(f"#!/bin/sh\necho x >> '{calls}'\nexit 2\n", encoding="utf-8")
    program.chmod(0o755)
    run(repo, "config", "commit.gpgSign", "true")
    run(repo, "config", "gpg.program", str(program))
    return calls


def signed(calls: Path) -> int:
    """How many times the signing program ran."""
    return len(calls.read_text(encoding="utf-8").split()) if calls.exists() else 0


def editor_activity(where: Path, seconds: float) -> None:
    """What an editor's git panel does for `seconds`: `git status` again and again, and index.lock taken and dropped."""
    lock = Path(git(where, "rev-parse", "--absolute-git-dir").strip()) / "index.lock"
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        git(where, "status", "--porcelain")
        lock.touch()
        lock.unlink()
        time.sleep(0.1)


def set_up_with_a_failing_signer(repo: Path) -> Path:
    """A committed repository whose commits are to be signed by a program that fails; the file counting its calls."""
    commit_file(repo, "app.py", "base\n")
    run(repo, "add", "-A")
    run(repo, "commit", "-q", "-m", "repo-memory set up")
    return failing_signer(repo)


def test_a_commit_deferred_by_failed_signing_is_retried_on_its_timer_not_on_each_git_event(repo: Path):
    calls = set_up_with_a_failing_signer(repo)
    server = StdioServer(repo)
    try:
        server.initialize()
        recorded = server.call("remember", {"text": "The parser drops the last line."})
        idle = watches(server.proc.pid)
        session = recorded["structuredContent"]["session"]
        answer = server.call("checkpoint", {"summary": "The parser bug.", "covers": [f"{session}#1"]})
        deferred = time.monotonic()
        assert "signing failed" in answer["structuredContent"]["commit"], answer
        tried = signed(calls)
        assert tried >= 1
        editor_activity(repo, RETRY_AFTER / 2)
        assert signed(calls) == tried, "each git event retried the signed commit (a gpg prompt each time)"
        assert watches(server.proc.pid) == idle, "the git dir is watched, though no git operation holds the commit up"
        run(repo, "config", "commit.gpgSign", "false")  # signing works again (here: is no longer asked for)
        while untracked(repo) and time.monotonic() - deferred < RETRY_AFTER + LANDS_WITHIN:
            time.sleep(0.05)
        assert not untracked(repo), "the deferred commit was not retried on its timer"
    finally:
        server.close_input()
        server.wait(30)


def test_an_operation_ending_brings_one_retry_however_many_git_events_follow(repo: Path):
    calls = set_up_with_a_failing_signer(repo)
    finish = detached(repo, "main")
    server = StdioServer(repo)
    try:
        server.initialize()
        recorded = server.call("remember", {"text": "Found on a detached HEAD: the parser drops the last line."})
        session = recorded["structuredContent"]["session"]
        answer = server.call("checkpoint", {"summary": "The parser bug.", "covers": [f"{session}#1"]})
        assert "detached" in answer["structuredContent"]["commit"], answer
        assert signed(calls) == 0
        finish()
        editor_activity(repo, LANDS_WITHIN)  # well before the ordinary retry, 10 s after the retry that follows the end
        assert signed(calls) == 1, "the operation's end should bring one retry (signing then fails), not one per git event"
    finally:
        server.close_input()
        server.wait(30)
