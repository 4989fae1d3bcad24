"""A `repo-memory serve` child process spoken to in raw JSON-RPC over its pipes, for tests that kill it mid-write."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

SERVE = [sys.executable, "-m", "repo_memory", "serve"]


class StdioServer:
    """One server process; `call` sends a tool call and waits (bounded) for its answer."""

    def __init__(self, repo: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()):
        self.proc = subprocess.Popen([*SERVE, *args], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={**os.environ, **(env or {})}, start_new_session=True)
        self._answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()
        self.stderr = b""
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):  # type: ignore[union-attr]
            self.stderr += chunk

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if "id" in message:
                self._answers.put(message)

    def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            self._next += 1
            message["id"] = self._next
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        return self._next

    def answer(self, timeout: float = 30) -> dict[str, Any]:
        return self._answers.get(timeout=timeout)

    def initialize(self, timeout: float = 60) -> None:
        self.send("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}})
        self.answer(timeout)
        self.send("notifications/initialized", notify=True)

    def call(self, tool: str, arguments: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        self.send("tools/call", {"name": tool, "arguments": arguments})
        answer = self.answer(timeout)
        return dict(answer.get("result", {}))

    def kill(self, sig: int = signal.SIGKILL) -> None:
        self.proc.send_signal(sig)

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def session(self, *calls: tuple[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], int | None]:
        """A harness's whole life with the server: the handshake, `calls` in turn, then end of input; (the answers, the
        exit code — None when it did not end within 30 s)."""
        try:
            self.initialize()
            answers = [self.call(tool, arguments) for tool, arguments in calls]
        finally:
            self.close_input()
            code = self.wait(30)
        return answers, code
