"""Writing memory files: atomically (temp file, fsync, rename) and under a per-repository lock."""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from repo_memory.errors import UnsafePathError


@contextmanager
def repo_lock(state_dir: Path, name: str = "write.lock") -> Iterator[None]:
    """Hold one of the repository's locks (an flock the kernel releases if we die, so no lock is ever stale)."""
    state_dir.mkdir(exist_ok=True)  # not its parents: a git dir that is gone (a removed worktree) is not made again
    fd = os.open(state_dir / name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


@contextmanager
def try_lock(state_dir: Path, name: str) -> Iterator[bool]:
    """Hold a repository lock if no other process holds it: yields True when this process got it, False otherwise."""
    state_dir.mkdir(exist_ok=True)  # not its parents: a git dir that is gone (a removed worktree) is not made again
    fd = os.open(state_dir / name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def open_safely(path: Path, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """Open a memory file without following a link at the last step (O_NOFOLLOW, checked by the kernel at open,
    so a link swapped in after a path check is still refused), and only when it is a regular file with no other
    hard link: a hard link would let writes land in, and reads come from, a file outside the repository."""
    try:
        # O_NONBLOCK: opening a FIFO planted where a memory file belongs would otherwise wait for a writer forever; on a
        # regular file it changes nothing, and anything else is refused below.
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"'{path.name}' is a symbolic link; repo-memory does not read or write through links.") from None
        if exc.errno == errno.ENXIO:  # a FIFO opened for writing with nobody reading it
            raise UnsafePathError(f"'{path.name}' is not a regular file; repo-memory only reads and writes plain files.") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        os.close(fd)
        what = "not a regular file" if not stat.S_ISREG(st.st_mode) else f"hard-linked ({st.st_nlink} names share its contents)"
        raise UnsafePathError(f"'{path.name}' is {what}; repo-memory only reads and writes plain files. Replace it with a copy "
                              f"(cp --remove-destination) if it belongs in memory.")
    return fd


def read_safely(path: Path) -> bytes:
    """The bytes of a memory file opened with `open_safely`."""
    with os.fdopen(open_safely(path), "rb") as handle:
        return handle.read()


_UMASK: list[int] = []


def umask() -> int:
    """The process's umask, read without changing it where the kernel tells it (os.umask can only set it, and setting
    it to read it back would race every thread creating a file meanwhile)."""
    if not _UMASK:
        try:
            with open("/proc/self/status", encoding="ascii") as status:
                _UMASK.append(next(int(line.split()[1], 8) for line in status if line.startswith("Umask:")))
        except (OSError, StopIteration, ValueError):
            current = os.umask(0o022)
            os.umask(current)
            _UMASK.append(current)
    return _UMASK[0]


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so readers see the old or the new file, never a torn one.

    A new file gets the mode the umask allows (as `open` would give it), a replaced one keeps its mode. The rename
    replaces the directory entry and never writes through a link; an existing link or hard-linked file in the way is
    refused all the same, since someone put it there to redirect memory."""
    mode = 0o666 & ~umask()
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            os.close(open_safely(path))  # raises the explanation
        mode = stat.S_IMODE(st.st_mode)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)  # mkstemp makes 0600 whatever the umask: a teammate's checkout would differ from git's
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # a write on an open file names none: say which file the disk refused
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp\Z")  # what write_atomic's mkstemp names look like: .<file>.<8 random>.tmp


def is_temp(path: str | Path) -> bool:
    """Whether `path` is a temporary file of `write_atomic` (never memory, never to commit)."""
    return bool(TEMP_NAME.match(Path(path).name))


def folders(parent: Path) -> list[str]:
    """The folders directly inside `parent` (links not followed); none when it is missing."""
    try:
        with os.scandir(parent) as entries:
            return [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:  # missing, not a folder, unreadable, a link loop: nothing to sweep there
        return []


def sweep_temps(folders: Sequence[str | Path], older_than: float = 60.0) -> list[Path]:
    """Remove the temporary files of writes that were killed before their rename (older than `older_than` seconds,
    so a write in progress keeps its file); returns what was removed. One directory read per folder, no links
    followed (pathlib's glob cost 0.24 s over 10k skill folders)."""
    removed, now = [], time.time()
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                found = [e for e in entries if e.name.startswith(".") and TEMP_NAME.match(e.name)]
        except OSError:  # missing, not a folder, unreadable, a link loop: nothing to sweep there
            continue
        for entry in found:
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > older_than:
                path = Path(entry.path)
                path.unlink(missing_ok=True)
                removed.append(path)
    return removed
