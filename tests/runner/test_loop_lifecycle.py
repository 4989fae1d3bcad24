"""A run always has a way to end: when its spec is renamed, deleted or broken mid-run, and when two calls step it at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import ConflictError
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.conftest import git, kept, records_of


def started(repo: Path, store: Store) -> tuple[Engine, str]:
    engine = Engine(store)
    engine.accept("fix-add")
    return engine, engine.start("fix-add")["run"]


@pytest.mark.parametrize("change", ["deleted", "renamed", "broken"])
def test_a_run_whose_spec_went_away_can_still_be_aborted_by_a_person(toy: Path, store: Store, runner: CliRunner, change: str):
    engine, run = started(toy, store)
    spec = toy / ".agents/loops/fix-add.md"
    if change == "deleted":
        spec.unlink()
    elif change == "renamed":
        spec.rename(spec.with_name("fix-add-tests.md"))
    else:
        spec.write_text(spec.read_text(encoding="utf-8").replace("goal:", "gaol:"), encoding="utf-8")
    store.refresh()
    result = runner.invoke(cli, ["--root", str(toy), "loop", "abort", run])
    assert result.exit_code == 0 and "Aborted" in result.output, result.output
    assert engine.state(run).state == "aborted"


def test_a_run_whose_spec_went_away_ends_blocked_when_the_agent_says_so_and_otherwise_says_how_to_end(toy: Path, store: Store):
    engine, run = started(toy, store)
    (toy / ".agents/loops/fix-add.md").unlink()
    store.refresh()
    with pytest.raises(ConflictError, match="status='blocked'") as refused:
        engine.step(run, "done", "done")
    assert f"repo-memory loop abort {run}" in str(refused.value)
    ended = engine.step(run, "the spec is gone", "blocked")
    assert ended["state"] == "blocked"
    assert [r["data"]["state"] for r in records_of(store, run) if r["kind"] == "loop.end"] == ["blocked"]


def test_two_steps_at_once_end_a_run_once(toy: Path, store: Store):
    """Parallel tool calls (or two servers) each verified and ended the run: two receipts, the skills credited twice."""
    import threading

    from repo_memory.config import Config

    from tests.runner.conftest import FIXED, PY, spec_text

    slow = f'  - {{level: 4, run: "{PY} -c \'import time; time.sleep(1)\' && {PY} check.py", expect: {{exit: 0}}, timeout: 30}}'
    (toy / ".agents/loops/fix-add.md").write_text(spec_text(verify=slow), encoding="utf-8")
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    store.refresh()
    engine, run = started(toy, store)
    other = Store(Config.load(toy))  # a second server on the same repository
    together = threading.Barrier(2)
    answers: list[str] = []

    def step(engine: Engine) -> None:
        together.wait()
        try:
            answers.append(engine.step(run, "fixed the sign")["state"])
        except ConflictError as exc:
            answers.append(f"refused: {exc}")

    threads = [threading.Thread(target=step, args=(e,)) for e in (engine, Engine(other))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        other.close()
    store.refresh()
    kinds = [r["kind"] for r in records_of(store, run)]
    assert kinds.count("loop.end") == 1 and kinds.count("outcome") == 1, kinds
    assert sorted(a.split(":")[0] for a in answers) == ["refused", "succeeded"], answers
    assert "already ended: succeeded" in next(a for a in answers if a.startswith("refused"))


def test_the_stop_hook_ends_a_run_whose_spec_went_away_instead_of_leaving_it_live(toy: Path, store: Store):
    from tests.runner.conftest import hook

    engine = Engine(store)
    engine.accept("fix-add")
    run = engine.start("fix-add", harness_session="gone-spec")["run"]
    (toy / ".agents/loops/fix-add.md").unlink()
    answer = hook(toy, {"session_id": "gone-spec", "cwd": str(toy), "hook_event_name": "Stop", "stop_hook_active": False})
    assert "ended aborted" in answer.get("systemMessage", ""), answer
    store.refresh()
    assert engine.state(run).state == "aborted"


def test_the_briefing_offers_the_runs_still_in_motion_and_only_counts_those_nobody_stepped_for_a_day(toy: Path, store: Store):
    """A run nobody steps never ends on its own (a session closed, an agent gave up): each one stayed in every new
    session's briefing as a "live loop run" to step, for good."""
    from repo_memory.formats import experience

    engine, live = started(toy, store)
    for n in range(2):  # runs of January that nobody ended
        store.log(f"fix-add-20260101-00000{n}-ab1{n}", [experience.Entry(
            "loop.start", text="Run of loop fix-add started.", ts=f"2026-01-01T00:00:0{n}.000000Z",
            data={"loop": "fix-add", "spec_sha256": "0" * 64, "started": 1767225600.0 + n},
            source=store.source("agent", "loop_start"))], captured=True)
    store.refresh()
    assert {r["run"] for r in engine.status() if r["state"] == "running"} >= {live, "fix-add-20260101-000000-ab10"}
    briefing = store.briefing()
    assert f"live loop run {live}" in briefing and "20260101" not in briefing, briefing
    assert "2 older loop run(s)" in briefing and "repo-memory loop abort" in briefing, briefing


