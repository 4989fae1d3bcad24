"""The experience files of one repository: appends under a file lock, blobs written once by content hash.

A session's log is `<month>/<session>.jsonl`, and once git's HEAD holds that file it is never appended to again: the
session goes on in `<session>+2.jsonl` beside it (then `+3`, ...), its records continuing the same ids and hash chain.
A committed file that kept growing was a change git saw in the user's working tree, so their `git stash` took records
the server had acknowledged (and the server then wrote others under the same ids), `git stash pop` and `git pull
--rebase` refused to run, and `git commit -a` swept memory into a code commit. A new file is untracked: git leaves it
alone until repo-memory commits it.

Each clone also keeps, outside the work tree, where each session's log got to (`session-tips/<session>.json` in the
state folder of the clone, one for all its worktrees): a branch checked out while a session goes on, or another
worktree writing the same session, may lack the session's files, and the session then goes on in a file numbered after
the last one it wrote (`+n`), with ids after its last, never again from #1. Merged back, the branches' files are one
session and one chain.

Bytes after a log's last newline were acknowledged to no one (an append answers once its whole line is on disk): a
writer killed mid-append, or a line someone wrote without its newline. The next append to the log moves them to the
clone's state folder (guards/torn.py) and goes on in the same file, so no newline of ours ever completes them into a
line, and the committer does the same before it commits a log.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repo_memory.errors import ConflictError, InvalidArgumentError, InvalidRecordError, NotFoundError, Problem, UnsafePathError
from repo_memory.formats import nesting, refs, when
from repo_memory.formats.experience import (
    BLOB_DIR, EXPERIENCE_DIR, HARD_CAP, INLINE_MAX, KINDS, PERSON_KINDS, PREVIEW_CHARS, Entry, Line, canonical, chosen, now,
    parse_lines, scrub, seal,
)
from repo_memory.core.session_files import SEGMENT, TIPS_DIR, Tip, begun, number, part_of, segment, tail
from repo_memory.guards import authorship, disk, paths, torn

log = logging.getLogger("repo_memory")
Moved = Callable[[str], Callable[[str], list[str]]]  # the id records take instead of theirs -> how a ref of theirs reads then
TS_FORM = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$")  # the experience schema's


class Journal:
    """The experience files of one repository."""

    def __init__(self, root: Path, inline_max: int = INLINE_MAX, clone: str = "", key: authorship.Key | None = None,
                 held: Callable[[str], bool] | None = None, tips: Path | None = None):
        self.root, self.clone, self.key = root, clone, key  # key: every record appended here carries its mark
        self.inline_max = inline_max
        self.held = held  # whether git's HEAD holds a file (a repository path): then it is never appended to
        self.tips = tips  # a folder holding where each session's log got to in this clone (None: not kept)
        self._paths: dict[str, Path] = {}
        self._new_blobs: set[str] = set()

    @classmethod
    def of_clone(cls, root: Path, git_dir: Path, state_dir: Path, inline_max: int = INLINE_MAX, key_dir: Path | None = None,
                 held: Callable[[str], bool] | None = None, worktree_state: Path | None = None) -> Journal:
        """The journal of this clone: its id, and its key (kept in `key_dir`, None: the default place) to mark records.
        `worktree_state`: a linked worktree's own state folder, where versions before 2026-12-05 kept an id of its own:
        what was written under that id stays this clone's (its sessions go on, its marks count)."""
        from repo_memory.git.clone import clone_id, former_id

        folder = key_dir or authorship.key_dir(os.environ)
        clone = clone_id(git_dir, state_dir, folder)
        key = authorship.Key.of_clone(clone, key_dir, state_dir)
        if worktree_state is not None and worktree_state != state_dir and (former := former_id(worktree_state)):
            key.adopt(former, (folder, worktree_state))
        return cls(root, inline_max, clone, key, held, state_dir / TIPS_DIR)

    def files(self) -> Iterator[Path]:
        """Every session log, oldest month first, a session's files in the order they were written."""
        base = self.root / EXPERIENCE_DIR
        if base.is_dir():
            yield from sorted((p for p in base.glob("*/*.jsonl") if p.parent.name != "blobs" and not p.is_symlink()),
                              key=lambda p: (p.parent.name, *part_of(p)))

    def path(self, session: str, create: bool = False, started: str | None = None) -> Path | None:
        """The newest log file of `session` (its first, in the month it started, or the last `+n` beside it), optionally
        choosing one for a new session: in the month of `started` (its first record's time; an imported session keeps
        the month it happened in), else this month."""
        refs.check_session(session)
        known = self._paths.get(session)
        if known is not None and begun(known, session):
            following = segment(known, session, number(known, session) + 1)
            if not begun(following, session):  # another process may have begun the next file
                return known
        found = self.segments(session)
        if found:
            self._paths[session] = found[-1]
            return found[-1]
        if not create:
            return None
        tip = self._tip(session)
        if tip is not None:  # none of the session's files is in this checkout: it goes on after the last one it wrote
            path = paths.inside(self.root, *tip[0].parts[:-1], segment(tip[0], session, number(tip[0], session) + 1).name)
            self._paths[session] = path
            return path
        month = started[:7] if started and re.match(r"^\d{4}-(0[1-9]|1[0-2])-", started) else f"{datetime.now(UTC):%Y-%m}"
        path = paths.inside(self.root, EXPERIENCE_DIR, month, f"{session}.jsonl")
        self._paths[session] = path
        return path

    def segments(self, session: str) -> list[Path]:
        """Every log file of `session`, in the order its records were written (a `+n` file begun by a writer that was
        killed before it wrote is not one: the next writer begins it again)."""
        base = self.root / EXPERIENCE_DIR
        found = [*base.glob(f"*/{session}.jsonl"), *base.glob(f"*/{session}{SEGMENT}*.jsonl")]
        numbered = [(number(p, session), p) for p in found if not p.is_symlink()]
        return [p for n, p in sorted(numbered) if n > 0 and begun(p, session)]

    def resumes(self, path: Path) -> bool:
        """Whether `path` is a session's `+n` file whose file before it is not in this checkout: the session went on
        after a branch that lacks that file was checked out, and its first record links to a record found elsewhere."""
        session, n = part_of(path)
        before = segment(path, session, n - 1)
        if n < 2 or begun(before, session):
            return False  # a file deleted that HEAD still holds is a removal, which verify reports, not another branch's
        return self.held is None or not self.held(before.relative_to(self.root).as_posix())

    def owned(self, session: str) -> str:
        """The session this clone appends to for `session`: itself, unless its log's last record came from another
        clone (a copied checkout, a pulled session continued elsewhere), or it is a new session under a name a person or
        a job chose (experience.chosen), which another clone may begin too before the two meet in git; then
        `<session>.<clone>`, so two clones never write the same ids into one log."""
        if not self.clone:
            return session
        path = self.path(session)
        if path is None:  # begun here under that name by a version before names were kept per clone: it goes on
            return self._kept(session) if chosen(session) and self._tip(session) is None else session
        try:
            fd = disk.open_safely(path)
        except UnsafePathError as exc:  # a linked log: every append to it is refused with this reason; the process goes on
            log.warning("the log of session %s cannot be used: %s", session, exc)
            return session
        try:
            last = tail(fd)[3]
        finally:
            os.close(fd)
        writer = (last or {}).get("source", {}).get("clone")
        if writer in (None, self.clone) or self.key is not None and writer in self.key.former:
            return session
        return self._kept(session)

    def _kept(self, session: str) -> str:
        return f"{session[: 127 - len(self.clone)]}.{self.clone}"

    def kept(self, session: str) -> list[str]:
        """The sessions clones keep under `session`'s name, `<session>.<clone>`: each clone's log of a chosen name, and
        a pulled session another clone went on with."""
        kept = re.compile(re.escape(session) + r"\.[0-9a-f]{8}")
        return sorted({name for path in (self.root / EXPERIENCE_DIR).glob(f"*/{session}.*.jsonl")
                       if kept.fullmatch(name := part_of(path)[0]) and not path.is_symlink()})

    def named(self, session: str) -> str:
        """The session a name a person gave means: for a chosen name, this clone's log under it; else the session
        itself when its log is here; else the one log another clone keeps under that name."""
        if not refs.SESSION.match(session) or ".." in session:
            return session  # no session's name: whoever asked says it names nothing
        if self.clone and chosen(session) and self.segments(self._kept(session)):
            return self._kept(session)
        if self.segments(session):
            return session
        kept = self.kept(session)
        return kept[0] if len(kept) == 1 else session

    def following(self, session: str) -> str:
        """The id the next record appended for `session` takes (in the log this clone keeps for it, see `owned`), read
        without the lock: an append given it as `first` writes nothing if another writer took it meanwhile."""
        name = self.owned(refs.check_session(session))
        path, tip = self.path(name), self._tip(name)
        last = tip[1] if tip else 0
        if path is not None:
            fd = disk.open_safely(path)
            try:
                last = max(last, tail(fd)[0])
            finally:
                os.close(fd)
        return f"{name}#{last + 1}"

    def append(self, session: str, entries: Sequence[Entry], first: str | None = None, moved: Moved | None = None
               ) -> tuple[Path, list[dict[str, Any]]]:
        """Append `entries` to the session's log as one write under the file's lock; return the file and the records
        (`first`: the id the first is to take, as an import cited the ids before writing; when another writer took it,
        `moved`, called under the lock with the id they take instead, renumbers what cites them; without it nothing is
        written).

        A file HEAD holds is not appended to: the records begin the session's next file, written while the lock of the
        one before is held, and a writer that waited for a lock first checks that no newer file was begun meanwhile,
        so one session's records never fork across files. Every writer of the clone (in any of its worktrees) first
        takes the lock of the session's tip, which says where the session got to when this checkout lacks its files."""
        prepared = [self._prepare(entry) for entry in entries]
        planned = (first, moved) if first is not None else None
        with Tip(self.tips, session) as tip:
            while True:
                path = self.path(session, create=True, started=prepared[0]["ts"] if prepared else None)
                assert path is not None
                path.parent.mkdir(parents=True, exist_ok=True)
                paths.inside(self.root, *path.relative_to(self.root).parts)  # refuse links on the way, at write time
                fd = disk.open_safely(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)  # no link, no hard link: appends stay in the repo
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    following = segment(path, session, number(path, session) + 1)
                    if begun(following, session):
                        continue  # another writer began the next file while this one waited for the lock
                    written = self._append(fd, path, session, prepared, tip.read(), planned)
                    if written[1]:
                        tip.keep(written[0].relative_to(self.root).as_posix(), written[1][-1])
                    return written
                finally:
                    os.close(fd)  # closing releases the lock

    def _append(self, fd: int, path: Path, session: str, prepared: list[dict[str, Any]], tip: tuple[Path, int, str] | None,
                first: tuple[str, Moved | None] | None) -> tuple[Path, list[dict[str, Any]]]:
        last_seq, last_sha, clean_end, _ = tail(fd)
        if not clean_end and self.tips is not None and not (self.held and self.held(path.relative_to(self.root).as_posix())):
            clean_end = self._set_aside(fd, path)  # bytes no append acknowledged: out of the log, which goes on
        if tip is not None and tip[1] > last_seq:  # the session went further in files this checkout lacks
            if not last_seq and clean_end:  # a file begun for it here
                return path, self._write(fd, path, session, prepared, tip[1], tip[2], first)
            after = max(number(tip[0], session), number(path, session)) + 1
            return self._begin(segment(path, session, after), session, prepared, tip[1], tip[2], first)
        if not clean_end or last_seq and self.held is not None and self.held(path.relative_to(self.root).as_posix()):
            return self._begin(segment(path, session, number(path, session) + 1), session, prepared, last_seq, last_sha, first)
        return path, self._write(fd, path, session, prepared, last_seq, last_sha, first)

    def _set_aside(self, fd: int, path: Path) -> bool:
        """Move a torn tail out of the log (guards/torn.py); if it cannot be, it stays, and the session goes on in its
        next file (no newline ever ends a fragment), whose log the committer then holds back."""
        assert self.tips is not None
        try:
            return torn.set_aside(fd, path, self.tips.parent) is not None
        except (OSError, UnsafePathError) as exc:
            log.warning("%s ends with a torn line that could not be moved aside (%s); the session goes on in its next file",
                        path, exc)
            return False

    def _begin(self, path: Path, session: str, prepared: list[dict[str, Any]], last_seq: int, last_sha: str | None,
               first: tuple[str, Moved | None] | None) -> tuple[Path, list[dict[str, Any]]]:
        fd = disk.open_safely(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._paths[session] = path
            return path, self._write(fd, path, session, prepared, last_seq, last_sha, first)
        finally:
            os.close(fd)

    def _write(self, fd: int, path: Path, session: str, prepared: list[dict[str, Any]], last_seq: int, last_sha: str | None,
               first: tuple[str, Moved | None] | None) -> list[dict[str, Any]]:
        """Append the records under the lock the caller holds, to a file that ends with a newline: a torn line ended
        by a newline would be a complete line no one wrote, which keeps the log from being committed."""
        taken = f"{session}#{last_seq + 1}"
        if first is not None and first[0] != taken:
            if first[1] is None:
                raise ConflictError(f"{first[0]} was to be the id of the next record, but another writer appended to {session} "
                                    f"meanwhile: its next record is {taken}. Nothing was written.")
            cite = first[1](taken)  # under the lock, so no other writer takes `taken` before these records do
            for body in prepared:
                body.update({name: [moved for text in body[name] for moved in cite(text)]
                             for name in ("refs", "covers") if name in body})
        records, chunks = [], []
        for offset, body in enumerate(prepared, start=1):
            seq = last_seq + offset
            record = seal({**body, "id": f"{session}#{seq}", "session": session, "seq": seq, "prev": last_sha})
            if self.key is not None:
                record = authorship.sign(record, self.key)
            last_sha = record["sha256"]
            records.append(record)
            chunks.append(canonical(record) + b"\n")
        _write_all(fd, b"".join(chunks), path)
        if self.key is not None:
            self.key.vouch(chunk[:-1] for chunk in chunks)
        return records

    def _tip(self, session: str) -> tuple[Path, int, str] | None:
        """Where `session` got to in this clone, read without its lock (a hint: `append` reads it again under it)."""
        with Tip(self.tips, session, lock=False) as tip:
            return tip.read()

    def _prepare(self, entry: Entry) -> dict[str, Any]:
        for name in ("data", "source", "anchors"):  # before scrub walks them: readers refuse a line nested deeper
            if nesting.deeper(getattr(entry, name), nesting.DEPTH - 1):  # the record around it is a level more
                raise InvalidRecordError("record", [Problem(f"{name} is {nesting.SAID}: flatten it", field=name)])
        entry = replace(entry, text=scrub(entry.text), data=scrub(entry.data), refs=scrub(entry.refs), source=scrub(entry.source))
        if entry.kind not in (*KINDS, *PERSON_KINDS) and not re.match(r"^loop\.[a-z_]+$", entry.kind):
            raise InvalidRecordError("record", [Problem(f"kind '{entry.kind}' is not one of {', '.join(KINDS)} (or loop.*)", field="kind")])
        if entry.text is None and entry.data is None:
            raise InvalidRecordError("record", [Problem("give text or data", field="text")])
        body: dict[str, Any] = {"ts": _utc(entry.ts) if entry.ts else now(), "kind": entry.kind, "refs": list(entry.refs),
                                "source": dict(entry.source)}
        if entry.covers is not None:
            body["covers"] = list(entry.covers)
        if entry.anchors:
            body["anchors"] = dict(entry.anchors)
        if entry.text is not None:
            encoded = entry.text.encode("utf-8")
            if len(encoded) > HARD_CAP:
                raise InvalidRecordError("record", [Problem(f"text is {len(encoded)} bytes; the limit is {HARD_CAP} (8 MiB)", field="text")])
            if len(encoded) > self.inline_max:
                body["blob"] = {"sha256": self.put_blob(encoded), "bytes": len(encoded), "field": "text"}
                body["text"] = entry.text[:PREVIEW_CHARS] + "…"
            else:
                body["text"] = entry.text
        if entry.data is not None and _bound(entry.data, self.inline_max) > self.inline_max:
            encoded = canonical({"data": entry.data})
            if len(encoded) > HARD_CAP:
                raise InvalidRecordError("record", [Problem(f"data is {len(encoded)} bytes; the limit is {HARD_CAP} (8 MiB)", field="data")])
            if len(encoded) > self.inline_max:
                if "blob" in body:
                    raise InvalidRecordError("record", [Problem("text and data are both too large to inline; split them into two records", field="data")])
                body["blob"] = {"sha256": self.put_blob(encoded), "bytes": len(encoded), "field": "data"}
            else:
                body["data"] = entry.data
        elif entry.data is not None:
            body["data"] = entry.data
        return body

    def put_blob(self, data: bytes) -> str:
        """Store `data` content-addressed (write-once) and return its sha256."""
        digest = hashlib.sha256(data).hexdigest()
        path = paths.inside(self.root, BLOB_DIR, digest)
        if not path.exists() or path.stat().st_size != len(data):  # else a blob a redaction emptied (core/redacting.py)
            disk.write_atomic(path, data)
        self._new_blobs.add(f"{BLOB_DIR}/{digest}")
        return digest

    def take_blobs(self) -> list[str]:
        """Paths of blobs stored since the last call (for the commit that follows)."""
        taken, self._new_blobs = sorted(self._new_blobs), set()
        return taken

    def blob(self, digest: str) -> tuple[bytes, bool]:
        """A blob's bytes and whether they still hash to its name."""
        if not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise InvalidArgumentError(f"'{digest}' is not a blob hash.")
        path = paths.inside(self.root, BLOB_DIR, digest)
        if not path.is_file():
            raise NotFoundError(f"Blob {digest} is missing from {BLOB_DIR}/ (was it deleted, or not pulled?).")
        data = disk.read_safely(path)
        return data, hashlib.sha256(data).hexdigest() == digest

    def lines(self, path: Path) -> list[Line]:
        """Every line of a log file."""
        return parse_lines(disk.read_safely(path))


def _bound(value: Any, limit: int) -> int:
    """An upper bound of the bytes `value` takes as JSON (a character escapes to at most 6 bytes), cheaper than encoding
    it; past `limit` it stops counting, and the caller encodes the value to know."""
    if isinstance(value, str):
        return 6 * len(value) + 2
    if value is None or isinstance(value, (bool, float)) or isinstance(value, int) and value.bit_length() < 90:
        return 32
    if isinstance(value, (dict, list)):
        total = 2
        for key, item in value.items() if isinstance(value, dict) else enumerate(value):
            total += _bound(item, limit) + (6 * len(str(key)) + 4 if isinstance(value, dict) else 1)
            if total > limit:
                break
        return total
    return limit + 1


def _utc(ts: str) -> str:
    """A given record time in the form the schema takes (UTC, `Z`): a time with an offset (`+02:00`) was written as
    given, failed the schema, and was left out of the index with the chain after it reported broken."""
    if TS_FORM.match(ts):
        return ts
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        raise InvalidRecordError("record", [Problem(f"ts '{ts[:40]}' is not an ISO time", field="ts")]) from None
    return when.iso(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def _write_all(fd: int, data: bytes, path: Path) -> None:
    """Append `data` durably, or not at all: a write that fails part way (a full disk, a file size limit, an I/O error)
    is cut back to where the file ended, under the lock the caller holds. A fragment left behind would be ended by the
    next append's newline and become a line no one wrote, which keeps the whole log from being committed."""
    size = os.fstat(fd).st_size
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    except OSError as exc:
        try:
            os.ftruncate(fd, size)
            os.fsync(fd)
        except OSError as undo:
            log.warning("%s: a failed append could not be cut back (%s); its torn line is skipped by readers", path, undo)
        if exc.filename is None:
            exc.filename = str(path)  # a write on a descriptor names no file: say which one the disk refused
        raise
