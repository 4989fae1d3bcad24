"""While an agent's shell call that may stage the whole tree runs (`git add -A && git commit`, shells/pretool.py
SWEEPING), git ignores the session logs and blobs no commit holds yet.

The pre-tool hook commits what is pending before such a call, but another session (a second agent's server, a hook of
a call running beside it) may write while it runs: its records begin a new untracked `+n` file, and the call's
`git add -A` took them into the agent's code commit, with no memory trailer and no memory commit after. So the
pre-tool hook notes the call (`begin`) and its post-tool hook, or the session's turn ending, takes the note back
(`end`); while any note is live, a marked block in the clone's info/exclude (one for all its worktrees) names those
files. Ignore rules hold for untracked files only: a committed log is untouched (repo-memory never appends to one),
repo-memory's own commits stage through plumbing, which reads no ignore rule, and every record is written and synced
as before; once the block goes, git sees them again and the session's next commit takes them. A note expires after
EXPIRY seconds, in case no post-tool hook ever comes (a killed harness, a call another hook refused).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from repo_memory.guards import disk

DIR = "sweeps"  # in the clone's state folder: one note per call running, its session and when it expires
LOCK = "sweeps.lock"
EXPIRY = 15 * 60  # seconds: longer than a harness lets a shell call run (Claude Code: 10 minutes at most)
MARK = "# repo-memory: an agent's shell call that may commit runs; memory written meanwhile waits for repo-memory's commit"
LINES = [MARK, "/.agents/experience/*/*.jsonl", "/.agents/experience/blobs/"]


def begin(state_dir: Path, common_dir: Path, call: str, session: str) -> None:
    """Note that the shell call `call` (a name for it) of `session` runs, and make git ignore uncommitted memory."""
    with disk.repo_lock(state_dir, LOCK):
        note = {"session": session, "until": time.time() + EXPIRY}
        disk.write_atomic(state_dir / DIR / call, json.dumps(note).encode())
        _settle(state_dir, common_dir)


def end(state_dir: Path, common_dir: Path, call: str = "", session: str = "") -> None:
    """Take back the note of `call`, or of every call of `session` (its turn ended), and expired ones; git sees
    uncommitted memory again once no note is left."""
    if not (state_dir / DIR).is_dir():
        return  # no call ever noted: every post-tool hook comes here, and stays this cheap
    with disk.repo_lock(state_dir, LOCK):
        for name, note in _notes(state_dir):
            if name == call or session and note.get("session") == session:
                with contextlib.suppress(OSError):
                    os.unlink(state_dir / DIR / name)
        _settle(state_dir, common_dir)


def _notes(state_dir: Path) -> list[tuple[str, dict[str, object]]]:
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(state_dir / DIR):
            if disk.is_temp(entry.name):
                continue
            try:
                note = json.loads(Path(entry.path).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                note = {}
            found.append((entry.name, note if isinstance(note, dict) else {}))
    return found


def _settle(state_dir: Path, common_dir: Path) -> None:
    """Drop expired notes (or unreadable ones), then put the block in info/exclude while a note is live, else take it out."""
    live = False
    for name, note in _notes(state_dir):
        until = note.get("until")
        if isinstance(until, (int, float)) and until > time.time():
            live = True
        else:
            with contextlib.suppress(OSError):
                os.unlink(state_dir / DIR / name)
    exclude = common_dir / "info" / "exclude"  # git reads it there only, also in a linked worktree
    try:
        lines = exclude.read_text(encoding="utf-8").splitlines() if exclude.exists() else []
    except OSError:
        return
    at = next((i for i in range(len(lines)) if lines[i:i + len(LINES)] == LINES), None)
    if live and at is None:
        disk.write_atomic(exclude, "".join(f"{line}\n" for line in [*lines, *LINES]).encode())
    elif not live and at is not None:
        kept = lines[:at] + lines[at + len(LINES):]
        disk.write_atomic(exclude, "".join(f"{line}\n" for line in kept).encode())
