"""A loop run's lock, held across processes by whoever steps the run (runner/runstate.turn), and what it tells: a run
whose log ends mid-check while nobody holds its lock had that check cut off (its hook killed, its process crashed)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from repo_memory.guards import disk

FOLDER = "loop-runs"  # under the checkout's state dir: one `<run>.lock` per live run


@contextmanager
def held(state_dir: Path, run: str) -> Iterator[None]:
    """Hold run `run`'s lock, waiting for whoever holds it."""
    with disk.repo_lock(state_dir / FOLDER, f"{run}.lock"):
        yield


def began(records: Sequence[dict[str, Any]]) -> str:
    """When the check a run's log ends in began (its loop.report's time), or '' when the log ends in a decision."""
    if not records or records[-1]["kind"] not in ("loop.report", "loop.verify"):
        return ""
    return str(next(r for r in reversed(records) if r["kind"] == "loop.report")["ts"])


def cut_off(state_dir: Path, run: str, records: Sequence[dict[str, Any]]) -> str:
    """When the check of live run `run` that nobody runs any more began, or '': its log ends mid-check and no process of
    this checkout holds the run's lock (one that is checking it holds it throughout)."""
    at = began(records)
    if not at or not (state_dir / FOLDER / f"{run}.lock").exists():  # whoever takes the lock makes its file: none, nobody
        return at
    with disk.try_lock(state_dir / FOLDER, f"{run}.lock") as free:
        return at if free else ""


def progress(row: dict[str, Any]) -> str:
    """How far a run of `loop status` rows got: its decided iterations, and a check of a live run cut off (`cut_off`)."""
    done = int(row.get("iterations") or 0)
    if row.get("cut_off"):
        return "cut off in its first check" if not done else f"{done} iteration(s), then a check cut off"
    return f"{done} iteration(s)"
