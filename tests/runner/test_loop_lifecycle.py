"""A run always has a way to end: when its spec is renamed, deleted or broken mid-run, and when two calls step it at once."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.errors import ConflictError
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli

from tests.conftest import records_of


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
