"""The Stop hook as a loop driver: every live run of the session is verified at each stop, and a check longer than the
hook may run is neither killed mid-way nor left silently live."""

from __future__ import annotations

from pathlib import Path

from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine

from tests.runner.conftest import FIXED, hook, spec_text


def test_every_live_run_of_the_session_is_verified_at_stop_and_each_failing_one_is_named(toy: Path, store: Store):
    """Only the session's newest run was verified: the agent was let go with an older, failing run live and never checked."""
    passing = spec_text("always", verify='  - {level: 4, name: always, run: "true", expect: {exit: 0}, timeout: 30}')
    (toy / ".agents/loops/always.md").write_text(passing, encoding="utf-8")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    engine.accept("always")
    session = "two-loops-session"
    failing = engine.start("fix-add", harness_session=session)["run"]
    newest = engine.start("always", harness_session=session)["run"]
    payload = {"session_id": session, "cwd": str(toy), "hook_event_name": "Stop", "stop_hook_active": False,
               "last_assistant_message": "Done with both."}
    first = hook(toy, payload)
    assert first.get("decision") == "block", first
    assert failing in first["reason"] and "exit code 1" in first["reason"], first
    assert f"{newest} ended succeeded" in first["reason"], first  # the agent hears of the run that ended too
    store.refresh()
    assert engine.state(newest).state == "succeeded" and engine.state(failing).state == "running"
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    second = hook(toy, {**payload, "stop_hook_active": True, "last_assistant_message": "Fixed the sign."})
    assert "decision" not in second and f"{failing} ended succeeded" in second.get("systemMessage", ""), second
    assert hook(toy, {**payload, "last_assistant_message": "Nothing left."}) == {}
