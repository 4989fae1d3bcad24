"""The Stop hook as the loop driver: at each stop of the agent, every live run of its session is verified, and the stop
is blocked, with each failing run's next instruction, while any of them goes on.

`stop_hook_active` (the harness is already continuing because of a stop hook) does not end a live run early — driving
several rounds is the point — but every run is bounded by its spec's budget and by HARD_CAP blocks.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from repo_memory.formats import loops
from repo_memory.errors import InvalidRecordError, NotFoundError, RepoMemoryError
from repo_memory.git.pending import harness_pid
from repo_memory.shells import deliveries

if TYPE_CHECKING:
    from repo_memory.core.store import Store
    from repo_memory.runner.engine import Engine
    from repo_memory.runner.runstate import RunState

log = logging.getLogger("repo_memory")
HARD_CAP = 25  # stop-hook blocks per run, whatever the spec says: a session is never trapped


def stop(store: Store, payload: dict[str, Any]) -> dict[str, Any]:
    """Verify each live run of the session; block the stop while any goes on, naming each, else say how they ended."""
    from repo_memory.runner.engine import Engine  # only the stop and start hooks need the loop engine

    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        return {}
    deadline = time.monotonic() + loops.STOP_BUDGET  # the harness kills the hook at setup's STOP_TIMEOUT: answer before
    engine = Engine(store)
    store.refresh()
    states = {run: engine.state(run) for run in reversed(engine.live_for(session, harness_pid()))}  # oldest first
    if not states:
        return {}
    # Two registrations' copies of one stop are one event; an agent saying the same words at two stops is two, told
    # apart by the transcript's size. An older setup's Stop hook passes no transcript_path: Claude Code's file for the
    # session is found, and failing that, how far the runs have got tells them apart.
    told = dict(payload)
    if deliveries.size(told.get("transcript_path")) < 0:
        found = deliveries.claude_transcript(session)
        told.update({"transcript_path": str(found)} if found else {"run": [[r, s.iterations] for r, s in states.items()]})
    if not deliveries.first_delivery(store.config.state_dir, "stop", told):
        return {}
    blocks: list[str] = []
    ended: list[str] = []
    for run, state in states.items():
        try:
            goes_on, said = _verified(engine, run, state, payload, deadline)
        except RepoMemoryError as exc:  # this run cannot be stepped now: the others still are; it does not hold the agent
            log.warning("stop hook: run %s: %s", run, exc)
            continue
        (blocks if goes_on else ended).append(said)
    if blocks:
        return {"decision": "block", "reason": "\n\n".join([*blocks, *ended])}
    return {"systemMessage": " ".join(ended)} if ended else {}


def _verified(engine: Engine, run: str, state: RunState, payload: dict[str, Any], deadline: float) -> tuple[bool, str]:
    """Step run `run` with the agent's last message: whether it goes on (the stop is blocked), and what to say of it."""
    from repo_memory.runner import checklist

    try:
        spec = engine.spec(state.loop)
    except (NotFoundError, InvalidRecordError) as exc:  # nothing can verify it again: end it, uncharged, not leave it live
        engine.abort(run, f"its loop spec cannot be read: {exc}")
        return False, f"repo-memory: loop run {run} ended aborted: its loop spec cannot be read ({exc})."
    if state.iterations >= HARD_CAP or (payload.get("stop_hook_active") and state.iterations >= spec.max_iterations):
        engine.abort(run, f"the stop-hook cap was reached after {state.iterations} iterations")
        return False, f"repo-memory: loop run {run} stopped at the hook's cap."
    report = str(payload.get("last_assistant_message") or "(the agent stopped; the hook payload carried no message)")
    # The agent answers the checklist in its last message (the block reason asked it to, in words).
    result = engine.step(run, report[-8000:], "done", checklist.answers(report), in_words=True,
                         then="Fix this; when you stop, the checks run again.", deadline=deadline)
    cut = f" {result['cut_off']}" if result.get("cut_off") else ""
    if result["state"] == "continue":
        return True, f"[repo-memory loop {run}] {result['instruction']}{cut}"
    return False, f"repo-memory: loop run {run} ended {result['state']} ({result['receipt']}): {_why(result)}{cut}"


def _why(result: dict[str, Any]) -> str:
    """The reason of a run's end, in a line."""
    return (str(result["instruction"]).removeprefix(f"Stop: the run ended {result['state']}. ").splitlines() or [""])[0][:500]
