"""What an import read and did: the files to import and their formats, the lines of each as read (bytes counted for
the progress bar, bytes that are not UTF-8 noted), and the report of what each session got (core/importing.py)."""

from __future__ import annotations

import codecs
import dataclasses
import io
import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from repo_memory.formats import harness_logs
from repo_memory.formats.harness_logs import CLAUDE, CODEX, RECORDS

SNIFF = 20  # lines read to tell a file's format
# Byte order marks of the wider encodings, UTF-32 LE's before UTF-16 LE's, which it starts with; the codec named reads
# and drops the mark.
_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
          (codecs.BOM_UTF16_BE, "utf-16"))
_NUL_PATTERNS = {"000x": "utf-32-be", "x000": "utf-32-le", "0x0x": "utf-16-be", "x0x0": "utf-16-le"}


@dataclass(frozen=True)
class Source:
    """A file to import and its format (`records`, `claude-code` or `codex`); stdin and pipes are read into `content`."""

    label: str
    format: str
    path: Path | None = None
    content: bytes | None = None

    def lines(self) -> Iterator[bytes]:
        """The file's lines as UTF-8, whatever Unicode encoding it was saved in (PowerShell 5's `>` writes UTF-16)."""
        if self.content is not None:
            wide = _wide(self.content[:4])
            yield from _recoded(io.BytesIO(self.content), wide) if wide else _unmarked(iter(self.content.splitlines()))
            return
        assert self.path is not None
        with self.path.open("rb") as handle:
            wide = _wide(handle.peek(4)[:4])  # peek: a pipe (`<(…)`) cannot seek back
            yield from _recoded(handle, wide) if wide else _unmarked(handle)

    def head(self) -> list[bytes]:
        """The first lines, which tell the format."""
        return list(itertools.islice(self.lines(), SNIFF))

    @property
    def size(self) -> int:
        return len(self.content) if self.content is not None else self.path.stat().st_size if self.path else 0


def sources(paths: Sequence[Path], stdin: bytes | None = None, claude: Sequence[Path] = (), codex: Sequence[Path] = ()) -> list[Source]:
    """What to import: the given files (format told from their first lines; `-` is stdin, read whole like any file that is
    no regular file) and discovered transcripts."""
    out = []
    for path in paths:
        stdin_given = str(path) == "-"
        if stdin_given:
            given = Source("stdin", RECORDS, content=stdin or b"")
        elif path.is_file():
            given = Source(str(path), RECORDS, path=path)
        else:  # a pipe (`<(…)`, a FIFO, /dev/stdin) gives its lines once: read whole here, not once to sniff and again to import
            given = Source(str(path), RECORDS, path=path, content=path.read_bytes())
        out.append(dataclasses.replace(given, format=harness_logs.detect(given.head())))
    out += [Source(str(p), CLAUDE, path=p) for p in claude] + [Source(str(p), CODEX, path=p) for p in codex]
    return list({(s.label, s.format): s for s in out}.values())  # a file named and also discovered is read once


def _wide(start: bytes) -> str | None:
    """The UTF-16 or UTF-32 encoding a file starting with `start` is in, None for any other: told by its byte order
    mark, else by where the NULs fall in the first two characters, which in JSON are ASCII (RFC 4627, section 3)."""
    for mark, encoding in _MARKS:
        if start.startswith(mark):
            return encoding
    nuls = "".join("0" if byte == 0 else "x" for byte in start[:4])
    return _NUL_PATTERNS.get(nuls)


def _recoded(handle: BinaryIO, encoding: str) -> Iterator[bytes]:
    """The lines of `handle`, in `encoding`, as UTF-8 (what cannot be decoded as U+FFFD)."""
    for line in io.TextIOWrapper(handle, encoding=encoding, errors="replace", newline="\n"):
        yield line.encode("utf-8")


def _unmarked(lines: Iterator[bytes]) -> Iterator[bytes]:
    """The lines of a file without the byte order mark an editor (Notepad) may put before the first."""
    first = next(lines, None)
    if first is not None:
        yield first.removeprefix(codecs.BOM_UTF8)
        yield from lines


def default_session(source: Source) -> str:
    """The session for entries of a records file that name none: `import-<file name>` (stdin: `import-stdin`)."""
    stem = re.sub(r"[^A-Za-z0-9._-]", "-", source.path.stem if source.path else "stdin").strip("-.") or "file"
    return f"import-{stem}"[:128]


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
