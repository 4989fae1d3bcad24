"""The first moments of `repo-memory serve`: the handshake and the tool list answered while the rest loads.

Harnesses start an MCP server and send their first model request soon after: Codex gives an optional server about a
second, Claude Code lists what has connected by then (2.1.3xx: once the subscription it opens is acknowledged and
tools, prompts and resources are listed). Importing the MCP SDK takes most of a second (pydantic builds
the models of two protocol versions) and our store a few tenths more, so a server that waited for them lost its
tools on the first turn. The front needs only the standard library: it owns stdin and stdout from the first
millisecond, answers `initialize`, `server/discover`, `ping`, the listings and the acknowledgement of a
`subscriptions/listen` from a manifest of exactly what the full
server answers (`shells/manifest.json`, generated from the real tool definitions by `shells/manifest.py`), and passes
every line on, in order, to the SDK once it is ready. The SDK sees the whole conversation as the client sent it; its
own answers to requests the front already answered (its acknowledgements too) are compared with the front's and dropped.

Nothing here imports the SDK, the index, git or the model: `tests/shells/test_startup.py` holds it to that.
"""

from __future__ import annotations

import io
import json
import os
import queue
import threading

from repo_memory.shells.clientinfo import ClientName
from repo_memory.shells.messages import ident_of, initialize_params, plain, unusable

TYPE_CHECKING = False  # typing alone costs more than the handshake's budget allows
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from typing import Any, BinaryIO

MODERN_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
LISTEN = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}  # the filter the manifest records
LAST_ANSWERS = 1.0  # seconds the calls in flight at end of input have to answer (a stopped loop step says so)


