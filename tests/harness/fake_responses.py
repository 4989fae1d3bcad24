"""A scripted OpenAI Responses API on loopback, for driving the real Codex CLI offline.

    with FakeResponses([function_call("recall", {"query": "release"}, namespace="mcp__repo_memory"), "Done."]) as api:
        ...  # Codex with a [model_providers.fake] base_url = api.url + "/v1", wire_api = "responses"
    api.main_requests()  # the POST /v1/responses bodies, in order

A turn is a str (one assistant message), a dict from `function_call()` (one function_call item), a list of those
(several output items in one response), or a callable that gets the request body and returns one of those. When
the script runs out, `final_text` answers; past `limit` model requests the answer is HTTP 400 (codex exec exits 1).
Side requests (a subagent named in client_metadata, e.g. memory consolidation) get `side_text` and take no turn; the
session's own requests offer tools in `tools` or, with the default model (code mode), in an `additional_tools` item. Turns can tell
concurrent sessions apart with `session_id(body)`. Only the standard library is used.

Calling an MCP tool: function_call(TOOL, args, namespace="mcp__" + server name with "-" -> "_"), e.g. namespace
"mcp__repo_memory", name "recall". Codex runs it and sends back, in the next request's `input`, the echoed
function_call item and {"type": "function_call_output", "call_id": ..., "output": "Wall time: ...\nOutput:\n<text>"}.
The same item works when Codex defers MCP tools behind `tool_search` (catalog models such as gpt-5.5).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable
from typing import Any, Union

Item = dict[str, Any]
Turn = Union[str, Item, list[Union[str, Item]], Callable[[dict[str, Any]], Any]]
_ids = itertools.count(1)


def function_call(name: str, arguments: dict[str, Any] | None = None, namespace: str | None = None,
                  call_id: str | None = None) -> Item:
    """A function_call output item; for an MCP tool pass namespace="mcp__<server, - as _>" and the bare tool name."""
    item = {"type": "function_call", "id": f"fc_fake{next(_ids):04d}", "call_id": call_id or f"call_fake{next(_ids):04d}",
            "name": name, "arguments": json.dumps(arguments or {})}
    if namespace is not None:
        item["namespace"] = namespace
    return item


def tool_search_call(query: str, limit: int | None = None, call_id: str | None = None) -> Item:
    """Ask Codex's client-side tool_search for deferred tools; the next request carries a tool_search_output item."""
    arguments: dict[str, Any] = {"query": query, **({"limit": limit} if limit else {})}
    return {"type": "tool_search_call", "id": f"ts_fake{next(_ids):04d}", "call_id": call_id or f"call_fake{next(_ids):04d}",
            "execution": "client", "status": "completed", "arguments": arguments}


def is_main(body: dict[str, Any]) -> bool:
    """A request of the session itself: it offers tools, in `tools` (gpt-5.5 and models outside the catalog) or in an
    `additional_tools` input item (the default model, gpt-6.2-sol, in code mode); side requests (memory
    consolidation, titles) name a subagent in client_metadata."""
    if "x-openai-subagent" in (body.get("client_metadata") or {}):
        return False
    return bool(body.get("tools")) or any(isinstance(i, dict) and i.get("type") == "additional_tools" for i in body.get("input", []))


def offered_namespaces(body: dict[str, Any]) -> set[str]:
    """The MCP tool namespaces a request offers the model: listed directly (a `namespace` tool) or announced as
    deferred ("Deferred tool namespaces:" in a developer message, the default model and gpt-5.5)."""
    found = {t["name"] for t in body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "namespace"}
    for item in body.get("input", []):
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "developer":
            for part in item.get("content") or []:
                text = part.get("text", "") if isinstance(part, dict) else ""
                if "Deferred tool namespaces:" in text:
                    found |= set(re.findall(r"^- (mcp__[A-Za-z0-9_]+)", text, re.MULTILINE))
    return found


def session_id(body: dict[str, Any]) -> str | None:
    """Codex's session (thread) id: prompt_cache_key, also the session-id header and the hooks' session_id."""
    return body.get("prompt_cache_key")


