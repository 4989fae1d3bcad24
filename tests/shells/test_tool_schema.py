"""What a model is shown of the tools, over a real `repo-memory serve`: every argument described in the input schema
(Codex defers the prose descriptions behind tool search, some clients shorten them), in no more bytes than before; and
what it is told when it calls a tool that does not exist, a large remember, or a kind recall does not have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from repo_memory.core.store import Store
from repo_memory.errors import InvalidArgumentError
from repo_memory.shells import mcp as server
from repo_memory.shells import tools as toolbox
from tests.shells.stdio_server import StdioServer

# What a model is shown of the ten tools (each description plus its input schema as JSON), as the agent-UX review of
# 2026-12-05 measured it: every argument's meaning is said now, and the tool list is no heavier for it.
BUDGET = 11_472


def listed(repo: Path, env: dict[str, str] | None = None, *calls: tuple[str, dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """tools/list of a fresh `repo-memory serve` in `repo`, and the results of `calls` after it."""
    stdio = StdioServer(repo, env)
    try:
        stdio.initialize()
        stdio.send("tools/list")
        tools = stdio.answer()["result"]["tools"]
        results = [stdio.call(name, arguments) for name, arguments in calls]
    finally:
        stdio.close_input()
        stdio.wait(30)
    return tools, results


def test_every_argument_is_described_and_the_tool_list_is_no_heavier(repo: Path):
    tools, _ = listed(repo)
    undescribed = [f"{t['name']}.{name}" for t in tools for name, schema in t["inputSchema"]["properties"].items()
                   if not schema.get("description")]
    assert undescribed == []
    titled = [t["name"] for t in tools if "title" in t["inputSchema"] or any("title" in a for a in t["inputSchema"]["properties"].values())]
    assert titled == []  # "As Of" for as_of, "recallArguments": tokens that teach nothing
    shown = sum(len(t["description"]) + len(json.dumps(t["inputSchema"])) for t in tools)
    assert len(tools) == 10 and shown <= BUDGET, shown


def test_recall_says_its_query_is_needed_unless_a_symbol_is_given(repo: Path):
    """`query` was {"default": "", "type": "string"}: optional, though every call without it (or a symbol) fails."""
    tools, (symbol_alone, nothing) = listed(repo, None, ("recall", {"symbol": "src/app.py::main"}), ("recall", {}))
    recall = next(t["inputSchema"] for t in tools if t["name"] == "recall")
    query = recall["properties"]["query"]
    assert "default" not in query and "unless" in query["description"] and "symbol" in query["description"]
    assert "query" not in recall.get("required", [])  # a symbol alone is a whole call
    assert not symbol_alone["isError"] and symbol_alone["structuredContent"]["query"] == "symbol:src/app.py::main"
    assert nothing["isError"] and "Give a query" in nothing["content"][0]["text"]


@pytest.mark.parametrize("front", ["on", "off"])
def test_a_tool_that_does_not_exist_is_answered_with_the_nearest_and_the_list(repo: Path, front: str):
    """`Unknown tool: recal` named neither the tool meant nor the tools there are; with the front on, the call comes
    right after the handshake, before the SDK is ready."""
    _, (misspelled, unlike) = listed(repo, {"REPO_MEMORY_FRONT": front}, ("recal", {"query": "x"}), ("search_memory", {}))
    text = misspelled["content"][0]["text"]
    assert misspelled["isError"] and "No tool 'recal'" in text and "Did you mean 'recall'?" in text
    assert all(name in text for name in toolbox.BY_NAME), text
    assert unlike["isError"] and "Did you mean" not in unlike["content"][0]["text"]
    assert ", ".join(toolbox.BY_NAME) in unlike["content"][0]["text"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_remember_too_large_to_keep_inline_says_what_recall_and_read_see(store: Store):
    """A 200 KB text was answered as usual: nothing said recall searches only its first 2,000 characters."""
    async with Client(server.build(store)) as client:
        large = await client.call_tool("remember", {"text": "the build log follows. " + "x" * 200_000, "session": "s"})
        small = await client.call_tool("remember", {"text": "a short note", "session": "s"})
    assert not large.is_error and large.structured_content is not None
    note = large.structured_content["note"]
    assert "blob" in note and "2,000 characters" in note and "read" in note, note
    assert small.structured_content is not None and "note" not in small.structured_content


def test_a_kind_recall_does_not_have_is_named_in_words_with_the_kinds_there_are(store: Store):
    with pytest.raises(InvalidArgumentError) as refused:
        store.recall("anything", kinds=["bug", "decisions"])
    said = str(refused.value)
    assert "[" not in said and "'bug'" in said and "'decisions'" in said, said
    assert all(kind in said for kind in ("skill", "loop", "error", "decision"))
