"""A session's own file-tool edit of a skill, seen by the hooks its server answers (`hooks: mcp`), is a version that
session saw: its next skill_write goes ahead. Someone else's change — another session's write, a person's edit — made
before that edit or after it is not, and the update waits for a read (or for the person's commit), as with no edit."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import ConflictError
from repo_memory.shells import hooks

from tests.conftest import git, write_skill_file

STEP, OWN = "1. run it", "1. run it twice"


@pytest.fixture(params=["off", "auto"])
def config(repo: Path, request: pytest.FixtureRequest) -> Config:
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    (repo / ".agents/repo-memory.toml").write_text(f'commit = "{request.param}"\n', encoding="utf-8")
    return Config.load(repo, env={**os.environ, "REPO_MEMORY_COMMIT_WINDOW_SECONDS": "60"})


@pytest.fixture
def session(config: Config) -> Iterator[Store]:
    store = Store(config, session="sA")
    yield store
    store.close()


def start(store: Store, status: str) -> Path:
    """Skill deploy as the session last had it: a draft it created with skill_write (`draft`; `flushed`: and the memory
    commit holding it landed), or an active skill a person committed, which it read (`active`)."""
    if status == "active":
        path = write_skill_file(store.root, "deploy", "How we deploy; use when shipping.", STEP,
                                extra="metadata:\n  status: active\n")
        git(store.root, "add", "-A")
        git(store.root, "commit", "-q", "-m", "skills")
        store.read("skill:deploy")
        return path
    store.write_skill("deploy", "How we deploy; use when shipping.", STEP, actor="agent", new=True)
    if status == "flushed":
        store.flush()
    return store.root / ".agents/skills/deploy/SKILL.md"


def edit(store: Store, path: Path, form: str, old: str = STEP, new: str = OWN, during: Callable[[], None] | None = None) -> None:
    """The session's own tool call changing `old` to `new` in SKILL.md, its server answering the call's hooks: a shell
    `sed -i`, Claude Code's Edit tool, or its Write tool (the whole file); `during`: what happens while the call runs on."""
    rel = path.relative_to(store.root).as_posix()
    inputs = {"sed": {"command": f"sed -i 's/{old}/{new}/' {rel}"},
              "Edit": {"file_path": str(path), "old_string": old, "new_string": new},
              "Write": {"file_path": str(path), "content": path.read_text(encoding="utf-8").replace(old, new)}}
    call = {"session_id": store.session, "cwd": str(store.root), "tool_name": "Bash" if form == "sed" else form,
            "tool_use_id": "t1", "tool_input": inputs[form]}
    hooks.run(store, "pre-tool", {**call, "hook_event_name": "PreToolUse"})
    if form == "sed":
        subprocess.run(["bash", "-c", inputs[form]["command"]], cwd=store.root, capture_output=True, check=True)
    else:
        path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    if during is not None:
        during()
    hooks.run(store, "post-tool", {**call, "hook_event_name": "PostToolUse", "tool_response": {"stdout": ""}})


@pytest.mark.parametrize("form", ["sed", "Edit", "Write"])
@pytest.mark.parametrize("status", ["draft", "flushed", "active"])
def test_a_sessions_own_edit_of_a_skill_counts_as_seen_by_its_next_update(session: Store, status: str, form: str):
    """Before: a draft's edit was refused ("changed since this session last read") until the agent read its own
    change, and in commit = auto, once the draft's commit had landed, taken for a person's edit in progress."""
    path = start(session, status)
    edit(session, path, form)
    assert OWN in path.read_text(encoding="utf-8")
    done = session.write_skill("deploy", None, f"{OWN}\n2. then check", actor="agent")
    assert done.created is False and done.status == "draft"
    assert "2. then check" in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("form", ["sed", "Edit"])
