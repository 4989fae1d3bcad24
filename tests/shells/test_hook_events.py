"""The markers that tell a hook event delivered twice (two registrations of our hooks) from two events stay few
however long a session runs: one was left per tool call, and only a session's end forgot those over an hour old."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells.deliveries import DUPLICATE_WINDOW
from tests.conftest import git
from tests.shells.stdio_server import StdioServer

SESSION = "5e1f0c2a-7b3d-4e8f-9a1b-2c3d4e5f6a7b"


def aged(folder: Path) -> None:
    """Make every marker in `folder` as old as one left by an event more than DUPLICATE_WINDOW seconds ago."""
    then = time.time() - DUPLICATE_WINDOW - 1
    for marker in folder.iterdir():
        os.utime(marker, (then, then))


def test_a_running_server_keeps_only_the_markers_of_recent_hook_events_and_still_records_a_duplicate_once(repo: Path):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    markers = Config.load(repo).state_dir / "hook-events"
    server = StdioServer(repo, env={"CLAUDE_CODE_SESSION_ID": SESSION})

    def post_tool(call: int) -> None:
        answer = server.call("hook_post_tool", {
            "session_id": SESSION, "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_use_id": f"toolu_{call:02d}", "tool_input": json.dumps({"command": f"make test # {call}"}),
            "tool_response": json.dumps({"stdout": f"run {call} ok"})})
        assert not answer.get("isError"), answer

    try:
        server.initialize()
        for call in range(1, 6):  # a long session: each call's marker is past its use by the next call
            post_tool(call)
            aged(markers)
        post_tool(6)
        post_tool(6)  # the same event from a second registration of the hook
        assert len(list(markers.iterdir())) == 1, sorted(p.name for p in markers.iterdir())
    finally:
        server.close_input()
        assert server.wait(30) == 0
    store = Store(Config.load(repo), session=SESSION)
    try:
        calls = [ln.record["data"]["call_id"] for ln in store.lines(SESSION) if ln.record and ln.record["kind"] == "tool"]
    finally:
        store.close()
    assert calls == [f"toolu_{call:02d}" for call in range(1, 7)], calls
