"""A clone's id (kept in its state folder, with a copy beside its key; the id a linked worktree had of its own), and
its checkouts: the main one and its linked worktrees, which share what the clone's git dir holds (its info/exclude)."""

from __future__ import annotations

import logging
import re
from pathlib import Path


def clone_id(git_dir: Path, state_dir: Path, remembered: Path | None = None) -> str:
    """This clone's id (8 hex digits), kept in the git dir. A copied checkout or a restored backup carries the file
    along, but not the git dir's place and inode, so it gets an id of its own. `remembered` (the key folder, outside
    the repository) keeps a copy, so deleting the state folder, which a person may do, keeps the id: a new one made
    every record the clone had not committed yet another clone's, and, unmarked by the new key, 'written outside'."""
    import hashlib
    import json
    import secrets

    from repo_memory.guards import disk

    where = str(git_dir.resolve())
    here: dict[str, object] = {"git_dir": where, "inode": git_dir.stat().st_ino}
    places = [state_dir / "clone.json"]
    if remembered is not None:
        places.append(remembered / f"clone-{hashlib.sha256(where.encode()).hexdigest()[:16]}.json")
    with disk.repo_lock(state_dir, "clone.lock"):  # processes starting together in a new clone agree on one id
        for path in places:
            try:
                known = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(known, dict) and {k: known.get(k) for k in here} == here and re.fullmatch(r"[0-9a-f]{8}", str(known.get("id"))):
                break
        else:
            known = {**here, "id": secrets.token_hex(4)}
        for path in places:
            try:
                if not path.is_file() or json.loads(path.read_text(encoding="utf-8")) != known:
                    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the key folder is private
                    disk.write_atomic(path, json.dumps(known).encode())
            except (OSError, ValueError) as exc:
                if path == places[0]:
                    raise
                logging.getLogger("repo_memory").warning("could not keep a copy of this clone's id in %s: %s", path.parent, exc)
        return str(known["id"])


def former_id(state_dir: Path) -> str:
    """The id a state folder's clone.json names ('' when none): a linked worktree's own, from before its clone's id was
    one for all its worktrees."""
    import json

    try:
        known = json.loads((state_dir / "clone.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    found = known.get("id") if isinstance(known, dict) else None
    return found if isinstance(found, str) and re.fullmatch(r"[0-9a-f]{8}", found) else ""



def other_checkouts(top: Path) -> list[Path]:
    """The checkouts of `top`'s repository besides `top` (its main one and linked worktrees): what the common git dir
    holds, a line of its info/exclude, serves them all."""
    from repo_memory.git.repo import Git

    listed = Git(top, top).run("worktree", "list", "--porcelain", check=False).stdout  # runs in `top`, reads no git dir
    found = [Path(line.removeprefix("worktree ")) for line in listed.splitlines() if line.startswith("worktree ")]
    return [path for path in found if path.resolve() != top.resolve()]
