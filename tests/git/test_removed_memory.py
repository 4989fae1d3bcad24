"""Memory a commit removed (a `git revert`, a `git rm`) still has its history, and a read says where it went."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells import mcp as server
from repo_memory.shells.cli import cli

from tests.conftest import git, initialised

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _call(client: Client, tool: str, **args: Any) -> tuple[bool, Any]:
    result = await client.call_tool(tool, args)
    return result.is_error, result.structured_content if not result.is_error else " ".join(getattr(c, "text", "") for c in result.content)


def _reverted_session(tmp_path: Path) -> tuple[Path, str, str, str]:
    """A repository whose memory commit of a session's log `git revert` undid: (root, the session, the commit that
    added its log, the revert)."""
    root = initialised(tmp_path)
    done = subprocess.run([sys.executable, "-m", "repo_memory", "log", "add", "the zebra config lives in conf/zebra.yaml",
                           "-s", "notes"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    session = done.stdout.strip().rpartition("#")[0]  # notes.<clone>: the name chosen is this clone's own log
    added = git(root, "rev-parse", "HEAD").strip()
    git(root, "revert", "--no-edit", "HEAD")
    assert not list((root / ".agents/experience").rglob(f"{session}*.jsonl"))
    return root, session, added, git(root, "rev-parse", "HEAD").strip()


async def test_a_reverted_sessions_log_keeps_its_history_and_reads_as_it_was(tmp_path: Path, runner: CliRunner):
    """The session's path was looked for only on disk: after the revert `history` said it never was committed, and
    `read` with `as_of` the commit that held it said "No session"."""
    root, session, added, revert = _reverted_session(tmp_path)
    for name in (session, "notes", f"session:{session}"):
        shown = runner.invoke(cli, ["--root", str(root), "history", name])
        assert shown.exit_code == 0, (name, shown.output)
        assert added[:7] in shown.output and revert[:7] in shown.output and "Revert" in shown.output, shown.output
    store = Store(Config.load(root))
    try:
        path, changes = store.history(session)
        assert path.endswith(f"/{session}.jsonl") and [c.sha for c in changes] == [revert, added]
        async with Client(server.build(store)) as client:
            for ref in (f"{session}#1", f"session:{session}", "notes"):
                failed, then = await _call(client, "read", ref=ref, as_of=added)
                assert not failed, (ref, then)
                assert [r["text"] for r in then["records"]] == ["the zebra config lives in conf/zebra.yaml"]
    finally:
        store.close()


async def test_reading_a_session_a_commit_removed_says_which_commit_and_how_to_read_it_as_it_was(tmp_path: Path,
                                                                                                runner: CliRunner):
    """A plain read said "No session", or "if another clone wrote it, pull first": neither is what happened here."""
    root, session, added, revert = _reverted_session(tmp_path)
    shown = runner.invoke(cli, ["--root", str(root), "log", "show", session])
    assert shown.exit_code == 1 and revert[:7] in shown.output and "as_of" in shown.output, shown.output
    store = Store(Config.load(root))
    try:
        async with Client(server.build(store)) as client:
            for ref in (f"{session}#1", f"session:{session}"):
                failed, said = await _call(client, "read", ref=ref)
                assert failed and revert[:7] in said and "removed" in said and "as_of" in said, (ref, said)
                assert "pull first" not in said, said
    finally:
        store.close()
