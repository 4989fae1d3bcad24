"""End to end over stdio: the real `repo-memory serve` process, the SDK's stdio client, and the MCP Inspector CLI."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ListRootsResult, Root

from repo_memory.config import Config
from repo_memory.core.store import Store
from tests.conftest import git, kept, write_skill_file

pytestmark = pytest.mark.anyio
SERVE = [sys.executable, "-m", "repo_memory", "serve"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def seeded_repo(repo: Path) -> Path:
    write_skill_file(repo, "release-checklist", "How we cut a release: bump, tag, publish.", "1. Tag\n2. Publish")
    return repo


@pytest.mark.slow
async def test_serve_over_stdio_answers_recall_and_keeps_stdout_for_mcp(seeded_repo: Path):
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(seeded_repo), env={**os.environ})
    async with Client(params) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        result = await client.call_tool("recall", {"query": "publish a release"})
    assert {"recall", "read", "skill_write"} <= tools
    assert result.structured_content["hits"][0]["id"] == "skill:release-checklist"


NAMED = {  # a --root or REPO_MEMORY_ROOT the server cannot open, and the words the agent must be shown
    "a folder outside any repository": ("plain", "git init"),
    "a folder that does not exist": ("gone", "does not exist"),
    "a client variable left unexpanded": ("${workspaceFolder}", "did not expand"),
}


@pytest.mark.parametrize("how", ["--root", "REPO_MEMORY_ROOT"])
@pytest.mark.parametrize("case", NAMED)
def test_a_named_root_the_server_cannot_open_is_said_on_every_tool_call_and_the_server_stays(tmp_path: Path, case: str,
                                                                                                 how: str):
    """The front answered initialize and tools/list, then the process exited 1 at the first tool call: the client saw
    "Connection closed" and the reason went to stderr only."""
    from tests.shells.stdio_server import StdioServer

    folder, said = NAMED[case]
    (tmp_path / "plain").mkdir()
    named = folder if folder.startswith("$") else str(tmp_path / folder)
    args, env = (("--root", named), {}) if how == "--root" else ((), {"REPO_MEMORY_ROOT": named})
    server = StdioServer(tmp_path, env=env, args=args)
    answers, code = server.session(("recall", {"query": "release"}), ("remember", {"text": "a note"}))
    stderr = server.stderr.decode(errors="replace")
    for answer in answers:
        text = answer["content"][0]["text"]
        assert answer["isError"] and folder in text and said in text, text
    # served to its end, then 1: what was named could not be served (`repo-memory serve < /dev/null` says so by its status)
    assert code == 1 and "Traceback" not in stderr and said in stderr, stderr[-2000:]


async def test_started_outside_a_repository_the_server_serves_the_clients_root_or_says_what_to_do(seeded_repo: Path, tmp_path: Path):
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(elsewhere), env={**os.environ})
    async with Client(params) as client:  # no roots offered
        lost = await client.call_tool("recall", {"query": "publish a release"})
        lost_write = await client.call_tool("remember", {"text": "nowhere to go"})

    async def roots(_context: object) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=seeded_repo.as_uri(), name="the project")])

    async with Client(params, list_roots_callback=roots) as client:  # the first call a write: it failed, lost
        written = await client.call_tool("remember", {"text": "the release is cut on Thursdays"})
        found = await client.call_tool("recall", {"query": "publish a release"})
    for failed in (lost, lost_write):
        text = " ".join(getattr(c, "text", "") for c in failed.content)
        assert failed.is_error and "not inside a git repository" in text and "--root" in text
    assert not written.is_error, written.content
    assert not found.is_error and found.structured_content["hits"][0]["id"] == "skill:release-checklist"


def inspector(repo: Path, *args: str) -> dict:
    command = ["npx", "-y", "@modelcontextprotocol/inspector", "--cli", *SERVE, *args]
    proc = subprocess.run(command, cwd=repo, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_mcp_inspector_cli_lists_tools_and_calls_recall(seeded_repo: Path):
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed, so the MCP Inspector CLI cannot run (install Node.js 20+)")
    listed = inspector(seeded_repo, "--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} == {"recall", "read", "skill_write", "remember", "checkpoint", "loop_start", "loop_step", "loop_status", "history", "feedback"}
    called = inspector(seeded_repo, "--method", "tools/call", "--tool-name", "recall", "--tool-arg", "query=publish a release")
    assert called["isError"] is False
    assert called["structuredContent"]["hits"][0]["id"] == "skill:release-checklist"


@pytest.mark.parametrize("where", ["loop spec", "own session log"])
def test_a_hard_linked_memory_file_is_refused_with_a_warning_and_the_server_still_serves(repo: Path, tmp_path: Path, where: str):
    from tests.shells.stdio_server import StdioServer

    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    outside = tmp_path / "outside.md"
    session = "linked-session"
    if where == "loop spec":
        outside.write_text("---\nname: linked\ndescription: A loop.\n---\nBody.\n", encoding="utf-8")
        (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
        linked = repo / ".agents/loops/linked.md"
    else:
        first = StdioServer(repo, env={"REPO_MEMORY_SESSION": session})
        first.initialize()
        assert not first.call("remember", {"text": "Before the link."}).get("isError")
        first.close_input()
        assert first.wait(30) == 0
        linked = next((repo / ".agents/experience").glob(f"*/{kept(repo, session)}.jsonl"))
        outside = tmp_path / "outside.jsonl"
    if where == "loop spec":
        os.link(outside, linked)
    else:
        os.link(linked, outside)  # the log now shares its contents with a file outside the repository
    server = StdioServer(repo, env={"REPO_MEMORY_SESSION": session})
    try:
        server.initialize(timeout=30)
        recalled = server.call("recall", {"query": "before the link"})
        written = server.call("remember", {"text": "After the link."})
    finally:
        server.close_input()
        code = server.wait(30)
    assert not recalled.get("isError"), recalled
    assert code == 0, server.stderr.decode()[-2000:]
    assert "hard-linked" in server.stderr.decode()  # said once, with what to do
    if where == "own session log":
        assert written.get("isError") and "hard-linked" in json.dumps(written)  # refused, not written through the link
        assert "After the link." not in outside.read_text(encoding="utf-8")


def test_fifos_planted_where_memory_files_belong_never_hang_the_server_or_a_command(repo: Path):
    """Opening a FIFO waits for a writer: a log, a SKILL.md, a loop spec or a cited code file that is one must be
    refused like any file that is not plain, by every process that reads it."""
    from tests.shells.stdio_server import StdioServer

    write_skill_file(repo, "deploy", "Deploy the app.", "Run deploy.sh")
    (repo / "app.py").write_text("def main():\n    pass\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    store = Store(Config.load(repo))
    store.write_skill("release", "Cut a release.", "1. tag", actor="human", anchors=["app.py::main"])
    store.remember("deploys need a green main", session="s1")
    store.close()
    os.unlink(repo / "app.py")
    os.mkfifo(repo / "app.py")
    month = next((repo / ".agents/experience").glob(f"*/{kept(repo, 's1')}.jsonl")).parent.relative_to(repo).as_posix()
    for fifo in (f"{month}/fifo.jsonl", ".agents/skills/fifo/SKILL.md", ".agents/loops/fifo.md"):
        (repo / fifo).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(repo / fifo)
    for command in (["reindex"], ["doctor"], ["verify"], ["loop", "status"], ["stale"], ["search", "deploy"], ["timeline"]):
        done = subprocess.run([sys.executable, "-m", "repo_memory", *command], cwd=repo, capture_output=True, text=True, timeout=60)
        assert "Traceback" not in done.stderr, (command, done.stderr[-2000:])
    server = StdioServer(repo)
    try:
        server.initialize(timeout=30)
        recalled = server.call("recall", {"query": "deploy green main"})
        read = server.call("read", {"ref": "skill:release"})
        written = server.call("remember", {"text": "still writing"})
    finally:
        server.close_input()
        code = server.wait(30)
    assert not recalled.get("isError") and not read.get("isError") and not written.get("isError")
    assert code == 0, server.stderr.decode()[-2000:]


def test_hook_tools_are_never_listed_yet_answer_claude_codes_mcp_tool_hooks(repo: Path):
    """What an `mcp_tool` hook sends (fields substituted as text, objects as JSON) reaches the running server's
    handlers; tools/list never offers these tools, so a model is never shown them."""
    from tests.shells.stdio_server import StdioServer

    session = "7d1f0c2a-hook-session"
    server = StdioServer(repo, env={"CLAUDE_CODE_SESSION_ID": session})
    try:
        server.initialize()
        server.send("tools/list")
        listed = [t["name"] for t in server.answer()["result"]["tools"]]
        base = {"session_id": session, "cwd": str(repo), "tool_use_id": "toolu_01"}
        post = server.call("hook_post_tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "Read",
                                              "tool_input": json.dumps({"file_path": str(repo / "README.md")}),
                                              "tool_response": json.dumps({"type": "text", "file": {"content": "hello"}})})
        log = repo / ".agents/experience/x.jsonl"
        pre = server.call("hook_pre_tool", {**base, "hook_event_name": "PreToolUse", "tool_name": "Write",
                                            "tool_input": json.dumps({"file_path": str(log), "content": "{}"})})
        stop = server.call("hook_stop", {"session_id": session, "cwd": str(repo), "hook_event_name": "Stop",
                                         "last_assistant_message": "Done.", "stop_hook_active": "false"})
    finally:
        server.close_input()
        assert server.wait(30) == 0
    assert listed and not [name for name in listed if name.startswith("hook_")]
    assert json.loads(post["content"][0]["text"]) == {} and not post.get("isError")
    decision = json.loads(pre["content"][0]["text"])["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and "append-only" in decision["permissionDecisionReason"]
    assert json.loads(stop["content"][0]["text"]) == {}  # no live loop run: nothing to drive
    store = Store(Config.load(repo), session=session)
    try:
        recorded = [ln.record for ln in store.lines(session) if ln.record]
    finally:
        store.close()
    assert [(r["kind"], r["data"]["tool"], r["source"]["tool"]) for r in recorded] == [("tool", "Read", "hook:PostToolUse")]
    assert recorded[0]["data"]["input"] == {"file_path": str(repo / "README.md")}


@contextlib.contextmanager
def unwritable(folder: Path) -> Iterator[None]:
    """`folder` refuses new files, for root too (chattr +i) or by its mode; skips where neither can be done."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
            pytest.skip("running as root where chattr +i does not work: no way to make a folder unwritable")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)


