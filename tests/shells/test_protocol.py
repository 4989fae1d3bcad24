"""What any MCP client sees over stdio, whatever it sends and whenever: raw JSON-RPC to a `repo-memory serve` process,
before the MCP SDK is ready (the front answers) and after it took over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.shells.stdio_server import StdioServer


def send(server: StdioServer, *messages: dict[str, Any] | str) -> None:
    assert server.proc.stdin is not None
    for message in messages:
        server.proc.stdin.write(((message if isinstance(message, str) else json.dumps(message)) + "\n").encode())
    server.proc.stdin.flush()


def answers(server: StdioServer, count: int, timeout: float = 30) -> list[dict[str, Any]]:
    return [server.answer(timeout) for _ in range(count)]


def test_a_request_whose_id_is_neither_a_string_nor_an_integer_gets_an_invalid_request_error(repo: Path):
    """The SDK parsed these as notifications and dropped them: the client waited forever."""
    server = StdioServer(repo)
    try:
        server.initialize()
        bad = ["null", "1.5", "true", "{}", "[1]"]
        for raw in bad:
            send(server, '{"jsonrpc":"2.0","id":%s,"method":"ping"}' % raw,
                 '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"recall","arguments":{"query":"x"}}}' % raw)
        send(server, {"jsonrpc": "2.0", "id": 99, "method": "ping"})
        got = answers(server, 2 * len(bad) + 1)
    finally:
        server.kill()
    assert {"jsonrpc": "2.0", "id": 99, "result": {}} in got
    for answer in [answer for answer in got if answer["id"] != 99]:
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
        assert '"id" must be a string or an integer' in answer["error"]["message"]


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_arguments_the_sdk_refuses_are_refused_alike_before_it_is_ready(repo: Path):
    """Sent with the handshake, these reached the tools the front runs: a codec error or a traceback for a lone surrogate,
    and a record written that nests deeper than the SDK's path accepts."""
    calls = [("remember", {"text": "\ud800"}), ("recall", {"query": "\ud800"}), ("remember", {"text": "deep", "data": nested(70)})]
    server = StdioServer(repo)
    try:
        server.initialize()
        for n, (tool, arguments) in enumerate(calls, start=10):
            send(server, json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}))
        got = {answer["id"]: answer for answer in answers(server, len(calls))}
    finally:
        server.close_input()
        code = server.wait(30)
    assert got[10]["error"] == got[11]["error"] == {
        "code": -32602, "message": "Invalid params: a string holds a lone surrogate (\\ud800); send valid Unicode."}
    assert got[12]["error"] == {"code": -32602, "message": "Invalid params: nested deeper than 64 levels."}
    assert code == 0 and "Traceback" not in server.stderr.decode(errors="replace")
    assert not list(repo.glob(".agents/experience/*/*.jsonl"))
