"""Loop specs that run: lint, acceptance, the engine's terminal states, receipts, and the three drivers."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.errors import ConflictError, NotFoundError
from repo_memory.shells.cli import cli
from repo_memory.runner.engine import Engine
from repo_memory.core.store import Store

from tests.conftest import records_of, write_skill_file
from tests.runner.conftest import FIXED, PY, agent_script, hook, spec_text

FIX_IN_ROUND_2 = """
    import pathlib
    state = pathlib.Path('.agent-rounds')
    rounds = int(state.read_text()) + 1 if state.exists() else 1
    state.write_text(str(rounds))
    if rounds >= 2:
        pathlib.Path('calc.py').write_text('def add(a, b):\\n    return a + b\\n')
        print('fixed the sign in add()')
    else:
        print('looked around, changed nothing yet')
"""


def test_an_agent_that_fixes_the_bug_in_round_2_succeeds_after_2_iterations(toy: Path, store: Store):
    engine = Engine(store)
    engine.accept("fix-add")
    from repo_memory.runner import driver

    lines: list[str] = []
    assert driver.drive(engine, "fix-add", agent_script(toy, FIX_IN_ROUND_2), 60, lines.append) == "succeeded"
    (run_status,) = engine.status()
    assert run_status["state"] == "succeeded" and run_status["iterations"] == 2
    records = records_of(store, run_status["run"])
    receipt = next(r for r in records if r["kind"] == "loop.end")
    verifies = [r["id"] for r in records if r["kind"] == "loop.verify"]
    assert receipt["data"]["state"] == "succeeded" and set(verifies) <= set(receipt["data"]["evidence"])
    credit = [r for r in records if r["kind"] == "outcome"]
    assert credit and credit[0]["data"] == {"skill": "running-checks", "outcome": "succeeded", "verified": True, "run": run_status["run"]}
    assert "exit code 1" in records[[r["kind"] for r in records].index("loop.decision")]["text"]


def test_a_self_report_of_done_without_a_fix_never_succeeds(toy: Path, store: Store):
    engine = Engine(store)
    engine.accept("fix-add")
    from repo_memory.runner import driver

    liar = agent_script(toy, "print('All done, the tests pass now!')\n")
    assert driver.drive(engine, "fix-add", liar, 60, lambda _: None) == "no_progress"
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(stop="{max_iterations: 3}"), encoding="utf-8")
    engine.accept("fix-add")
    assert driver.drive(engine, "fix-add", liar, 60, lambda _: None) == "budget_exhausted"
    assert [r["iterations"] for r in engine.status()] == [3, 2]


def test_an_agent_that_changes_nothing_ends_no_progress_after_the_configured_rounds(toy: Path, store: Store):
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(stop="{max_iterations: 10, no_progress_after: 3}"), encoding="utf-8")
    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add")["run"]
    states = [engine.step(run, "still thinking", "progress")["state"] for _ in range(3)]
    assert states == ["continue", "continue", "no_progress"]


def test_a_hanging_verification_is_killed_at_its_timeout_and_reported(toy: Path, store: Store):
    hang = f'  - {{level: 3, run: "{PY} -c \'import time; time.sleep(60)\'", timeout: 1}}'
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=hang, level=3, stop="{max_iterations: 1}"), encoding="utf-8")
    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add")["run"]
    started = time.monotonic()
    result = engine.step(run, "done", "done")
    assert time.monotonic() - started < 15
    assert result["state"] == "budget_exhausted" and "timed out after 1 s" in result["instruction"]


def test_an_unaccepted_spec_is_refused_and_runs_no_command(toy: Path, store: Store):
    canary = toy / "canary"
    verify = f'  - {{level: 3, run: "touch {canary}"}}'
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=verify, level=3), encoding="utf-8")
    engine = Engine(store)
    with pytest.raises(ConflictError, match="repo-memory loop accept fix-add"):
        engine.start("fix-add")
    engine.accept("fix-add")
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=verify, level=3) + "\nedited by an agent\n", encoding="utf-8")
    with pytest.raises(ConflictError, match="no person has accepted the current content"):
        engine.start("fix-add")  # an edit after acceptance needs a new accept
    assert not canary.exists() and engine.runs() == []
    engine.accept("fix-add")
    run = engine.start("fix-add")["run"]
    assert engine.step(run, "done")["state"] == "succeeded" and canary.exists()


def test_a_draft_spec_does_not_run(toy: Path, store: Store):
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(status="draft"), encoding="utf-8")
    engine = Engine(store)
    engine.accept("fix-add")
    with pytest.raises(ConflictError, match="not active"):
        engine.start("fix-add")


def test_level_1_success_needs_the_spec_to_say_so(toy: Path, store: Store):
    self_report = "  - {level: 1}"
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=self_report, level=1), encoding="utf-8")
    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add")["run"]
    assert engine.step(run, "not yet", "progress")["state"] == "continue"
    assert engine.step(run, "done", "done")["state"] == "succeeded"


def test_blocked_and_aborted_runs_end_with_receipts(toy: Path, store: Store, runner: CliRunner):
    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add")["run"]
    assert engine.step(run, "I need database credentials I do not have", "blocked")["state"] == "blocked"
    live = engine.start("fix-add")["run"]
    result = runner.invoke(cli, ["--root", str(toy), "loop", "abort", live])
    assert result.exit_code == 0 and "Aborted" in result.output
    assert {r["run"]: r["state"] for r in engine.status()} == {run: "blocked", live: "aborted"}
    with pytest.raises(Exception, match="already ended"):
        engine.step(live, "more work")


def test_loop_start_returns_goal_skills_and_earlier_receipts(toy: Path, store: Store):
    engine = Engine(store)
    engine.accept("fix-add")
    first = engine.start("fix-add")
    engine.step(first["run"], "gave up", "blocked")
    second = engine.start("fix-add")
    assert second["goal"].startswith("Make check.py pass") and "check.py is the specification" in second["notes"]
    assert second["skills"][0]["id"] == "skill:running-checks"
    assert "ended blocked" in second["earlier_runs"][0]["summary"]


def test_loop_start_gives_the_checklist_to_answer_and_a_draft_skill_it_skipped_is_never_credited(toy: Path, store: Store):
    """An agent could not answer a level-2 checklist it was never shown (its keys must be the items word for word), so
    a run ended no_progress before its tests ran; and a bound skill skipped as a draft was still credited with the
    run's outcome, feeding an unreviewed skill's ranking."""
    checklist = '  - {level: 2, checklist: ["No test expectation was changed or deleted"]}\n' \
                f'  - {{level: 4, run: "{PY} check.py", expect: {{exit: 0}}, timeout: 30}}'
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=checklist), encoding="utf-8")
    skill = toy / ".agents/skills/running-checks/SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace("description:", "metadata:\n  status: draft\ndescription:"), encoding="utf-8")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    started = engine.start("fix-add")
    item = "No test expectation was changed or deleted"
    assert started["checklist"] == [item] and item in started["instruction"] and "checklist=" in started["instruction"]
    assert started["skipped_skills"] == ["running-checks (draft)"]
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    done = engine.step(started["run"], "fixed the sign", "done", {item: True})
    assert done["state"] == "succeeded" and done["credited"] == []
    assert [r for r in records_of(store, started["run"]) if r["kind"] in ("skill.used", "outcome")] == []
    # the verdict is the server's, in a run an agent drove (it read "recorded by an agent (loop)"); a loop is a loop spec
    verdict = store.recall("fix-add ended succeeded", kinds=["loop.end"]).hits[0]
    assert verdict.recorded.startswith("recorded by repo-memory's loop engine (loop, in a run driven by an agent)"), verdict.recorded
    assert store.recall("fix-add", kinds=["loop"]).hits[0].recorded.startswith("loop spec"), "a loop hit read 'skill written by'"
    for wrong in ("loop:fix-add", "fix-add", "no-such-run"):  # an agent's usual mistakes name what to call instead
        with pytest.raises(NotFoundError, match="loop_status"):
            engine.step(wrong, "done", "done")
    with pytest.raises(NotFoundError, match="loop_start"):
        engine.step("loop:fix-add", "done", "done")


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_the_stop_hook_blocks_until_the_run_succeeds(toy: Path, store: Store, harness: str):
    engine = Engine(store)
    engine.accept("fix-add")
    session = "5c9f4a0e-harness-session"
    run = engine.start("fix-add", harness_session=session)["run"]
    if harness == "claude-code":  # fields from Claude Code's Stop hook input
        payload = {"session_id": session, "transcript_path": str(toy / "t.jsonl"), "cwd": str(toy), "hook_event_name": "Stop",
                   "stop_hook_active": False}
    else:  # fields from Codex's Stop hook input
        payload = {"session_id": session, "turn_id": "t1", "transcript_path": None, "cwd": str(toy), "hook_event_name": "Stop",
                   "model": "gpt-5", "stop_hook_active": False, "last_assistant_message": "Done, I think."}
    first = hook(toy, payload)
    assert first["decision"] == "block" and "exit code 1" in first["reason"] and run in first["reason"]
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    second = hook(toy, {**payload, "stop_hook_active": True})
    assert "decision" not in second and "ended succeeded" in second["systemMessage"]
    assert hook(toy, payload) == {}  # no live run: the agent may stop


def test_the_stop_hook_never_traps_a_session(toy: Path, store: Store, tmp_path: Path):
    engine = Engine(store)
    engine.accept("fix-add")
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(stop="{max_iterations: 2}"), encoding="utf-8")
    engine.accept("fix-add")
    session = "trap-test"
    engine.start("fix-add", harness_session=session)
    payload = {"session_id": session, "cwd": str(toy), "hook_event_name": "Stop", "stop_hook_active": True}
    answers = [hook(toy, payload) for _ in range(4)]
    assert sum(1 for a in answers if a.get("decision") == "block") <= 2 and answers[-1] == {}
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    assert hook(outside, {"session_id": "x", "cwd": str(outside)}) == {}  # an internal error lets the agent stop
    proc = subprocess.run([PY, "-m", "repo_memory", "hook", "stop"], input="not json", capture_output=True, text=True, cwd=toy)
    assert proc.returncode == 0 and json.loads(proc.stdout) == {}


@pytest.mark.parametrize(
    ("body", "message", "line"),
    [
        ("name: bad\nverify:\n  - {level: 4, run: pytest}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n", "'goal' is a required property", None),
        ("name: bad\ngoal: g\nverify:\n  - {level: 4, run: pytest}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\nowner: me\n", "unknown field 'owner'", 8),
        ("name: bad\ngoal: g\nverify:\n  - {level: 6, run: pytest}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n", "6 is greater than the maximum of 5", 5),
        ("name: bad\ngoal: g\ntrigger: {on: schedule, cron: '61 * * * *'}\nverify:\n  - {level: 4, run: pytest}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n", "bad cron", 4),
        ("name: bad\ngoal: g\nverify:\n  - {level: 4, run: pytest}\nstop:\n  max_iterations: 0\nsuccess_requires_level: 4\n", "0 is less than the minimum of 1", 7),
        ("name: bad\ngoal: g\nverify:\n  - {level: 1}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n", "highest verify step is level 1", 7),
    ],
)
def test_bad_specs_get_a_clear_lint_error_with_its_line(repo: Path, runner: CliRunner, body: str, message: str, line: int | None):
    (repo / ".agents/loops/bad.md").write_text(f"---\n{body}---\nnotes\n", encoding="utf-8")
    result = runner.invoke(cli, ["--root", str(repo), "loop", "lint", "--json"])
    assert result.exit_code == 1
    problems = json.loads(result.output)
    assert any(message in p["problem"] and (line is None or p["line"] == line) for p in problems), problems


def test_a_spec_named_with_a_space_is_linted_as_loop_list_says_and_a_missing_spec_is_said_missing(repo: Path, runner: CliRunner):
    """`loop list` suggested `repo-memory loop lint Bad Name` unquoted: pasted, it linted two specs that do not exist,
    and for each said only that the name had uppercase letters, never that no such spec exists."""
    import shlex

    (repo / ".agents/loops/Bad Name.md").write_text("---\nname: bad name\n---\n", encoding="utf-8")
    listed = runner.invoke(cli, ["--root", str(repo), "loop", "list"]).output
    suggested = listed.split("(", 1)[1].rsplit(")", 1)[0]
    assert suggested == "repo-memory loop lint 'Bad Name'", listed
    pasted = runner.invoke(cli, ["--root", str(repo), *shlex.split(suggested)[1:]])
    assert pasted.exit_code == 1 and "Bad Name.md" in pasted.output and "1 spec(s) checked" in pasted.output, pasted.output
    missing = runner.invoke(cli, ["--root", str(repo), "loop", "lint", "Nope"])
    assert missing.exit_code == 1 and "no loop spec 'Nope'" in missing.output and "uppercase" not in missing.output, missing.output


def test_examples_pass_lint(tmp_path: Path, runner: CliRunner):
    from tests.conftest import git

    git(tmp_path, "init", "-q")
    examples = Path(__file__).resolve().parents[2] / "examples" / "loops"
    target = tmp_path / ".agents/loops"
    target.mkdir(parents=True)
    names = []
    for spec in examples.glob("*.md"):
        (target / spec.name).write_bytes(spec.read_bytes())
        names.append(spec.stem)
    for skill in ("writing-skills", "running-tests"):  # the skills the examples bind, as the repository using them has
        write_skill_file(tmp_path, skill, "A skill an example binds.")
    assert len(names) >= 2
    result = runner.invoke(cli, ["--root", str(tmp_path), "loop", "lint"])
    assert result.exit_code == 0, result.output


def test_schedules_and_changed_paths_make_loops_due(toy: Path, store: Store):
    from datetime import UTC, datetime, timedelta

    from repo_memory.runner import triggers

    loops_dir = toy / ".agents/loops"
    (loops_dir / "fix-add.md").unlink()
    engine = Engine(store)

    def schedule(moment: datetime) -> None:
        (loops_dir / "nightly.md").write_text(
            spec_text("nightly").replace("trigger: {on: manual}", f"trigger: {{on: schedule, cron: '{moment.minute} {moment.hour} * * *'}}"),
            encoding="utf-8")

    def due_at(moment: datetime) -> set[str]:  # whether the trigger fired; acceptance is test_loop_triggers.py's
        return {s.name for s, _ in triggers.fired(engine, now=moment)}

    schedule(datetime(2030, 1, 1, 3, 0))
    assert "nightly" in due_at(datetime(2030, 1, 1, 3, 0))  # never run: due when it fired within the last day
    engine.accept("nightly")
    engine.abort(engine.start("nightly")["run"])
    last = datetime.now(UTC)
    schedule(last + timedelta(minutes=5))
    assert "nightly" in due_at(last + timedelta(minutes=10))  # fired after the last run
    schedule(last + timedelta(minutes=20))
    assert "nightly" not in due_at(last + timedelta(minutes=10))  # its last firing was before the last run

    (loops_dir / "on-calc.md").write_text(spec_text("on-calc").replace("trigger: {on: manual}", "trigger: {on: change, paths: ['calc*.py']}"), encoding="utf-8")
    assert "on-calc" not in due_at(datetime.now(UTC))  # never run, and its path unchanged since the spec was written
    engine.accept("on-calc")
    os.utime(toy / "calc.py", (time.time() + 5, time.time() + 5))
    assert "on-calc" in due_at(datetime.now(UTC))  # never run, and its path changed since the accept
    os.utime(toy / "calc.py", (time.time() - 60, time.time() - 60))
    engine.abort(engine.start("on-calc")["run"])
    assert "on-calc" not in due_at(datetime.now(UTC))  # nothing changed since that run
    os.utime(toy / "calc.py", (time.time() + 5, time.time() + 5))
    assert "on-calc" in due_at(datetime.now(UTC))


def test_git_hooks_chain_an_existing_hook_and_run_git_triggered_loops(toy: Path, store: Store, runner: CliRunner):
    from tests.conftest import git

    (toy / ".agents/loops/fix-add.md").write_text(spec_text().replace("trigger: {on: manual}", "trigger: {on: git, events: [post-commit]}"), encoding="utf-8")
    existing = toy / ".git/hooks/post-commit"
    existing.write_text("#!/bin/sh\necho mine > .git/hook-ran\n", encoding="utf-8")
    existing.chmod(0o755)
    result = runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"])
    assert result.exit_code == 0 and "existing hook now runs first" in result.output
    assert "already installed" in runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"]).output
    assert (toy / ".git/hooks/post-commit.pre-repo-memory").read_text(encoding="utf-8") == "#!/bin/sh\necho mine > .git/hook-ran\n"
    Engine(store).accept("fix-add")
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    git(toy, "add", "calc.py", "check.py")
    git(toy, "commit", "-q", "-m", "fix add")
    assert (toy / ".git/hook-ran").read_text(encoding="utf-8").strip() == "mine"
    runs = Engine(store).status()
    assert [(r["loop"], r["state"]) for r in runs] == [("fix-add", "succeeded")]


def test_loop_tools_through_the_mcp_client(toy: Path, store: Store):
    import anyio
    from mcp import Client

    from repo_memory.shells import mcp as server

    Engine(store).accept("fix-add")

    async def drive() -> tuple[dict, dict, dict]:
        async with Client(server.build(store)) as client:
            started = (await client.call_tool("loop_start", {"name": "fix-add"})).structured_content
            await client.call_tool("read", {"ref": "debugging-calc"})  # read during the run: credited with its outcome
            failed = (await client.call_tool("loop_step", {"run": started["run"], "report": "tried", "status": "done"})).structured_content
            (toy / "calc.py").write_text(FIXED, encoding="utf-8")
            done = (await client.call_tool("loop_step", {"run": started["run"], "report": "fixed the sign"})).structured_content
            status = (await client.call_tool("loop_status", {"run": started["run"]})).structured_content
            return failed, done, status

    extra = toy / ".agents/skills/debugging-calc/SKILL.md"
    extra.parent.mkdir(parents=True)
    extra.write_text("---\nname: debugging-calc\ndescription: Debug calc.\n---\nPrint things.\n", encoding="utf-8")
    store.refresh()
    failed, done, status = anyio.run(drive)
    outcomes = [ln.record["data"] for ln in store.lines(status["runs"][0]["run"])
                if ln.record and ln.record["kind"] == "outcome"]
    assert {o["skill"]: o["outcome"] for o in outcomes} == {"running-checks": "succeeded", "debugging-calc": "succeeded"}
    assert failed["state"] == "continue" and "add(2, 2) returned 0" in failed["instruction"]
    assert done["state"] == "succeeded" and status["runs"][0]["iterations"] == 2


def test_what_a_verification_step_started_is_gone_when_the_step_ends_even_in_a_session_of_its_own(repo: Path, tmp_path: Path):
    # The step's process group was killed only on timeout, and a child that called setsid left the group altogether.
    import os
    import subprocess
    import time

    from repo_memory.config import Config
    from repo_memory.core.store import Store
    from repo_memory.runner.engine import Engine

    marker = tmp_path / "escaped.pid"
    script = tmp_path / "escape.sh"
    nap = f"300.{os.getpid()}"  # this run's own sleeps: another test run on the machine may be sleeping too
    script.write_text(f"#!/bin/sh\nsetsid sh -c 'echo $$ > {marker}; exec sleep {nap}' </dev/null >/dev/null 2>&1 &\n"
                      f"sleep {nap} </dev/null >/dev/null 2>&1 &\necho started\n", encoding="utf-8")
    script.chmod(0o755)
    (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
    (repo / ".agents/loops/escape.md").write_text(
        "---\nname: escape\nstatus: active\ntrigger: {on: manual}\ngoal: Start and leave.\n"
        f'verify:\n  - {{level: 4, run: "{script}", expect: {{exit: 0}}, timeout: 30}}\n'
        "stop: {max_iterations: 2}\nsuccess_requires_level: 4\n---\nGo.\n", encoding="utf-8")
    store = Store(Config.load(repo))
    store.refresh()
    engine = Engine(store)
    engine.accept("escape")
    run = engine.start("escape", actor="human")
    engine.step(run["run"], "done", "done", actor="human")
    store.close()
    time.sleep(1)  # an escaped child would be sleeping by now
    alive = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    leftover = [line.split()[0] for line in alive.splitlines() if line.strip().endswith(f"sleep {nap}")]
    for pid in leftover:
        os.kill(int(pid), 9)
    assert leftover == [], "processes the step started outlived it"


def test_a_loop_triggered_by_a_ci_failure_is_due_only_when_ci_says_it_failed(toy: Path, store: Store, runner: CliRunner):
    """DESIGN names a CI failure among a loop's triggers; no spec could say it, so a team's CI had no loop to start."""
    (toy / ".agents/loops/fix-add.md").write_text(spec_text().replace("trigger: {on: manual}", "trigger: {on: ci}"), encoding="utf-8")
    assert runner.invoke(cli, ["--root", str(toy), "loop", "lint", "fix-add"]).exit_code == 0
    Engine(store).accept("fix-add")
    assert "fix-add" not in runner.invoke(cli, ["--root", str(toy), "loop", "due"]).output
    assert "fix-add" not in runner.invoke(cli, ["--root", str(toy), "loop", "due", "--event", "post-commit"]).output
    failed = runner.invoke(cli, ["--root", str(toy), "loop", "due", "--event", "ci-failure", "--run"])
    assert "fix-add: due (CI failed)" in failed.output and "failed: " in failed.output, failed.output  # calc.py still subtracts


def test_hooks_installed_into_a_hooks_folder_the_repository_tracks_say_so_and_can_be_taken_out(toy: Path, runner: CliRunner):
    """With core.hooksPath at the team's tracked .githooks, `loop hooks install` rewrote the team's committed hook and
    said only "installed": a person's next `git commit -a` shipped it to every teammate unawares."""
    from tests.conftest import git

    team = toy / ".githooks/post-commit"
    team.parent.mkdir()
    team.write_text("#!/bin/sh\necho team\n", encoding="utf-8")
    team.chmod(0o755)
    git(toy, "add", ".githooks")
    git(toy, "commit", "-q", "-m", "team hooks")
    git(toy, "config", "core.hooksPath", ".githooks")
    result = runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"])
    assert result.exit_code == 0, result.output
    assert ".githooks" in result.output and "git tracks" in result.output and "loop hooks remove" in result.output
    removed = runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "remove"])
    assert removed.exit_code == 0 and "your own hook is back in place" in removed.output, removed.output
    assert git(toy, "status", "--porcelain", ".githooks") == "" and team.read_text(encoding="utf-8") == "#!/bin/sh\necho team\n"
    plain = runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"])
    git(toy, "config", "--unset", "core.hooksPath")
    assert "git tracks" in plain.output
    assert "git tracks" not in runner.invoke(cli, ["--root", str(toy), "loop", "hooks", "install"]).output  # .git/hooks
