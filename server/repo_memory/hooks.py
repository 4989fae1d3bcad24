"""Harness hook handlers: JSON in, JSON out, and never a blocked harness because of an error of ours."""

from __future__ import annotations

import logging
import sqlite3
from typing import Any

from repo_memory.config import Config
from repo_memory.errors import RepoMemoryError
from repo_memory.runs import Engine
from repo_memory.store import Store

log = logging.getLogger("repo_memory")
HARD_CAP = 25  # stop-hook blocks per run, whatever the spec says: a session is never trapped


def handle(event: str, payload: dict[str, Any], root: str | None = None) -> dict[str, Any]:
    """Answer one hook event; on any failure, the answer lets the harness carry on."""
    handler = HANDLERS.get(event)
    if handler is None:
        log.warning("unknown hook event %r; known: %s", event, ", ".join(HANDLERS))
        return {}
    try:
        store = Store(Config.load(root or payload.get("cwd") or None))
    except (RepoMemoryError, OSError, sqlite3.Error) as exc:
        log.warning("hook %s: %s", event, exc)
        return {}
    try:
        return handler(store, payload)
    except (RepoMemoryError, OSError, sqlite3.Error, KeyError, ValueError) as exc:
        log.warning("hook %s failed, letting the harness continue: %s", event, exc)
        return {}
    finally:
        store.close()


def stop(store: Store, payload: dict[str, Any]) -> dict[str, Any]:
    """The Stop-hook loop driver: while this session's run is live, verify and block the stop with the next instruction.

    `stop_hook_active` (the harness is already continuing because of a stop hook) does not end a live run early —
    driving several rounds is the point — but every run is bounded by its spec's budget and by HARD_CAP blocks.
    """
    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        return {}
    engine = Engine(store)
    store.refresh()
    run = engine.live_for(session)
    if run is None:
        return {}
    state = engine.state(run)
    if state.iterations >= HARD_CAP or (payload.get("stop_hook_active") and state.iterations >= engine.spec(state.loop).max_iterations):
        engine.abort(run, f"the stop-hook cap was reached after {state.iterations} iterations")
        return {"systemMessage": f"repo-memory: loop run {run} stopped at the hook's cap."}
    report = payload.get("last_assistant_message") or "(the agent stopped; the hook payload carried no message)"
    result = engine.step(run, str(report)[-8000:], "done")
    if result["state"] == "continue":
        return {"decision": "block", "reason": f"[repo-memory loop {run}] {result['instruction']}"}
    return {"systemMessage": f"repo-memory: loop run {run} ended {result['state']} ({result['receipt']})."}


HANDLERS = {"stop": stop}
