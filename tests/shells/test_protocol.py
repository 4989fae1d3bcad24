"""What any MCP client sees over stdio, whatever it sends and whenever: raw JSON-RPC to a `repo-memory serve` process,
before the MCP SDK is ready (the front answers) and after it took over."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.shells.stdio_server import SERVE, StdioServer
from tests.shells.test_serve_lifetime import slow_loop, wait_until


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


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.slow
@pytest.mark.parametrize("when", ["before the SDK is ready", "after"])
def test_a_cancelled_loop_step_stops_its_check_judges_nothing_and_is_not_answered(repo: Path, tmp_path: Path, when: str):
    """notifications/cancelled was ignored: the check ran its course, its verdict was recorded, and the front answered."""
    marker = tmp_path / "started"
    slow_loop(repo, marker)
    server = StdioServer(repo)
    try:
        server.initialize()
        if when == "after":
            asked = server.send("tools/list", {"cursor": "x"})  # the front never answers a page: once answered, the SDK serves every request
            assert server.answer()["id"] == asked
        run = server.call("loop_start", {"name": "slow"})["structuredContent"]["run"]
        step = server.send("tools/call", {"name": "loop_step", "arguments": {"run": run, "report": "waited", "status": "done"}})
        assert wait_until(lambda: marker.exists() and marker.read_text(), 30)  # the check is running
        server.send("notifications/cancelled", {"requestId": step, "reason": "the user pressed Esc"}, notify=True)
        assert wait_until(lambda: gone(int(marker.read_text())), 15), "the cancelled step's check still runs"
        server.send("ping")
        assert server.answer()["id"] == step + 1  # and none for the cancelled step before it
    finally:
        server.close_input()
        code = server.wait(30)
    stderr = server.stderr.decode(errors="replace")
    assert code == 0 and ("before the MCP SDK was ready" in stderr) == (when != "after"), stderr[-2000:]
    status = subprocess.run([*SERVE[:-1], "loop", "status", run, "--json"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert [(r["state"], r["iterations"]) for r in json.loads(status.stdout)] == [("running", 0)]  # judged nothing, still live


def test_a_prompt_asked_for_wrongly_gets_invalid_params_saying_what_exists(repo: Path):
    """These were JSON-RPC error code 0 (the Inspector shows "MCP error 0"), each with two tracebacks on stderr."""
    asks = [{"name": "use-skill", "arguments": {}}, {"name": "use-skil", "arguments": {"name": "x"}},
            {"name": "start-loop", "arguments": {"name": "x", "colour": "red"}}]
    server = StdioServer(repo)
    try:
        server.initialize()
        for params in asks:
            server.send("prompts/get", params)
        got = sorted(answers(server, len(asks)), key=lambda answer: answer["id"])
    finally:
        server.close_input()
        code = server.wait(30)
    assert [answer["error"]["code"] for answer in got] == [-32602] * 3, got
    missing, unknown, extra = (answer["error"]["message"] for answer in got)
    assert "use-skill" in missing and "'name'" in missing, missing
    assert "use-skil" in unknown and "use-skill" in unknown and "distill-session" in unknown, unknown
    assert "'colour'" in extra and "'name'" in extra, extra
    assert code == 0 and "Traceback" not in server.stderr.decode(errors="replace"), server.stderr.decode(errors="replace")[-2000:]


def everything(server: StdioServer) -> list[dict[str, Any]]:
    """Every answer the server wrote, once its input is closed and it has exited."""
    server.close_input()
    assert server.wait(30) == 0, server.stderr.decode(errors="replace")[-2000:]
    got = []
    while not server._answers.empty():
        got.append(server._answers.get())
    return got


def test_an_id_used_again_gets_one_answer_per_request(repo: Path):
    """MCP forbids it, but the front answered tools/list and ping twice each, and told the person to regenerate its manifest."""
    server = StdioServer(repo)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    for method, params in (("initialize", hello), ("tools/list", {}), ("ping", {})):
        send(server, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        assert server.answer()["id"] == 1
    send(server, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "x"}})  # a page: the front never answers it
    assert server.answer()["id"] == 2
    assert everything(server) == []
    assert "regenerate" not in server.stderr.decode(errors="replace")


def test_an_initialize_the_sdk_refuses_is_refused_before_it_is_ready_too(repo: Path):
    server = StdioServer(repo)
    send(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {"roots": 5}, "clientInfo": {"name": "t", "version": "1"}}})
    refused = server.answer()
    assert refused["error"]["code"] == -32602, refused
    assert everything(server) == []
    assert "regenerate" not in server.stderr.decode(errors="replace")


def test_a_cancel_of_a_request_the_front_answered_at_start_up_drops_no_later_answer(repo: Path):
    """The front answers tools/list before the SDK is ready; a client that then cancels it and uses its id again (ids
    are the client's to reuse once answered) got no answer to the new request, and a false "regenerate the manifest"
    warning: the cancelled id's drop came before the front's own bookkeeping of what it answered."""
    server = StdioServer(repo)
    try:
        server.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
        listed = server.send("tools/list")
        server.send("notifications/cancelled", {"requestId": listed, "reason": "changed my mind"}, notify=True)
        first = [server.answer(), server.answer()]
        assert sorted(a["id"] for a in first) == [1, listed] and all("result" in a for a in first), first
        server.send("notifications/initialized", notify=True)
        paged = server.send("tools/list", {"cursor": "x"})  # a page: the front never answers it, the SDK does
        assert server.answer()["id"] == paged
        time.sleep(1)  # the SDK's own answer to the cancelled tools/list comes back meanwhile (the front writes none)
        server._next = listed - 1
        assert server.send("ping") == listed
        again = server.answer(15)
    finally:
        server.close_input()
        code = server.wait(30)
    assert again["id"] == listed and again.get("result") == {}, again
    stderr = server.stderr.decode(errors="replace")
    assert code == 0 and "differently" not in stderr, stderr[-2000:]
