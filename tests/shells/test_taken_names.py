"""A session's skill_write never replaces a skill it has not read: one another session created and committed, one a
person wrote by hand, one pulled from a teammate, or a version changed since the session read it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git, write_skill_file
from tests.shells.conftest import cloned
from tests.shells.stdio_server import StdioServer

SKILL = ".agents/skills/deploy/SKILL.md"
FIRST = {"name": "deploy", "description": "How we deploy; use when shipping a release", "body": "1. Build.\n2. Ship."}
SECOND = {"name": "deploy", "description": "Deploy the other way; use when releasing", "body": "1. Push to prod.",
          "new": True}  # not refused as a near-duplicate of the first: as the name in use, if at all


def started(repo: Path, env: dict[str, str] | None = None) -> StdioServer:
    server = StdioServer(repo, env)
    server.initialize()
    return server


def ended(server: StdioServer) -> None:
    """The session ends as a harness ends it: its input closes, and the server commits its writes before it exits."""
    server.close_input()
    assert server.wait(60) == 0, server.stderr.decode(errors="replace")[-2000:]


def refused(answer: dict[str, Any]) -> str:
    assert answer.get("isError"), answer
    return str(answer["content"][0]["text"])


def held(repo: Path) -> str:
    return git(repo, "show", f"HEAD:{SKILL}")


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def test_a_create_of_a_name_another_session_created_and_committed_is_refused_and_loses_nothing(repo: Path):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    first, second = started(repo), started(repo)
    try:
        made = first.call("skill_write", FIRST)
        assert not made.get("isError") and made["structuredContent"]["created"] is True, made
        ended(first)  # its create is committed: the window the uncommitted-create refusal covers is over
        assert "2. Ship." in held(repo)
        told = refused(second.call("skill_write", SECOND))
        assert "skill:deploy" in told and "read(ref='skill:deploy')" in told and "another name" in told, told
        ended(second)
    finally:
        for server in (first, second):
            if server.wait(0) is None:
                server.kill()
    assert sha((repo / SKILL).read_bytes()) == made["structuredContent"]["sha256"] == sha(held(repo))
    history = git(repo, "log", "-p", "--format=%s", "--", ".agents/skills/deploy")
    assert "Push to prod" not in history, history
    assert git(repo, "status", "--porcelain", "--", ".agents/skills/deploy") == ""


def test_a_create_of_a_name_pulled_from_a_teammate_is_refused(repo: Path, tmp_path: Path):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    teammate = cloned(repo, tmp_path)
    ours = started(repo)  # a session running here while the teammate's skill arrives
    try:
        theirs = started(teammate)
        assert not theirs.call("skill_write", FIRST).get("isError")
        ended(theirs)
        git(teammate, "push", "-q", "origin", "main")
        git(repo, "pull", "-q", "--ff-only", "origin", "main")
        pulled = (repo / SKILL).read_bytes()
        told = refused(ours.call("skill_write", SECOND))
        assert "skill:deploy" in told and "read(ref='skill:deploy')" in told, told
        ended(ours)
    finally:
        if ours.wait(0) is None:
            ours.kill()
    assert (repo / SKILL).read_bytes() == pulled
    assert "Push to prod" not in git(repo, "log", "-p", "--", ".agents/skills")


@pytest.mark.parametrize("commit", ["auto", "off"])
def test_a_create_of_a_name_a_person_wrote_by_hand_and_never_committed_is_refused(repo: Path, commit: str):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    path = write_skill_file(repo, "deploy", "How we deploy, by hand; use when shipping", "1. Ask Ana.")
    before = path.read_bytes()
    server = started(repo, {"REPO_MEMORY_COMMIT": commit})
    try:
        told = refused(server.call("skill_write", SECOND))
        assert "skill:deploy" in told and "read(ref='skill:deploy')" in told, told
        ended(server)
    finally:
        if server.wait(0) is None:
            server.kill()
    assert path.read_bytes() == before


def test_an_update_over_a_version_another_session_committed_since_this_one_read_it_is_refused_until_it_reads_again(
        repo: Path):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    write_skill_file(repo, "deploy", "How we deploy; use when shipping a release", "1. Build.")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill")
    first, second = started(repo), started(repo)
    try:
        assert not first.call("read", {"ref": "skill:deploy"}).get("isError")
        assert not second.call("read", {"ref": "skill:deploy"}).get("isError")
        assert not second.call("skill_write", {"name": "deploy", "body": "1. Build.\n2. Sign."}).get("isError")
        ended(second)  # the second session's update is committed
        assert "2. Sign." in held(repo)
        told = refused(first.call("skill_write", {"name": "deploy", "body": "1. Build.\n2. Ship."}))
        assert "skill:deploy" in told and "read it" in told, told
        assert "2. Sign." in (repo / SKILL).read_text(encoding="utf-8")
        again = first.call("read", {"ref": "skill:deploy"})
        assert "2. Sign." in again["structuredContent"]["content"], again
        updated = first.call("skill_write", {"name": "deploy", "body": "1. Build.\n2. Sign.\n3. Ship."})
        assert not updated.get("isError"), updated
        ended(first)
    finally:
        for server in (first, second):
            if server.wait(0) is None:
                server.kill()
    assert "3. Ship." in held(repo)