def function_outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Every function_call_output item in a request's input, with its output flattened to text under "text"."""
    out = []
    for item in body.get("input", []):
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            raw = item.get("output")
            if isinstance(raw, list):  # content items
                text = "".join(c.get("text", "") for c in raw if isinstance(c, dict))
            elif isinstance(raw, dict):
                text = raw["content"] if isinstance(raw.get("content"), str) else json.dumps(raw)
            else:
                text = str(raw)
            out.append({**item, "text": text})
    return out


def _items(turn: Any) -> list[Item]:
    items = turn if isinstance(turn, list) else [turn]
    return [{"type": "message", "id": f"msg_fake{next(_ids):04d}", "role": "assistant", "status": "completed",
             "content": [{"type": "output_text", "text": i, "annotations": []}]} if isinstance(i, str) else i for i in items]


def _sse(data: dict[str, Any]) -> bytes:
    return f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode()


def stream(items: list[Item], model: str) -> list[bytes]:
    """The SSE events of one response whose output is `items`."""
    resp_id = f"resp_fake{next(_ids):04d}"
    response = {"id": resp_id, "object": "response", "created_at": int(time.time()), "status": "in_progress",
                "model": model, "output": []}
    events = [_sse({"type": "response.created", "response": response}),
              _sse({"type": "response.in_progress", "response": response})]
    for index, item in enumerate(items):
        events.append(_sse({"type": "response.output_item.added", "output_index": index,
                            "item": {**item, "content": []} if item["type"] == "message" else item}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(_sse({"type": "response.output_text.delta", "item_id": item["id"], "output_index": index,
                                "content_index": 0, "delta": text}))
        events.append(_sse({"type": "response.output_item.done", "output_index": index, "item": item}))
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    events.append(_sse({"type": "response.completed", "response": {**response, "status": "completed", "output": items,
                                                                    "usage": usage}}))
    return events


class FakeResponses:
    def __init__(self, turns: list[Turn], final_text: str = "Done.", side_text: str = "Scripted session",
                 classify: Callable[[dict[str, Any]], bool] = is_main, timeout: float = 30.0, limit: int = 100):
        self.turns = list(turns)
        self.final_text = final_text
        self.side_text = side_text
        self.classify = classify
        self.timeout = timeout
        self.limit = limit  # model requests answered; past it, HTTP 400 (a Stop hook that always blocks cannot loop forever)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None

    def start(self) -> "FakeResponses":
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

    def responses(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests if r["path"].split("?")[0].endswith("/responses")
                and isinstance(r["body"], dict)]

    def main_requests(self) -> list[dict[str, Any]]:
        return [b for b in self.responses() if self.classify(b)]

    def side_requests(self) -> list[dict[str, Any]]:
        return [b for b in self.responses() if not self.classify(b)]

    def _next_items(self, body: dict[str, Any]) -> list[Item]:
        if not self.classify(body):
            return _items(self.side_text)
        with self.lock:
            turn: Any = self.turns.pop(0) if self.turns else self.final_text
        if callable(turn):
            turn = turn(body)
        if turn is None:
            turn = self.final_text
        return _items(turn)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = fake.timeout

            def log_message(self, *args: Any) -> None:
                pass

            def _record(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if raw and "zstd" in (self.headers.get("Content-Encoding") or ""):
                    body: Any = None  # Codex compresses only for OpenAI's own endpoints; recorded raw
                else:
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

            def do_HEAD(self) -> None:
                self._record()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._record()
                if self.path.split("?")[0].endswith("/models"):
                    self._json(200, {"object": "list", "data": [], "models": []})
                else:
                    self._json(404, {"error": {"message": f"fake: no {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                body = self._record()
                if not self.path.split("?")[0].endswith("/responses") or not isinstance(body, dict):
                    self._json(404, {"error": {"message": f"fake: no {self.path}", "type": "not_found"}})
                    return
                if len(fake.responses()) > fake.limit:
                    self._json(400, {"error": {"message": "fake: request limit reached", "type": "invalid_request_error"}})
                    return
                items = fake._next_items(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                for event in stream(items, str(body.get("model", "gpt-5"))):
                    self.wfile.write(event)
                self.wfile.flush()
                self.close_connection = True

        return Handler
