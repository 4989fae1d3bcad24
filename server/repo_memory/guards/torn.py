"""A log's torn tail, moved out of it: the bytes after its last newline, which repo-memory never acknowledged.

An append answers only once its whole line, newline included, is on disk, and every repo-memory writer appends under
the file's flock. So whoever holds that lock, to append to the log or to commit it, knows that no writer of ours is in
the middle of an append, and that bytes after the last newline are a fragment no one was told was kept: the start of
a record a killed process (or a power loss) cut short, or a line someone else wrote without its newline. Left in
place it would be committed with the log, and one newline later (an editor's, an agent's) it would be a complete line
git holds, a record served as committed. It goes instead to `<state>/torn/<log file name>.<offset>` (fsynced before
the log is cut back), for a person to look at; nothing is lost, and nothing torn is ever committed.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from repo_memory.guards import disk

FOLDER = "torn"  # in the clone's state folder
_CHUNK = 64 * 1024
log = logging.getLogger("repo_memory")


def set_aside(fd: int, path: Path, state: Path, keep: int = 0) -> Path | None:
    """Move the torn tail of the log `path` (open read-write as `fd`, its flock held by the caller) to the folder
    `torn` of the clone's `state` folder and cut the log back to just after its last newline. Returns where the bytes
    went, or None when the log ends with a newline (or is empty), or when its tail starts before byte `keep` (bytes
    git holds are never cut). An OSError (the folder cannot be written) leaves the log as it is."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    start = _after_last_newline(fd, size)
    if start < keep:
        return None
    data = os.pread(fd, size - start, start)
    folder = state / FOLDER
    state.mkdir(exist_ok=True)  # not its parents: a git dir that is gone is not made again
    folder.mkdir(exist_ok=True)
    target, n = folder / f"{path.name}.{start}", 1
    while target.exists() and target.read_bytes() != data:  # another fragment once cut at the same byte: keep both
        n += 1
        target = folder / f"{path.name}.{start}.{n}"
    disk.write_atomic(target, data)
    os.ftruncate(fd, start)
    os.fsync(fd)
    log.warning("%s ended with a torn line (%d bytes no append acknowledged); moved to %s", path, len(data), target)
    return target


def _after_last_newline(fd: int, size: int) -> int:
    """The offset just after the file's last newline (0 when it has none)."""
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        index = os.pread(fd, end - start, start).rfind(b"\n")
        if index >= 0:
            return start + index + 1
        end = start
    return 0


def found(state: Path) -> list[Path]:
    """The torn tails moved aside in this clone, oldest first."""
    folder = state / FOLDER
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.iterdir() if p.is_file() and not disk.is_temp(p.name)), key=lambda p: (p.stat().st_mtime_ns, p.name))
