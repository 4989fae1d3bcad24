"""A clone's id (kept in its state folder, with a copy beside its key; the id a linked worktree had of its own), and
its checkouts: the main one and its linked worktrees, which share what the clone's git dir holds (its info/exclude)."""

from __future__ import annotations

import logging
import re
from pathlib import Path


def clone_id(git_dir: Path, state_dir: Path, remembered: Path | None = None) -> str:
    """This clone's id (8 hex digits), kept in the git dir with the git dir's place and inode. A copied checkout or a
    restored backup carries the file along to a new place while the original still holds its own: it gets an id of its
    own. A clone moved or renamed (`mv repo repo2`, to another disk) keeps its id (`_moved`). `remembered` (the key
    folder, outside the repository) keeps a copy, so deleting the state folder, which a person may do, keeps the id: a
    new one made every record the clone had not committed yet another clone's, and, unmarked by the new key, 'written
    outside'."""
    import json
    import secrets

    from repo_memory.guards import disk

    where, found = str(git_dir.resolve()), git_dir.stat()
    here: dict[str, object] = {"git_dir": where, "inode": found.st_ino, "device": found.st_dev}
    places = [state_dir / "clone.json"]
    if remembered is not None:
        places.append(_record(remembered, where))
    with disk.repo_lock(state_dir, "clone.lock"):  # processes starting together in a new clone agree on one id
        records = [_read(path) for path in places]
        known = next((r for r in records if r and {k: r.get(k, found.st_dev) for k in here} == here), None)
        if known is None and records[0] and _moved(records[0], where, remembered):
            known = {**here, "id": records[0]["id"]}
            if remembered is not None and _read(left := _record(remembered, str(records[0]["git_dir"]))).get("id") == known["id"]:
                left.unlink(missing_ok=True)  # its place holds it no more
        known = {**here, "id": known["id"]} if known else {**here, "id": secrets.token_hex(4)}
        for path, record in zip(places, records):
            try:
                if record != known:
                    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # the key folder is private
                    disk.write_atomic(path, json.dumps(known).encode())
            except OSError as exc:
                if path == places[0]:
                    raise
                logging.getLogger("repo_memory").warning("could not keep a copy of this clone's id in %s: %s", path.parent, exc)
        return str(known["id"])


def _moved(known: dict[str, object], where: str, remembered: Path | None) -> bool:
    """Whether the clone `known` names (its git dir's place, inode and device when it was last used) is the one at
    `where` now, moved there: no place it was known at still holds a git dir of that inode (`mv` keeps the inode on one
    file system; a move to another disk, or a copy whose original was removed, leaves nothing at the old place). While
    one does, `where` is a copy of it. A place reached otherwise (a bind mount) is `where` itself."""
    places = [known]
    if remembered is not None:  # where else this id was used: a copy that went on elsewhere, or the original moved
        places += [r for p in remembered.glob("clone-*.json") if (r := _read(p)).get("id") == known["id"]]
    me = Path(where).stat()
    for place in places:
        try:
            there = Path(str(place.get("git_dir"))).stat()
        except (OSError, ValueError):
            continue
        if (there.st_dev, there.st_ino) == (me.st_dev, me.st_ino):
            continue  # `where` itself
        if there.st_ino == place.get("inode") and there.st_dev == place.get("device", there.st_dev):
            return False
    return True


def _record(remembered: Path, where: str) -> Path:
    """The copy of the id of the clone whose git dir is at `where`, in the key folder."""
    import hashlib

    return remembered / f"clone-{hashlib.sha256(where.encode()).hexdigest()[:16]}.json"


def _read(path: Path) -> dict[str, object]:
    """A clone id record ({} when none is there, or it is not one)."""
    import json

    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return known if isinstance(known, dict) and re.fullmatch(r"[0-9a-f]{8}", str(known.get("id"))) else {}


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
