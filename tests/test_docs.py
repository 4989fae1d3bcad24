"""Docs are tested: every command, tool and config key is in the README; every schema is a valid JSON Schema."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import click
import pytest
from jsonschema import Draft7Validator

from repo_memory.shells import mcp as server
from repo_memory.formats import schema as validation
from repo_memory.shells.cli import cli
from repo_memory.shells.cli.base import Group

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = README + "".join(page.read_text(encoding="utf-8") for page in sorted((ROOT / "docs").glob("*.md")))


def commands(group: click.Group, prefix: str = "repo-memory") -> list[str]:
    out = []
    for name, command in (group.loaded() if isinstance(group, Group) else group.commands).items():
        out.append(f"{prefix} {name}")
        if isinstance(command, click.Group):
            out += commands(command, f"{prefix} {name}")
    return out


@pytest.mark.parametrize("command", commands(cli))
def test_every_cli_command_is_in_the_readme(command: str):
    assert f"`{command}" in DOCS, f"neither README.md nor docs/ documents `{command}`"


def test_every_mcp_tool_is_in_the_readme(store):
    tools = anyio.run(server.build(store).list_tools)
    assert tools
    for tool in tools:
        assert f"`{tool.name}(" in DOCS, f"neither README.md nor docs/ documents the MCP tool {tool.name}"


def test_the_skills_extension_and_each_of_its_methods_are_documented():
    from repo_memory.shells import extension

    assert f"`{extension.IDENTIFIER}`" in README
    for binding in extension.Skills().methods():
        assert f"`{binding.method}`" in DOCS, f"neither README.md nor docs/ documents the extension method {binding.method}"


def test_every_config_key_is_in_the_readme():
    for key in validation.schema("config")["properties"]:
        assert f"`{key}`" in DOCS


@pytest.mark.parametrize("kind", validation.SCHEMAS)
def test_schemas_are_valid_json_schemas(kind: str):
    Draft7Validator.check_schema(validation.schema(kind))
    assert (ROOT / "schemas" / f"{kind}.schema.json").is_file()


def test_readme_is_short_and_every_docs_link_resolves():
    assert len(README.splitlines()) <= 250
    for page in re.findall(r"\]\((docs/[a-z-]+\.md)", README):
        assert (ROOT / page).is_file(), page


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_one():
    setup = README[: README.index("## Use it")]
    assert "./install.sh " in setup and "./install.sh --test" in setup
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^\./install\.sh --test$", ci, re.MULTILINE)


def test_the_shipped_validators_were_compiled_from_the_current_schemas():
    """Only the schemas' hashes are compared: a new fastjsonschema release changes the generated text, not its meaning."""
    from repo_memory.formats import compiled_schemas

    regenerate = ("python -c 'from repo_memory.formats import schema; "
                  "open(\"server/repo_memory/formats/compiled_schemas.py\", \"w\").write(schema.compiled_source())'")
    assert compiled_schemas.HASHES == {kind: validation.schema_hash(kind) for kind in validation.SCHEMAS}, (
        f"schemas/ changed; regenerate with: {regenerate}")


def test_the_briefing_the_docs_show_spells_its_time_as_the_briefing_does(store):
    """docs/agent-view.md showed the last checkpoint at `(2026-12-03T05:17)`; the briefing says `(2026-12-03 05:17 UTC)`."""
    noted = store.remember("the payments tests share a fixture", session="earlier")[0]
    store.checkpoint("Payments tests: run serially.", [noted["id"]], session="earlier")

    def shapes(text: str) -> set[str]:
        return {re.sub(r"\d", "9", when) for when in re.findall(r"^- last checkpoint \S+ \(([^)]*)\):", text, re.M)}

    assert shapes(store.briefing()) == {"9999-99-99 99:99 UTC"}
    assert shapes((ROOT / "docs/agent-view.md").read_text(encoding="utf-8")) == shapes(store.briefing())


def test_remember_is_described_as_returning_the_ids_list_it_returns(store):
    """The tool's description and docs/agent.md said remember "returns its id"; it returns `ids`, a list."""
    tool = next(t for t in anyio.run(server.build(store).list_tools) if t.name == "remember")
    assert "ids" in (tool.output_schema or {}).get("properties", {})
    row = next(line for line in DOCS.splitlines() if line.startswith("| `remember("))
    for said in (tool.description or "", row):
        assert "returns its id" not in said and "`ids`" in said, said
