"""The engine's verdicts: what counts as the same failure, what a 'progress' report means, and what success needs."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.runner.conftest import FIXED, PY, spec_text

# A test file in the style of a parametrized pytest run: it names the first case that fails, with its numbers.
SQUARES = """
from calc import square
for a, b in [(2, 4), (3, 9), (4, 16)]:
    if square(a) != b:
        print(f"FAILED check.py::test_square[{a}-{b}] - assert {square(a)} == {b}")
        print("1 failed, 2 passed in 0.03s")
        raise SystemExit(1)
print("3 passed in 0.02s")
"""
# A linter in the style of ruff: one line per problem, then a count.
LINT = """
import pathlib
problems = [ln for ln in pathlib.Path('calc.py').read_text().splitlines() if ln.startswith('import ')]
for i, ln in enumerate(problems):
    print(f"calc.py:{i + 1}:8: F401 `{ln.split()[1]}` imported but unused")
print(f"Found {len(problems)} errors." if problems else "All checks passed!")
raise SystemExit(1 if problems else 0)
"""
# The same failure each time, printed with what changes between runs of one failure: a time, a duration, a temp path,
# an object address, a process id.
SAME_FAILURE = """
import datetime, os, tempfile, time
print(f"{datetime.datetime.now().isoformat()} collecting in {tempfile.mkdtemp()} (pid {os.getpid()})")
print(f"FAILED check.py::test_add - AssertionError: <calc.Adder object at 0x{id(object()):x}> returned 0")
print(f"1 failed in {time.perf_counter() % 1:.2f}s")
raise SystemExit(1)
"""


def engine_for(repo: Path, store: Store, verify: str, level: int = 4, stop: str = "{max_iterations: 6, no_progress_after: 2}") -> Engine:
    (repo / ".agents/loops/fix-add.md").write_text(spec_text(verify=verify, level=level, stop=stop), encoding="utf-8")
    store.refresh()
    engine = Engine(store)
    engine.accept("fix-add")
    return engine


def test_a_different_parametrized_case_failing_is_progress_not_the_same_failure(toy: Path, store: Store):
    (toy / "check.py").write_text(SQUARES, encoding="utf-8")
    engine = engine_for(toy, store, f'  - {{level: 4, run: "{PY} check.py", expect: {{exit: 0}}, timeout: 30}}')
    run = engine.start("fix-add")["run"]
    (toy / "calc.py").write_text("def square(a):\n    return 0 if a == 2 else a * a\n", encoding="utf-8")
    assert engine.step(run, "first try")["state"] == "continue"
    (toy / "calc.py").write_text("def square(a):\n    return 0 if a == 3 else a * a\n", encoding="utf-8")
    second = engine.step(run, "fixed case 2")
    assert second["state"] == "continue" and "test_square[3-9]" in second["instruction"], second
    (toy / "calc.py").write_text("def square(a):\n    return a * a\n", encoding="utf-8")
    assert engine.step(run, "fixed case 3")["state"] == "succeeded"


def test_fewer_lint_errors_is_progress_not_the_same_failure(toy: Path, store: Store):
    (toy / "lint.py").write_text(LINT, encoding="utf-8")
    engine = engine_for(toy, store, f'  - {{level: 3, run: "{PY} lint.py", expect: {{exit: 0}}, timeout: 30}}', level=3)
    run = engine.start("fix-add")["run"]
    imports = ["os", "re", "sys", "json", "time"]
    (toy / "calc.py").write_text("".join(f"import {m}\n" for m in imports) + FIXED, encoding="utf-8")
    assert engine.step(run, "first look")["state"] == "continue"
    (toy / "calc.py").write_text("".join(f"import {m}\n" for m in imports[:3]) + FIXED, encoding="utf-8")
    assert engine.step(run, "removed two unused imports")["state"] == "continue"


def test_the_same_failure_repeated_is_no_progress_though_its_times_paths_and_addresses_differ(toy: Path, store: Store):
    (toy / "check.py").write_text(SAME_FAILURE, encoding="utf-8")
    engine = engine_for(toy, store, f'  - {{level: 4, run: "{PY} check.py", expect: {{exit: 0}}, timeout: 30}}')
    run = engine.start("fix-add")["run"]
    assert engine.step(run, "tried")["state"] == "continue"
    last = engine.step(run, "tried again")
    assert last["state"] == "no_progress" and "returned 0" in last["instruction"], last  # it names what repeated


def test_the_same_failure_is_no_progress_with_a_temporary_folder_outside_tmp(toy: Path, store: Store, monkeypatch: pytest.MonkeyPatch):
    """TMPDIR set elsewhere (a tmpfs, $XDG_RUNTIME_DIR): the check's temporary paths differ from run to run there too."""
    if not os.access("/dev/shm", os.W_OK):
        pytest.skip("no writable /dev/shm to put TMPDIR in")
    scratch = tempfile.mkdtemp(dir="/dev/shm", prefix="repo-memory-test-")
    try:
        monkeypatch.setenv("TMPDIR", scratch)
        test_the_same_failure_repeated_is_no_progress_though_its_times_paths_and_addresses_differ(toy, store)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_progress_reports_get_the_tests_verdict_and_never_end_no_progress_while_the_tests_pass(toy: Path, store: Store):
    ladder = f'  - {{level: 1}}\n  - {{level: 4, run: "{PY} check.py", expect: {{exit: 0}}, timeout: 30}}'
    engine = engine_for(toy, store, ladder)
    run = engine.start("fix-add")["run"]
    failing = engine.step(run, "halfway", "progress")
    assert failing["state"] == "continue" and "add(2, 2) returned 0" in failing["instruction"]  # the tests ran
    (toy / "calc.py").write_text(FIXED, encoding="utf-8")
    states = [engine.step(run, "still polishing", "progress")["state"] for _ in range(3)]
    assert states == ["continue"] * 3
    assert engine.step(run, "finished", "done")["state"] == "succeeded"
