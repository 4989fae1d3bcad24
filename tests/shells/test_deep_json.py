"""A committed log line of JSON nested 100,000 levels deep made json.loads raise RecursionError, which no reader caught:
search, doctor, verify, skill list and reindex died with a traceback and the session-start hook gave no briefing. Such a
line is an invalid line like any other: named by verify and doctor, skipped by the index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git

EXE = str(Path(sys.executable).parent / "repo-memory")
DEEP = "[" * 100_000 + "]" * 100_000


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], cwd=repo, capture_output=True, text=True, timeout=120)


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    """A clone of an upstream whose logs hold a record and, in a log of its own, one line nested 100,000 deep."""
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q", "-b", "main")
    assert cli(upstream, "init").returncode == 0
    assert cli(upstream, "log", "add", "we build the payments service with make", "-s", "notes").returncode == 0
    month = next((upstream / ".agents/experience").iterdir())
    (month / "2026-12-03-aaaaaa.jsonl").write_text(DEEP + "\n", encoding="utf-8")
    git(upstream, "add", "-A")
    git(upstream, "commit", "-q", "-m", "memory")
    git(tmp_path, "clone", "-q", str(upstream), "clone")
    return tmp_path / "clone"


def test_every_command_reading_the_logs_and_the_session_start_hook_run_past_a_line_nested_too_deep(deep: Path):
    for command in (["search", "payments make"], ["doctor"], ["verify"], ["skill", "list"], ["reindex"]):
        done = cli(deep, *command)
        assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr, (command, done.stderr[-2000:])
        if command[0] in ("doctor", "verify"):  # the line is a break: named, with its log
            assert "2026-12-03-aaaaaa.jsonl at byte 0" in done.stdout and "nested deeper than" in done.stdout, done.stdout
        else:
            assert done.returncode == 0, (command, done.stderr)
        if command[0] == "search":
            assert "we build the payments service with make" in done.stdout, done.stdout
    started = subprocess.run([EXE, "hook", "session-start"], cwd=deep, text=True, capture_output=True, timeout=120,
                             input=json.dumps({"session_id": "s-1", "cwd": str(deep), "hook_event_name": "SessionStart"}),
                             env={**os.environ, "CLAUDECODE": "1"})
    assert started.returncode == 0 and "Traceback" not in started.stderr, started.stderr
    assert "repo-memory" in json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
