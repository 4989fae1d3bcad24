"""A teammate's first session in a fresh clone of a repository that already holds a lot of memory.

The clone has no index yet. Claude Code runs the SessionStart hook (a process of its own, killed after the 10 s setup
gives it) while it starts the MCP server, which builds the index too: the hook built the whole index first, ran past
its time at 100k records and lost the briefing, and the two processes built the same index at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from repo_memory.shells.cli import cli
from tests.conftest import git, write_skill_file


def test_the_session_start_hook_of_a_fresh_clone_leaves_a_large_first_indexing_of_the_logs_to_the_server(repo: Path, tmp_path: Path):
    write_skill_file(repo, "release-checklist", "How we cut a release: bump the version, tag, publish.", "1. tag\n2. publish")
    words = "the deploy of the payments service waits for the schema migration to finish before traffic moves " * 4
    lines = "".join(json.dumps({"text": f"{n}: {words}", "session": f"past-{n // 200}", "ts": "2026-06-01T10:00:00Z"}) + "\n"
                    for n in range(12_000))
    result = CliRunner().invoke(cli, ["--root", str(repo), "log", "import", "-"], input=lines, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a year of memory")
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo), str(clone))

    def session_start(session: str) -> str:
        started = subprocess.run([str(Path(sys.executable).parent / "repo-memory"), "hook", "session-start"], cwd=clone, text=True,
                                 input=json.dumps({"session_id": session, "cwd": str(clone), "hook_event_name": "SessionStart"}),
                                 capture_output=True, env={**os.environ, "CLAUDECODE": "1"})
        assert started.returncode == 0, started.stderr
        return json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]

    briefing = session_start("s-1")
    assert "skill:release-checklist" in briefing and "indexed for the first time" in briefing, briefing
    assert "indexed for the first time" in session_start("s-2")  # the hook left them: each start is as quick as the first
    result = CliRunner().invoke(cli, ["--root", str(clone), "reindex"], catch_exceptions=False)  # what the server does
    assert result.exit_code == 0, result.output
    assert "indexed for the first time" not in session_start("s-3")
