"""Errors raised inside repo-memory; the shells translate them at the edge.

    RepoMemoryError                 every error we raise on purpose; its message says what to do next
    ├── WorkspaceError              no git repository, or the workspace cannot be used
    ├── ConfigError                 .agents/repo-memory.toml is invalid
    ├── InvalidArgumentError        an argument that is not in the form asked for (names the argument and the form)
    │   └── UnsafePathError         a name or path that would leave the memory root
    ├── InvalidRecordError          a document that fails parsing or its schema (carries problems)
    ├── CronError                   a cron expression that cannot be parsed (names the field)
    ├── NotFoundError               a reference that names nothing (carries suggestions)
    ├── ConflictError               a write that cannot proceed as asked (exists, locked)
    ├── SecretError                 content that holds a secret (names rule and position, never the secret)
    ├── RateLimitError              too many writes in a short time (says when to retry)
    └── GitError                    a git command failed or timed out (says which and why)
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a document, located as precisely as we can."""

    message: str
    field: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        where = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field and not re.match(rf"{re.escape(self.field)}\b", self.message):  # "text is empty" names its field
            where.append(f"field '{self.field}'")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class RepoMemoryError(Exception):
    """Base class of every error repo-memory raises on purpose."""


class WorkspaceError(RepoMemoryError):
    """The workspace is not a usable git repository."""


class ConfigError(RepoMemoryError):
    """The configuration file is invalid."""


class InvalidArgumentError(RepoMemoryError):
    """An argument is not in the form asked for."""


class UnsafePathError(InvalidArgumentError):
    """A name or path would resolve outside the memory root or through a link."""


class InvalidRecordError(RepoMemoryError):
    """A document fails to parse or to validate against its schema."""

    def __init__(self, what: str, problems: Sequence[Problem]):
        self.problems = tuple(problems)
        details = "; ".join(str(p) for p in self.problems)
        super().__init__(f"{what} is invalid: {details}")


class CronError(RepoMemoryError):
    """A cron expression that cannot be parsed; the message says which field and why."""


class NotFoundError(RepoMemoryError):
    """A reference names nothing that exists."""

    def __init__(self, message: str, suggestions: Sequence[str] = ()):
        self.suggestions = tuple(suggestions)
        super().__init__(message + did_you_mean(self.suggestions))


def did_you_mean(suggestions: Sequence[str]) -> str:
    """" Did you mean 'a', 'b'?" to end a message with ('' when there is nothing to suggest)."""
    quoted = ", ".join(f"'{s}'" for s in suggestions)
    return f" Did you mean {quoted}?" if suggestions else ""


def nearest(text: str, choices: Iterable[str], limit: int = 3, cutoff: float = 65, whole: bool = False) -> list[str]:
    """The choices written most like `text`, best first, to suggest when it names nothing. `whole`: compare whole
    strings (a misspelled symbol or file), not the best-matching part (a name that is part of a longer one)."""
    from rapidfuzz import fuzz, process  # only when something was not found

    scorer = fuzz.ratio if whole else fuzz.WRatio
    return [m[0] for m in process.extract(text, list(choices), scorer=scorer, limit=limit, score_cutoff=cutoff)]


class ConflictError(RepoMemoryError):
    """A write cannot proceed as asked."""


class SecretError(RepoMemoryError):
    """Content holds something that looks like a credential; nothing was written."""

    def __init__(self, what: str, findings: str):
        super().__init__(
            f"Refused: {what} contains what looks like a secret ({findings}). Nothing was written. Remove it and write "
            "again; refer to a secret by where it lives (an environment variable name, a vault path), never by its value."
        )


class RateLimitError(RepoMemoryError):
    """A writer is going faster than the configured limit."""

    def __init__(self, message: str, retry_after: float | None):
        self.retry_after = retry_after  # None: retrying will not help
        super().__init__(message)


class GitError(RepoMemoryError):
    """A git command failed or timed out; the message says which and why."""


# What a write the file system refuses on an open file carries (os.write, a file object's flush): such errors name no
# file, so only their errno tells them from other OSErrors (a closed pipe, a lost connection).
REFUSALS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO)


def refused_by_disk(exc: OSError) -> bool:
    """Whether `exc` is the file system refusing a file: one it names, or a write it refused for one of REFUSALS."""
    return exc.filename is not None or exc.errno in REFUSALS


def disk_refused(exc: OSError, again: str = "call it again") -> str:
    """What to tell someone whose call the file system refused (permissions, a full disk, a read-only mount): where,
    why, and what to do; the bare OSError reached an agent as "Error executing tool remember" and a person as a traceback."""
    fixes = {errno.ENOSPC: "free some disk space", errno.EDQUOT: "free some of your disk quota",
             errno.EFBIG: "raise the file size limit of the process (`ulimit -f`) or free space under a quota",
             errno.EIO: "check the disk (`dmesg` names the device and the error)",
             errno.EROFS: "the file system is mounted read-only: remount it writable",
             errno.EACCES: "make it writable for your user (`ls -ld` shows its owner and mode)",
             errno.EPERM: "make it writable for your user (`ls -ld` shows its owner and mode, `lsattr -d` an immutable flag)"}
    where = f" {exc.filename}" if exc.filename else " a write"
    return (f"The file system refused{where}: {exc.strerror or exc}. Nothing was done; "
            f"{fixes.get(exc.errno or 0, 'fix what stops it')}, then {again}.")
