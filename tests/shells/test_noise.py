"""What hooks record about a session's life (its start and end, compactions) stays in the log but out of the way of
what the session did: default recall leaves it out, `kinds` still reaches it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells import hooks

pytestmark = pytest.mark.anyio
SESSION = "5d1f0c7e-2a43-4c1b-9a0e-3f6b8d2c1a90"


def test_session_end_and_compaction_records_stay_out_of_default_recall_and_kinds_reach_them(repo: Path):
    store = Store(Config.load(repo), session=SESSION)
    store.remember("Decided the session should end the docs build with a link check, not tox.", kind="decision")
    store.remember("The harness context was full of build logs.", kind="observation")
    store.close()
    event = {"session_id": SESSION, "cwd": str(repo)}
    hooks.handle("pre-compact", {**event, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""})
    hooks.handle("session-end", {**event, "hook_event_name": "SessionEnd", "reason": "other"})
    store = Store(Config.load(repo))
    try:
        kinds = {h.id: h.kind for h in store.recall("session ended", kinds=["observation", "summary", "decision"], limit=10).hits}
        assert set(kinds.values()) == {"observation", "summary", "decision"}, kinds  # all there, reachable by kind
        for question in ("session ended", "the harness compacted its context", "why did the session end"):
            found = [h.id for h in store.recall(question, limit=10).hits]
            assert f"{SESSION}#3" not in found and f"{SESSION}#4" not in found, (question, found)
        assert [h.id for h in store.recall("session end docs build").hits][:1] == [f"{SESSION}#1"]
    finally:
        store.close()


DECISION = "Chose tox over nox for the docs build: tox -e docs resolves the Sphinx cross-references in one pass."


def post_tool(repo: Path, session: str, tool: str, tool_input: dict, response: object, call: str) -> None:
    """What Claude Code sends its PostToolUse hook for one call (an MCP tool's response is a list of content blocks)."""
    hooks.handle("post-tool", {"session_id": session, "transcript_path": f"/tmp/{session}.jsonl", "cwd": str(repo),
                               "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": tool,
                               "tool_input": tool_input, "tool_response": response, "tool_use_id": call})


async def test_a_remembered_decision_is_the_first_hit_for_its_own_words_after_a_session_with_hooks(repo: Path):
    """A Claude Code session as its hooks and its MCP server see it: tool calls recorded by the PostToolUse hook, a
    decision remembered through the server (and echoed to the hook), the session's end. Recall for the decision's own
    words finds the decision first, not the hook's copy of the call or the session's end."""
    from mcp import Client

    from repo_memory.shells import mcp as server

    event = {"session_id": SESSION, "cwd": str(repo)}
    hooks.handle("session-start", {**event, "hook_event_name": "SessionStart", "source": "startup"})
    post_tool(repo, SESSION, "Bash", {"command": "tox -e docs", "description": "Build the docs"},
              {"stdout": "build succeeded, 2 warnings.\ndocs: commands succeeded", "stderr": "", "interrupted": False},
              "toolu_01")
    post_tool(repo, SESSION, "Read", {"file_path": str(repo / "docs/conf.py")}, {"type": "text", "file": {"content": "extensions = []"}}, "toolu_02")
    store = Store(Config.load(repo), session=SESSION)  # the server Claude Code started for this session
    async with Client(server.build(store)) as client:
        result = await client.call_tool("remember", {"text": DECISION, "kind": "decision"})
    store.close()
    assert not result.is_error, result.content
    post_tool(repo, SESSION, "mcp__repo-memory__remember", {"text": DECISION, "kind": "decision"},
              [{"type": "text", "text": json.dumps(result.structured_content)}], "toolu_03")
    hooks.handle("stop", {**event, "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": "Done."})
    hooks.handle("session-end", {**event, "hook_event_name": "SessionEnd", "reason": "other"})
    store = Store(Config.load(repo))
    try:
        store.refresh()
        remembered = (result.structured_content or {})["ids"][0]
        for words in ("tox docs cross-references", DECISION):
            assert [h.id for h in store.recall(words, limit=10).hits][:1] == [remembered], [h.id for h in store.recall(words, limit=10).hits]
        tools = [ln.record["data"]["tool"] for ln in store.lines(SESSION) if ln.record and ln.record["kind"] == "tool"]
        assert tools == ["Bash", "Read"]  # every call of the session, once: the decision is the server's record of the third
    finally:
        store.close()


async def test_later_sessions_that_recall_and_read_a_decision_leave_no_copies_that_outrank_it(repo: Path):
    """Each later session that asked for the decision had its PostToolUse hook record the call with the answer: the
    decision's text again, in a record that came first for the decision's own words (a Codex probe: the decision fell
    to second, then third, as sessions recalled it). Reading memory is not memory; the hooks leave our tools' calls to
    the server."""
    from mcp import Client

    from repo_memory.shells import mcp as server

    store = Store(Config.load(repo), session=SESSION)
    async with Client(server.build(store)) as client:
        remembered = (await client.call_tool("remember", {"text": DECISION, "kind": "decision"})).structured_content["ids"][0]
    store.close()
    for n, tool in enumerate(("mcp__repo-memory__recall", "mcp__repo_memory__read", "mcp__plugin_repo-memory_repo-memory__recall")):
        later = f"9c0e1d2f-3a4b-4c5d-8e6f-70819a2b3c{n:02d}"
        store = Store(Config.load(repo), session=later)
        async with Client(server.build(store)) as client:
            args = {"ref": remembered} if tool.endswith("read") else {"query": "how do we build the docs"}
            answer = await client.call_tool(tool.rsplit("__", 1)[1], args)
        store.close()
        assert remembered in json.dumps(answer.structured_content)  # the answer holds the decision
        post_tool(repo, later, "ToolSearch", {"query": "select:mcp__repo-memory__recall", "max_results": 5},  # Claude Code loading our tools
                  {"matches": ["mcp__repo-memory__recall"], "query": "select:mcp__repo-memory__recall"}, f"toolu_0{n}")
        post_tool(repo, later, tool, args, [{"type": "text", "text": json.dumps(answer.structured_content)}], f"toolu_1{n}")
        post_tool(repo, later, "Bash", {"command": "tox -e docs"}, {"stdout": "build succeeded", "stderr": ""}, f"toolu_2{n}")
    store = Store(Config.load(repo))
    try:
        store.refresh()
        for words in ("tox docs cross-references", "which tool resolves the Sphinx cross-references", DECISION):
            found = [h.id for h in store.recall(words, limit=10).hits]
            assert found[:1] == [remembered], (words, found)
        for n in range(3):
            logged = [ln.record for ln in store.lines(f"9c0e1d2f-3a4b-4c5d-8e6f-70819a2b3c{n:02d}") if ln.record]
            assert [r["data"]["tool"] for r in logged] == ["Bash"], logged
    finally:
        store.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.slow
def test_in_a_real_claude_code_session_the_remembered_decision_is_the_first_hit_for_its_own_words(repo: Path, tmp_path: Path,
                                                                                               monkeypatch: pytest.MonkeyPatch):
    """The same, inside the real Claude Code (a scripted model on loopback): it runs a shell command, remembers the
    decision through repo-memory's server, and ends; every hook setup installed fires as it does for a user."""
    from click.testing import CliRunner

    from repo_memory.shells.cli import cli
    from tests.conftest import git
    from tests.harness.clis import claude, records
    from tests.harness.fake_anthropic import FakeAnthropic, tool_use

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    assert CliRunner().invoke(cli, ["--root", str(repo), "setup", "claude-code"], catch_exceptions=False).exit_code == 0
    turns = [tool_use("mcp__repo-memory__remember", {"text": DECISION, "kind": "decision"}), "Noted the decision."]
    with FakeAnthropic(turns) as api:
        done = claude(repo, home, api, "Remember why we build the docs with tox.")
    assert done.returncode == 0, done.stderr[-2000:]
    logged = records(repo)
    decision = next(r["id"] for r in logged if r["kind"] == "decision" and r.get("text") == DECISION)
    store = Store(Config.load(repo))
    try:
        store.refresh()
        for words in ("tox docs cross-references", DECISION):
            assert [h.id for h in store.recall(words, limit=10).hits][:1] == [decision], [h.id for h in store.recall(words, limit=10).hits]
    finally:
        store.close()
    assert not [r for r in logged if r["kind"] == "tool" and "remember" in str(r.get("data", {}).get("tool"))], logged  # no echo


def test_after_a_compaction_the_briefing_still_gives_the_agents_last_checkpoint_not_the_hooks_note(repo: Path):
    """The PreCompact hook's bookkeeping summary ("The harness compacted its context …") became the next session's
    "last checkpoint", in place of the summary the agent wrote (a Claude Code probe, after /compact)."""
    store = Store(Config.load(repo), session=SESSION)
    done = store.remember("Added the cache layer with a TTL of 300 s.", kind="decision")
    store.checkpoint("Cache layer done: TTL 300 s, invalidated on write.", [done[0]["id"]], SESSION)
    store.remember("Started on the metrics.", kind="note")
    store.close()
    hooks.handle("pre-compact", {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "PreCompact", "trigger": "manual",
                                 "custom_instructions": ""})
    later = Store(Config.load(repo), session="a-later-session")
    try:
        later.refresh()
        briefing = later.briefing()
    finally:
        later.close()
    assert "Cache layer done: TTL 300 s" in briefing and "compacted its context" not in briefing, briefing


@pytest.mark.slow
def test_claude_codes_own_error_messages_are_not_imported_as_what_the_agent_said(repo: Path, tmp_path: Path):
    """Claude Code writes its own errors into the transcript as assistant messages ("Not logged in · Please run
    /login", "API Error: …", model `<synthetic>`, `isApiErrorMessage`). `log import --claude` took them for the agent's
    words and committed them as its notes. Driven for real: `claude -p` with no login, then the import."""
    import subprocess
    import sys

    from tests.conftest import git
    from tests.harness.clis import base_env, cli_tool, records, run

    home = tmp_path / "home"
    home.mkdir()
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    done = run([cli_tool("claude"), "-p", "Why does the docs build use tox?"], repo, base_env(home))
    transcript = next((home / ".claude/projects").rglob("*.jsonl")).read_text(encoding="utf-8")
    assert '"isApiErrorMessage":true' in transcript.replace(" ", ""), (done.stdout, transcript[-2000:])  # what the CLI wrote
    env = {**base_env(home), "REPO_MEMORY_KEY_DIR": str(tmp_path / "keys")}
    imported = subprocess.run([str(Path(sys.executable).parent / "repo-memory"), "log", "import", "--claude"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr
    texts = [r.get("text", "") for r in records(repo)]
    assert "Why does the docs build use tox?" in texts, texts  # what the person asked is kept
    assert not [t for t in texts if "login" in t.lower() or "api error" in t.lower()], texts
