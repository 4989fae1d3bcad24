"""Clones that do not hold all of their history: a partial clone (`--filter=blob:none`) whose remote cannot be reached,
and a shallow clone (`--depth 1`). The real `repo-memory serve` as a child over stdio, spoken to by the SDK's client."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import GIT_ENV, git, initialised, write_skill_file

SERVE = [sys.executable, "-m", "repo_memory", "serve"]
CREATED, EDITED = "2026-01-05T10:00:00Z", "2026-02-05T10:00:00Z"


def commit_at(repo: Path, moment: str, message: str) -> None:
    """Commit everything in `repo` as made at `moment`."""
    done = subprocess.run(["git", "commit", "-qam", message], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": moment, "GIT_COMMITTER_DATE": moment})
    assert done.returncode == 0, done.stderr


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A repository whose skill was added in January, edited in February, and then left alone by two code commits."""
    origin = initialised(tmp_path)
    git(origin, "config", "uploadpack.allowFilter", "true")
    write_skill_file(origin, "deploy-steps", "How we deploy; use when deploying", "1. step one")
    git(origin, "add", "-A")
    commit_at(origin, CREATED, "memory(skill): add deploy-steps")
    skill = origin / ".agents/skills/deploy-steps/SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace("step one", "step ONE"), encoding="utf-8")
    commit_at(origin, EDITED, "docs: deploy step")
    for n in (1, 2):
        (origin / "a.txt").write_text(f"change {n}\n", encoding="utf-8")
        commit_at(origin, f"2026-03-0{n}T10:00:00Z", f"feat: change {n}")
    return origin


def calls(cwd: Path, asked: list[tuple[str, dict[str, Any]]]) -> list[tuple[bool, str]]:
    """(is_error, text) of each tool call, in order, to one server started in `cwd`."""
    async def session() -> list[tuple[bool, str]]:
        params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(cwd), env={**os.environ})
        with (cwd.parent / "serve.log").open("w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err), mode="legacy") as client:
                out = []
                for name, arguments in asked:
                    result = await client.call_tool(name, arguments)
                    out.append((bool(result.is_error), " ".join(getattr(c, "text", "") for c in result.content)))
                return out

    return anyio.run(session)


def test_a_partial_clone_offline_says_what_is_missing_and_keeps_serving_after_it(origin: Path, tmp_path: Path):
    """The old version's blob was never fetched and the remote is gone: the read said only "Error executing tool read",
    and gitpython's dead `git cat-file` then failed every later read and recall of that server."""
    git(tmp_path, "clone", "-q", "--filter=blob:none", origin.as_uri(), "partial")
    shutil.move(origin, tmp_path / "origin.away")  # an offline laptop: the promisor remote cannot be reached
    old, now, found, past = calls(tmp_path / "partial", [("read", {"ref": "skill:deploy-steps", "as_of": CREATED}),
                                                         ("read", {"ref": "skill:deploy-steps"}),
                                                         ("recall", {"query": "deploying"}),
                                                         ("history", {"ref": "skill:deploy-steps"})])
    for failed, said in (old, past):
        assert failed and "partial clone" in said and "origin" in said and "git fetch" in said, said
        assert "fatal:" not in said and "pipe" not in said, said
    assert not now[0] and "step ONE" in now[1], now
    assert not found[0] and "skill:deploy-steps" in found[1], found


def test_a_shallow_clone_says_its_history_is_cut_instead_of_showing_the_cut_as_the_skills_creation(origin: Path, tmp_path: Path):
    """`history` showed the clone's tip, a code commit, as the commit that created the skill (`new file`), and a read
    as of the skill's creation answered "No memory commit at or before …"; neither said the clone was shallow."""
    git(tmp_path, "clone", "-q", "--depth", "1", origin.as_uri(), "shallow")
    shallow = tmp_path / "shallow"
    shown = subprocess.run([sys.executable, "-m", "repo_memory", "history", "skill:deploy-steps"], cwd=shallow,
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "new file" not in shown.stdout and "shallow" in shown.stdout and "git fetch --unshallow" in shown.stdout, shown.stdout
    old, past = calls(shallow, [("read", {"ref": "skill:deploy-steps", "as_of": CREATED}), ("history", {"ref": "skill:deploy-steps"})])
    assert old[0] and "shallow" in old[1] and "git fetch --unshallow" in old[1], old
    assert not past[0] and "new file" not in past[1] and "git fetch --unshallow" in past[1], past
