"""The files of one session's log: their names (`<session>.jsonl`, then `<session>+<n>.jsonl`), which of them hold
the session, and the tip that says where the session got to in this clone (core/journal.py explains why)."""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repo_memory.errors import InvalidArgumentError
from repo_memory.formats.experience import EXPERIENCE_DIR, parse_line
from repo_memory.formats.refs import SESSION
from repo_memory.git.history import Touch, last_change
from repo_memory.git.repo import Git
from repo_memory.guards.shellwords import quoted

_CHUNK = 64 * 1024
SEGMENT = "+"  # <session>+<n>.jsonl: a session's log after its first file was committed ('+' is in no session id)
TIPS_DIR = "session-tips"  # in the clone's state folder: where each session's log got to
log = logging.getLogger("repo_memory")


class Tip:
    """The file noting where a session got to in this clone (`<tips>/<session>.json`: the file of its last record,
    relative to the root, its seq and sha256), held under its lock while a writer appends. Written over in place (a
    new file and a rename, or a truncation, cost a fifth of an append) and not synced: a tip found torn, lost to a
    crash or never kept (`tips` None) leaves the files alone to tell, as before there were tips."""

    def __init__(self, tips: Path | None, session: str, lock: bool = True):
        self._path, self._session, self._lock, self._fd = tips / f"{session}.json" if tips else None, session, lock, -1

    def __enter__(self) -> Tip:
        if self._path is not None:
            flags = (os.O_RDWR | os.O_CREAT if self._lock else os.O_RDONLY) | os.O_NOFOLLOW | os.O_CLOEXEC
            try:
                try:
                    self._fd = os.open(self._path, flags, 0o644)
                except FileNotFoundError:
                    if not self._lock:
                        return self
                    self._path.parent.mkdir(parents=True, exist_ok=True)
                    self._fd = os.open(self._path, flags, 0o644)
                if self._lock:
                    fcntl.flock(self._fd, fcntl.LOCK_EX)
            except OSError as exc:
                log.warning("cannot use the tip of session %s (%s); its files alone say where it got to", self._session, exc)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing releases the lock

    def read(self) -> tuple[Path, int, str] | None:
        """(file, seq, sha256) of the session's last record written in this clone, or None."""
        if self._fd < 0:
            return None
        try:
            tip = json.loads(os.pread(self._fd, 4096, 0))
            where = Path(tip["file"])
            if where.is_absolute() or ".." in where.parts or number(where, self._session) < 1:
                return None
            return where, int(tip["seq"]), str(tip["sha256"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def keep(self, file: str, record: dict[str, Any]) -> None:
        if self._fd < 0:
            return
        data = json.dumps({"file": file, "seq": record["seq"], "sha256": record["sha256"]}).encode()
        try:
            os.pwrite(self._fd, data, 0)
            os.ftruncate(self._fd, len(data))
        except OSError as exc:
            log.warning("could not note where session %s got to: %s", self._session, exc)


def part_of(path: Path) -> tuple[str, int]:
    """(session, which of its files) of a log file's name: `s.jsonl` is (s, 1), `s+3.jsonl` (s, 3)."""
    stem = path.name.removesuffix(".jsonl")
    session, _, tail = stem.rpartition(SEGMENT)
    if session and number(path, session) > 1:
        return session, int(tail)
    return stem, 1


def number(path: Path, session: str) -> int:
    """Which of `session`'s files `path` is: 1 for `<session>.jsonl`, n for `<session>+n.jsonl`, 0 for neither."""
    stem = path.name.removesuffix(".jsonl")
    if stem == session:
        return 1
    tail = stem.removeprefix(session + SEGMENT)
    return int(tail) if tail != stem and tail.isascii() and tail.isdigit() and tail[0] != "0" and int(tail) > 1 else 0


def logged(git: Git, name: str, owned: Callable[[str], str] | None = None) -> tuple[str, Touch] | None:
    """(session, the newest commit of memory's history that changed a file of its log) of session `name` (with `owned`,
    Journal.owned, first the log this clone keeps under a name a person gave), when git's history holds one: where a
    log none of whose files is in this checkout went (a revert, a `git rm`). None when no commit changed one.
    A session's files are `<month>/<session>.jsonl` and the `+n` files beside it: globs find them in any month."""
    if not SESSION.match(name) or ".." in name:
        return None  # no session's name (a glob character in it would match other files)
    try:
        meant = dict.fromkeys([owned(name), name] if owned else [name])
    except InvalidArgumentError:  # a name no session may have (a device name Windows reserves)
        return None
    for session in meant:
        where = f":(glob){EXPERIENCE_DIR}/*/{session}"
        touch = last_change(git, [f"{where}.jsonl", f"{where}{SEGMENT}*.jsonl"])
        if touch is not None:
            return session, touch
    return None


def removal(session: str, touch: Touch) -> str:
    """What a read of `session`, none of whose files is in this checkout, says of where its log went (`logged`)."""
    sha, subject = touch.sha[:12], touch.subject[:80]
    if touch.removed:  # the commit's parent held it
        return (f" Commit {sha} removed its log ({subject}): read it as it was with as_of {sha}~1 (`repo-memory history "
                f"{quoted(session)} --as-of {sha}~1`); `repo-memory history {quoted(session)}` lists its commits.")
    return (f" Its log is not in this checkout, though commit {sha} ({subject}) holds it: "
            f"`git checkout {sha} -- {quoted(touch.path)}` restores it, and as_of {sha} reads it as it was.")


def begun(path: Path, session: str) -> bool:
    """Whether `path` holds a session's file: its first file once created, a `+n` file once written to (it is begun
    under the lock of the file before it, so an empty one is only ever one whose writer was killed)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return False
    return size > 0 or number(path, session) == 1


def segment(path: Path, session: str, n: int) -> Path:
    """The `n`th file of `session` beside `path`."""
    return path.with_name(f"{session}.jsonl" if n == 1 else f"{session}{SEGMENT}{n}.jsonl")


def tail(fd: int) -> tuple[int, str | None, bool, dict[str, Any] | None]:
    """Where a log got to: (its last valid record's seq, its sha256, whether the file ends with a newline, the record),
    read backwards from its end; (0, None, ..., None) when it holds no valid record."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0, None, True, None
    clean_end = os.pread(fd, 1, size - 1) == b"\n"
    buf, buf_start = b"", size

    def newline_before(position: int) -> int:
        nonlocal buf, buf_start
        while True:
            index = buf.rfind(b"\n", 0, max(0, position - buf_start))
            if index >= 0:
                return buf_start + index
            if buf_start == 0:
                return -1
            start = max(0, buf_start - _CHUNK)
            buf = os.pread(fd, buf_start - start, start) + buf
            buf_start = start

    end = size - 1 if clean_end else newline_before(size)  # the newline ending the last complete line
    while end >= 0:
        start = newline_before(end) + 1
        raw = buf[start - buf_start : end - buf_start]
        if raw:
            line = parse_line(raw, start)
            if line.record is not None:
                return int(line.record["seq"]), str(line.record["sha256"]), clean_end, line.record
        end = start - 1
    return 0, None, clean_end, None
