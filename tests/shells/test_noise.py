"""What hooks record about a session's life (its start and end, compactions) stays in the log but out of the way of
what the session did: default recall leaves it out, `kinds` still reaches it."""

from __future__ import annotations

from pathlib import Path

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells import hooks

SESSION = "5d1f0c7e-2a43-4c1b-9a0e-3f6b8d2c1a90"


def test_session_end_and_compaction_records_stay_out_of_default_recall_and_kinds_reach_them(repo: Path):
    store = Store(Config.load(repo), session=SESSION)
    store.remember("Decided the session should end the docs build with a link check, not tox.", kind="decision")
    store.remember("The harness context was full of build logs.", kind="observation")
    store.close()
    event = {"session_id": SESSION, "cwd": str(repo)}
    hooks.handle("pre-compact", {**event, "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""})
    hooks.handle("session-end", {**event, "hook_event_name": "SessionEnd", "reason": "other"})
    store = Store(Config.load(repo))
    try:
        kinds = {h.id: h.kind for h in store.recall("session ended", kinds=["observation", "summary", "decision"], limit=10).hits}
        assert set(kinds.values()) == {"observation", "summary", "decision"}, kinds  # all there, reachable by kind
        for question in ("session ended", "the harness compacted its context", "why did the session end"):
            found = [h.id for h in store.recall(question, limit=10).hits]
            assert f"{SESSION}#3" not in found and f"{SESSION}#4" not in found, (question, found)
        assert [h.id for h in store.recall("session end docs build").hits][:1] == [f"{SESSION}#1"]
    finally:
        store.close()
