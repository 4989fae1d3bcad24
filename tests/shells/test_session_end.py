"""Claude Code's SessionEnd hook (`repo-memory hook session-end`, a real process) over transcripts written here: the
tool calls no PostToolUse hook delivered are recorded from the transcript, and the session's end is recorded and
committed whatever the transcript holds and however long it is (Claude Code kills the hook at its timeout)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repo_memory.shells.setup import TIMEOUTS

from tests.conftest import git
from tests.harness.clis import records

SESSION = "11111111-2222-3333-4444-555555555555"


@pytest.fixture
def repo(repo: Path) -> Path:
    """The repository, its memory folders committed (only what the hook writes is left to commit)."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def transcript(path: Path, repo: Path, calls: int, output: str = "print(1)\n") -> Path:
    """Claude Code's transcript of `calls` successful Reads, the result of each `output`."""
    with path.open("w", encoding="utf-8") as out:
        for n in range(calls):
            line = {"sessionId": SESSION, "cwd": str(repo), "isSidechain": False}
            out.write(json.dumps({**line, "type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu_{n:08d}", "name": "Read", "input": {"file_path": f"{repo}/app.py"}}]}}) + "\n")
            out.write(json.dumps({**line, "type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{n:08d}", "content": output}]},
                "toolUseResult": {"type": "text", "file": {"filePath": f"{repo}/app.py", "content": output}}}) + "\n")
    return path


def session_end(repo: Path, path: Path, wrapper: tuple[str, ...] | list[str] = ()) -> tuple[subprocess.CompletedProcess[str], float]:
    hook = {"session_id": SESSION, "cwd": str(repo), "transcript_path": str(path), "hook_event_name": "SessionEnd", "reason": "other"}
    began = time.monotonic()
    done = subprocess.run([*wrapper, sys.executable, "-m", "repo_memory", "hook", "session-end"], cwd=repo, input=json.dumps(hook),
                          capture_output=True, text=True, env={**os.environ, "CLAUDECODE": "1"}, timeout=120)
    return done, time.monotonic() - began


# Claude Code at a session's end: it starts the hook's command, times it (its timeout counts from that start), and exits
# once the hook returns. Its time is written to the file named first.
HARNESS = ("import subprocess, sys, time; began = time.monotonic(); done = subprocess.run(sys.argv[2:]); "
           "open(sys.argv[1], 'w').write(str(time.monotonic() - began)); sys.exit(done.returncode)")


def ended_by_harness(repo: Path, path: Path, tmp_path: Path, wrapper: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess[str], float]:
    """The hook run as Claude Code runs it at a session's end (HARNESS): how it ended and how long the harness timed it.
    What it left uncommitted (a busy machine leaves it no time to) is committed by the finisher once the harness is gone."""
    took = tmp_path / "took"
    done, _ = session_end(repo, path, [sys.executable, "-c", HARNESS, str(took), *wrapper])
    return done, float(took.read_text())


def committed_soon(repo: Path, wait: float = 30) -> bool:
    """Whether the memory folders are committed within `wait` seconds (by the hook, or by the finisher it started)."""
    deadline = time.monotonic() + wait
    while git(repo, "status", "--porcelain", "--", ".agents"):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def test_a_transcript_line_that_cannot_be_read_is_skipped_and_the_session_still_ends_committed(repo: Path, tmp_path: Path):
    path = transcript(tmp_path / "t.jsonl", repo, 3)
    with path.open("a", encoding="utf-8") as out:  # lines Claude Code never writes, or a future one might
        for odd in ({"type": "assistant", "sessionId": SESSION, "message": None}, {"type": "user", "message": {"content": "text"}},
                    {"type": "assistant", "message": {"content": [None, "x", {"type": "tool_use", "id": 7}]}}, [1, 2], "text"):
            out.write(json.dumps(odd) + "\n")
        out.write("{not json\n")
    done, _ = session_end(repo, path)
    assert done.returncode == 0 and "failed" not in done.stderr, done.stderr
    ours = [r for r in records(repo) if r["session"] == SESSION]
    assert [r["data"]["call_id"] for r in ours if r["kind"] == "tool"] == ["toolu_00000000", "toolu_00000001", "toolu_00000002"]
    assert "Session ended" in ours[-1]["text"] and "could not be read" in ours[-1]["text"], ours[-1]
    assert not git(repo, "status", "--porcelain", "--", ".agents")


def test_session_end_records_hundreds_of_missed_calls_well_within_claude_codes_timeout(repo: Path, tmp_path: Path):
    """Every call is recorded, or counted in the end record as left (as many as a busy machine leaves no time for)."""
    done, took = ended_by_harness(repo, transcript(tmp_path / "t.jsonl", repo, 500, "x" * 3000), tmp_path)
    assert done.returncode == 0, done.stderr
    assert took < TIMEOUTS["SessionEnd"], took
    ours = [r for r in records(repo) if r["session"] == SESSION]
    said, recorded = ours[-1]["text"], sum(r["kind"] == "tool" for r in ours)
    left = re.search(r"(\d+) tool call\(s\) its hooks missed were not recorded", said)
    assert recorded + int(left[1] if left else 0) == 500 or recorded < 500 and "not read to its end" in said, said
    assert committed_soon(repo)


def test_a_transcript_too_long_to_read_back_in_time_still_ends_the_session_committed_saying_what_was_left(
        repo: Path, tmp_path: Path):
    done, took = ended_by_harness(repo, transcript(tmp_path / "t.jsonl", repo, 2000, "x" * 20_000), tmp_path)
    assert done.returncode == 0, done.stderr
    assert took < TIMEOUTS["SessionEnd"], took
    ours = [r for r in records(repo) if r["session"] == SESSION]
    recorded = sum(r["kind"] == "tool" for r in ours)
    said = ours[-1]["text"]  # the calls left (or, on a busy machine, that the transcript was not read to its end)
    assert recorded < 2000 and "Session ended" in said and "time ran out" in said and "repo-memory log import" in said, said
    assert f"{2000 - recorded} tool call(s)" in said or recorded == 0 and "not read to its end" in said, said
    assert committed_soon(repo)



def test_a_hook_process_slow_to_start_still_ends_and_commits_within_claude_codes_timeout(repo: Path, tmp_path: Path):
    """Claude Code's timeout counts from when it starts the hook's command. A hook process slow to start (a busy machine,
    a cold disk: here a shell that waits 0.5 s, then execs the hook in its place) still read and recorded for a full
    second counted from when its own code began, then wrote all that, and overran the 3 s. Now what it records is
    bounded by the time since the process started (and what writing it will take); the end record says what was left,
    and a commit there is no time left for is the finisher's, once the harness is gone."""
    path = transcript(tmp_path / "t.jsonl", repo, 2000, "x" * 3000)
    done, took = ended_by_harness(repo, path, tmp_path, ("sh", "-c", 'sleep 0.5; exec "$0" "$@"'))
    assert done.returncode == 0, done.stderr
    assert took < TIMEOUTS["SessionEnd"], took
    ours = [r for r in records(repo) if r["session"] == SESSION]
    recorded = sum(r["kind"] == "tool" for r in ours)
    said = ours[-1]["text"]  # the calls it left, or that it could not read the transcript to its end, and the remedy
    assert recorded < 2000 and "time ran out" in said and f"repo-memory log import {path}" in said, (recorded, said)
    assert committed_soon(repo)
