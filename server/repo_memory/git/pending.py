"""The durable list of memory paths written but not committed yet: `<git-dir>/repo-memory/pending.v2.jsonl`.

A write is acknowledged only after its line is here (appended under a lock, fsynced), so a process that is
terminated or killed before it commits loses nothing: any later repo-memory process commits what a dead one left.
Each line names its owner — the process that will commit it: a server for its own writes, the harness process for
what its hooks wrote — by pid and process start time, so a reused pid is not mistaken for a live owner.

Releases before this format kept `pending.jsonl` and rewrote it from the lines they could parse, dropping any with a
key they did not know; one of them may still run beside this release (a server started before an upgrade). So this
release writes its lines to a file of their own, reads and prunes the old one under the same lock, and keeps a line it
cannot read (a later release's) as it is.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from repo_memory.guards import disk

JOURNAL = "pending.v2.jsonl"  # this format's list; a later format that an older reader must not rewrite takes another name
OLD_JOURNAL = "pending.jsonl"  # the list of releases before: read and pruned, never appended to
LOCK = "pending.lock"  # the lock those releases take too
SHELLS = ("sh", "bash", "dash", "zsh", "fish", "ksh")


@dataclass(frozen=True)
class Pending:
    """One memory path that waits for a commit, and why it changed."""

    path: str
    message: str
    kind: str  # "doc" (skills, loops: committed as they change) or "experience" (at checkpoints and session end)
    session: str = ""
    owner: int = 0  # the pid of the process that will commit it
    started: int = 0  # that process's start time (ticks since boot), so a reused pid is not taken for it
    first: int = 0  # for experience: the first and last record seq written
    last: int = 0
    change: str = ""  # the change it is part of, committed whole or not at all (git/written.py), '' when not checked
    sha256: str = ""  # of the bytes its writer left there (git/written.py GONE: it deleted it), '' when not checked;
    # of a log (kind experience): its last record's, which the file must still hold (git/written.py `taken`)
    harness: str = ""  # the harness of the process that wrote it (its commit names it), '' when none or unknown


OPTIONAL = ("change", "sha256", "harness")  # fields a line holds only when set


def _line(entry: Pending) -> str:
    """`entry` as a line of the list; a change's fields only when set, so an older repo-memory reads the others."""
    return json.dumps({k: v for k, v in asdict(entry).items() if v or k not in OPTIONAL}, sort_keys=True) + "\n"


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (which may hold spaces), or None when it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def start_time(pid: int) -> int:
    """A process's start time in clock ticks since boot (0 when unknown, e.g. not Linux)."""
    fields = _stat(pid)
    return int(fields[19]) if fields else 0  # field 22 of the stat line


def ps_state(pid: int) -> str:
    """A process's state letter as `ps` gives it, where there is no /proc ('' when it cannot tell)."""
    try:
        out = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.strip()[:1]


def alive(pid: int, started: int = 0) -> bool:
    """Whether process `pid` still runs and is the one that started at `started` (0: any). A zombie — exited, its
    parent yet to reap it, as Codex leaves the server it killed for a second — is not: what it owes is to be taken over."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, owned by someone else
    fields = _stat(pid)
    if fields is None:  # no /proc (macOS, the BSDs), or not ours to read: ask ps
        return ps_state(pid) != "Z"
    return fields[0] != "Z" and (not started or int(fields[19]) == started)


def harness_pid() -> int:
    """The process a hook runs for: the nearest ancestor that is not a shell (Claude Code puts `sh -c` in between)."""
    pid = os.getppid()
    for _ in range(4):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            return pid
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name not in SHELLS:
            return pid
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pid


SESSIONS_DIR = "harness-sessions"


def note_session(state_dir: Path, session: str) -> None:
    """Note, for the harness process this hook runs for, the session it is in now (SessionStart). The harness may have
    started its MCP server under another id: `claude --continue` starts it under a new one, then resumes the old
    conversation; `/clear` begins a new session under the same server."""
    pid = harness_pid()
    folder = state_dir / SESSIONS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    disk.write_atomic(folder / f"{pid}-{start_time(pid)}", session.encode("utf-8"))


def noted_session(state_dir: Path) -> str | None:
    """The session the harness process this server runs for is in, as its SessionStart hook noted it, or None."""
    global _harness
    if _harness is None:
        pid = harness_pid()
        _harness = (pid, start_time(pid))
    try:
        return (state_dir / SESSIONS_DIR / f"{_harness[0]}-{_harness[1]}").read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


_harness: tuple[int, int] | None = None  # this process's harness (pid, start time): it does not change


def _lines(file: Path) -> list[tuple[str, Pending | None]]:
    """Each line of a list file with its entry, None for one this release cannot read (a key it does not know, from a
    later release: kept as it is); a torn line, from a crash mid-append, is left out."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    out: list[tuple[str, Pending | None]] = []
    for line in text.splitlines():
        try:
            fields = json.loads(line)
        except ValueError:
            continue
        try:
            out.append((line + "\n", Pending(**fields)))
        except TypeError:
            out.append((line + "\n", None))
    return out


