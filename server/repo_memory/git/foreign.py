"""Whether an experience log pending a commit holds what this clone's repo-memory did not write: the check a memory
commit makes of each log under the log's own lock, whose bytes are then the ones committed (git/committer.py)."""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

from repo_memory.errors import UnsafePathError
from repo_memory.formats import experience
from repo_memory.git.repo import Git
from repo_memory.guards import authorship, disk, torn

log = logging.getLogger("repo_memory")


def why(git: Git, clone_dir: Path, key: authorship.Key | None, path: str, checked: dict[str, tuple[bytes, int] | None],
        base: str | None) -> str:
    """Why the log at `path` must not be committed by us, or '': it gained lines this clone's repo-memory did not write
    as they stand (a hand edit, an agent's file tool) or its committed records changed; committing would pass a forgery
    off as the server's or make a loss permanent, so the file stays as it is for a person to judge.

    Under the lock every append holds, a torn tail goes first (guards/torn.py); the bytes then checked go into `checked`."""
    if not path.endswith(".jsonl") or f"/{experience.EXPERIENCE_DIR.split('/')[-1]}/" not in f"/{path}":
        return ""
    if os.path.realpath((git.root / path).parent) != os.path.join(os.path.realpath(git.root), os.path.dirname(path)):
        return "it lies in a folder that is a symbolic link; repo-memory commits only logs it can check as this repository's"
    try:
        try:
            fd = disk.open_safely(git.root / path, os.O_RDWR)
        except PermissionError:  # a read-only log: a torn tail cannot be cut, and the log is then held back
            fd = disk.open_safely(git.root / path)
    except FileNotFoundError:
        checked[path] = None  # deleted: the commit records that, also when a file came back since
        return ""
    except (OSError, UnsafePathError) as exc:  # a link lies partly outside what is checked; other errors git reports
        return str(exc).split("; ")[0].replace(f"'{Path(path).name}' is", "it is", 1) if isinstance(exc, UnsafePathError) else ""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        entry = git.entry(base, path) if base else None
        start = entry[1] if entry else 0
        try:
            torn.set_aside(fd, git.root / path, clone_dir, keep=start)
        except (OSError, UnsafePathError) as exc:
            log.warning("%s: its torn last line could not be moved aside: %s", path, exc)
        with os.fdopen(os.dup(fd), "rb") as handle:  # the dup shares the lock; closing it keeps it held
            checked[path] = (data := handle.read(), os.fstat(fd).st_mode)
    finally:
        os.close(fd)  # closing releases the lock
    if data[start:] and not data.endswith(b"\n"):  # the folder could not be written, or git holds the line's start
        return f"its last line has no newline and could not be moved aside to {clone_dir / torn.FOLDER}"
    if key is None:
        return ""
    if base and entry and (start > len(data) or git.blob(base, path) != data[:start]):
        return "its committed records were changed or removed"
    held = data.count(b"\n", 0, start)  # lines git holds
    for number, (offset, raw, _) in enumerate(experience.split_lines(data[start:], base=start), start=held + 1):
        if key.vouched(raw):
            continue  # a line this process wrote
        line = experience.parse_line(raw, offset, check=False)  # the mark decides, not the schema
        if line.record is None or not authorship.signed(line.record, key):
            return f"line {number} (at byte {offset}) was not written by repo-memory on this clone"
        if experience.seal(line.record)["sha256"] != line.record.get("sha256"):
            return f"line {number} ({line.record.get('id')}) was changed after repo-memory wrote it (it no longer matches its sha256)"
    return ""
