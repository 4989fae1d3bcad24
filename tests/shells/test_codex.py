"""Inside the real Codex CLI: the model calls repo-memory's tools, the hooks `setup codex` installs record the calls,
and the Stop hook drives a loop the agent started through MCP (Codex names its session in each call's `_meta`).

The model is a scripted Responses API on loopback (tests/harness/fake_responses.py); HOME is a tmp dir.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli
from repo_memory.formats import skills
from tests.conftest import git, write_skill_file
from tests.harness.clis import CODEX_NAMESPACE, codex, codex_home, codex_serves_code_under_test, records
from tests.harness.fake_responses import FakeResponses, function_call, function_outputs, offered_namespaces, session_id

pytestmark = pytest.mark.slow
PY = sys.executable


@pytest.fixture
def project(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    write_skill_file(repo, "release-checklist", "How we cut a release: bump the version, tag, publish.", "1. tag\n2. publish")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo, home


def attach(repo: Path, home: Path, api: FakeResponses) -> None:
    codex_home(home, api)
    # --trust stores what answering Codex's "Hooks need review" with "Trust all and continue" stores
    result = CliRunner().invoke(cli, ["--root", str(repo), "setup", "codex", "--trust"], catch_exceptions=False)
    assert result.exit_code == 0, result.output


def test_recall_round_trip_through_codex_and_its_hooks_leave_our_calls_to_the_server(project: tuple[Path, Path]):
    repo, home = project
    turns = [function_call("recall", {"query": "cut a release"}, namespace=CODEX_NAMESPACE),
             function_call("remember", {"text": "Releases are cut from main."}, namespace=CODEX_NAMESPACE),
             function_call("feedback", {"ref": "skill:release-checklist", "outcome": "helped"}, namespace=CODEX_NAMESPACE),
             function_call("read", {"ref": "skill:release-checklist"}, namespace=CODEX_NAMESPACE),  # an update reads first
             function_call("skill_write", {"name": "release-checklist", "tags": ["release"]}, namespace=CODEX_NAMESPACE),
             "Tag, then publish."]
    with FakeResponses(turns) as api:
        attach(repo, home, api)
        done = codex(repo, home, "How do we cut a release?")
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = api.main_requests()[:2]
    assert CODEX_NAMESPACE in offered_namespaces(first)  # the default model: deferred, named with the server's instructions
    assert f"- {CODEX_NAMESPACE}: repo-memory is this repository's memory" in json.dumps(first["input"]).replace("\\n", "\n")
    answer = json.loads(function_outputs(second)[0]["text"].split("Output:\n", 1)[1])
    assert answer["hits"][0]["id"] == "skill:release-checklist"
    session = session_id(first)
    logged = [r for r in records(repo) if r["_log"] == session]  # hooks and tools write the one log of the Codex session
    assert [r["text"] for r in logged if r["source"]["tool"] == "remember"] == ["Releases are cut from main."], logged
    assert [r["data"]["outcome"] for r in logged if r["kind"] == "outcome"] == ["helped"], logged  # not a log of its own
    assert {r["_log"].split("+")[0] for r in records(repo)} == {session}
    assert not any(r["kind"] == "tool" and r["data"]["tool"].startswith(CODEX_NAMESPACE) for r in logged), logged  # no hook copies
    assert f"Memory-Session: {session}" in git(repo, "log", "-1", "--format=%B")  # SessionEnd committed the session
    # the skill's commit names the Codex session that changed it, not a session of the server's own that has no log
    path = ".agents/skills/release-checklist/SKILL.md"
    assert skills.parse((repo / path).read_bytes(), path, ".agents/skills").tags == ("release",)  # the update was written
    named = {line.split(": ", 1)[1] for line in git(repo, "log", "--format=%B").splitlines() if line.startswith("Memory-Session: ")}
    assert named == {session}, git(repo, "log", "--format=%B")


def test_the_codex_stop_hook_drives_the_loop_its_session_started_and_lets_go_within_budget(project: tuple[Path, Path]):
    repo, home = project
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (repo / "check.py").write_text("from calc import add\nassert add(2, 2) == 4\n", encoding="utf-8")
    (repo / ".agents/loops/fix-add.md").write_text(
        f"---\nname: fix-add\nstatus: active\ntrigger: {{on: manual}}\ngoal: Make check.py pass.\n"
        f'verify:\n  - {{level: 4, run: "{PY} check.py", expect: {{exit: 0}}, timeout: 30}}\nstop: {{max_iterations: 3, no_progress_after: 2}}\n'
        "success_requires_level: 4\n---\n", encoding="utf-8")
    store = Store(Config.load(repo))
    store.refresh()
    Engine(store).accept("fix-add")
    store.close()
    turns = [function_call("loop_start", {"name": "fix-add"}, namespace=CODEX_NAMESPACE)] + ["Done."] * 10
    with FakeResponses(turns, limit=20) as api:
        attach(repo, home, api)
        done = codex(repo, home, "Run the fix-add loop.")
    assert done.returncode == 0, done.stderr[-2000:]
    requests = api.main_requests()
    feedback = [json.dumps(b["input"][-1]) for b in requests[2:]]
    assert feedback and all("repo-memory loop" in f for f in feedback)  # each extra turn came from our Stop hook
    store = Store(Config.load(repo))
    run = Engine(store).status()[0]
    store.close()
    assert run["harness_session"] == session_id(requests[0]) and run["state"] == "no_progress" and run["iterations"] == 2
    assert len(requests) == 1 + 2  # loop_start, then one answer per iteration until no_progress: Codex has no cap of its own


def test_codex_apply_patch_into_an_experience_log_is_refused_by_the_hook_setup_installed(project: tuple[Path, Path]):
    repo, home = project
    month = Store(Config.load(repo))
    session = month.remember("deploys need a green main", session="earlier")[0]["session"]
    month.flush("all")
    month.close()
    log = next((repo / ".agents/experience").rglob(f"{session}.jsonl"))
    before = log.read_bytes()
    target = log.with_name("forged.jsonl").relative_to(repo).as_posix()
    patch = {"type": "custom_tool_call", "id": "ctc_fake0002", "call_id": "call_patch0002", "name": "apply_patch",
             "input": f"*** Begin Patch\n*** Add File: {target}\n+{{\"kind\": \"loop.end\"}}\n*** End Patch\n"}
    forge = f"printf '%s\\n' '{{}}' >> {log.relative_to(repo).as_posix()}"
    with FakeResponses([patch, function_call("exec_command", {"cmd": forge}), "Done."]) as api:
        attach(repo, home, api)
        done = codex(repo, home, "Record that the loop succeeded.")
    assert done.returncode == 0, done.stderr[-2000:]
    assert not (repo / target).exists() and log.read_bytes() == before
    outputs = [o["text"] for o in function_outputs(api.main_requests()[-1])]
    assert len(outputs) == 2 and all("repo-memory refused this" in o for o in outputs), outputs


def test_set_up_by_default_codex_runs_no_hooks_yet_what_the_agent_remembers_is_committed_when_codex_exits(project: tuple[Path, Path]):
    """Without --trust Codex runs no hooks: no SessionEnd commits the session. The server Codex kills at its exit (SIGTERM
    to its group, SIGKILL ~50 ms later, reaped a while after) leaves that to its finisher, which must commit it: started
    at its first write, since the kill can land while the server's main thread is in C code (the MCP SDK importing) and
    runs no handler (1 run in 4 lost the record)."""
    repo, home = project
    turns = [function_call("remember", {"text": "Deploys need a green main."}, namespace=CODEX_NAMESPACE), "Noted."]
    with FakeResponses(turns) as api:
        codex_home(home, api)
        result = CliRunner().invoke(cli, ["--root", str(repo), "setup", "codex"], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        codex_serves_code_under_test(home)
        done = codex(repo, home, "Note it.")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Deploys need a green main." in [r.get("text") for r in records(repo)]  # the tool ran
    deadline = time.monotonic() + 20
    while git(repo, "--no-optional-locks", "status", "--porcelain", "--", ".agents/experience").strip() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert git(repo, "status", "--porcelain", "--", ".agents/experience").strip() == "", git(repo, "log", "--format=%s")
    assert git(repo, "log", "-1", "--format=%s").startswith("memory(experience)")