async def test_a_write_the_disk_refuses_says_where_why_and_what_to_do_on_both_paths(seeded_repo: Path):
    """An OSError reached the agent as a bare "Error executing tool remember" once the SDK answered calls."""
    logs = seeded_repo / ".agents/experience"
    logs.mkdir(parents=True, exist_ok=True)
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(seeded_repo), env={**os.environ})
    with unwritable(logs):
        async with Client(params) as client:
            early = await client.call_tool("remember", {"text": "the first call, perhaps before the SDK is ready"})
            await anyio.sleep(3)  # the SDK answers from here on
            late = await client.call_tool("remember", {"text": "a later call"})
        typed = subprocess.run([*SERVE[:-1], "log", "add", "from the command line"], cwd=seeded_repo, capture_output=True, text=True)
    assert typed.returncode == 1 and "Traceback" not in typed.stderr and "run it again" in typed.stderr, typed.stderr
    for failed in (early, late):
        text = " ".join(getattr(c, "text", "") for c in failed.content)
        assert failed.is_error and ".agents/experience" in text and ("ermission" in text or "not permitted" in text), text
        assert "nothing" in text.lower() and "call it again" in text, text


def test_a_repository_whose_git_dir_is_set_apart_by_GIT_DIR_is_served_and_its_memory_committed(tmp_path: Path):
    """GIT_DIR and GIT_WORK_TREE (no .git in the work tree): gitpython opened the work tree and found no repository, so
    recall and checkpoint failed bare, nothing was committed, and every later start died recovering the pending commit."""
    from tests.conftest import GIT_ENV, named
    from tests.shells.stdio_server import StdioServer

    work = tmp_path / "work"
    work.mkdir()
    env = {"GIT_DIR": str(tmp_path / "repo.git"), "GIT_WORK_TREE": str(work)}

    def in_git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=work, env={**os.environ, **GIT_ENV, **env}, capture_output=True, text=True,
                              check=True).stdout

    in_git("init", "-q", "-b", "main")
    in_git("commit", "-q", "--allow-empty", "-m", "first")
    for attempt in (1, 2):  # the second start recovers and commits whatever the first left
        server = StdioServer(work, env={**env, "REPO_MEMORY_SESSION": f"apart-{attempt}"})
        try:
            server.initialize()
            remembered = server.call("remember", {"text": f"the release is cut on Thursdays ({attempt})"})
            recalled = server.call("recall", {"query": "release Thursdays"})
            ids = remembered.get("structuredContent", {}).get("ids", [])  # apart-N.<clone>#1: a chosen name is kept per clone
            summary = server.call("checkpoint", {"summary": "when releases happen", "covers": ids})
        finally:
            server.close_input()
            code = server.wait(30)
        for answer in (remembered, recalled, summary):
            assert not answer.get("isError"), (answer, server.stderr.decode()[-2000:])
        assert code == 0, server.stderr.decode()[-2000:]
        found = {named(hit["id"]) for hit in recalled["structuredContent"]["hits"]}
        assert {f"apart-{n}#1" for n in range(1, attempt + 1)} <= found, found
    assert in_git("status", "--porcelain", "--", ".agents") == ""
    assert "memory" in in_git("log", "-1", "--format=%s")


