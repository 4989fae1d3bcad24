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

import errno
import logging
import os
import stat
from pathlib import Path

from repo_memory.errors import UnsafePathError
from repo_memory.guards import disk

FOLDER = "torn"  # in the clone's state folder
NAMES = 100  # names tried for fragments cut at one byte (<log>.<offset>, then .2, .3, ...): a bounded search
_CHUNK = 64 * 1024
log = logging.getLogger("repo_memory")


def set_aside(fd: int, path: Path, state: Path, keep: int = 0) -> Path | None:
    """Move the torn tail of the log `path` (open read-write as `fd`, its flock held by the caller) to the folder
    `torn` of the clone's `state` folder and cut the log back to just after its last newline. Returns where the bytes
    went, or None when the log ends with a newline (or is empty), or when its tail starts before byte `keep` (bytes
    git holds are never cut). An OSError (the folder cannot be written, or NAMES fragments were cut at that byte) or an
    UnsafePathError (the folder is a link or no folder) leaves the log as it is."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    start = _after_last_newline(fd, size)
    if start < keep:
        return None
    data = os.pread(fd, size - start, start)
    target = _free_name(_folder(state), f"{path.name}.{start}", data)
    disk.write_atomic(target, data)
    os.ftruncate(fd, start)
    os.fsync(fd)
    log.warning("%s ended with a torn line (%d bytes no append acknowledged); moved to %s", path, len(data), target)
    return target


def _folder(state: Path) -> Path:
    """The torn folder, made if missing; refused unless it is a real folder (a link to one elsewhere would take the
    bytes out of the git dir)."""
    folder = state / FOLDER
    state.mkdir(exist_ok=True)  # not its parents: a git dir that is gone is not made again
    try:
        folder.mkdir()
    except FileExistsError:
        pass
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        raise UnsafePathError(f"'{folder}' is not a folder (a link, or a file); repo-memory moves torn lines only into a "
                              "real folder. Remove it; it is made again.")
    return folder


def _free_name(folder: Path, name: str, data: bytes) -> Path:
    """Where a fragment goes: `name`, or the copy already there with these very bytes (a cut redone after a kill), or
    the first of name.2, name.3, ... not taken. A copy is compared only when it is a plain file of the same size, read
    without following a link (a FIFO or /dev/zero there would block or never end); anything else is a name taken."""
    for n in range(1, NAMES + 1):
        target = folder / (name if n == 1 else f"{name}.{n}")
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            return target
        if stat.S_ISREG(st.st_mode) and st.st_size == len(data):
            try:
                if disk.read_safely(target) == data:
                    return target
            except (OSError, UnsafePathError):
                pass  # gone meanwhile, or not a plain file after all: taken
    raise OSError(errno.EEXIST, f"{NAMES} torn lines were already moved aside for this byte of the log; remove some", str(folder / name))


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
    """The torn tails moved aside in this clone, oldest first (plain files in a real folder: no link followed)."""
    folder = state / FOLDER
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return []
        with os.scandir(folder) as entries:
            files = [(e.stat(follow_symlinks=False).st_mtime_ns, e.name) for e in entries
                     if e.is_file(follow_symlinks=False) and not disk.is_temp(e.name)]
    except OSError:  # missing, unreadable, or a file gone meanwhile
        return []
    return [folder / name for _, name in sorted(files)]
