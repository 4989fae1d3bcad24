"""A memory whose cited code changed is flagged in every view of it, not only in recall's hits: `read` of a skill and
of a record (MCP), `repo-memory skill show`, `repo-memory search`'s text and the session briefing, which listed a stale
skill among the skills to follow, unmarked (outside report 2026-12-06, finding 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from repo_memory.core.store import Store
from repo_memory.shells import mcp as server
from repo_memory.shells.cli import cli

from repo_memory.guards.shellwords import quoted
from tests.conftest import git

ANCHOR = "pkg/store.py::Store.save"
SOURCE = ('class Store:\n    def save(self, rows, batch_size=100):\n        if batch_size <= 0:\n'
          '            raise ValueError("batch_size must be a positive integer.")\n        return rows\n')


@pytest.fixture
def anchored(store: Store, repo: Path) -> str:
    """A skill and a record citing Store.save, committed with it; returns the record's id."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(SOURCE, encoding="utf-8")
    git(repo, "add", "pkg")
    git(repo, "commit", "-q", "-m", "add Store.save")
    store.write_skill("store-save", "How Store.save validates batch_size; use when bulk saving.", "1. batch_size must be positive.",
                      anchors=[ANCHOR], actor="human")
    [record] = store.remember("Store.save rejects batch_size <= 0", refs=[ANCHOR])
    store.refresh()
    return str(record["id"])


def change_the_code(repo: Path) -> None:
    path = repo / "pkg/store.py"
    path.write_text(path.read_text(encoding="utf-8").replace("positive integer.", "positive integer!"), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "change the message")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def read(store: Store, ref: str) -> dict[str, Any]:
    async with Client(server.build(store)) as client:
        result = await client.call_tool("read", {"ref": ref})
    assert not result.is_error and result.structured_content is not None, result.content
    return result.structured_content


@pytest.mark.anyio
async def test_a_read_of_a_skill_or_a_record_whose_code_changed_says_it_is_stale_and_why(store: Store, repo: Path, anchored: str):
    skill, record = await read(store, "skill:store-save"), (await read(store, anchored))["records"][0]
    assert "stale" not in skill and "stale_reason" not in skill, skill  # left out while the code is as it was
    assert "stale" not in record, record
    change_the_code(repo)
    skill, item = await read(store, "skill:store-save"), await read(store, anchored)
    assert skill["stale"] is True and skill["stale_reason"].startswith(f"{ANCHOR}: the code changed"), skill
    [record] = item["records"]
    assert record["stale"] is True and record["stale_reason"].startswith(f"{ANCHOR}: the code changed"), record
    assert "stale" not in item, item  # each record says its own


@pytest.mark.anyio
async def test_a_read_says_what_happened_to_the_code_as_repo_memory_stale_does(store: Store, repo: Path, anchored: str):
    """An agent's read gave "the code changed since the memory was written (hash -> hash)", where `repo-memory stale`
    named the commit and its subject; after a rename, "symbol not found" with no word of the commit that renamed it."""
    change_the_code(repo)
    changed = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    skill = await read(store, "skill:store-save")
    assert f"(last changed in {changed}" in skill["stale_reason"] and "change the message" in skill["stale_reason"], skill
    path = repo / "pkg/store.py"
    path.write_text(path.read_text(encoding="utf-8").replace("def save(", "def persist("), encoding="utf-8")
    git(repo, "commit", "-q", "-am", "rename save to persist")
    renamed = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    skill = await read(store, "skill:store-save")
    assert renamed in skill["stale_reason"] and "rename save to persist" in skill["stale_reason"], skill


def test_skill_show_says_the_skill_is_stale_and_how_to_settle_it(store: Store, repo: Path, anchored: str, runner: CliRunner):
    shown = runner.invoke(cli, ["--root", str(repo), "skill", "show", "store-save"])
    assert shown.exit_code == 0 and "stale" not in shown.stderr, shown.stderr
    change_the_code(repo)
    shown = runner.invoke(cli, ["--root", str(repo), "skill", "show", "store-save"])
    assert shown.exit_code == 0 and shown.stdout.startswith("---"), shown.output  # stdout stays the skill as stored
    assert f"stale: {ANCHOR}: the code changed" in shown.stderr and "stale --pin store-save" in shown.stderr, shown.stderr
    as_json = json.loads(runner.invoke(cli, ["--root", str(repo), "skill", "show", "store-save", "--json"]).stdout)
    assert as_json["stale"] is True and as_json["stale_reason"].startswith(ANCHOR)


def test_search_text_marks_stale_hits_and_says_how_a_hit_matched(store: Store, repo: Path, anchored: str, runner: CliRunner):
    store.remember("The nightly e2e suite takes 41 minutes.")  # beside the record: found by its neighbour's words only
    change_the_code(repo)
    found = runner.invoke(cli, ["--root", str(repo), "search", "store", "save", "batch_size"])
    assert found.exit_code == 0, found.output
    lines = found.output.splitlines()
    marked = {line.split()[1]: line for line in lines if not line.startswith(" " * 10)}
    assert "stale" in marked["skill:store-save"] and "stale" in marked[anchored], found.output
    assert sum(f"stale: {ANCHOR}: the code changed" in line for line in lines) == 2, found.output
    beside = [line for hit, line in marked.items() if hit not in ("skill:store-save", anchored)]
    assert beside and all("matched only in records beside it" in line and "stale" not in line for line in beside), found.output


def test_the_session_briefing_marks_a_stale_skill(store: Store, repo: Path, anchored: str):
    def briefing(session: str) -> str:
        started = subprocess.run([str(Path(sys.executable).parent / "repo-memory"), "hook", "session-start"], cwd=repo, text=True,
                                 input=json.dumps({"session_id": session, "cwd": str(repo), "hook_event_name": "SessionStart"}),
                                 capture_output=True, env={**os.environ, "CLAUDECODE": "1"})
        assert started.returncode == 0, started.stderr
        return str(json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"])

    skills = next(line for line in briefing("s-before").splitlines() if line.startswith("- skills:"))
    assert "skill:store-save — How Store.save" in skills and "stale" not in skills, skills
    change_the_code(repo)
    skills = next(line for line in briefing("s-after").splitlines() if line.startswith("- skills:"))
    assert "skill:store-save (stale: the code it cites changed) — How Store.save" in skills, skills


def test_stale_gives_each_stale_memory_the_fix_doctor_gives(store: Store, repo: Path, anchored: str, runner: CliRunner):
    """`repo-memory stale` listed what is stale and not what to do about it; doctor and `skill show` say it."""
    change_the_code(repo)
    listed = runner.invoke(cli, ["--root", str(repo), "stale"])
    assert listed.exit_code == 1, listed.output
    doctor = json.loads(runner.invoke(cli, ["--root", str(repo), "doctor", "--json"]).stdout)
    [fix] = [f["fix"] for f in doctor if f["message"].startswith("stale: ")]  # both in one: the same cause
    lines = listed.stdout.splitlines()
    for memory, settles in (("skill:store-save", "stale --pin store-save"), (anchored, f"feedback {quoted(anchored)} outdated")):
        said = lines[lines.index(next(line for line in lines if line.startswith(f"{memory}  "))) + 1]
        assert said.startswith("  fix: ") and settles in said and said.removeprefix("  fix: ") in fix, listed.stdout
