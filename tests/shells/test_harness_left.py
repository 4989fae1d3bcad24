"""What a harness's hooks leave pending reaches git when the harness ends without a SessionEnd hook that committed it:
Claude Code closes its MCP servers, then runs SessionEnd, and ends a plugin's hook with every process it started
after 1.5 s, on a busy machine before the hook has started anything. The server's finisher commits it then."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import git

# A harness: starts `repo-memory serve` over stdio and says hello, has a PostToolUse hook record a call (the harness owns
# what its hooks write: git/pending.py), closes the server, and exits with no SessionEnd.
HARNESS = """
import json, subprocess, sys
server = subprocess.Popen([sys.executable, "-m", "repo_memory", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                   "capabilities": {}, "clientInfo": {"name": "harness", "version": "1"}}}) + "\\n")
server.stdin.flush()
server.stdout.readline()
call = {"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
        "tool_input": {"command": "ls"}, "tool_response": {"stdout": "ok\\n", "stderr": ""}}
subprocess.run([sys.executable, "-m", "repo_memory", "hook", "post-tool"], input=json.dumps(call), text=True, check=True)
server.stdin.close()
server.wait(timeout=60)
"""


def test_what_a_harnesss_hooks_left_pending_is_committed_once_it_ends_without_a_session_end(repo: Path):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    done = subprocess.run([sys.executable, "-c", HARNESS], cwd=repo, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CLAUDECODE": "1"})
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 30
    while git(repo, "status", "--porcelain", "--", ".agents"):
        assert time.monotonic() < deadline, git(repo, "status", "--porcelain")
        time.sleep(0.2)
    assert "Memory-Session: s1" in git(repo, "log", "-1", "--format=%B")
    assert [json.loads(ln)["data"]["call_id"] for f in (repo / ".agents/experience").rglob("s1*.jsonl")
            for ln in f.read_text(encoding="utf-8").splitlines()] == ["toolu_1"]
