"""Two agents in one clone: one runs `git add -A && git commit` through its shell while the other's server writes.

The pre-tool hook commits what is pending before the call runs; records the other session writes while the call runs
begin a new, untracked `+n` file, which the agent's `git add -A` took into its code commit with no memory trailer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import git

pytestmark = pytest.mark.anyio
EXE = str(Path(sys.executable).parent / "repo-memory")
SERVE = [sys.executable, "-m", "repo_memory", "serve"]
COMMAND = "echo y=2 >> calc.py && git add -A && git commit -qm 'agent A: code only'"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def hook(repo: Path, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([EXE, "hook", event], input=json.dumps({"cwd": str(repo), "hook_event_name": event, **payload}),
                          capture_output=True, text=True, cwd=repo, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def month(repo: Path) -> str:
    return next(p.name for p in (repo / ".agents/experience").iterdir() if p.name[:2] == "20")


async def test_records_another_session_writes_while_an_agents_commit_runs_stay_out_of_it(repo: Path):
    (repo / "calc.py").write_text("x=1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    call = {"session_id": "sessA", "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": COMMAND}}
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(repo),
                                   env={**os.environ, "REPO_MEMORY_HARNESS": "codex"})
    async with Client(params) as other:  # the other agent's server, a real process writing as the agent asks
        first = await other.call_tool("remember", {"text": "B: first note", "session": "sessB"})
        session = first.structured_content["session"]  # a chosen name: this clone's log under it
        hook(repo, "pre-tool", call)  # commits B's pending record: the command then finds memory committed
        assert git(repo, "log", "-1", "--format=%s").startswith("memory")
        written = await other.call_tool("remember", {"text": "B: written while A's command runs", "session": "sessB"})
        assert not written.is_error
        subprocess.run(COMMAND, shell=True, cwd=repo, check=True)  # the call itself, as the harness runs it
        hook(repo, "post-tool", {**call, "tool_response": {"stdout": "", "stderr": "", "interrupted": False}})
        code = git(repo, "log", "--format=%H", "--grep=agent A").split()[0]
        assert git(repo, "show", "--name-only", "--format=", code).split() == ["calc.py"]  # no memory in the agent's commit
        pending = git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".agents")
        theirs = [line for line in pending.splitlines() if session in line]
        assert theirs == [f"?? .agents/experience/{month(repo)}/{session}+2.jsonl"], pending  # git sees it again, to commit
    memory = git(repo, "log", "-1", "--format=%s%n%b", "--", ".agents/experience")
    assert "Memory-Session: sessB" in memory and "+2.jsonl" in git(repo, "show", "--name-only", "--format=", "HEAD")
    assert "repo-memory" not in (repo / ".git/info/exclude").read_text(encoding="utf-8")  # the call's block is gone


def test_a_sweeping_call_with_no_post_tool_hook_lets_git_see_memory_again_when_the_session_stops(repo: Path):
    """A call that failed, or that another hook refused, gets no post-tool hook: its session's turn ending ends it."""
    call = {"session_id": "sessA", "tool_name": "Bash", "tool_use_id": "t9", "tool_input": {"command": "git add -A"}}
    hook(repo, "pre-tool", call)
    exclude = repo / ".git/info/exclude"
    assert "/.agents/experience/*/*.jsonl" in exclude.read_text(encoding="utf-8")
    hook(repo, "post-tool", {**call, "session_id": "sessOther", "tool_response": {"stdout": ""}})  # another call's end
    assert "/.agents/experience/*/*.jsonl" in exclude.read_text(encoding="utf-8")
    hook(repo, "stop", {"session_id": "sessA", "stop_hook_active": False})
    assert "repo-memory" not in exclude.read_text(encoding="utf-8")
