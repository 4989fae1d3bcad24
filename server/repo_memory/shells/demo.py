"""`repo-memory demo`: a throwaway repository with sample skills, driven through a real MCP client."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from repo_memory import layout
from repo_memory.git.repo import Git
from repo_memory.shells import mcp as server
from repo_memory.config import Config
from repo_memory.core.store import Store

SAMPLES = {
    "release-checklist": (
        "How we cut a release of this project: version bump, changelog, tag, publish. Use when asked to release or publish.",
        "1. Make sure `main` is green: `pytest -q`.\n2. Bump the version in `pyproject.toml`.\n"
        "3. Move the Unreleased notes in `CHANGELOG.md` under the new version.\n"
        "4. Commit, then tag: `git tag -a vX.Y.Z -m vX.Y.Z && git push --tags`.\n"
        "5. Build and upload: `python -m build && twine upload dist/*`.\n",
        ["release", "versioning"],
    ),
    "running-tests": (
        "Run the test suite and read its failures; use before committing and when a test fails.",
        "- All tests: `pytest -q`. One file: `pytest tests/test_store.py -q`.\n"
        "- Tests need git on PATH; they build throwaway repositories in tmp dirs.\n"
        "- A flaky failure is a bug: rerun once with `-p no:randomly`, then investigate.\n",
        ["testing", "pytest"],
    ),
    "database-migrations": (
        "Write and apply a schema migration for the app database without downtime.",
        "1. Add the migration under `migrations/` with the next number.\n"
        "2. New columns are nullable first; backfill in a separate step.\n"
        "3. Apply locally with `make migrate`, run the tests, then open the PR.\n",
        ["database", "sql"],
    ),
}


def build_repo(path: Path) -> Store:
    """A git repository at `path` set up as `repo-memory init` sets one up (committed), with sample skills written by a
    person."""
    path.mkdir(parents=True, exist_ok=True)
    Git(path, path / ".git").run("init", "-q")
    store = Store(Config.load(path))
    layout.set_up(store.config, store.commit_files)
    for name, (description, body, tags) in SAMPLES.items():
        store.write_skill(name, description, body, tags=tags, actor="human")
    return store


def run(echo: Callable[[str], None], keep: Path | None = None) -> Path:
    """Drive the demo, printing what the agent sees; return the demo repository's path."""
    path = keep or Path(tempfile.mkdtemp(prefix="repo-memory-demo-"))
    store = build_repo(path)
    try:
        anyio.run(_session, store, echo)
    finally:
        store.close()
    return path


async def _session(store: Store, echo: Callable[[str], None]) -> None:
    async with Client(server.build(store)) as client:
        tools = await client.list_tools()
        echo(f"The agent sees {len(tools.tools)} tools: {', '.join(t.name for t in tools.tools)}\n")
        question = "how do I publish a new version?"
        result = await _call(client, echo, "recall", {"query": question, "limit": 3})
        top = result["hits"][0]["id"]
        await _call(client, echo, "read", {"ref": top}, show=lambda r: {k: r[k] for k in ("id", "status", "sha256")} | {"content": r["content"][:300] + "…"})
        await _call(client, echo, "skill_write", {
            "name": "debugging-flaky-tests",
            "description": "Find the cause of a test that fails only sometimes.",
            "body": "1. Rerun the single test 20 times: `pytest tests/x.py::test_y --count 20`.\n2. Look for shared state, time and ordering.",
            "tags": ["testing", "flaky"],
        })
        await _call(client, echo, "recall", {"query": "a test fails only sometimes", "limit": 2})


async def _call(client: Client, echo: Callable[[str], None], tool: str, args: dict[str, Any],
                show: Callable[[dict[str, Any]], Any] | None = None) -> dict[str, Any]:
    echo(f"→ {tool}({json.dumps(args, ensure_ascii=False)})")
    result = await client.call_tool(tool, args)
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content}")
    data: dict[str, Any] = result.structured_content or {}
    echo("← " + json.dumps(show(data) if show else data, indent=2, ensure_ascii=False) + "\n")
    return data
