"""A scripted Gemini API on loopback, for driving the real Gemini CLI offline.

    with FakeGemini([("mcp_repo-memory_remember", {"text": "..."}), "Done."]) as api:
        ...  # Gemini CLI with GOOGLE_GEMINI_BASE_URL=api.url, GEMINI_API_KEY set, auth type gemini-api-key
    api.main_requests()  # the bodies of the requests that offered tools, in order

A turn is a str (one text answer), a (function name, arguments) pair (one functionCall part), or a list of pairs (the
calls the model makes at once, in one answer). Requests that offer tools are the session's own and take the next turn;
the CLI's side requests (choosing a model, asking who speaks next) offer none and get `side_text`. When the script runs out, `final_text` answers. The CLI sends a tool's result
back in the next request as a `functionResponse` part. Only the standard library is used.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union

Call = tuple[str, dict[str, Any]]
Turn = Union[str, Call, list[Call]]
# One answer for every side request: the model router's complexity rating and the next-speaker check.
SIDE = json.dumps({"complexity_reasoning": "a scripted session", "complexity_score": 10, "next_speaker": "user", "reasoning": "done"})


class FakeGemini:
    def __init__(self, script: list[Turn], final_text: str = "Done.", side_text: str = SIDE):
        self.script, self.final_text, self.side_text = list(script), final_text, side_text
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                body = json.loads(raw or b"{}")
                with fake._lock:
                    fake.requests.append((self.path, body))
                if ":countTokens" in self.path:
                    return self._send({"totalTokens": 10})
                answer = {"candidates": [{"content": {"role": "model", "parts": fake._parts(body)}, "finishReason": "STOP", "index": 0}],
                          "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 1, "totalTokenCount": 6}}
                if ":streamGenerateContent" in self.path:
                    data = b"data: " + json.dumps(answer).encode() + b"\r\n\r\n"
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                else:
                    self._send(answer)

            def do_GET(self) -> None:
                self._send({})

            def _send(self, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def _parts(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if not body.get("tools"):
            return [{"text": self.side_text}]
        done = sum(1 for c in body.get("contents", []) if c.get("role") == "model"
                   and any("functionCall" in p for p in c.get("parts", [])))
        turn = self.script[done] if done < len(self.script) else self.final_text
        if isinstance(turn, str):
            return [{"text": turn}]
        return [{"functionCall": {"name": name, "args": args}} for name, args in (turn if isinstance(turn, list) else [turn])]

    def main_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [body for _, body in self.requests if body.get("tools")]

    def __enter__(self) -> FakeGemini:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def offered(body: dict[str, Any]) -> list[str]:
    """The names of the functions a request offers the model."""
    return [f["name"] for tool in body.get("tools", []) for f in tool.get("functionDeclarations", [])]


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The functionResponse parts the CLI sent back, in order."""
    return [p["functionResponse"] for c in body.get("contents", []) for p in c.get("parts", []) if "functionResponse" in p]


def system_text(body: dict[str, Any]) -> str:
    return " ".join(p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", []))
