"""Tool calls answered before the MCP SDK has loaded: from the moment the store is open (a few tenths of a second
after start) until the front hands the stream to the SDK (most of a second later), the front runs a call itself with
the same tool functions (shells/tools.py), and answers as the SDK would: the arguments checked against the tool's
input schema from the manifest, the result dumped by pydantic as the SDK dumps it, errors with the SDK's wording.

A call it cannot answer exactly so (arguments the schema refuses, which the SDK may coerce or explain; a read that
failed for a reason of ours, such as a damaged index the SDK's path rebuilds) goes to the SDK, in order behind the
lines queued meanwhile; a write is never run twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import fastjsonschema
import pydantic

from repo_memory.errors import RepoMemoryError, disk_refused, refused_by_disk
from repo_memory.index.db import damage
from repo_memory.runner import verify
from repo_memory.shells import tools
from repo_memory.shells.served import Served

log = logging.getLogger("repo_memory")
Send = Callable[[Any, dict[str, Any]], None]  # (the request's id, the result)


class EarlyCall:
    """tools.Call for a call the front runs: the open Store and its engine, the session the call's `_meta` names."""

    def __init__(self, served: Served, meta: Any):
        self.store = served.open([])
        self.engine = served.engine
        self.meta_session = tools.meta_session(meta, self.store)


class EarlyCalls:
    """Runs the tool calls the front takes, each on a thread of its own, and sends their answers."""

    def __init__(self, served: Served, manifest: dict[str, Any], send: Send, forward: Callable[[str], None]):
        self._served, self._manifest, self._send, self._forward = served, manifest, send, forward
        self._validators: dict[tuple[str, str, str], Callable[[Any], Any]] = {}
        self._adapters: dict[str, pydantic.TypeAdapter[Any]] = {}
        self._running = 0
        self._steps: dict[Any, verify.Call] = {}  # request id -> the loop steps the call runs (stopped: it was cancelled)
        self.taken = 0
        self._idle = threading.Condition()

    def take(self, message: dict[str, Any], line: str, era: str, version: str, roots: bool = False) -> bool:
        """Run `message` (a tools/call) when its arguments are valid for the tool; False leaves it to the SDK. With the Store
        not open yet, only a call from a client that offers no roots (`roots`) is run: the SDK asks the others for theirs."""
        params = message.get("params") or {}
        name, arguments = params.get("name"), params.get("arguments", {})
        if not (self._served.is_open or (self._served.opens_without_roots and not roots)):
            return False
        if name not in tools.BY_NAME or not isinstance(arguments, dict) or set(params) - {"name", "arguments", "_meta"}:
            return False
        if tools.unknown(name, arguments):
            return False  # the SDK's path refuses it, in its words
        try:
            self._validator(era, version, name)(arguments)
        except fastjsonschema.JsonSchemaException:
            return False
        except KeyError:
            return False  # no schema recorded for this version: the SDK answers
        stamp = self._manifest["modern"][version]["tools/list"].get("_meta") if era == "modern" else None
        with self._idle:
            self._running += 1
            self.taken += 1
            self._steps[message["id"]] = verify.Call()
        threading.Thread(target=self._run, args=(message["id"], line, name, arguments, params.get("_meta"), stamp),
                         name=f"repo-memory-early-{name}", daemon=True).start()
        return True

    def cancel(self, ident: Any) -> None:
        """The client cancelled request `ident`: stop the loop steps it runs, and never answer it (as the SDK does)."""
        with self._idle:
            steps = self._steps.get(ident)
        if steps is not None:
            steps.stop()

    def _validator(self, era: str, version: str, name: str) -> Callable[[Any], Any]:
        key = (era, version, name)
        if key not in self._validators:
            listed = self._manifest[era][version]["tools/list"]["tools"]
            schema = next(t["inputSchema"] for t in listed if t["name"] == name)
            self._validators[key] = fastjsonschema.compile(schema, use_default=False)
        return self._validators[key]

    def settle(self, timeout: float) -> None:
        """Wait (at most `timeout` seconds) until no call is running: the SDK's import, next, would halve their speed."""
        with self._idle:
            self._idle.wait_for(lambda: self._running == 0, timeout)

    def _run(self, ident: Any, line: str, name: str, arguments: dict[str, Any], meta: Any, stamp: Any) -> None:
        try:
            with verify.call(self._steps[ident]):
                self._call(ident, line, name, arguments, meta, stamp)
        finally:
            with self._idle:
                self._running -= 1
                self._steps.pop(ident, None)
                self._idle.notify_all()

    def _call(self, ident: Any, line: str, name: str, arguments: dict[str, Any], meta: Any, stamp: Any) -> None:
        writes = name in tools.WRITERS
        try:
            if writes:
                try:
                    self._served.take(name, tools.size(arguments))
                except RepoMemoryError as exc:
                    return self._answer(ident, _error(tools.said(exc)), stamp)  # the SDK's wording: no tool prefix here
            for attempt in range(2):
                try:
                    result = tools.BY_NAME[name](EarlyCall(self._served, meta), **arguments)
                    break
                except RepoMemoryError as exc:
                    return self._answer(ident, _error(f"Error executing tool {name}: {tools.said(exc)}"), stamp)
                except Exception as exc:  # noqa: BLE001 - anything else: the SDK's path decides, or is copied
                    if isinstance(exc, OSError) and refused_by_disk(exc):  # as the SDK's path says it (mcp._as_tool_error)
                        return self._answer(ident, _error(f"Error executing tool {name}: {disk_refused(exc)}"), stamp)
                    if not writes:
                        self._forward(line)  # a read did nothing: the SDK runs it again, repairing what it must
                        return None
                    if attempt == 0 and damage(exc):
                        self._served.repair_index(str(exc))  # a write that failed on a damaged index did nothing
                        continue
                    return self._answer(ident, _error(f"Error executing tool {name}: {tools.said(exc)}"), stamp)
            if name not in self._adapters:
                self._adapters[name] = pydantic.TypeAdapter(tools.typing_return(tools.BY_NAME[name]))
            adapter = self._adapters[name]  # validated first: a dataclass becomes its wire model (tools.wire), as in the SDK
            structured = adapter.dump_python(adapter.validate_python(result, by_alias=True, by_name=True), mode="json", by_alias=True)
            text = tools.text_of(structured)
            self._answer(ident, {"content": [{"type": "text", "text": text}], "isError": False, "structuredContent": structured}, stamp)
        except Exception:  # noqa: BLE001 - never a silent client: say so, as the SDK would for a failed handler
            log.exception("an early tool call failed")
            self._answer(ident, _error(f"Error executing tool {name}: the server failed to answer"), stamp)
        return None

    def _answer(self, ident: Any, result: dict[str, Any], stamp: Any) -> None:
        with self._idle:
            steps = self._steps.get(ident)
        if steps is not None and steps.stopped:
            return  # cancelled: the client is told nothing more about it
        if stamp is not None:  # the modern protocol: every result says it is complete and names the server
            result = {**result, "resultType": "complete", "_meta": stamp}
        self._send(ident, result)


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}
