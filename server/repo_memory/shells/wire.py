"""The server's dispatch and its stdio wire: every line a client sends gets an answer, even one the MCP SDK cannot parse.

The SDK drops a line that fails its JSON-RPC validation without replying, so a client that sent it waits forever
(a `jsonrpc` other than "2.0", a missing or non-string `method`, a request `id` that is neither a string nor an
integer, `params` that is not an object, a lone surrogate escape, nesting deeper than its JSON parser allows, or plain
bad JSON). `Checked` sits between stdin and the SDK:
a line the SDK would accept passes through untouched; any other line is answered here with a JSON-RPC error
(parse error, invalid request or invalid params), carrying the request's id when it has one, and never reaches the SDK.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, cast

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from repo_memory.errors import RepoMemoryError
from repo_memory.formats import experience
from repo_memory.index.db import damage
from repo_memory.runner import verify
from repo_memory.shells.front import Front
from repo_memory.shells.messages import MAX_DEPTH, unusable
from repo_memory.shells import hookcalls, hooks, tools
from repo_memory.shells.served import Served

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def problem(line: str) -> tuple[Any, int, str] | None:
    """(id to answer, error code, message) for a line the SDK would drop unanswered, or None when the line is fine."""
    try:
        message = json.loads(line)
    except RecursionError:
        return None, PARSE_ERROR, f"Parse error: the message is nested too deeply (the limit is {MAX_DEPTH} levels)."
    except json.JSONDecodeError as exc:
        return None, PARSE_ERROR, f"Parse error: not valid JSON ({exc.msg} at character {exc.pos})."
    except ValueError:
        return None, PARSE_ERROR, "Parse error: not valid JSON."
    if isinstance(message, list):
        return None, INVALID_REQUEST, "Invalid request: JSON-RPC batches are not supported; send one message per line."
    if not isinstance(message, dict):
        return None, INVALID_REQUEST, "Invalid request: a message is a JSON object."
    ident = message.get("id")
    ident = ident if isinstance(ident, str) or (isinstance(ident, int) and not isinstance(ident, bool)) else None
    if message.get("jsonrpc") != "2.0":
        return ident, INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0".'
    if "method" in message and not isinstance(message["method"], str):
        return ident, INVALID_REQUEST, 'Invalid request: "method" must be a string.'
    if "method" in message and "id" in message and ident is None:  # the SDK would take it for a notification: no answer
        return None, INVALID_REQUEST, 'Invalid request: "id" must be a string or an integer.'
    if "method" not in message and not ({"result", "error"} & message.keys()):
        return ident, INVALID_REQUEST, 'Invalid request: a request needs a "method" (a string).'
    if "params" in message and not isinstance(message["params"], dict):
        return ident, INVALID_PARAMS, 'Invalid params: "params" must be an object (named arguments).'
    where = unusable(message)
    if where:
        return ident, INVALID_PARAMS, f"Invalid params: {where}."
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:  # anything else the SDK's own validation refuses
        first = exc.errors()[0]
        at = ".".join(str(part) for part in first.get("loc", ())) or "the message"
        return ident, INVALID_REQUEST, f"Invalid request: {at}: {first.get('msg', 'not a JSON-RPC message')}."
    return None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def hook_line(line: str) -> str:
    """`line` with U+FFFD for each lone surrogate when it calls a hook's tool (shells/hookcalls.py): Claude Code passes
    tool output cut mid-pair on as it is, and a refusal there would only lose the call, read by no one. A model's call
    keeps its lone surrogate, and `problem` refuses it with the reason."""
    if not _SURROGATE_ESCAPE.search(line):
        return line
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return line
    params = message.get("params") if isinstance(message, dict) else None
    if message.get("method") != "tools/call" or not isinstance(params, dict) or params.get("name") not in hookcalls.EVENTS:
        return line
    return json.dumps(experience.scrub(message))


def answered(line: str) -> bool:
    """Whether a bad line gets an error: not when it is a notification or a response (nobody waits for an answer)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return True
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return True
    if "method" not in message and {"result", "error"} & message.keys():
        return False  # a response to a request of ours
    return "id" in message or not isinstance(message.get("method"), str)


class Checked:
    """stdin lines for the SDK's stdio transport; lines it would drop are answered through `attach`ed write stream."""

    def __init__(self, source: AsyncIterable[str]):
        self._source = source
        self._reply: MemoryObjectSendStream[SessionMessage] | None = None
        self._ready = anyio.Event()

    def attach(self, reply: MemoryObjectSendStream[SessionMessage]) -> None:
        """The transport's write stream, once it exists: errors go out through the SDK's own writer, one line each."""
        self._reply = reply
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._source:
            if not line.strip():
                continue
            line = hook_line(line)
            found = problem(line)
            if found is None:
                yield line
                continue
            ident, code, message = found
            if not answered(line):
                continue  # a notification or a response: nobody waits for an answer, even an error
            await self._ready.wait()
            assert self._reply is not None
            error = types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message))
            await self._reply.send(SessionMessage(error))