STARTS = {  # what stops a server opening its repository, and the words the agent must be shown
    "a setting the schema refuses": ({}, 'review = "maybe"\n', "repo-memory.toml"),
    "a file that is not TOML": ({}, "commit = [\n", "not valid TOML"),
    "a variable that is not a number": ({"REPO_MEMORY_WRITES_PER_MINUTE": "abc"}, "", "REPO_MEMORY_WRITES_PER_MINUTE"),
    "a session id that is no file name": ({"REPO_MEMORY_SESSION": "fix login/bug"}, "", "Session id"),
}


@pytest.mark.parametrize("case", STARTS)
def test_a_repository_the_server_cannot_open_is_said_on_every_tool_call_and_the_server_stays(repo: Path, case: str):
    """The front had answered initialize, then the process died with a traceback: the agent saw the server vanish."""
    from tests.shells.stdio_server import StdioServer

    env, settings, said = STARTS[case]
    if settings:
        (repo / ".agents/repo-memory.toml").write_text(settings, encoding="utf-8")
    server = StdioServer(repo, env=env)
    answers, code = server.session(("recall", {"query": "release"}), ("remember", {"text": "a note"}))
    stderr = server.stderr.decode(errors="replace")
    for answer in answers:
        text = answer["content"][0]["text"]
        assert answer["isError"] and said in text and "start" in text, text  # the problem, and to start the server again
    # served to its end, then 1: what was named could not be served (`repo-memory serve < /dev/null` says so by its status)
    assert code == 1 and "Traceback" not in stderr and said in stderr, stderr[-2000:]


