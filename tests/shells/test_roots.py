"""Which repository `repo-memory serve` serves when the client names its workspace as an MCP root: the real server as a
child over stdio, the SDK's client answering `roots/list`, a home folder kept in git (dotfiles, where `repo-memory
init` never ran) as the place a client starts its servers, and a project as the client's root."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import ErrorData, ListRootsResult, Root
from mcp_types import PaginatedRequestParams, Request, Result
from pydantic import ConfigDict

from tests.conftest import git, write_skill_file
from tests.shells.stdio_server import StdioServer

SERVE = [sys.executable, "-m", "repo_memory", "serve"]
ACTIVE = "metadata:\n  status: active\n  origin: human\n"


class ListSkills(Request[PaginatedRequestParams, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: PaginatedRequestParams


class Answer(Result):
    model_config = ConfigDict(extra="allow")


@pytest.fixture
def dotfiles(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    git(home, "init", "-q", "-b", "main")
    (home / ".bashrc").write_text("# my dotfiles\n", encoding="utf-8")
    git(home, "add", ".bashrc")
    git(home, "commit", "-q", "-m", "dotfiles")
    return home


@pytest.fixture
def workspace(repo: Path) -> Path:
    write_skill_file(repo, "release-checklist", "How we cut a release: bump, tag, publish.", "1. Tag\n2. Publish", extra=ACTIVE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "project")
    return repo


def client(cwd: Path, root: Path | None, mode: str) -> Client:
    async def roots(_context: object) -> ListRootsResult:
        assert root is not None
        return ListRootsResult(roots=[Root(uri=root.as_uri(), name="the project")])

    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(cwd), env={**os.environ})
    return Client(params, list_roots_callback=roots if root else None, mode=mode)


def misbehaving(cwd: Path, answer: str, asked: list[str], errlog: Any, root: Path | None = None) -> Client:
    """A client that offers roots and answers roots/list with nothing (Claude Code did: anthropics/claude-code#3315), with
    an error, with no roots at all, or (`slow`) with `root` after 3 s; `asked` gets each question, the server's stderr
    goes to `errlog`."""
    async def roots(_context: object) -> ListRootsResult | ErrorData:
        asked.append("roots/list")
        if answer == "never":
            await anyio.sleep_forever()
        if answer == "slow" and root is not None:
            await anyio.sleep(3)
            return ListRootsResult(roots=[Root(uri=root.as_uri(), name="the project")])
        if answer == "error":
            return ErrorData(code=-32601, message="Method not found")
        return ListRootsResult(roots=[])

    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(cwd), env={**os.environ})
    return Client(stdio_client(params, errlog=errlog), list_roots_callback=roots, mode="legacy")


def logged(repo: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(repo.glob(".agents/experience/*/*.jsonl")))


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # 2025-11-25 (what Cursor, VS Code and Gemini CLI speak), or 2026-07-28
def test_a_server_started_inside_another_repository_writes_to_the_root_the_client_names(dotfiles: Path, workspace: Path, mode: str):
    """Started in a dotfiles repository, the server never asked for the client's roots: the first call was answered at
    start-up from the dotfiles' store, and every later one too; the record was written and committed there."""
    async def session() -> tuple[Any, Any]:
        async with client(dotfiles, workspace, mode) as session:
            written = await session.call_tool("remember", {"text": "deploys are blue/green"})  # at once: the start-up front's
            found = await session.call_tool("recall", {"query": "cut a release"})
            return written, found

    written, found = anyio.run(session)
    assert not written.is_error, written.content
    assert found.structured_content["hits"][0]["id"] == "skill:release-checklist"
    assert "blue/green" in logged(workspace)
    assert not (dotfiles / ".agents").exists()
    assert git(dotfiles, "log", "--format=%s") == "dotfiles\n"
    assert git(dotfiles, "status", "--porcelain") == ""


def test_a_client_whose_roots_hold_no_repository_is_not_served_the_one_it_was_started_in(dotfiles: Path, tmp_path: Path):
    """The client names its workspace, a folder outside git: memory went to the dotfiles repository it never named."""
    notes = tmp_path / "notes"
    notes.mkdir()

    async def session() -> Any:
        async with client(dotfiles, notes, "legacy") as session:
            return await session.call_tool("remember", {"text": "not for the dotfiles"})

    refused = anyio.run(session)
    text = " ".join(getattr(c, "text", "") for c in refused.content)
    assert refused.is_error and str(notes) in text and "repo-memory init" in text and "--root" in text, text
    assert not (dotfiles / ".agents").exists()
    assert git(dotfiles, "status", "--porcelain") == ""


def test_a_client_that_offers_no_roots_is_served_the_working_directorys_repository_and_told_init_never_ran_there(dotfiles: Path):
    """Codex names no roots and starts the server in its session's folder: that folder's repository is the one served,
    as before, its first call answered by the start-up front as before, and stderr says that init never ran in it."""
    server = StdioServer(dotfiles)
    (written,), code = server.session(("remember", {"text": "a note for the repository I was started in"}))
    assert not written.get("isError"), written
    assert code == 0
    assert "a note for the repository" in logged(dotfiles)
    stderr = server.stderr.decode(errors="replace")
    assert "repo-memory init" in stderr and str(dotfiles) in stderr, stderr
    assert "before the MCP SDK was ready" in stderr, stderr


@pytest.mark.parametrize("start", ["outside any repository", "inside another repository"])
def test_before_any_tool_call_skills_resources_and_prompts_come_from_the_clients_root(dotfiles: Path, workspace: Path,
                                                                                      tmp_path: Path, start: str):
    """Only tool calls asked the client for its roots: skills/list, resources/read and prompts/get said "the client
    named no repository as its root" (it was never asked), or read the dotfiles repository, until the first tool call."""
    cwd = tmp_path / "elsewhere" if start == "outside any repository" else dotfiles
    cwd.mkdir(exist_ok=True)

    async def session() -> tuple[dict[str, Any], str, str]:
        async with client(cwd, workspace, "legacy") as session:
            listed = (await session.session.send_request(ListSkills(params=PaginatedRequestParams()), Answer)).model_extra or {}
            read = await session.read_resource("skill://release-checklist")
            prompt = await session.get_prompt("use-skill", {"name": "release-checklist"})
            return listed, getattr(read.contents[0], "text", ""), getattr(prompt.messages[0].content, "text", "")

    listed, read, prompt = anyio.run(session)
    assert [s["frontmatter"]["name"] for s in listed["skills"]] == ["release-checklist"]
    assert "1. Tag" in read
    assert "1. Tag" in prompt and "could not be loaded" not in prompt


def test_under_2026_07_28_resources_and_prompts_ask_for_the_roots_in_a_round_trip_as_tool_calls_do(workspace: Path, tmp_path: Path):
    """The modern protocol has no request from server to client outside a round trip: resources/read and prompts/get ask
    for the roots with an input-required result, as tool calls do; skills/list cannot, and says what to do."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def session() -> tuple[str, str, MCPError]:
        async with client(elsewhere, workspace, "auto") as session:
            with pytest.raises(MCPError) as refused:
                await session.session.send_request(ListSkills(params=PaginatedRequestParams()), Answer)
            read = await session.read_resource("skill://release-checklist")
            prompt = await session.get_prompt("use-skill", {"name": "release-checklist"})
            return getattr(read.contents[0], "text", ""), getattr(prompt.messages[0].content, "text", ""), refused.value

    read, prompt, refused = anyio.run(session)
    assert "1. Tag" in read and "1. Tag" in prompt
    assert "named no repository" not in str(refused) and "roots" in str(refused) and "--root" in str(refused), str(refused)


@pytest.mark.parametrize(("answer", "why"), [("never", "did not answer"), ("error", "Method not found"), ("empty", "no folder")])
def test_a_client_whose_roots_answer_names_no_folder_is_served_the_working_directorys_repository_at_once(
        dotfiles: Path, tmp_path: Path, answer: str, why: str):
    """roots/list was asked with no bound: a client that never answered got no answer to its tool call (150 s and more,
    where the release before answered in 0.4 s); an error answer failed the call as "Method not found"; an empty list
    refused it. The working directory's repository is served, as for a client that offers no roots, after one question."""
    asked: list[str] = []

    async def session() -> list[Any]:
        with (tmp_path / "stderr").open("w", encoding="utf-8") as errlog:
            async with misbehaving(dotfiles, answer, asked, errlog) as session:
                answers = []
                for tool, arguments in (("remember", {"text": "a note kept where I was started"}), ("recall", {"query": "note"})):
                    with anyio.fail_after(30):  # the old hang, failing here instead of the suite's timeout
                        answers.append(await session.call_tool(tool, arguments))
                return answers

    written, found = anyio.run(session)
    assert not written.is_error and not found.is_error, (written.content, found.content)
    assert len(asked) == 1  # once per server: the second call was not asked again
    assert "a note kept where I was started" in logged(dotfiles)
    stderr = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert f"serving {dotfiles}" in stderr and why in stderr, stderr


def test_a_client_that_never_answers_roots_outside_any_repository_hears_why_at_once_and_is_asked_once(tmp_path: Path):
    """Started outside any repository, a client that never answered roots/list waited for ever on every call."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    asked: list[str] = []

    async def session() -> list[Any]:
        with (tmp_path / "stderr").open("w", encoding="utf-8") as errlog:
            async with misbehaving(elsewhere, "never", asked, errlog) as session:
                answers = []
                for _ in range(2):
                    with anyio.fail_after(40):  # ROOTS_WAIT (10 s), then opening the store on a loaded machine
                        answers.append(await session.call_tool("remember", {"text": "nowhere to keep this"}))
                return answers

    for refused in anyio.run(session):
        text = " ".join(getattr(c, "text", "") for c in refused.content)
        assert refused.is_error and "not inside a git repository" in text and "--root" in text, text
        assert "did not answer" in text, text
    assert len(asked) == 1


def test_skills_listed_first_by_a_client_that_never_answers_roots_come_from_the_working_directorys_repository(dotfiles: Path,
                                                                                                           tmp_path: Path):
    """A skills-extension client lists skills before any tool call: that request, too, waited for ever on roots/list."""
    write_skill_file(dotfiles, "shell-setup", "How my shell is set up.", "1. Link", extra=ACTIVE)
    asked: list[str] = []

    async def session() -> dict[str, Any]:
        with (tmp_path / "stderr").open("w", encoding="utf-8") as errlog:
            async with misbehaving(dotfiles, "never", asked, errlog) as session:
                with anyio.fail_after(40):  # ROOTS_WAIT (10 s), then opening the store on a loaded machine
                    return (await session.session.send_request(ListSkills(params=PaginatedRequestParams()), Answer)).model_extra or {}

    listed = anyio.run(session)
    assert [s["frontmatter"]["name"] for s in listed["skills"]] == ["shell-setup"]
    assert len(asked) == 1


def test_a_client_slow_to_name_its_roots_is_served_the_repository_it_names(dotfiles: Path, workspace: Path, tmp_path: Path):
    """With a 2 s bound, a client that named its workspace after 2.5 s had its whole session written and committed in
    the dotfiles repository it was started in (init never ran there), and recall missed the workspace's memory."""
    asked: list[str] = []

    async def session() -> tuple[Any, Any]:
        with (tmp_path / "stderr").open("w", encoding="utf-8") as errlog:
            async with misbehaving(dotfiles, "slow", asked, errlog, root=workspace) as session:
                written = await session.call_tool("remember", {"text": "deploys are blue/green"})
                return written, await session.call_tool("recall", {"query": "cut a release"})

    written, found = anyio.run(session)
    assert not written.is_error, written.content
    assert found.structured_content["hits"][0]["id"] == "skill:release-checklist"
    assert "blue/green" in logged(workspace) and not (dotfiles / ".agents").exists()


def test_serve_with_no_input_says_what_it_would_serve_and_fails_for_a_root_it_cannot(tmp_path: Path, workspace: Path):
    """`repo-memory serve < /dev/null`, which the README gives to see start-up errors: outside any repository it said
    only "the session never needed the MCP SDK: it was not loaded", and a --root that does not exist ended with 0."""
    import subprocess

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("REPO_MEMORY_ROOT", "CLAUDE_PROJECT_DIR")}

    def serve(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*SERVE, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60)

    outside = serve(cwd=elsewhere)
    assert outside.returncode == 0, outside.stderr
    assert f"no git repository at {elsewhere}" in outside.stderr and "MCP roots" in outside.stderr, outside.stderr
    assert "--root" in outside.stderr, outside.stderr
    missing = serve("--root", str(tmp_path / "nonexistent"), cwd=elsewhere)
    assert missing.returncode == 1 and "cannot serve" in missing.stderr, missing.stderr
    served = serve(cwd=workspace)
    assert served.returncode == 0 and "no git repository" not in served.stderr, served.stderr
