"""The start-up manifest: what the full server answers to `initialize`, `server/discover`, `ping` and the listings of
tools, prompts and resources in every protocol version, and how it acknowledges the subscription a client opens as it
connects (2026-07-28), recorded from the real server so the front (`shells/front.py`) can answer them before the SDK
has loaded.

    python -m repo_memory.shells.manifest          # rewrite shells/manifest.json after changing a tool
    python -m repo_memory.shells.manifest --check  # exit 1 when it is out of date (the test suite checks it too)

A server whose installed SDK or pydantic differ from the versions the shipped manifest names records its own into
the user's cache (`shipped.cache_path()`) after its first start, so later starts are fast too.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS

from repo_memory import __version__
from repo_memory.shells import front, shipped

CLIENT = {"name": "repo-memory-manifest", "version": __version__}
TIMEOUT = 30.0
LISTINGS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")  # what a client asks as it connects


def _conversation(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Send `messages` to a fresh server (no repository) one at a time; the result of each request, by method."""
    from repo_memory.shells import mcp

    read_fd, write_fd = os.pipe()
    answers: queue.SimpleQueue[dict[str, Any]] = queue.SimpleQueue()
    passive = front.Front(None, os.fdopen(read_fd, "rb"), lambda data: answers.put(json.loads(data)))
    server = mcp.build(None)
    thread = threading.Thread(target=lambda: anyio.run(server.run_front_async, passive.start()), daemon=True)
    thread.start()
    results: dict[str, Any] = {}
    with os.fdopen(write_fd, "wb") as client:
        for message in messages:
            client.write((json.dumps(message) + "\n").encode())
            client.flush()
            if message.get("method") == "subscriptions/listen":  # answered by a notification; the stream stays open
                answer = answers.get(timeout=TIMEOUT)
                if answer.get("method") != front.ACKNOWLEDGED or answer["params"]["_meta"].get(front.SUBSCRIPTION_KEY) != message["id"]:
                    raise RuntimeError(f"the server acknowledged {message['params']} with {answer}")
                results[message["method"]] = {"requested": message["params"]["notifications"], "acknowledged": answer["params"]}
            elif "id" in message:
                answer = answers.get(timeout=TIMEOUT)
                if answer.get("id") != message["id"] or "result" not in answer:
                    raise RuntimeError(f"the server answered {message['method']} with {answer}")
                results[message["method"]] = answer["result"]
    thread.join(TIMEOUT)
    return results


def _request(ident: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, **({"params": params} if params is not None else {})}


def generate() -> dict[str, Any]:
    """The manifest of the server as installed: its answers in every handshake version and every modern one."""
    legacy = {}
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        legacy[version] = _conversation([
            _request(1, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT}),
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            *(_request(n, method) for n, method in enumerate(LISTINGS, start=2)),
            _request(9, "ping"),
        ])
    modern = {}
    for version in MODERN_PROTOCOL_VERSIONS:
        envelope = {"_meta": {front.MODERN_KEY: version, front.CAPABILITIES_KEY: {}, "io.modelcontextprotocol/clientInfo": CLIENT}}
        listen = {**envelope, "notifications": front.LISTEN}
        modern[version] = _conversation([_request(1, "server/discover", envelope), _request(2, "subscriptions/listen", listen),
                                         *(_request(n, method, envelope) for n, method in enumerate(LISTINGS, start=3))])  # no ping
    return {"key": shipped.key(), "latest_handshake": LATEST_HANDSHAKE_VERSION, "legacy": legacy, "modern": modern}


def dumps(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def remember(manifest: dict[str, Any]) -> Path | None:
    """Keep `manifest` in this machine's cache, for the next server to start with (None when it cannot be written)."""
    from repo_memory.guards import disk

    path = Path(shipped.cache_path())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        disk.write_atomic(path, dumps(manifest).encode())
    except OSError:
        return None
    return path


def main(argv: list[str]) -> int:
    fresh = dumps(generate())
    if "--check" in argv:
        current = Path(shipped.MANIFEST).read_text(encoding="utf-8") if Path(shipped.MANIFEST).exists() else ""
        if current != fresh:
            print(f"{shipped.MANIFEST} is out of date: run `python -m repo_memory.shells.manifest`", file=sys.stderr)
            return 1
        return 0
    Path(shipped.MANIFEST).write_text(fresh, encoding="utf-8")
    print(f"wrote {shipped.MANIFEST} ({len(fresh):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
