"""The MCP server through a real in-process client: tools, annotations, errors, resources, prompts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from repo_memory import server
from repo_memory.store import Store

from .conftest import write_skill_file

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def seeded(store: Store, repo: Path) -> Store:
    write_skill_file(repo, "release-checklist", "How we cut a release: bump, tag, publish.", "1. Tag\n2. Publish")
    write_skill_file(repo, "running-tests", "Run the test suite with pytest.", "pytest -q")
    store.refresh()
    return store


async def call(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def error_text(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


async def test_every_tool_declares_annotations_and_an_output_schema(seeded: Store):
    async with Client(server.build(seeded)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"recall", "read", "skill_write"}
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
        assert tool.annotations.read_only_hint is not None and tool.annotations.destructive_hint is False
        assert tool.output_schema and tool.description
    assert tools["recall"].annotations.read_only_hint is True
    assert tools["skill_write"].annotations.read_only_hint is False


async def test_instructions_teach_recall_and_fit_in_two_kilobytes(seeded: Store):
    async with Client(server.build(seeded)) as client:
        instructions = client.instructions
    assert instructions == server.INSTRUCTIONS
    assert "recall" in instructions and "skill_write" in instructions
    assert len(server.INSTRUCTIONS.encode()) < 2048


async def test_an_agent_finds_a_hand_written_skill_and_reads_it(seeded: Store, repo: Path):
    async with Client(server.build(seeded)) as client:
        hits = (await call(client, "recall", query="how do we publish a release?"))["hits"]
        assert hits[0]["id"] == "skill:release-checklist"
        assert hits[0]["provenance"]["path"] == ".agents/skills/release-checklist/SKILL.md"
        item = await call(client, "read", ref=hits[0]["id"])
    assert item["content"] == (repo / ".agents/skills/release-checklist/SKILL.md").read_text(encoding="utf-8")


async def test_skill_write_creates_a_draft_that_recall_then_finds(seeded: Store, repo: Path):
    async with Client(server.build(seeded)) as client:
        written = await call(client, "skill_write", name="flaky-tests", description="Chase a flaky test.", body="Rerun it 20 times.", tags=["testing"])
        assert written["created"] and written["status"] == "draft"
        hits = (await call(client, "recall", query="flaky test"))["hits"]
    assert hits[0]["id"] == "skill:flaky-tests" and hits[0]["status"] == "draft"
    assert (repo / ".agents/skills/flaky-tests/SKILL.md").is_file()


async def test_bad_input_is_an_error_result_that_says_what_to_do(seeded: Store, repo: Path):
    async with Client(server.build(seeded)) as client:
        assert "Did you mean 'release-checklist'" in await error_text(client, "read", ref="relese-checklist")
        assert "not allowed" in await error_text(client, "skill_write", name="../escape", description="x", body="y")
        assert "description" in await error_text(client, "skill_write", name="too-long", description="d" * 2000, body="y")
        assert "limit" in (await error_text(client, "recall", query="x", limit=500)).lower()
    assert not (repo / ".agents/skills/too-long").exists()
    assert not (repo / ".agents/escape").exists()


async def test_skill_resource_and_use_skill_prompt(seeded: Store):
    async with Client(server.build(seeded)) as client:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["skill://{name}"]
        contents = (await client.read_resource("skill://running-tests")).contents
        assert "pytest -q" in contents[0].text
        prompt = await client.get_prompt("use-skill", {"name": "running-tests", "task": "check my change"})
        assert "pytest -q" in prompt.messages[0].content.text and "check my change" in prompt.messages[0].content.text