@pytest.mark.parametrize("used", [False, True])
def test_a_checkout_the_server_may_not_write_is_said_on_every_tool_call(repo: Path, used: bool):
    from tests.shells.stdio_server import StdioServer

    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    if used:  # its index exists, and sqlite may not write it
        Store(Config.load(repo)).close()
    with unwritable(repo / (".git/repo-memory" if used else ".git")):
        server = StdioServer(repo)
        (answer,), code = server.session(("recall", {"query": "release"}))
    text = answer["content"][0]["text"]
    assert answer["isError"] and ".git" in text and "writable" in text, text
    assert code == 1 and "Traceback" not in server.stderr.decode(errors="replace")  # served to its end, then 1


def test_a_session_id_the_secret_scanner_doubts_is_replaced_and_the_server_serves(repo: Path):
    from tests.shells.stdio_server import StdioServer

    doubted = "life-SIGTERM-inflight-2-1796500912"  # a test's id the high-entropy check takes for a token
    server = StdioServer(repo, env={"REPO_MEMORY_SESSION": doubted})
    (remembered,), code = server.session(("remember", {"text": "written all the same"}))
    assert not remembered.get("isError"), remembered
    assert remembered["structuredContent"]["session"] != doubted
    assert code == 0 and "REPO_MEMORY_SESSION" in server.stderr.decode(errors="replace")
    assert doubted not in "".join(path.name for path in repo.rglob("*"))