class Front:
    """Owns the wire: reads the client's lines on a thread, answers what the manifest covers until the SDK takes over,
    queues every line for the SDK, and writes every answer (its own and the SDK's) one whole line at a time."""

    def __init__(self, manifest: dict[str, Any] | None, reader: BinaryIO, write: Callable[[bytes], None]):
        self.manifest = manifest
        self._reader, self._write_bytes = reader, write
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._write_lock = threading.Lock()
        self._answered: dict[str, Any] = {}  # id -> the result the front sent, until the SDK's own answer is compared
        self._acknowledged: dict[str, Any] = {}  # subscription id -> the acknowledgement the front sent, likewise
        self.early = 0  # requests the front answered from the manifest
        self._era: str | None = None  # "legacy" after an initialize, "modern" after an enveloped request
        self._version: str | None = None  # the protocol version initialize negotiated
        self._calls: Any = None  # shells/early.py's EarlyCalls, once the store is open
        self._held: list[tuple[dict[str, Any], str, str, str, bool]] | None = []  # tool calls that came before serve_calls
        self._roots = False  # whether the client offers MCP roots (its initialize says; a modern request's envelope says)
        self._hold_lock = threading.Lock()
        self.handed_over = threading.Event()
        self.at_end: Callable[[], None] | None = None  # at end of input, before the calls in flight answer: stop what runs long
        self.cancelled: Callable[[Any], None] | None = None  # told the id of each request the client cancels, for the SDK's calls
        self._in_flight: set[str] = set()  # requests the SDK has and has not answered
        self._cancelled: set[str] = set()  # requests the client cancelled: an answer the SDK still writes is dropped
        self._flight = threading.Condition()
        self.mismatches: list[str] = []
        self.client = ClientName()  # the name the client gives itself, for records when no harness variable names one
        self._stirred = threading.Event()  # a line needs the SDK, or the input ended
        self._wants_sdk = False  # a line came that only the SDK answers
        self._ended = False  # the client closed its end
        self._started = 0.0  # when the front began to read (time.monotonic)
        self._thread = threading.Thread(target=self._read, name="repo-memory-front", daemon=True)

    @classmethod
    def on_stdio(cls, manifest: dict[str, Any] | None) -> Front:
        """A front on this process's stdin and stdout, which it claims: fd 0 then reads the null device and fd 1 goes
        to stderr, so nothing the server imports or runs (git, a loop's verification) can touch the protocol's bytes."""
        wire_in, wire_out = os.dup(0), os.dup(1)
        for fd, target in ((0, os.open(os.devnull, os.O_RDONLY)), (1, os.dup(2))):
            os.dup2(target, fd)
            os.close(target)
        reader = io.open(wire_in, "rb", buffering=io.DEFAULT_BUFFER_SIZE, closefd=False)

        def write(data: bytes) -> None:
            view = memoryview(data)
            while view:
                view = view[os.write(wire_out, view):]

        return cls(manifest, reader, write)

    def start(self) -> Front:
        import time

        self._started = time.monotonic()
        self._thread.start()
        return self

    # --- the client's side -------------------------------------------------------------------------------

    def serve_calls(self, served: Any) -> None:
        """From now until the hand-over, run tool calls over `served` (shells/served.py), the ones held so far first;
        None (no store to serve) sends the held ones on to the SDK."""
        with self._hold_lock:
            held, self._held = self._held, None
            if served is not None and self.manifest is not None:
                from repo_memory.shells.early import EarlyCalls

                self._calls = EarlyCalls(served, self.manifest,
                                         lambda ident, result: self._send({"jsonrpc": "2.0", "id": ident, "result": result}), self._for_the_sdk)
            for message, line, era, version, roots in held or []:
                if self._calls is None or not self._calls.take(message, line, era, version, roots):
                    self._for_the_sdk(line)

    def settle(self, timeout: float = 1.0) -> None:
        """Let the tool calls the front runs finish first (bounded), before the SDK's import competes with them."""
        if self._calls is not None:
            self._calls.settle(timeout)

    def needs_sdk(self, within: float) -> bool:
        """Wait until a line comes that only the SDK answers, the input ends, or `within` seconds from the front's start
        pass; False when the client closed its end having needed nothing the front does not answer (a health check, a
        short session)."""
        import time

        self._stirred.wait(max(0.0, within - (time.monotonic() - self._started)))
        if self._wants_sdk or not self._ended:
            return True
        if self.at_end is not None:  # the input ended: stop what runs long and let the calls in flight answer, as
            self.at_end()  # the SDK's end of input does (a call that hands its line on after all needs the SDK)
        self.settle(LAST_ANSWERS)
        return self._wants_sdk

    def end_alone(self) -> None:
        """The session ended before the SDK was needed (`needs_sdk` let the calls in flight answer)."""
        self.report("before the MCP SDK was ready")
        import logging

        logging.getLogger("repo_memory").info("the session never needed the MCP SDK: it was not loaded")

    def report(self, how: str) -> None:
        import logging

        if self.early:
            logging.getLogger("repo_memory").info("the start-up manifest answered %d request(s)", self.early)
        if self._calls is not None and self._calls.taken:
            logging.getLogger("repo_memory").info("answered %d tool call(s) %s", self._calls.taken, how)

    def _for_the_sdk(self, line: str) -> None:
        self._lines.put(line)
        self._wants_sdk = True
        self._stirred.set()

    def _take(self, message: dict[str, Any], line: str, era: str, version: str, roots: bool) -> bool:
        """A tool call for the front: held until the store is open, then run (False: the SDK's to answer)."""
        with self._hold_lock:
            if self._held is not None:
                self._held.append((message, line, era, version, roots))
                return True
        return self._calls is not None and bool(self._calls.take(message, line, era, version, roots))

    def _read(self) -> None:
        try:
            for raw in self._reader:
                line = raw.decode("utf-8", errors="replace")
                self.client.see(raw, line)
                taken, early = False, self.early
                if self.manifest is not None and not self.handed_over.is_set():
                    try:
                        taken = self._answer(line)
                    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
                        pass  # anything unusual is the SDK's to answer, with the error it deserves
                if b"notifications/cancelled" in raw:
                    self._cancel(line)  # a call the front runs may be the one cancelled, before or after the hand-over
                if taken:
                    continue
                if self._wants_sdk or self.early != early or _notification(line):
                    self._lines.put(line)  # answered, or a notification: the SDK sees it in order, whenever it loads
                else:
                    self._for_the_sdk(line)  # a request the front did not answer: the SDK's to answer
        except (OSError, ValueError):
            pass  # stdin is gone: the same as its end
        finally:
            self._lines.put(None)
            self._ended = True
            self._stirred.set()

    def _cancel(self, line: str) -> None:
        """A `notifications/cancelled` for a call the front holds or runs: drop it, or stop it and never answer it."""
        try:
            message = json.loads(line)
            ident = message["params"]["requestId"]
        except (ValueError, RecursionError, TypeError, KeyError):
            return
        if ident_of({"id": ident}) is None:
            return  # not an id a request can have
        with self._hold_lock:
            if self._held is not None:
                self._held = [held for held in self._held if held[0].get("id") != ident]
        if self._calls is not None:
            self._calls.cancel(ident)

    def _answer(self, line: str) -> bool:
        """Answer `line` from the manifest when it is a request the manifest covers in this connection's state (the SDK
        still gets the line), or take it when it is a tool call the front runs itself (True: the SDK never sees it)."""
        message = json.loads(line)
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "method" not in message:
            return False
        if unusable(message):
            return False  # the SDK's path refuses it, in its words
        ident, method, params = ident_of(message), message["method"], message.get("params")
        if ident is None or (params is not None and not isinstance(params, dict)):
            return False
        params = params or {}
        assert self.manifest is not None
        meta = params.get("_meta")
        envelope = meta if isinstance(meta, dict) and MODERN_KEY in meta else None
        if self._era is None:  # the first request decides the connection's era, as it does for the SDK
            self._era = "modern" if envelope is not None and method != "initialize" else "legacy"
            if method == "initialize" and initialize_params(params):
                requested = params["protocolVersion"]
                self._version = requested if requested in self.manifest["legacy"] else self.manifest["latest_handshake"]
                self._roots = params["capabilities"].get("roots") is not None
                self._reply(ident, message["id"], self.manifest["legacy"][self._version]["initialize"])
                return False
        if method == "tools/call":
            if self._era == "modern" and envelope is not None and isinstance(envelope.get(CAPABILITIES_KEY), dict):
                version, roots = envelope[MODERN_KEY], envelope[CAPABILITIES_KEY].get("roots") is not None
                known = isinstance(version, str) and version in self.manifest["modern"]
                return known and self._take(message, line, "modern", version, roots)
            if self._era == "legacy" and envelope is None and self._version is not None:
                return self._take(message, line, "legacy", self._version, self._roots)
            return False
        if method == "subscriptions/listen":
            self._listen(ident, message["id"], params, envelope)
            return False
        if not plain(method, params):
            return False
        result: Any = None
        if self._era == "modern" and envelope is not None and isinstance(envelope.get(CAPABILITIES_KEY), dict):
            version = envelope[MODERN_KEY]
            result = self.manifest["modern"].get(version, {}).get(method) if isinstance(version, str) else None
        elif self._era == "legacy" and envelope is None and self._version is not None and method != "initialize":
            result = self.manifest["legacy"][self._version].get(method)
        if result is not None:
            self._reply(ident, message["id"], result)
        return False

    def _reply(self, ident: str, raw_id: Any, result: Any) -> None:
        if ident in self._answered:
            return  # an id used again (MCP forbids it): the SDK answers each use, and only the SDK
        self._answered[ident] = result
        self.early += 1
        self._send({"jsonrpc": "2.0", "id": raw_id, "result": result})

    def _listen(self, ident: str, raw_id: Any, params: dict[str, Any], envelope: dict[str, Any] | None) -> None:
        """Acknowledge a subscription the manifest recorded (same filter, same version), as the SDK's first frame on its
        stream would; the stream itself (list changes) is the SDK's, which gets the request as always."""
        if self._era != "modern" or envelope is None or not isinstance(envelope.get(CAPABILITIES_KEY), dict):
            return
        version = envelope[MODERN_KEY]
        assert self.manifest is not None
        recorded = self.manifest["modern"].get(version, {}).get("subscriptions/listen") if isinstance(version, str) else None
        if recorded is None or set(params) != {"_meta", "notifications"} or params["notifications"] != recorded["requested"]:
            return
        if ident in self._acknowledged or ident in self._answered:
            return
        ack = {**recorded["acknowledged"], "_meta": {**recorded["acknowledged"]["_meta"], SUBSCRIPTION_KEY: raw_id}}
        self._acknowledged[ident] = ack
        self.early += 1
        self._send({"jsonrpc": "2.0", "method": ACKNOWLEDGED, "params": ack})

    def _send(self, message: dict[str, Any]) -> None:
        self.write_line(json.dumps(message, ensure_ascii=False, separators=(",", ":")))

    def write_line(self, line: str) -> None:
        """Write one message as one line; the lock keeps the front's and the SDK's lines whole."""
        data = (line.rstrip("\n") + "\n").encode("utf-8")
        with self._write_lock:
            self._write_bytes(data)

    # --- the SDK's side ----------------------------------------------------------------------------------

    async def lines(self) -> AsyncIterator[str]:
        """Every line the client sent, in order, for the SDK's stdio transport; the front stops answering at the first."""
        import anyio

        while True:
            line = await anyio.to_thread.run_sync(self._for_sdk)
            if not self.handed_over.is_set():
                self.handed_over.set()
                self.report("before the MCP SDK was ready")
            if line is None:
                # The SDK cancels the calls in flight at end of input, but their threads run on (a loop step's verification
                # for minutes) and the process with them: stop what runs long, and give the calls a moment to answer.
                await anyio.to_thread.run_sync(self._last_answers)
                return
            yield line

    def _for_sdk(self) -> str | None:
        """The next line for the SDK (None: end of input), noting the request it carries until the SDK answers it."""
        line = self._lines.get()
        try:
            message = json.loads(line) if line is not None else None
        except (ValueError, RecursionError):
            return line
        if isinstance(message, dict) and isinstance(message.get("method"), str):
            ident, params = ident_of(message), message.get("params")
            asked = params.get("requestId") if isinstance(params, dict) and message["method"] == "notifications/cancelled" else None
            cancels = ident_of({"id": asked})  # the request a cancellation names
            with self._flight:
                if ident is not None:
                    self._in_flight.add(ident)
                    self._cancelled.discard(ident)  # an id used again
                elif cancels:
                    self._in_flight.discard(cancels)  # never answered now
                    self._cancelled.add(cancels)
            if ident is None and cancels and self.cancelled is not None:
                self.cancelled(asked)  # the SDK has the request by now: stop what its call runs
        return line

    def _last_answers(self) -> None:
        if self.at_end is not None:
            self.at_end()
        with self._flight:
            self._flight.wait_for(lambda: not self._in_flight, LAST_ANSWERS)

    def from_sdk(self, line: str) -> None:
        """Write an SDK message, unless it answers a request the front answered (then compare the two answers) or one the
        client cancelled (MCP: a cancelled request gets no answer)."""
        message = json.loads(line)
        if self._acknowledged and isinstance(message, dict) and message.get("method") == ACKNOWLEDGED:
            if self._acknowledged_again(message):
                return
        ident = ident_of(message) if isinstance(message, dict) and "method" not in message else None
        cancelled = False
        if ident is not None:
            with self._flight:
                self._in_flight.discard(ident)
                self._flight.notify_all()
                cancelled = ident in self._cancelled  # its call ended (steps stopped) before the SDK took the cancel in
                self._cancelled.discard(ident)
        if self._answered:
            if ident is not None and ident in self._answered:
                ours = self._answered.pop(ident)
                if message.get("result") != ours:
                    import logging

                    self.mismatches.append(ident)
                    log = logging.getLogger("repo_memory")
                    if isinstance(message.get("error"), dict):  # the request, not the manifest: its params, most likely
                        log.warning("request %s, answered at start-up, was refused by the server: %s", ident,
                                    message["error"].get("message"))
                    else:
                        log.warning("the start-up manifest answered request %s differently from the server; regenerate it "
                                    "with `python -m repo_memory.shells.manifest`", ident)
                return
        if not cancelled:
            self.write_line(line)

    def _acknowledged_again(self, message: dict[str, Any]) -> bool:
        """Whether `message` is the SDK's acknowledgement of a subscription the front acknowledged (then compared)."""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        ident = ident_of({"id": meta.get(SUBSCRIPTION_KEY)}) if isinstance(meta, dict) else None
        if ident is None or ident not in self._acknowledged:
            return False
        if self._acknowledged.pop(ident) != params:
            import logging

            self.mismatches.append(ident)
            logging.getLogger("repo_memory").warning("the start-up manifest acknowledged subscription %s differently from the "
                                                     "server; regenerate it with `python -m repo_memory.shells.manifest`", ident)
        return True

    def stdout(self) -> SdkOut:
        """An async text file for the SDK's stdio transport, writing through `from_sdk`."""
        return SdkOut(self)


class SdkOut:
    """The two methods of an async text file the SDK's stdio transport writes its messages with."""

    def __init__(self, front: Front):
        self._front = front

    async def write(self, text: str) -> None:
        import anyio

        await anyio.to_thread.run_sync(self._front.from_sdk, text)

    async def flush(self) -> None:
        return None


def _notification(line: str) -> bool:
    """Whether `line` is a notification (no answer is owed: it can wait for the SDK however long it loads)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" not in message
