"""A level-2 checklist through every driver: `loop run`, the Stop hook and `loop due --run` ask for it and read the
answers back; a run whose checklist was never answered is not charged to its skills."""

from __future__ import annotations

from pathlib import Path

from repo_memory.core.store import Store
from repo_memory.runner import driver, triggers
from repo_memory.runner.engine import Engine

from tests.conftest import records_of
from tests.runner.conftest import FIXED, PY, agent_script, hook, spec_text

ITEM = "No test expectation was changed or deleted"
WITH_CHECKLIST = (f'  - {{level: 2, checklist: ["{ITEM}"]}}\n'
                  f'  - {{level: 4, run: "{PY} check.py", expect: {{exit: 0}}, timeout: 30}}')

# A headless agent that does what its instruction says: fixes calc.py, then copies the checklist line it was given.
FIXES_AND_ANSWERS = """
    import pathlib, re, sys
    instruction = sys.stdin.read()
    pathlib.Path('calc.py').write_text('def add(a, b):\\n    return a + b\\n')
    print('fixed the sign in add()')
    line = re.search(r'^CHECKLIST: .*$', instruction, re.M)
    print(line.group(0) if line else 'no checklist was asked')
"""
FIXES_AND_SAYS_NOTHING = """
    import pathlib, sys
    sys.stdin.read()
    pathlib.Path('calc.py').write_text('def add(a, b):\\n    return a + b\\n')
    print('fixed the sign in add()')
"""


def checklist_spec(repo: Path, store: Store) -> Engine:
    (repo / ".agents/loops/fix-add.md").write_text(spec_text(verify=WITH_CHECKLIST), encoding="utf-8")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    return engine


def charged(store: Store, run: str) -> list[dict]:
    return [r["data"] for r in records_of(store, run) if r["kind"] == "outcome"]


def test_loop_run_asks_the_checklist_and_an_agent_that_answers_it_succeeds(toy: Path, store: Store):
    engine = checklist_spec(toy, store)
    assert driver.drive(engine, "fix-add", agent_script(toy, FIXES_AND_ANSWERS), 60, lambda _: None) == "succeeded"
    (run,) = engine.status()
    assert run["iterations"] == 1 and charged(store, run["run"])[0]["outcome"] == "succeeded"


def test_a_run_whose_checklist_was_never_answered_is_not_charged_to_its_skills(toy: Path, store: Store):
    engine = checklist_spec(toy, store)
    state = driver.drive(engine, "fix-add", agent_script(toy, FIXES_AND_SAYS_NOTHING), 60, lambda _: None)
    (run,) = engine.status()
    assert state == "unverifiable", state
    assert charged(store, run["run"]) == []
    end = next(r for r in records_of(store, run["run"]) if r["kind"] == "loop.end")
    assert "never answered" in end["text"] and ITEM in end["text"]


def test_the_stop_hook_asks_the_checklist_and_reads_the_answers_from_the_agents_last_message(toy: Path, store: Store):
    engine = checklist_spec(toy, store)
    session = "checklist-session"
    run = engine.start("fix-add", harness_session=session)["run"]
    payload = {"session_id": session, "cwd": str(toy), "hook_event_name": "Stop", "stop_hook_active": False,
               "last_assistant_message": "I think it is done."}
    first = hook(toy, payload)
    assert first["decision"] == "block" and "exit code 1" in first["reason"] and f"CHECKLIST: {{\"{ITEM}\": true}}" in first["reason"]
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    answered = f"Fixed the sign.\nCHECKLIST: {{\"{ITEM}\": true}}"
    second = hook(toy, {**payload, "stop_hook_active": True, "last_assistant_message": answered})
    assert "ended succeeded" in second["systemMessage"], second
    assert charged(store, run)[0]["outcome"] == "succeeded"


def test_loop_due_without_an_agent_charges_no_skill_for_a_checklist_nobody_could_answer(toy: Path, store: Store):
    engine = checklist_spec(toy, store)
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    spec = engine.spec("fix-add")
    said = triggers.run_due(engine, spec, "a test", None, lambda _: None)
    (run,) = engine.status()
    assert charged(store, run["run"]) == [] and "every command passed" in said and "--agent" in said, said


def test_loop_run_stops_at_once_when_the_agent_command_cannot_be_started_and_charges_no_skill(toy: Path, store: Store):
    engine = Engine(store)
    engine.accept("fix-add")
    said: list[str] = []
    state = driver.drive(engine, "fix-add", "no-such-agent-harness -p", 60, said.append)
    (run,) = engine.status()
    assert state == "aborted" and run["iterations"] == 0, (state, run)
    assert any("could not be started" in line and "not found" in line for line in said), said
    kinds = [r["kind"] for r in records_of(store, run["run"])]
    assert "loop.verify" not in kinds and charged(store, run["run"]) == []


# An agent whose harness has repo-memory's tools and reports through loop_step itself, as loop_start taught it.
STEPS_ITSELF = """
    import os, pathlib, sys
    from repo_memory.config import Config
    from repo_memory.core.store import Store
    from repo_memory.runner.engine import Engine
    sys.stdin.read()
    pathlib.Path('calc.py').write_text('def add(a, b):\\n    return a + b\\n')
    store = Store(Config.load(os.getcwd()))
    answer = Engine(store).step(os.environ['REPO_MEMORY_RUN'], 'fixed the sign', 'done', {"%s": True})
    store.close()
    print('my loop_step said', answer['state'])
""" % ITEM


def test_loop_run_does_not_step_again_a_round_the_agent_stepped_itself(toy: Path, store: Store):
    engine = checklist_spec(toy, store)
    said: list[str] = []
    assert driver.drive(engine, "fix-add", agent_script(toy, STEPS_ITSELF), 60, said.append) == "succeeded", said
    (run,) = engine.status()
    assert run["iterations"] == 1 and len(charged(store, run["run"])) == 1


def test_the_start_loop_prompt_tells_the_agent_to_answer_the_checklist_with_its_step(toy: Path, store: Store):
    import anyio
    from mcp import Client

    from repo_memory.shells import mcp as server

    checklist_spec(toy, store)

    async def prompt() -> str:
        async with Client(server.build(store)) as client:
            return (await client.get_prompt("start-loop", {"name": "fix-add"})).messages[0].content.text

    text = anyio.run(prompt)
    assert f'checklist={{"{ITEM}": true}}' in text, text