class Server(MCPServer):
    """The SDK's server with answers of our own: every tool in `writers` spends from the write limiter; arguments in
    the wrong form get a short error naming the argument and the expected form (never the value sent, never
    documentation links); a tool that does not exist is answered with the nearest one and the list; input schemas are
    listed without pydantic's titles; a call that hit a damaged index runs again once the index is rebuilt; a cancelled call stops
    the loop verification steps it runs; a prompt asked for wrongly gets invalid params; and over stdio, a line the SDK
    cannot parse still gets a JSON-RPC error (`Checked`)."""

    def __init__(self, *args: Any, writers: frozenset[str] = frozenset(), **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.writers = writers
        self._running: dict[Any, verify.Call] = {}  # request id -> the loop steps its tool call runs

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context | None = None) -> Any:
        # The SDK cancels a cancelled call's task, but the tool runs on a thread it waits for: the steps are stopped here.
        ident = context.request_context.request_id if context is not None else None
        with verify.call() as steps:
            if ident is not None:
                self._running[ident] = steps
            try:
                return await self._call_tool(name, arguments, context)
            finally:
                if self._running.get(ident) is steps:
                    del self._running[ident]

    def cancel(self, ident: Any) -> None:
        """The client cancelled request `ident`: the loop steps its call runs end now, judging nothing."""
        steps = self._running.get(ident)
        if steps is not None:
            steps.stop()

    async def _call_tool(self, name: str, arguments: dict[str, Any], context: Context | None) -> Any:
        if name in hookcalls.EVENTS and context is not None:  # a hook of the harness, not the model: never listed
            served = cast(Served, context.request_context.lifespan_context)
            text = await anyio.to_thread.run_sync(lambda: hooks.answer_call(served.open([]), name, arguments))
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        if name not in tools.BY_NAME:
            raise ToolError(tools.no_such_tool(name))  # the SDK's "Unknown tool: recal" named neither the tool meant nor the others
        if extra := tools.unknown(name, arguments):
            raise ToolError(extra)
        if name in self.writers and context is not None:
            try:
                cast(Served, context.request_context.lifespan_context).take(name, tools.size(arguments))
            except RepoMemoryError as exc:
                raise ToolError(str(exc)) from exc
        try:
            return _compact(await super().call_tool(name, arguments, context))
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_wrong_arguments(name, exc.__cause__)) from exc.__cause__
            if context is None or exc.__cause__ is None or not damage(exc.__cause__):
                raise
            # The index is damaged. A write that reached its file never gets here (Database.after_write), so any call
            # that failed did nothing: rebuild the index from the files and run the call again.
            served = cast(Served, context.request_context.lifespan_context)
            await anyio.to_thread.run_sync(served.repair_index, str(exc.__cause__))
            return _compact(await super().call_tool(name, arguments, context))

    async def list_tools(self) -> list[types.Tool]:
        """The SDK's tools without the titles pydantic gives each input schema and argument ("As Of" for as_of,
        "recallArguments"): a model reads them as tokens and learns nothing from them."""
        return [tool.model_copy(update={"input_schema": untitled(tool.input_schema)}) for tool in await super().list_tools()]

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None) -> Any:
        """The SDK's answer, or invalid params naming the prompts or arguments there are (the SDK's error has code 0)."""
        prompts = {prompt.name: prompt for prompt in await self.list_prompts()}
        if name not in prompts:
            raise MCPError(INVALID_PARAMS, f"No prompt '{name}': the prompts are {', '.join(sorted(prompts))}.")
        takes = {argument.name: bool(argument.required) for argument in prompts[name].arguments or ()}
        given = set(arguments or {})
        wrong = [f"'{n}' is required" for n in takes if takes[n] and n not in given]
        wrong += [f"'{n}' is unknown" for n in sorted(given - set(takes))]
        if wrong:
            listed = ", ".join(f"'{n}'" + ("" if required else " (optional)") for n, required in takes.items()) or "none"
            raise MCPError(INVALID_PARAMS, f"Wrong arguments for prompt {name}: {'; '.join(wrong)}. It takes {listed}.")
        return await super().get_prompt(name, arguments, context)

    async def run_stdio_async(self) -> None:
        """Serve this process's stdin and stdout (a front that answers nothing early: `serve` starts its own)."""
        await self.run_front_async(Front.on_stdio(None).start())

    async def run_front_async(self, front: Front) -> None:
        """Serve the lines `front` reads, and write through it (the front may have answered the first requests)."""
        front.cancelled = self.cancel
        stdin = Checked(front.lines())
        async with stdio_server(stdin=cast(Any, stdin), stdout=cast(Any, front.stdout())) as (read_stream, write_stream):
            stdin.attach(write_stream)
            # The SDK's own run_stdio_async, with our streams: MCPServer offers no public way to pass them.
            await self._lowlevel_server.run(read_stream, write_stream, self._lowlevel_server.create_initialization_options())


def untitled(schema: dict[str, Any]) -> dict[str, Any]:
    """An input schema without its own title and its arguments' (an argument named `title` keeps its place)."""
    properties = {name: {k: v for k, v in argument.items() if k != "title"} for name, argument in schema.get("properties", {}).items()}
    return {**{k: v for k, v in schema.items() if k != "title"}, **({"properties": properties} if "properties" in schema else {})}


def _compact(result: Any) -> Any:
    """`result` with its text the structured content as compact JSON (tools.text_of), as the early front answers: the
    SDK indents it, a fifth of a recall's bytes spent on spaces an agent reads as tokens."""
    if isinstance(result, types.CallToolResult) and result.structured_content is not None and len(result.content) == 1 \
            and isinstance(result.content[0], types.TextContent):
        return result.model_copy(update={"content": [types.TextContent(type="text", text=tools.text_of(result.structured_content))]})
    return result


def _wrong_arguments(tool: str, exc: ValidationError) -> str:
    """`tool`: which arguments are wrong and what form they take, in a line or two."""
    problems = []
    for error in exc.errors()[:5]:
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        said = "is required" if error["type"] == "missing" else error["msg"][:160].replace("Input should be", "should be")
        problems.append(f"'{where}' {said}")
    more = f" (and {len(exc.errors()) - 5} more)" if len(exc.errors()) > 5 else ""
    return f"Wrong arguments for {tool}: {'; '.join(problems)}{more}. The tool's input schema lists each argument and its form."
