"""Records and commits name the client an agent uses, not only Claude Code and Codex: a server no harness variable names
takes the name the client gives itself in `initialize` (clientInfo), as Cursor, VS Code, Gemini CLI and others send it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from tests.conftest import git

pytestmark = pytest.mark.anyio
SERVE = [sys.executable, "-m", "repo_memory", "serve"]
HARNESS_VARIABLES = ("CLAUDECODE", "CLAUDE_PROJECT_DIR", "REPO_MEMORY_HARNESS")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def plain_env(**extra: str) -> dict[str, str]:
    """The environment a client other than Claude Code or Codex starts a server with: none of their variables."""
    env = {k: v for k, v in os.environ.items() if k not in HARNESS_VARIABLES and not k.startswith("CODEX_")}
    return {**env, **extra}


async def remember_as(repo: Path, client: str, env: dict[str, str]) -> dict:
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(repo), env=env)
    async with Client(params, client_info=Implementation(name=client, version="1.0.0")) as session:
        result = await session.call_tool("remember", {"text": "The nightly build runs on the arm runners since March."})
    assert not result.is_error, result.content
    logs = sorted((repo / ".agents" / "experience").rglob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
    records = [json.loads(line) for path in logs for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if "nightly build" in r.get("text", "")][-1]  # this server's: the newest


@pytest.mark.parametrize(("client", "harness"), [
    ("cursor-vscode", "cursor"),
    ("Visual Studio Code", "vscode"),
    ("gemini-cli-mcp-client", "gemini-cli"),
    ("codex-mcp-client", "codex"),
    ("My Agent/2", "my-agent-2"),
])
async def test_a_record_names_the_client_that_wrote_it_and_so_does_its_commit(repo: Path, client: str, harness: str):
    record = await remember_as(repo, client, plain_env())
    assert record["source"]["harness"] == harness
    body = git(repo, "log", "-1", "--format=%B")
    assert f"Memory-Harness: {harness}" in body, body


async def test_the_clients_name_outranks_variables_it_may_have_inherited_but_not_repo_memory_harness(repo: Path):
    """CLAUDECODE and CODEX_* only say a harness is somewhere above: a user who exports CODEX_HOME in their profile and
    runs Gemini CLI had every record and commit say codex. The client's own name is what it is; REPO_MEMORY_HARNESS is
    a person's (or setup's) choice, and names any."""
    assert (await remember_as(repo, "gemini-cli-mcp-client", plain_env(CODEX_HOME="/tmp/codex")))["source"]["harness"] == "gemini-cli"
    assert (await remember_as(repo, "cursor-vscode", plain_env(CLAUDECODE="1")))["source"]["harness"] == "cursor"
    assert (await remember_as(repo, "claude-code", plain_env(CLAUDECODE="1")))["source"]["harness"] == "claude-code"
    assert (await remember_as(repo, "cursor-vscode", plain_env(REPO_MEMORY_HARNESS="zed")))["source"]["harness"] == "zed"


async def test_a_client_with_no_usable_name_is_unknown(repo: Path):
    assert (await remember_as(repo, "  ", plain_env()))["source"]["harness"] == "unknown"


def test_what_a_server_left_pending_is_committed_by_the_next_process_under_the_clients_name(repo: Path):
    """A server ended by a signal commits what it holds, but records its calls in flight add after that commit are
    committed once it is gone, by the finisher (shells/finish.py) or the next repo-memory process: those commits had no
    Memory-Harness trailer, for neither knows the name the client gave the server."""
    from tests.shells.stdio_server import StdioServer

    server = StdioServer(repo, env=plain_env())
    server.initialize()  # as the client "test"
    assert not server.call("remember", {"text": "The nightly build runs on the arm runners."}).get("isError")
    server.kill()  # nothing of it committed: the next process does that
    server.wait(30)
    finished = subprocess.run([sys.executable, "-m", "repo_memory.shells.finish", str(repo), str(server.proc.pid)],
                              cwd=repo, env=plain_env(), capture_output=True, text=True, timeout=60)
    assert finished.returncode == 0, finished.stderr
    body = git(repo, "log", "-1", "--format=%B")
    assert body.startswith("memory(experience): ") and "Memory-Harness: test" in body, body
