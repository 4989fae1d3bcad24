"""Citing or reading a record this clone does not hold says what to do: pull first (from the branch this one pulls
from), or use the id of the clone's own log that holds the session here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

from tests.conftest import git, initialised
from tests.shells.stdio_server import StdioServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def said(answer: dict) -> str:
    return json.dumps(answer.get("structuredContent") or answer.get("content"))


def test_citing_a_record_of_another_clone_not_pulled_yet_says_to_pull_it_first(tmp_path: Path):
    """remember, checkpoint and `log add -r` said only "does not exist … has no records"; read said "No record X."."""
    origin = initialised(tmp_path)
    mine = tmp_path / "mine"
    git(tmp_path, "clone", "-q", str(origin), str(mine))
    theirs = Store(Config.load(origin))
    cited = theirs.remember("the flaky test is test_load", actor="human", tool="cli")[0]["id"]
    theirs.flush("all")
    theirs.close()
    answers, code = StdioServer(mine).session(("remember", {"text": "follow-up on their finding", "refs": [cited]}),
                                              ("checkpoint", {"summary": "s", "covers": [cited]}),
                                              ("read", {"ref": cited}))
    assert code == 0
    for answer in answers:
        assert answer.get("isError") and "pull first (`git pull`, from origin/main)" in said(answer), said(answer)
    added = CliRunner().invoke(cli, ["--root", str(mine), "log", "add", "follow-up", "-r", cited])
    assert added.exit_code == 1 and "pull first (`git pull`, from origin/main)" in added.output, added.output
    git(mine, "pull", "-q", "--no-rebase", "--no-edit")
    added = CliRunner().invoke(cli, ["--root", str(mine), "log", "add", "follow-up", "-r", cited])
    assert added.exit_code == 0, added.output


def test_reading_a_session_by_the_name_its_clone_keeps_it_under_suggests_the_full_id(tmp_path: Path):
    """`log add -r ops#1` suggested ops.<clone>#1; read said only "No record ops#1."."""
    repo = initialised(tmp_path)
    store = Store(Config.load(repo))
    kept = store.remember("the staging DB is read-only on Fridays", session="ops", actor="human", tool="cli")[0]["id"]
    store.flush("all")
    store.close()
    assert kept != "ops#1"
    answers, code = StdioServer(repo).session(("read", {"ref": "ops#1"}))
    assert code == 0 and answers[0].get("isError") and kept in said(answers[0]), said(answers[0])
