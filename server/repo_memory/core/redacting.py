"""A person's redaction of a written record (`repo-memory log redact`), attested so it reads as redacted, not tampered.

Logs are append-only and hash-chained, so taking a secret the scanner missed out of a record breaks its hash for good.
A redaction rewrites the record's line with the string(s), or its whole text and data, replaced by `[REDACTED]`,
keeping its `sha256` (the record after it links to that, so the chain holds) and appends a `redaction` record by the
person to the session: it names the record, the hash it kept and the hash of its content as it now stands. Readers
(verify, doctor, read, recall) call a record whose content matches such an attestation "redacted on DATE by the
person"; any other edit still breaks as before. Only this command writes that kind: `remember` refuses it, an import
refuses it, an agent's shell may not run the command (guards/reserved.py), and an attestation counts only when it is
authentic (this clone's mark, or committed: core/provenance.py).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repo_memory.core import versions
from repo_memory.errors import ConflictError, InvalidArgumentError, NotFoundError
from repo_memory.formats import experience, nesting, redacted, tool_output
from repo_memory.formats import refs as grammar
from repo_memory.git.commit import commit_lock, commit_paths, refresh_index
from repo_memory.git.message import identity
from repo_memory.git.repo import CommitResult, run_at
from repo_memory.guards import disk
from repo_memory.guards.shellwords import quoted

if TYPE_CHECKING:
    from repo_memory.core.journal import Journal
    from repo_memory.core.logbook import Logbook
    from repo_memory.git.committer import Committer
    from repo_memory.index.records import RecordIndex

KIND, TOOL = "redaction", "redact"
TEXTCONV_CACHE = "refs/notes/textconv/repo-memory"  # git's cache of the logs rendered for diffs (init's cachetextconv)
SAID = "redacted on "  # how readers begin to tell of an attested redaction (verify lists it as a note, not a break)
# what readers say of a blob a redaction emptied (Redactor._empty) that a record still cites: one a clone merged wrote
EMPTIED = ("was emptied by a person's redaction (`repo-memory log redact` of a record citing it, in this clone or one "
           "merged)")
Judge = Callable[[dict[str, Any], str, int], str]  # why a record at (log, end) is not authentic ('' when it is)


@dataclasses.dataclass(frozen=True)
class Redacted:
    """What a redaction did (or, in a dry run, would do)."""

    id: str
    replaced: int  # occurrences replaced (the whole text and data count as one)
    fields: list[str]
    attestation: str  # the redaction record's id ('' in a dry run)
    others: list[str]  # other records (of any session) still holding a string given
    commit: CommitResult | None
    remains: list[str] = dataclasses.field(default_factory=list)  # places it knows of still holding a string given
    in_history: bool = True  # whether a commit (of any ref) held the record, or a blob it no longer cites, before
    folded: int = 0  # the lines of the record (versions two clones redacted, merged) folded into one


def claims(record: dict[str, Any]) -> tuple[str, str, str] | None:
    """(redacted id, its kept sha256, its content's hash) of a redaction record a person's `log redact` wrote, else None."""
    data, source = record.get("data"), record.get("source", {})
    if record.get("kind") != KIND or source.get("actor") != "human" or source.get("tool") != TOOL or not isinstance(data, dict):
        return None
    named = tuple(data.get(k) for k in ("id", "sha256", "content"))
    return named if all(isinstance(v, str) for v in named) else None  # type: ignore[return-value]


def attested(record: dict[str, Any], lines: Iterable[tuple[str, experience.Line]], judge: Judge) -> str:
    """How a redaction of `record` is told ('redacted on DATE by the person (ID)'), or '' when no authentic, intact
    redaction record among `lines` ((log, line) of its session) names its content as it stands."""
    content = experience.seal(record)["sha256"]
    for rel, line in lines:
        found = line.record
        if found is None or claims(found) != (record["id"], record["sha256"], content):
            continue
        if experience.seal(found)["sha256"] == found["sha256"] and not judge(found, rel, line.offset + len(line.raw)):
            return f"{SAID}{found['ts'][:10]} by the person ({found['id']}); its sha256 covers the text before"
    return ""


class Redactor:
    """Redacts records of one repository's logs, as a person's command."""

    def __init__(self, *, journal: Journal, logs: Logbook, records: RecordIndex, committer: Committer, said: Callable[[dict[str, Any]], str]):
        self.root, self._journal, self._logs, self._records, self._committer, self._said = journal.root, journal, logs, records, committer, said

    def redact(self, ref: str, strings: Sequence[str], whole: bool, dry_run: bool = False) -> Redacted:
        """Replace `strings` (or, `whole`, the text and data) of record `ref` by [REDACTED], attest it and commit it. Several
        lines of the record (versions two clones redacted, merged: core/versions.py) are folded into one first."""
        if whole and strings:
            raise InvalidArgumentError("Say what to redact: --text STRING (repeat for several; - reads them from stdin) or --all-text.")
        if any(not s.strip() for s in strings):
            raise InvalidArgumentError("An empty --text would match everywhere: give the secret's exact characters.")
        found = self._find(ref)
        path, line = found[0]
        lines = [dict(ln.record or {}) for _, ln in found]
        record, folded, pending = self._version(lines, whole)
        if not (strings or whole or folded):
            raise InvalidArgumentError("Say what to redact: --text STRING (repeat for several; - reads them from stdin) or --all-text.")
        if record.get("kind") == KIND:
            raise InvalidArgumentError(f"{record['id']} is a redaction record: it holds no secret, only the hashes attesting "
                                       f"the record it names ({record.get('data', {}).get('id', '?')}), which would break for good.")
        self._intact(record)
        new, replaced, fields, made = (record, 0, list[str](), pending)
        if strings or whole:
            new, replaced, fields, made = self._redacted(record, strings, whole, pending)
        dropped = list(dict.fromkeys(d for r in lines for d in _cites(r) if d not in _cites(new)))  # of every version
        fields = sorted(set(fields) | set(folded))
        remains = self._remains(new, strings, made)
        if not replaced and not folded:
            raise NotFoundError(f"{record['id']} does not hold the {len(strings)} string(s) given (checked its text, data, refs"
                                f"{' and blobs' if _cites(record) else ''}): nothing was changed. {' '.join(remains)}".rstrip())
        others = self._others(record["id"], strings)
        if dry_run:
            return Redacted(record["id"], replaced, fields, "", others, None, remains, folded=len(found) if folded else 0)
        rel = path.relative_to(self.root).as_posix()
        git = self._committer.git  # a commit holds its line, or a blob it stops citing
        places = [("-S", record["sha256"], "--", experience.EXPERIENCE_DIR), *(("--", f"{experience.BLOB_DIR}/{d}") for d in dropped)]
        held = any(git.run("log", "--all", "-1", "--format=%h", "--no-textconv", *at, check=False).stdout.strip()
                   for at in places)
        for data in made.values():
            self._journal.put_blob(data)
        for at, twin in sorted(found[1:], key=lambda f: -f[1].offset):  # later lines first: earlier offsets hold
            self._rewrite(at, twin, b"")
        self._rewrite(path, line, experience.canonical(new))
        content = experience.seal(new)["sha256"]
        told = f"; its {len(found)} merged versions folded into one line" if folded else ""
        entry = experience.Entry(kind=KIND, text=f"{record['id']} redacted by the person ({', '.join(fields)}{told}): a secret is out of it",
                                 refs=[record["id"]], data={"id": record["id"], "sha256": record["sha256"], "content": content,
                                                            "fields": fields}, source=self._logs.source("human", TOOL))
        attestation = self._logs.append(record["session"], [entry])[0]
        changed = [rel, *(at.relative_to(self.root).as_posix() for at, _ in found), *self._journal.take_blobs(),
                   *(f"{experience.BLOB_DIR}/{digest}" for digest in made),  # the append may have taken them
                   *self._logs_of(attestation["session"])]
        for old in dropped:  # a blob another record cites stays, and is said to hold the secret still
            if self._cited(old):
                remains.append(f"blob {old} still holds it: other records cite it.")
            elif self._empty(old):
                changed.append(f"{experience.BLOB_DIR}/{old}")
        self._records.scrub([path, *(self.root / p for p in changed if p.endswith(".jsonl"))])
        commit = self._commit(sorted(set(changed)), f"memory(redaction): {record['id']} redacted by the person")
        git.run("update-ref", "-d", TEXTCONV_CACHE, check=False)  # git's cache of the rendered logs: git rebuilds it
        return Redacted(record["id"], replaced, fields, attestation["id"], others, commit, remains, held,
                        len(found) if folded else 0)

    def _intact(self, record: dict[str, Any]) -> None:
        """Refuse while a line of the record's session other than it does not verify (edited, unmarked, broken): the
        redaction commits the session's logs, and would commit that line with it, vouching for it."""
        files = self._journal.segments(record["session"])
        broken = [(w, p) for w, p in self._logs.verify(only=files) if w != record["id"] and not p.startswith(SAID)]
        if broken:
            told = "; ".join(f"{where}: {problem}" for where, problem in broken[:5])
            raise ConflictError(f"Session {record['session']} holds {len(broken)} line(s) that do not verify, which this "
                                f"redaction would commit as they are: {told}. Remove or restore them first (`git checkout "
                                "HEAD -- FILE` keeps what git holds; copy records not committed yet first), check with "
                                "`repo-memory verify`, then redact again. Nothing was changed.")

    def _find(self, ref: str) -> list[tuple[Path, experience.Line]]:
        """Every line holding record `ref` (one, or versions of it with its sha256: never a twin of another chain)."""
        parsed = grammar.record(ref)
        if parsed.end != parsed.start:
            raise InvalidArgumentError(f"Redact one record at a time: '{ref[:80]}' is a range.")
        found: list[tuple[Path, experience.Line]] = []
        prefix = parsed.fork or ""  # then the first line's sha256: a line of another chain is no version of it
        for path in self._journal.segments(self._journal.named(parsed.session)):
            for line in self._journal.lines(path):
                if line.record and line.record["id"] == f"{line.record['session']}#{parsed.start}" \
                        and line.record["session"] in (parsed.session, self._journal.named(parsed.session)) \
                        and line.record["sha256"].startswith(prefix):
                    found.append((path, line))
                    prefix = line.record["sha256"]
        if not found:
            raise NotFoundError(f"No record {ref}: `repo-memory log tail SESSION` lists a session's ids.")
        return found

    def _version(self, records: list[dict[str, Any]], whole: bool) -> tuple[dict[str, Any], list[str], dict[str, bytes]]:
        """The record its lines hold, the fields where they differed, and the output blob a fold made (by sha256): one,
        or its versions folded (core/versions.py), each one as written or as a person's attested redaction left it
        (`whole`: each redacted whole first)."""
        unlike = list({experience.canonical(r): r for r in records}.values())
        for record in unlike:
            if experience.seal(record)["sha256"] != record["sha256"] and not self._said(record):
                raise ConflictError(f"{record['id']} no longer matches its sha256 (edited after it was written, with no "
                                    f"redaction of yours attesting it){'' if len(unlike) == 1 else ', in one of its lines'}: "
                                    "put the line back as git held it (`git log -p` of its log), then redact it. "
                                    f"{'' if len(unlike) == 1 else 'Its lines are not versions a redaction made: nothing was folded.'}")
        if len(unlike) == 1:
            return unlike[0], [], {}
        unlike, made = (unlike, {}) if whole else self._one_output(unlike)
        joined = versions.fold([versions.whole(r) for r in unlike] if whole else unlike)
        if joined is None:
            then = ("they differ outside their text and data (kind, time, refs…): an edit, not redactions. Neither is to be "
                    "kept as it stands (each may hold what the other took out): put back the line git held before the "
                    "merge (`git log -p` of the log), then redact again" if whole else
                    f"they differ by more than [REDACTED] spans (or a blob). Never keep one as it stands (it may hold "
                    f"what the other took out): `repo-memory log redact {quoted(str(unlike[0]['id']))} --all-text` folds them into one "
                    "line whose text and data are [REDACTED]")
            raise ConflictError(f"The {len(unlike)} lines of {unlike[0]['id']} are not versions a redaction made: {then}. "
                                "Nothing was changed.")
        return joined[0], joined[1] + ["output_blob"] * bool(made), made

    def _one_output(self, records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
        """Versions citing output blobs that differ (clones that each redacted the output) citing one instead, which
        redacts what each one's redacts (their texts folded as a record's are), their output_text cut from it again; and
        that blob. As given when they cite one, or blobs not here, or blobs that differ by more than redactions."""
        cited = [_output(r) or "" for r in records]
        stored = {d: self._stored(d) if d else None for d in cited}
        if len(stored) < 2 or None in stored.values():
            return records, {}
        texts = [(b or b"").decode("utf-8", errors="surrogateescape") for b in stored.values()]
        joined: str | None = texts[0]
        for text in texts[1:]:
            joined = versions.joined(joined, text) if joined is not None else None
        if joined is None:
            return records, {}
        raw = joined.encode("utf-8", errors="surrogateescape")
        digest = hashlib.sha256(raw).hexdigest()
        cut = [tool_output.recut(r["data"], stored[d] or b"", raw) for r, d in zip(records, cited)]
        return [{**r, "data": {**r["data"], "output_blob": digest, **c}} for r, c in zip(records, cut)], {digest: raw}

    def _redacted(self, record: dict[str, Any], strings: Sequence[str], whole: bool, pending: dict[str, bytes]) \
            -> tuple[dict[str, Any], int, list[str], dict[str, bytes]]:
        """The record redacted, how many occurrences were replaced, the fields changed, and the blobs it cites instead of
        its own (by sha256, written once the dry run is past; `pending`: those a fold made): its content's, and the whole
        output of a tool call (`data.output_blob`, which `read` serves as the record's output: core/outputs.py)."""
        if whole:
            told = [f for f in ("text", "data", "blob") if f in record] + ["output_blob"] * bool(_output(record))
            return versions.whole(record), 1, told, {}
        new, count, fields, made = dict(record), 0, list[str](), dict(pending)
        for name in ("text", "data", "refs"):
            if name in record:
                new[name], n = redacted.replace(record[name], strings)
                count += n
        new, n = redacted.cut_copies(new, strings)  # a secret a cut went through: its part at the end of a copy
        count, fields = count + n, [name for name in ("text", "data", "refs") if new.get(name) != record.get(name)]
        blob = record.get("blob")
        data = self._journal.blob(blob["sha256"])[0] if blob else b""
        if blob and data:  # an emptied blob (_empty) holds nothing to redact
            content = nesting.loads(data)["data"] if blob["field"] == "data" else data.decode("utf-8")
            replaced, n = redacted.replace(content, strings)
            if n:
                encoded = experience.canonical({"data": replaced}) if blob["field"] == "data" else replaced.encode("utf-8")
                made[digest := hashlib.sha256(encoded).hexdigest()] = encoded
                new["blob"] = {**blob, "sha256": digest, "bytes": len(encoded)}
                if blob["field"] == "text":
                    new["text"] = replaced[: experience.PREVIEW_CHARS] + "…"
                count, fields = count + n, fields + ["blob"]
        if (output := _output(record)) and (stored := pending.get(output) or self._stored(output)) is not None:
            raw, n = redacted.replace_raw(stored, strings)  # the response as the harness gave it: JSON, or its text
            if n:  # and output_text cut from it again: a secret its cut went through is out of it whole
                made[digest := hashlib.sha256(raw).hexdigest()] = raw
                new["data"] = {**new["data"], "output_blob": digest, **tool_output.recut(record["data"], stored, raw)}
                cut = new["data"].get("output_text") != record["data"].get("output_text") and "data" not in fields
                count, fields = count + n, fields + ["output_blob"] + ["data"] * cut
        return new, count, fields, made

    def _empty(self, digest: str) -> bool:
        """Empty the file of blob `digest` no record cites now, keeping its path; whether it was there. Deleted, git's
        rename detection paired it with the blob of its redacted text, and two clones that redacted it differently
        stopped a pull on a rename conflict; emptied, it is the same change in every clone, and merges."""
        path = self.root / experience.BLOB_DIR / digest
        if not _BLOB_ID.fullmatch(digest) or not path.is_file():  # a record's data names it: never a path of its own
            return False
        disk.write_atomic(path, b"")
        return True

    def _stored(self, digest: str) -> bytes | None:
        try:
            return self._journal.blob(digest)[0]
        except (InvalidArgumentError, NotFoundError):
            return None  # said by _remains

    def _remains(self, new: dict[str, Any], strings: Sequence[str], made: dict[str, bytes]) -> list[str]:
        """Where what the record cites outside its line may still hold a string given, said for the person: an output
        blob this checkout lacks, or a file of theirs git holds that the record cites as the call's output (a file is
        theirs to change: a redaction rewrites no file of the person's)."""
        said = []
        output = _output(new)
        if output and output not in made and self._stored(output) is None:
            said.append(f"The blob {output} of the call's whole output is not in this checkout ({experience.BLOB_DIR}/): it "
                        "may hold the string; redact the record again in a clone that has it.")
        data = new.get("data")
        file = data.get("output_file") if isinstance(data, dict) else None
        if strings and isinstance(file, dict) and isinstance(gid := file.get("git_blob"), str) and _GIT_ID.fullmatch(gid):
            body = run_at(self.root, "cat-file", "blob", gid)
            if body is not None and redacted.holds(body.decode("utf-8", errors="replace"), strings):
                said.append(f"{file.get('path')} holds it: your file, as git holds it (blob {gid[:12]}), which `read` shows "
                            "as this record's output. A redaction changes no file of yours: edit it and commit, and rewrite "
                            "history if a commit holds it.")
        return said

    def _rewrite(self, path: Path, line: experience.Line, raw: bytes) -> None:
        """Put `raw` in place of `line` in the log at `path` (b'': take the line out, its newline too), under the lock
        every append holds."""
        fd = disk.open_safely(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = os.pread(fd, os.fstat(fd).st_size, 0)
            gone = line.raw + (b"" if raw else b"\n")
            end = line.offset + len(gone)
            if data[line.offset : end] != gone:
                raise ConflictError(f"{path.name} changed while it was being redacted: run the command again.")
            rest = raw + data[end:]
            os.ftruncate(fd, line.offset)
            os.pwrite(fd, rest, line.offset)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _others(self, rid: str, strings: Sequence[str]) -> list[str]:
        """Other records, of every session, that hold a string given, in their line or a blob they cite."""
        found, blobs = list[str](), dict[str, bool]()
        if not strings:
            return found
        for path in self._journal.files():
            for line in self._journal.lines(path):
                if not line.record or line.record["id"] == rid:
                    continue
                cited = _cites(line.record)
                for digest in (d for d in cited if d not in blobs):
                    blobs[digest] = redacted.holds((self._stored(digest) or b"").decode("utf-8", errors="replace"), strings)
                if redacted.holds(line.raw.decode("utf-8", errors="replace"), strings) or any(blobs[d] for d in cited):
                    found.append(line.record["id"])
        return found

    def _cited(self, digest: str) -> bool:
        """Whether a log still names blob `digest`."""
        return any(digest.encode() in disk.read_safely(p) for p in self._journal.files())

    def _logs_of(self, session: str) -> list[str]:
        return [p.relative_to(self.root).as_posix() for p in self._journal.segments(session)]

    def _commit(self, changed: list[str], message: str) -> CommitResult | None:
        """Commit the redaction now, as a person's command's commit; None when commits are the person's (commit = off/stage)."""
        committer = self._committer
        if committer.mode == "stage":  # staged as memory writes are, for the person's commit: the index held the secret
            return None if refresh_index(committer.git, changed) else CommitResult(deferred="another git process holds "
                                                                                   ".git/index.lock: stage it yourself (`git add`)")
        if committer.mode != "auto" and committer.mode != "private":
            return None
        with commit_lock(committer.state_dir):
            who = identity(committer.git, committer.policy.author_name, committer.policy.author_email, committer.policy.author_fallback)
            return commit_paths(committer.git, committer.state_dir, changed, message + "\n", who, committer.policy.sign,
                                private=committer.mode == "private")


_GIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # sha1 or sha256 repositories: never passes for an option
_BLOB_ID = re.compile(r"[0-9a-f]{64}")


def _output(record: dict[str, Any]) -> str | None:
    """The blob holding the whole output of the tool call `record` tells of (shells/tool_records.py, runner/engine.py)."""
    data = record.get("data")
    found = data.get("output_blob") if isinstance(data, dict) else None
    return found if isinstance(found, str) else None


def _cites(record: dict[str, Any]) -> list[str]:
    """The blobs `record` cites: its own content's, and its call's whole output."""
    own = record.get("blob")
    return [d for d in (own.get("sha256") if isinstance(own, dict) else None, _output(record)) if isinstance(d, str)]