def test_a_repository_git_refuses_for_its_owner_is_reported_in_gits_words_with_the_fix(repo: Path):
    """It was 'not inside a git repository … run git init there', which sends a person the wrong way."""
    from tests.shells.stdio_server import StdioServer

    env = {"GIT_TEST_ASSUME_DIFFERENT_OWNER": "1"}  # git's own switch for the check that another user's clone trips
    (answer,), code = StdioServer(repo, env=env).session(("recall", {"query": "release"}))
    assert code == 0
    doctor = subprocess.run([*SERVE[:-1], "doctor"], cwd=repo, capture_output=True, text=True, timeout=60, env={**os.environ, **env})
    for said in (answer["content"][0]["text"], doctor.stderr):
        assert "dubious ownership" in said and f"git config --global --add safe.directory {repo}" in said, said
        assert "git init" not in said and "not inside a git repository" not in said, said


@pytest.mark.parametrize("response", [json.dumps({"stdout": "launch day \ud83d " + "y" * 20_000}), "launch day \udcff"],
                         ids=["json-text-to-a-blob", "plain-text"])
def test_an_mcp_tool_hooks_call_with_a_lone_surrogate_is_recorded_not_refused(repo: Path, response: str):
    """Claude Code substitutes a tool's output into its `mcp_tool` hook, as JSON text or as plain text (a string
    output, the last assistant message); output cut in the middle of a surrogate pair (an emoji at a truncation point)
    holds a lone surrogate there. A long JSON-text output is kept whole in a blob, which failed to encode (answered {},
    unrecorded); a plain-text field's was refused by the wire as invalid params, read by no one. Both are kept with
    U+FFFD; a model's own call with a lone surrogate is still refused with the reason (tests/shells/test_hardening.py)."""
    from tests.shells.stdio_server import StdioServer

    session = "7d1f0c2a-surrogate-session"
    server = StdioServer(repo, env={"CLAUDE_CODE_SESSION_ID": session})
    base = {"session_id": session, "cwd": str(repo)}
    answers, code = server.session(
        ("hook_post_tool", {**base, "tool_use_id": "toolu_01", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                            "tool_input": json.dumps({"command": "cat notes"}), "tool_response": response}),
        ("hook_stop", {**base, "hook_event_name": "Stop", "last_assistant_message": "Done \ud83d", "stop_hook_active": "false"}))
    assert code == 0 and all(a and not a.get("isError") for a in answers), answers
    store = Store(Config.load(repo), session=session)
    try:
        [tool] = [ln.record for ln in store.lines(session) if ln.record and ln.record["kind"] == "tool"]
    finally:
        store.close()
    assert "launch day \ufffd" in json.dumps(tool["data"], ensure_ascii=False)


@pytest.mark.parametrize("args", [["serve", "--root", "{repo}"], ["serve", "--root={repo}"], ["--root", "{repo}", "serve"]])
def test_serve_takes_the_repository_after_the_command_as_client_configs_write_it(seeded_repo: Path, tmp_path: Path, args: list[str]):
    """VS Code, Cursor and Gemini CLI configs put options after the command (`"args": ["serve", "--root",
    "${workspaceFolder}"]`); the server's own error says "pass --root PATH". It exited 2 with "No such option"."""
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "visual-studio-code", "version": "1.99"}}})
    call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "publish a release"}}})
    lines = "\n".join([hello, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), call]) + "\n"
    proc = subprocess.run([*SERVE[:-1], *(a.format(repo=seeded_repo) for a in args)], cwd=tmp_path, input=lines,
                          capture_output=True, text=True, timeout=60)
    answers = {m["id"]: m for m in map(json.loads, proc.stdout.splitlines())}
    assert proc.returncode == 0, proc.stderr
    assert "skill:release-checklist" in json.dumps(answers[2]["result"])
    helped = subprocess.run([*SERVE, "--help"], capture_output=True, text=True, timeout=60)
    assert "--root" in helped.stdout
