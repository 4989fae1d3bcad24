"""The hooks with a settings file they cannot read (`.agents/repo-memory.toml` not valid TOML, a value the schema
refuses, a bad REPO_MEMORY_* variable): the reserved places need only the root and the git dir, so the PreToolUse guard
holds and says the file is broken; the other hooks run on the settings HEAD commits (else the defaults) and say so,
so no tool call goes unrecorded."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from repo_memory.formats import experience

from tests.conftest import git
from tests.shells.test_pretool import EXE, denied, hook

BROKEN = {
    "not TOML": ('review = "optional\n', {}, "not valid TOML"),
    "refused by the schema": ('review = "maybe"\n', {}, "is invalid"),
    "a bad variable": ("", {"REPO_MEMORY_RECALL_LIMIT": "many"}, "REPO_MEMORY_RECALL_LIMIT"),
}


def broken_hook(repo: Path, event: str, payload: dict, env: dict[str, str]) -> dict:
    done = subprocess.run([EXE, "hook", event], input=json.dumps({"cwd": str(repo), **payload}), capture_output=True,
                          text=True, cwd=repo, timeout=60, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("text, env, said", BROKEN.values(), ids=BROKEN.keys())
def test_the_guard_holds_with_a_settings_file_it_cannot_read_and_the_refusal_says_the_file_is_broken(
        repo: Path, logged: Path, text: str, env: dict[str, str], said: str):
    if text:
        (repo / ".agents/repo-memory.toml").write_text(text, encoding="utf-8")
    rel = logged.relative_to(repo).as_posix()
    for tool, tool_input in [("Bash", {"command": f"echo x >> {rel}"}),
                             ("Bash", {"command": "cp /tmp/forged .git/repo-memory/accepted-loops.json"}),
                             ("Bash", {"command": "repo-memory accept deploy"}),
                             ("Write", {"file_path": str(logged), "content": "{}"})]:
        why = denied(broken_hook(repo, "pre-tool", {"tool_name": tool, "tool_input": tool_input, "session_id": "s1"}, env))
        assert why.startswith(f"repo-memory refused this {tool} call:"), (tool_input, why)
        assert said in why, why
    assert broken_hook(repo, "pre-tool", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "session_id": "s1"}, env) == {}


@pytest.mark.parametrize("text, env, said", BROKEN.values(), ids=BROKEN.keys())
def test_a_session_under_a_settings_file_that_cannot_be_read_is_told_so_and_its_tool_calls_are_recorded(
        repo: Path, text: str, env: dict[str, str], said: str):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    if text:
        (repo / ".agents/repo-memory.toml").write_text(text, encoding="utf-8")
    base = {"session_id": "bk1", "cwd": str(repo)}
    start = broken_hook(repo, "session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"}, env)
    assert said in start.get("systemMessage", ""), start
    assert said in start["hookSpecificOutput"]["additionalContext"], start
    broken_hook(repo, "post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                    "tool_input": {"command": "make test"}, "tool_response": {"stdout": "ok"}}, env)
    broken_hook(repo, "session-end", {**base, "hook_event_name": "SessionEnd", "reason": "exit"}, env)
    [log] = (repo / experience.EXPERIENCE_DIR).rglob("bk1*.jsonl")
    assert "make test" in log.read_text(encoding="utf-8")


def test_the_settings_head_commits_count_while_the_file_cannot_be_read(repo: Path):
    """`commit = "off"` committed, then a typo: the session's records are not committed on the branch by the defaults."""
    (repo / ".agents/repo-memory.toml").write_text('commit = "off"\n', encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    (repo / ".agents/repo-memory.toml").write_text('commit = "off\n', encoding="utf-8")
    base = {"session_id": "bk2", "cwd": str(repo)}
    hook(repo, "post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                             "tool_input": {"command": "make test"}, "tool_response": {"stdout": "ok"}})
    hook(repo, "session-end", {**base, "hook_event_name": "SessionEnd", "reason": "exit"})
    [log] = (repo / experience.EXPERIENCE_DIR).rglob("bk2*.jsonl")
    assert "make test" in log.read_text(encoding="utf-8")
    assert git(repo, "log", "--format=%s").splitlines() == ["init"]
