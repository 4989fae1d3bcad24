"""A loop run as its log tells it: rebuilt from the loop.* records of the run's own session."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from repo_memory.core import runlock
from repo_memory.core.store import Store
from repo_memory.errors import InvalidArgumentError, NotFoundError
from repo_memory.formats import when
from repo_memory.git.pending import start_time


@dataclass(frozen=True)
class RunState:
    """A run as its log tells it."""

    run: str
    loop: str
    spec_sha: str
    started: float  # seconds since 1970
    iterations: int
    state: str
    signatures: tuple[str, ...]
    harness_session: str | None
    harness_pid: int  # the harness process the run's MCP server belonged to (0 when unknown), with its start time
    harness_started: int
    ids: tuple[str, ...]
    tree: str = ""  # the files its last check saw, experience records left out (git/snapshot.py; '' when none said)
    recorded: float = 0.0  # when its log last recorded something (its end, for one that ended), seconds since 1970


def read(store: Store, run: str) -> RunState:
    """The run rebuilt from its log and the logs other clones went on with it in (an abort there ends it everywhere
    once pulled); when two clones ended it before either pulled, the first end, in time, is the run's."""
    try:
        records = store.trusted(run)
    except (NotFoundError, InvalidArgumentError):
        live = [r for r in store.runs() if read(store, r).state == "running"]
        named = run.removeprefix("loop:") in store.loop_names()
        raise NotFoundError(f"No loop run '{run[:80]}'" + (": that is a loop's name; loop_start(name) starts a run of it and "
                            "returns its run id" if named else "") + ". loop_status() lists the runs.", live[:3]) from None
    start = next((r for r in records if r["kind"] == "loop.start"), None)
    if start is None:
        raise NotFoundError(f"Session '{run}' is not a loop run.")
    decisions = [r for r in records if r["kind"] == "loop.decision"]
    end = next((r for r in records if r["kind"] == "loop.end"), None)
    state = end["data"]["state"] if end else "running"
    return RunState(run=run, loop=start["data"]["loop"], spec_sha=start["data"]["spec_sha256"], started=_started(start),
                    iterations=len([d for d in decisions if d["data"].get("state") != "aborted"]), state=state,
                    signatures=tuple(d["data"].get("signature", "") for d in decisions if d["data"].get("state") == "continue"),
                    harness_session=start["data"].get("harness_session"), harness_pid=int(start["data"].get("harness_pid") or 0),
                    harness_started=int(start["data"].get("harness_started") or 0),
                    ids=tuple(r["id"] for r in records if r["kind"] != "loop.start"),
                    tree=str(decisions[-1]["data"].get("tree") or "") if decisions else "",
                    recorded=max(when.timestamp(r["ts"]) for r in records))


def _started(start: dict[str, Any]) -> float:
    """When the run started: its loop.start's `started` (`2026-12-06T02:04:36Z`; runs started before 2026-12-06 hold
    seconds since 1970 there), else that record's own time."""
    try:
        return when.timestamp(start["data"]["started"])
    except (KeyError, TypeError, ValueError):
        return when.timestamp(start["ts"])


def live_for(store: Store, harness_session: str, harness_pid: int = 0) -> list[str]:
    """The live runs this harness session started, newest first: by the session id its MCP server knew (Claude Code
    gives it to the server; Codex sends it with each tool call), else by the harness process that ran both the server
    and the hook."""
    out = []
    for rid in store.runs():
        s = read(store, rid)
        if s.state != "running":
            continue
        if s.harness_session == harness_session or (harness_pid and s.harness_pid == harness_pid and not s.harness_session
                                                    and start_time(harness_pid) == s.harness_started):
            out.append(rid)
    return out


@contextmanager
def turn(store: Store, run: str) -> Iterator[None]:
    """Hold run `run`'s lock, across processes, so its steps and its end happen one at a time; whoever holds it reads
    the run's state afresh. The lock file goes once the run has ended: a caller that was waiting on it, or opens a new
    one, finds the run ended and changes nothing, so removing it races with nobody."""
    read(store, run)  # an unknown run is refused before a lock file is named after it
    with runlock.held(store.config.state_dir, run):
        yield
        if read(store, run).state != "running":
            (store.config.state_dir / runlock.FOLDER / f"{run}.lock").unlink(missing_ok=True)


def cut_off(store: Store, run: str) -> str:
    """What to say of a check of `run` that began and never decided, or ''. Called holding the run's lock (`turn`), so
    no other check is under way."""
    if not (at := runlock.began(store.trusted(run))):
        return ""
    return (f"The check of run {run} that began at {at} was cut off before it decided (stopped from outside: "
            "a hook killed at its harness's timeout, a cancelled call, a crash); it ran again now.")


def left_off(store: Store, run: str) -> str:
    """When the check of live run `run` that no process runs any more began ('' when none: see runlock.cut_off)."""
    return runlock.cut_off(store.config.state_dir, run, store.trusted(run))