@pytest.mark.parametrize("status", ["draft", "active"])
@pytest.mark.parametrize("who", ["session", "person"])
def test_someone_elses_change_before_the_sessions_own_edit_still_waits_for_a_read(session: Store, status: str, form: str,
                                                                                  who: str):
    """Session B's write, or a person's edit no commit holds, came between session A's read (or write) and A's own
    edit: A's edit was made over a version A never saw, so A's next update is refused and B's words stay."""
    path = start(session, status)
    other = Store(session.config, session="sB") if who == "session" else None
    try:
        if other is not None:
            other.read("skill:deploy")
            other.write_skill("deploy", None, f"{STEP}\n2. warm the cache (B's step)", actor="agent")
        else:
            path.write_text(path.read_text(encoding="utf-8") + "2. warm the cache (B's step)\n", encoding="utf-8")
        edit(session, path, form)
        with pytest.raises(ConflictError, match="changed since this session last read|a person's edit in progress"):
            session.write_skill("deploy", None, f"{OWN}\n2. then check", actor="agent")
        assert "B's step" in path.read_text(encoding="utf-8") and OWN in path.read_text(encoding="utf-8")
    finally:
        if other is not None:
            other.close()


@pytest.mark.parametrize("status", ["draft", "active"])
def test_someone_elses_change_after_the_sessions_own_edit_still_waits_for_a_read(session: Store, status: str):
    """The session's own edit counts as seen, not what another session writes over it afterwards."""
    path = start(session, status)
    edit(session, path, "sed")
    other = Store(session.config, session="sB")
    try:
        other.read("skill:deploy")
        other.write_skill("deploy", None, f"{OWN}\n2. warm the cache (B's step)", actor="agent")
        with pytest.raises(ConflictError, match="changed since this session last read"):
            session.write_skill("deploy", None, f"{OWN}\n2. then check", actor="agent")
        assert "B's step" in path.read_text(encoding="utf-8")
    finally:
        other.close()


@pytest.mark.parametrize("status", ["draft", "active"])
def test_another_sessions_write_while_the_sessions_edit_runs_on_still_waits_for_a_read(session: Store, status: str):
    """Session B wrote while A's call (`sed … && make test`) still ran: what the call left was credited to A as seen,
    and A's next update replaced B's step unseen."""
    path = start(session, status)
    other = Store(session.config, session="sB")
    refused: list[str] = []

    def b_writes() -> None:
        other.read("skill:deploy")
        try:
            other.write_skill("deploy", None, f"{OWN}\n2. warm the cache (B's step)", actor="agent")
        except ConflictError as exc:  # commit = auto, active: A's edit, not redrafted yet, is one no commit holds
            refused.append(str(exc))

    try:
        edit(session, path, "sed", during=b_writes)
        if status == "active" and session.config.commit == "auto":
            assert refused and "no commit holds" in refused[0], refused  # B never wrote: nothing of B's to lose
            return
        assert not refused, refused
        with pytest.raises(ConflictError, match="changed since this session last read"):
            session.write_skill("deploy", None, f"{OWN}\n2. then check", actor="agent")
        assert "B's step" in path.read_text(encoding="utf-8")
    finally:
        other.close()


def test_a_sessions_own_edit_of_a_skill_checked_out_with_crlf_counts_as_seen(session: Store):
    """core.autocrlf=true: HEAD's blob (LF) was compared with the CRLF bytes on disk, so the session's own edit of a
    committed skill it had not read was refused as "changed since this session last read"."""
    path = start(session, "active")
    git(session.root, "config", "core.autocrlf", "true")
    path.unlink()
    git(session.root, "checkout", "--", ".agents/skills/deploy/SKILL.md")
    assert b"\r\n" in path.read_bytes() and git(session.root, "status", "--porcelain") == ""
    fresh = Store(session.config, session="sC")  # a session that never read it: a committed version is updatable unseen
    try:
        edit(fresh, path, "sed")
        done = fresh.write_skill("deploy", None, f"{OWN}\n2. then check", actor="agent")
        assert done.status == "draft" and "2. then check" in path.read_text(encoding="utf-8")
    finally:
        fresh.close()


def test_an_agents_edit_over_a_persons_uncommitted_step_leaves_the_step_out_of_its_commit(session: Store):
    """commit = auto: the redraft of an active skill committed the person's unsaved step as "edited by an agent, back to
    draft" (origin: agent), where skill_write refuses to ("would commit them as yours")."""
    path = start(session, "active")
    path.write_text(path.read_text(encoding="utf-8") + "2. person step, not committed yet\n", encoding="utf-8")
    edit(session, path, "sed")
    session.flush()  # with commit = off nothing is committed at all: the step stays out of git all the same
    assert "person step" not in git(session.root, "log", "-p", "--", ".agents/skills/deploy/SKILL.md")
    text = path.read_text(encoding="utf-8")
    assert "person step" in text and OWN in text and "status: draft" in text