def in_clone(where: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--root", str(where), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_run_aborted_in_another_clone_ends_everywhere_and_takes_no_step_after(toy: Path, store: Store, tmp_path: Path):
    """`loop abort` in a teammate's clone said "Aborted", exit 0, and changed nothing: the abort went to the log the
    clone keeps beside the run's (RUN.<clone>), which the run's state never read. The run stayed running in both
    clones, its starter stepped it on, and it ended twice (aborted, then no_progress)."""
    from tests.shells.test_team import exchange, with_teammate

    engine, run = started(toy, store)
    assert engine.step(run, "tried", "done")["state"] == "continue"  # one failed iteration; the session ends, the run lives
    store.flush("all")
    teammate = with_teammate(toy, tmp_path)
    assert f"{run}" in in_clone(teammate, "loop", "status") and "running" in in_clone(teammate, "loop", "status")
    said = in_clone(teammate, "loop", "abort", run, "--reason", "bob: obsolete")
    assert said.startswith(f"Aborted {run}") and "aborted" in in_clone(teammate, "loop", "status")
    assert "Memory-Session" in git(teammate, "log", "-1", "--format=%B")  # the abort is committed, as a run's end is
    there = Store(Config.load(teammate))
    there.refresh()
    briefing = there.briefing()
    there.close()
    assert run not in briefing, briefing  # no longer offered as a live run to step
    exchange(teammate, toy)  # the teammate's abort reaches the clone that started the run
    assert engine.state(run).state == "aborted" and "aborted" in in_clone(toy, "loop", "status")
    with pytest.raises(ConflictError, match="already ended: aborted"):
        engine.step(run, "alice goes on", "done")
    ends = [r for s in (run, kept(teammate, run)) for r in records_of(store, s) if r["kind"] == "loop.end"]
    assert [r["data"]["state"] for r in ends] == ["aborted"]


def test_a_run_two_clones_ended_at_once_ends_the_same_way_in_both_after_they_merge(toy: Path, store: Store, tmp_path: Path):
    """Ended in both clones before either pulled (a person's abort here, the run's last step there): each clone read
    its own end, and a step refused in one was taken in the other. The first end wins, in every clone."""
    from tests.shells.test_team import exchange, with_teammate

    engine, run = started(toy, store)
    engine.step(run, "tried", "done")
    store.flush("all")
    teammate = with_teammate(toy, tmp_path)
    in_clone(teammate, "loop", "abort", run, "--reason", "bob: obsolete")  # first
    assert engine.step(run, "tried again", "done")["state"] == "no_progress"  # then, before any pull
    exchange(teammate, toy)
    for clone in (toy, teammate):
        assert f"{run}" in (status := in_clone(clone, "loop", "status", run)) and "aborted" in status, (clone, status)
    assert engine.state(run).state == "aborted"
    earlier = Store(Config.load(teammate))
    try:
        assert [r["summary"] for r in earlier.receipts("fix-add")] == [r["summary"] for r in store.receipts("fix-add")]
        assert len(earlier.receipts("fix-add")) == 1 and "aborted" in earlier.receipts("fix-add")[0]["summary"]
    finally:
        earlier.close()


def test_a_spec_rewritten_and_accepted_again_mid_run_does_not_verify_the_run(toy: Path, store: Store):
    """An agent rewrote the spec's check to `echo ok` and ran `repo-memory loop accept --sha` from its shell: the run
    ended succeeded with calc.py still wrong. A run is verified by the spec it started with (its loop.start's sha)."""
    import subprocess
    import sys

    engine, run = started(toy, store)
    spec = toy / ".agents/loops/fix-add.md"
    spec.write_text(spec.read_text(encoding="utf-8").replace(f"run: \"{sys.executable} check.py\"", 'run: "echo ok"'), encoding="utf-8")
    store.refresh()
    sha = engine.spec("fix-add").sha256
    accepted = subprocess.run([sys.executable, "-m", "repo_memory", "loop", "accept", "fix-add", "--sha", sha[:12]], cwd=toy,
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert accepted.returncode == 0, accepted.stderr  # an agent's shell can do what a person's can
    ended = engine.step(run, "done", "done")
    assert ended["state"] == "unverifiable" and "changed since the run started" in ended["instruction"], ended
    assert (toy / "calc.py").read_text(encoding="utf-8").endswith("a - b\n")