REVIEWER_REJECTS = (f'  - {{level: 2, checklist: ["The fix is minimal"]}}\n'
                    f'  - {{level: 5, name: reviewer, run: "{PY} -c \'raise SystemExit(1)\'", expect: {{exit: 0}}}}')


def test_lint_refuses_a_ladder_whose_success_level_only_the_agents_own_answers_reach(toy: Path, runner: CliRunner):
    (toy / ".agents/loops/gap.md").write_text(spec_text("gap", verify=REVIEWER_REJECTS), encoding="utf-8")
    result = runner.invoke(cli, ["--root", str(toy), "loop", "lint", "--json", "gap"])
    assert result.exit_code == 1, result.output
    (problem,) = json.loads(result.output)
    assert "success needs level 4" in problem["problem"] and "level 2" in problem["problem"], problem


def test_a_checklist_alone_never_reaches_success_above_level_2(toy: Path, store: Store):
    (toy / ".agents/loops/gap.md").write_text(spec_text("gap", verify=REVIEWER_REJECTS), encoding="utf-8")
    store.refresh()
    engine = Engine(store)
    try:
        engine.accept("gap")
        run = engine.start("gap")["run"]
    except Exception as exc:  # noqa: BLE001 - the refusal is the point: the spec never runs
        assert "success needs level 4" in str(exc)
        return
    assert engine.step(run, "done", "done", {"The fix is minimal": True})["state"] != "succeeded"


def test_a_step_whose_command_is_missing_names_the_command_what_the_shell_said_and_what_to_do(toy: Path, store: Store):
    engine = engine_for(toy, store, '  - {level: 3, name: typecheck, run: "no-such-checker --strict ."}', level=3)
    run = engine.start("fix-add")["run"]
    answer = engine.step(run, "done")
    assert answer["state"] == "unverifiable"
    said = answer["instruction"]
    assert "no-such-checker --strict ." in said and "not found" in said and "install" in said, said
