"""An agent rewriting one skill over and over: each rewrite noted per clone, and the skills that churn instead of
converging (REWRITES_FLAGGED rewrites within REWRITE_WINDOW seconds), which the write warns about and doctor lists."""

from __future__ import annotations

import json
import time
from pathlib import Path

from repo_memory.guards import disk

REWRITES_FILE = "agent-rewrites.json"
REWRITES_FLAGGED = 4  # an agent rewriting one skill this often …
REWRITE_WINDOW = 600  # … within this many seconds is churning, not converging


def note(state_dir: Path, name: str) -> int:
    """Record an agent's rewrite of skill `name`; how many it had within the window (across sessions on this clone)."""
    path = state_dir / REWRITES_FILE
    now = time.time()
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = {}
    recent = [t for t in seen.get(name, []) if now - t < REWRITE_WINDOW] + [now]
    seen = {k: [t for t in v if now - t < 86400] for k, v in seen.items() if k != name}
    seen[name] = recent
    disk.write_atomic(path, json.dumps(seen).encode("utf-8"))
    return len(recent)


def churning(state_dir: Path) -> list[tuple[str, int]]:
    """Skills an agent rewrote REWRITES_FLAGGED or more times within REWRITE_WINDOW seconds, in the last day."""
    try:
        seen = json.loads((state_dir / REWRITES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out = []
    for name, times in sorted(seen.items()):
        times = sorted(times)
        most = max((sum(1 for u in times if 0 <= u - t < REWRITE_WINDOW) for t in times), default=0)
        if most >= REWRITES_FLAGGED:
            out.append((name, most))
    return out