_keeper: Callable[[], None] | None = None  # told before this process notes lines it owns (a server: shells/serve.py)


def keep_with(hook: Callable[[], None] | None) -> None:
    """Call `hook` before each write of lines this process owns: a server starts its finisher there, so what it
    acknowledges is committed though it is killed before it hears a signal."""
    global _keeper
    _keeper = hook


class Journal:
    """The pending list of one clone; every method is safe across processes (an flock) and threads."""

    def __init__(self, state_dir: Path):
        self.state_dir = state_dir
        self.path = state_dir / JOURNAL
        self.files = (state_dir / OLD_JOURNAL, self.path)  # an older release's lines first: they were written first

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with disk.repo_lock(self.state_dir, LOCK):
            yield

    def add(self, entries: Sequence[Pending]) -> None:
        """Append `entries` and make them durable before returning."""
        if not entries:
            return
        if _keeper is not None and any(e.owner == os.getpid() for e in entries):
            _keeper()
        data = "".join(_line(e) for e in entries).encode()
        with self._locked():
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)

    def read(self) -> list[Pending]:
        """Every entry, oldest first (a torn last line, from a crash mid-append, is skipped)."""
        try:
            with self._locked():
                return self._read()
        except OSError:  # the lock cannot be taken (a read-only state folder): nor can anyone change the list meanwhile
            return self._read()

    def _read(self) -> list[Pending]:
        return [entry for file in self.files for _, entry in _lines(file) if entry is not None]

    def remove(self, done: Sequence[Pending]) -> None:
        """Drop entries that were committed (one occurrence each); entries added meanwhile stay."""
        if done:
            with self._locked():
                self._rewrite(list(done), {})

    def reown(self, changes: Sequence[tuple[Pending, Pending]]) -> None:
        """Replace each entry (one occurrence) with its new version, at once: another process never sees neither."""
        if changes:
            with self._locked():
                self._rewrite([old for old, _ in changes], dict(changes))

    def _rewrite(self, gone: list[Pending], new: dict[Pending, Pending]) -> None:
        """Take one occurrence of each of `gone` out of the list, `new`'s version of it in its place. Every other line
        stays as it was written: an older release's in its format, a later release's unread. An older release's entry
        replaced goes to this format's file, written before the old one, so a crash between leaves it twice, not lost."""
        changed: list[list[str] | None] = []  # each file's lines after, None when they are the same
        moved: list[str] = []
        for file in self.files:  # this format's file last
            lines = _lines(file)
            kept: list[str] = []
            for text, entry in lines:
                if entry is None or entry not in gone:
                    kept.append(text)
                    continue
                gone.remove(entry)
                if entry in new:
                    (kept if file == self.path else moved).append(_line(new[entry]))
            if file == self.path:
                kept += moved
            changed.append(None if kept == [text for text, _ in lines] else kept)
        for file, after in reversed(list(zip(self.files, changed))):
            if after is None:
                continue  # untouched: an older release's file is rewritten only when an entry leaves it
            if after:
                disk.write_atomic(file, "".join(after).encode())
            else:
                file.unlink(missing_ok=True)

    def stamp(self) -> tuple[int, ...] | None:
        """What changes whenever the list does: each file's inode, size and mtime; None when there is no list."""
        out: list[int] = []
        for file in self.files:
            try:
                st = file.stat()
            except OSError:
                out += (0, 0, 0)
            else:
                out += (st.st_ino, st.st_size, st.st_mtime_ns)
        return tuple(out) if any(out) else None

    def size(self) -> int:
        """The bytes the list holds (0: nothing pending)."""
        stamp = self.stamp() or (0, 0, 0, 0, 0, 0)
        return stamp[1] + stamp[4]

    def adopt_old(self) -> None:
        """Paths an older version left in pending-commit.json join the list, owned by no live process."""
        old = self.state_dir / "pending-commit.json"
        if old.is_file():
            try:
                listed = json.loads(old.read_text(encoding="utf-8"))
            except ValueError:
                listed = {}
            self.add([Pending(path, str(message), "experience" if "/experience/" in path else "doc")
                      for path, message in listed.items()])
            old.unlink(missing_ok=True)
