"""What an import read and did: the lines of each file as read (bytes counted for the progress bar, bytes that are
not UTF-8 noted), and the report of what each session got (core/importing.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Imported:
    """What one session got from one file: records added, records it already held, and the new ids."""

    session: str
    source: str
    format: str
    added: int = 0
    present: int = 0
    first: str = ""
    last: str = ""
    redacted: int = 0  # records written with a secret replaced by [REDACTED:<rule>]


@dataclass
class Report:
    """The outcome of an import: per session and file, the lines of record files that were skipped, and the lines
    that held bytes that are not UTF-8 (file, line number, how many such bytes), imported with U+FFFD for each."""

    sessions: list[Imported] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    undecodable: list[tuple[str, int, int]] = field(default_factory=list)
    unresolved: int = 0  # refs and covers of exported records added that name no record here, kept as they were

    @property
    def added(self) -> int:
        return sum(s.added for s in self.sessions)

    @property
    def present(self) -> int:
        return sum(s.present for s in self.sessions)

    @property
    def redacted(self) -> int:
        return sum(s.redacted for s in self.sessions)


class CountedLines:
    """Lines of a file, counting the bytes read so far (for the progress bar) and noting each line that holds bytes
    that are not UTF-8 (a tool's output copied raw, a file saved as Latin-1): its JSON still holds, read with U+FFFD
    in place of each, which the import reports rather than keeping silent about."""

    def __init__(self, lines: Iterator[bytes]):
        self._lines, self.bytes = lines, 0
        self.undecodable: list[tuple[int, int]] = []  # (line number, bytes that are not UTF-8)

    def __iter__(self) -> Iterator[bytes]:
        for number, raw in enumerate(self._lines, start=1):
            self.bytes += len(raw) + (0 if raw.endswith(b"\n") else 1)
            if not raw.isascii() and (bad := undecodable(raw)):
                self.undecodable.append((number, bad))
            yield raw


def undecodable(raw: bytes) -> int:
    """How many bytes of `raw` are not UTF-8 (as many as a decoder that replaces them replaces), in one pass: the
    decoder that drops them drops exactly those, and what it keeps encodes back to the bytes it came from."""
    return len(raw) - len(raw.decode("utf-8", errors="ignore").encode("utf-8"))
