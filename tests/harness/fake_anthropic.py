"""A scripted Anthropic Messages API on loopback, for driving the real Claude Code CLI offline.

    with FakeAnthropic([tool_use("mcp__repo-memory__recall", {"query": "release"}), "All done."]) as api:
        subprocess.run([claude, "-p", "hi"], env={..., "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "test"})
    api.main_requests()  # the conversation's POST /v1/messages bodies, in order

A turn is a str (one text block), a dict from `tool_use()` (one tool_use block), a list of those (several blocks in
one assistant message), or a callable that gets the request body and returns one of those. Each main-conversation
request takes the next turn; when the script runs out, `final_text` answers (so a chatty CLI cannot hang a test);
past `limit` model requests the answer is HTTP 400, which makes `claude -p` exit 1.
Side requests (a body without `tools`, e.g. title or topic calls on the small model; Claude Code 2.1.197 made none
in -p or interactive runs here) get `side_text` and take no turn. HEAD / (a connectivity probe Claude Code sends
first), GET /v1/models and POST /v1/messages/count_tokens are answered too. Turns can tell concurrent sessions apart
with `session_id(body)`. Only the standard library is used.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable
from typing import Any, Union

Block = dict[str, Any]
Turn = Union[str, Block, list[Union[str, Block]], Callable[[dict[str, Any]], Any]]
_ids = itertools.count(1)


def tool_use(name: str, input: dict[str, Any] | None = None, id: str | None = None) -> Block:
    """A tool_use block; the id is generated unless given."""
    return {"type": "tool_use", "id": id or f"toolu_fake{next(_ids):04d}", "name": name, "input": input or {}}


def is_main(body: dict[str, Any]) -> bool:
    """The main conversation carries the tool list; Claude Code's side calls (titles, topic checks) carry none."""
    return bool(body.get("tools"))


DEFERRED = "deferred tools are now available via ToolSearch"


def offered(body: dict[str, Any]) -> set[str]:
    """The tools a request offers the model: those in `tools`, and (Claude Code 2.1.3xx) the deferred ones it lists by
    name in its system text under "The following deferred tools are now available via ToolSearch", one per line; a
    deferred tool called by name runs (its schema is only not in the request)."""
    names = {t["name"] for t in body.get("tools", []) if not t.get("defer_loading")}
    blocks = body.get("system") or []
    texts = [blocks] if isinstance(blocks, str) else [b.get("text", "") for b in blocks if isinstance(b, dict)]
    for message in body.get("messages", []):
        content = message.get("content")
        texts += [content] if isinstance(content, str) else [b.get("text", "") for b in content or [] if isinstance(b, dict)]
    for text in texts:
        if DEFERRED in text:
            listed = text.split(DEFERRED, 1)[1].split(":\n", 1)[-1]
            for line in listed.splitlines():
                if not line.strip() or " " in line.strip():
                    break
                names.add(line.strip())
    return names


def session_id(body: dict[str, Any]) -> str | None:
    """Claude Code's session id (also the X-Claude-Code-Session-Id header and the hooks' session_id)."""
    try:
        return json.loads(body["metadata"]["user_id"])["session_id"]
    except (KeyError, TypeError, ValueError):
        return None


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every tool_result block in a request's messages, with its content flattened to text under "text"."""
    out = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                text = inner if isinstance(inner, str) else "".join(
                    c.get("text", "") for c in inner or [] if isinstance(c, dict))
                out.append({**block, "text": text})
    return out


def _blocks(turn: Any) -> list[Block]:
    items = turn if isinstance(turn, list) else [turn]
    return [{"type": "text", "text": b} if isinstance(b, str) else b for b in items]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream(blocks: list[Block], model: str) -> list[bytes]:
    """The SSE events of one assistant message made of `blocks`."""
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    msg_id = f"msg_fake{next(_ids):04d}"
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    events = [_sse("message_start", {"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            events.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                                                       "content_block": {"type": "text", "text": ""}}))
            events.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            events.append(_sse("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            events.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}}))
        events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    events.append(_sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": 5}}))
    events.append(_sse("message_stop", {"type": "message_stop"}))
    return events


def message(blocks: list[Block], model: str) -> dict[str, Any]:
    """The same assistant message as one non-streaming JSON body."""
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {"id": f"msg_fake{next(_ids):04d}", "type": "message", "role": "assistant", "model": model, "content": blocks,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


class FakeAnthropic:
    def __init__(self, turns: list[Turn], final_text: str = "Done.", side_text: str = "Scripted session",
                 classify: Callable[[dict[str, Any]], bool] = is_main, timeout: float = 30.0, limit: int = 100):
        self.turns = list(turns)
        self.final_text = final_text
        self.side_text = side_text
        self.classify = classify
        self.timeout = timeout
        self.limit = limit  # model requests answered; past it, HTTP 400 (a Stop hook that always blocks cannot loop forever)
        self.requests: list[dict[str, Any]] = []  # every request: method, path, headers, body (parsed JSON or None)
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    # -- lifecycle -----------------------------------------------------------------------------------------------
    def start(self) -> "FakeAnthropic":
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    __enter__ = start

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self.server, "start() first"
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    # -- views ---------------------------------------------------------------------------------------------------
    def messages(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].startswith("/v1/messages") and not
                r["path"].startswith("/v1/messages/count_tokens") and isinstance(r["body"], dict)]

    def main_requests(self) -> list[dict[str, Any]]:
        return [b for b in self.messages() if self.classify(b)]

    def side_requests(self) -> list[dict[str, Any]]:
        return [b for b in self.messages() if not self.classify(b)]

    # -- answering -----------------------------------------------------------------------------------------------
    def _next_blocks(self, body: dict[str, Any]) -> list[Block]:
        if not self.classify(body):
            return _blocks(self.side_text)
        with self.lock:
            turn: Any = self.turns.pop(0) if self.turns else self.final_text
        if callable(turn):
            turn = turn(body)
        if turn is None:
            turn = self.final_text
        return _blocks(turn)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = fake.timeout  # a client that stalls mid-request frees its thread after this

            def log_message(self, *args: Any) -> None:
                pass

            def _record(self) -> dict[str, Any] | None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                with fake.lock:
                    fake.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers),
                                          "body": body, "ts": time.time()})
                return body

            def _json(self, status: int, data: Any) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_HEAD(self) -> None:  # connectivity probes
                self._record()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._record()
                if self.path.startswith("/v1/models"):
                    models = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                              for m in ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1")]
                    self._json(200, {"data": models, "has_more": False, "first_id": models[0]["id"], "last_id": models[-1]["id"]})
                else:
                    self._json(200, {})

            def do_POST(self) -> None:
                body = self._record()
                path = self.path.split("?")[0]
                if path == "/v1/messages/count_tokens":
                    self._json(200, {"input_tokens": 100})
                    return
                if path != "/v1/messages" or not isinstance(body, dict):
                    self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"fake: no {path}"}})
                    return
                if len(fake.messages()) > fake.limit:
                    self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                                "message": "fake: request limit reached"}})
                    return
                blocks = fake._next_blocks(body)
                model = str(body.get("model", "claude-sonnet-4-5"))
                if not body.get("stream"):
                    self._json(200, message(blocks, model))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in stream(blocks, model):
                    self.wfile.write(event)
                self.wfile.flush()
                self.close_connection = True

        return Handler
