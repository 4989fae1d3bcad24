"""The folder torn tails go to (.git/repo-memory/torn/), against what can be planted in it, and a torn tail in a log
HEAD already holds, which no append or commit of repo-memory's touches: `doctor --fix` moves it aside.

Every test drives a real `repo-memory serve` process over stdio, or the CLI, and checks the files and git afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.shells.stdio_server import StdioServer

pytestmark = pytest.mark.slow


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True, timeout=120)


def started(repo: Path) -> tuple[StdioServer, Path]:
    """A server with one record written, and its log."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    server = StdioServer(repo, {"REPO_MEMORY_SESSION": "torn-folder"})
    server.initialize()
    answer = server.call("remember", {"text": "first note, acknowledged."})
    assert not answer.get("isError"), answer
    [log] = sorted((repo / ".agents/experience").glob("*/*.jsonl"))
    return server, log


def test_a_fifo_where_the_torn_copy_goes_does_not_hang_the_server(repo: Path):
    """A FIFO named like the copy's target (<log>.<offset>): the next remember blocked reading it while holding the
    log's lock, so it never answered and every later append to the session hung too. It is a name already taken now."""
    server, log = started(repo)
    try:
        folder = repo / ".git/repo-memory/torn"
        folder.mkdir(parents=True, exist_ok=True)
        at = log.stat().st_size
        os.mkfifo(folder / f"{log.name}.{at}")
        with open(log, "ab") as handle:
            handle.write(b'{"id":"a torn tail')
        server.send("tools/call", {"name": "remember", "arguments": {"text": "second note, after the tear."}})
        answer = server.answer(timeout=8)["result"]
        assert not answer.get("isError"), answer
        again = server.call("remember", {"text": "third note."}, timeout=8)
        assert not again.get("isError"), again
        moved = folder / f"{log.name}.{at}.2"
        assert moved.read_bytes() == b'{"id":"a torn tail' and log.read_bytes().endswith(b"\n")
    finally:
        server.kill()
        server.wait(30)


@pytest.mark.parametrize("planted", ["a-link-to-a-folder-outside", "a-file"])
def test_a_torn_folder_that_is_no_real_folder_receives_nothing_and_the_log_stays_as_it_is(repo: Path, tmp_path: Path,
                                                                                        planted: str):
    """torn/ as a link to a folder elsewhere: the fragment was written there, outside .git. A torn folder that is not a
    real folder is refused now: the log keeps its tail (the session goes on in its next file) and nothing is written."""
    server, log = started(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = repo / ".git/repo-memory/torn"
    if planted == "a-file":
        folder.write_bytes(b"")
    else:
        folder.symlink_to(outside)
    with open(log, "ab") as handle:
        handle.write(b'{"id":"a torn tail')
    try:
        answer = server.call("remember", {"text": "second note, after the tear."}, timeout=8)
        assert not answer.get("isError"), answer
        assert os.listdir(outside) == []
        assert log.read_bytes().endswith(b'{"id":"a torn tail')  # left as it is
        assert len(sorted((repo / ".agents/experience").glob("*/*.jsonl"))) == 2  # the session went on in its next file
        read = server.call("read", {"ref": f"session:{answer['structuredContent']['session']}"}, timeout=8)
        assert "second note, after the tear." in json.dumps(read), read
    finally:
        server.close_input()
        server.wait(30)
    assert os.listdir(outside) == []


def test_a_torn_tail_in_a_log_head_holds_is_moved_aside_by_doctor_fix_and_every_message_says_so(repo: Path):
    """No append goes to a log HEAD holds (records go on in the next file) and the committer commits only what it
    queued, so such a log kept its torn tail and `git status` showed it modified, while verify and doctor said the
    next append or commit would move it and doctor said 'All good'. `doctor --fix` moves it now, and the messages say
    so."""
    server, log = started(repo)
    server.close_input()
    assert server.wait(30) == 0
    rel = log.relative_to(repo).as_posix()
    assert git(repo, "ls-files", "--", rel).strip() == rel  # HEAD holds it
    committed = log.read_bytes()
    with open(log, "ab") as handle:
        handle.write(b'{"id":"a torn tail')
    assert git(repo, "status", "--porcelain", "--", rel).strip() == f"M {rel}"
    checked = cli(repo, "verify")
    assert checked.returncode == 0 and "repo-memory doctor --fix" in checked.stdout, checked.stdout + checked.stderr
    assert "next append" not in checked.stdout, checked.stdout
    doctor = cli(repo, "doctor")
    assert "repo-memory doctor --fix" in doctor.stdout and "next append" not in doctor.stdout, doctor.stdout
    assert "All good" not in doctor.stdout, doctor.stdout
    fixed = cli(repo, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    [aside] = sorted((repo / ".git/repo-memory/torn").iterdir())
    assert aside.read_bytes() == b'{"id":"a torn tail' and log.read_bytes() == committed
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", "*.jsonl") == ""
    assert "torn last line: an append" not in fixed.stdout and aside.name in fixed.stdout, fixed.stdout
    checked = cli(repo, "verify")
    assert checked.returncode == 0 and "torn" not in checked.stdout, checked.stdout + checked.stderr


def test_doctor_fix_that_cannot_move_a_torn_tail_leaves_the_log_and_says_why(repo: Path):
    """A torn folder that is a file: doctor --fix refuses it, the log keeps its tail, and doctor says what stopped it
    instead of repeating 'run doctor --fix'."""
    server, log = started(repo)
    server.close_input()
    assert server.wait(30) == 0
    (repo / ".git/repo-memory/torn").write_bytes(b"")
    with open(log, "ab") as handle:
        handle.write(b'{"id":"a torn tail')
    before = log.read_bytes()
    fixed = cli(repo, "doctor", "--fix")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert log.read_bytes() == before
    assert "`repo-memory doctor --fix` left it: it could not be moved to .git/repo-memory/torn/" in fixed.stdout, fixed.stdout
    assert "Run `repo-memory doctor --fix`" not in fixed.stdout, fixed.stdout
