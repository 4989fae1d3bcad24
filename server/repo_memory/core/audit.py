"""Checking every experience log: each record's hash and chain, each blob, and each log's bytes against HEAD's.

Each break is told once, with what restores it (core/breaks.py); `repo-memory verify` lists them, doctor adds a fix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from repo_memory import layout
from repo_memory.core.breaks import MORE, account, deleted, missing
from repo_memory.core.dropped import dropped
from repo_memory.core.journal import Journal
from repo_memory.core.provenance import Provenance
from repo_memory.core.redacting import EMPTIED, SAID
from repo_memory.core.session_files import begun, part_of, segment
from repo_memory.core.versions import SAID as VERSIONS
from repo_memory.errors import NotFoundError, UnsafePathError
from repo_memory.formats import experience
from repo_memory.git.committed import CRLF, CUT, Committed
from repo_memory.guards import disk
from repo_memory.guards.shellwords import quoted


SHOWN = 5  # lines that hold no record named per log, each worded in full; the rest are counted


def verify(root: Path, journal: Journal, committed: Committed, provenance: Provenance,
           progress: Callable[[int, int], None] | None = None, only: Sequence[Path] | None = None) -> list[tuple[str, str]]:
    """Every break in every log (or in `only`, a session's files in order): (where, what), empty when all hash chains
    and blobs are intact and no records this clone committed are gone from every branch (core/dropped.py). `progress` hears the bytes checked so far of the logs' total after each log (9 s for 100k records)."""
    breaks: list[tuple[str, str]] = []
    files = list(journal.files() if only is None else only)
    total = sum(_size(path) for path in files) if progress else 0
    done = 0
    # a session, the hashes of each seq in its files so far, and those of its files whose committed bytes differ
    chain: tuple[str, dict[int, set[str]], list[str]] = ("", {}, [])
    lines_of: dict[tuple[str, str], list[tuple[str, bytes]]] = {}  # (id, sha256) -> where each line of it is, its bytes
    for path in files:
        if progress:
            progress(done, total)
            done += _size(path)
        rel = path.relative_to(root).as_posix()
        session, part = part_of(path)
        if part == 1 or chain[0] != session:  # a session's files come in order, one after the other
            chain, lines_of = (session, {}, []), {}
        gone = _before(root, path, journal, committed, breaks)
        try:
            data = disk.read_safely(path)
        except UnsafePathError as exc:
            breaks.append((rel, str(exc)))
            continue
        lines, unread, count = experience.sifted(data, SHOWN + 1)
        rewritten = committed.rewritten(rel, data)
        # a line cut short by hand in a committed log is no append's torn line: it is said below
        breaks += _unread(rel, unread, count, [line for line in lines if line.torn and not rewritten.startswith(CUT)])
        if rewritten:
            chain[2].append(rel)
            breaks.append((rel, _restore(rel, rewritten, committed)))
        whole = len(breaks) - 1 if rewritten else -1  # the file's own break, which a redaction alone may explain
        head = committed.head()
        held: list[bytes] | None = None  # HEAD's lines of the log, read at its first break
        counted = (0, 1)  # (offset, number of the line there): lines come in order, so newlines are counted once
        for n, checked in enumerate(experience.check_chain(lines, chain[1], journal.resumes(path))):
            record, line = checked.line.record or {}, checked.line
            _versions(record, line, rel, lines_of, breaks)
            if not checked.verified and gone and n == 0 and checked.hash_ok:
                breaks.append((record.get("id", rel), missing(gone)))
            elif not checked.verified:
                held = committed.lines(rel, head) if held is None else held
                start, before = counted if counted[0] <= line.offset else (0, 1)
                counted = (line.offset, before + data.count(b"\n", start, line.offset))
                number = counted[1]  # its place decides whether git holds it, not its bytes
                told = account(checked.problem, rel, number, line.raw, checked.hash_ok,
                               held[number - 1] if number <= len(held) else None, chain[2])
                breaks.append((record.get("id", rel), (not checked.hash_ok and provenance.redacted(record)) or told))
            elif not rewritten and (outside := provenance.judge(record, rel, checked.line.offset + len(checked.line.raw), head)):
                breaks.append((record["id"], f"{outside}; if you or your own repo-memory wrote it, commit {rel} yourself "
                                             "(`git add`, `git commit`), otherwise remove the line"))
            if blob := record.get("blob"):
                try:
                    stored, intact = journal.blob(blob["sha256"])
                except (NotFoundError, UnsafePathError) as exc:
                    breaks.append((record["id"], str(exc)))
                    continue
                if not intact:
                    said = "does not match its hash" if stored else EMPTIED
                    breaks.append((record["id"], f"blob {blob['sha256']} {said}"))
        if whole >= 0 and _redacted_only(rewritten, breaks[whole + 1:]):  # never `git checkout HEAD`: the secret is back
            breaks[whole] = (rel, f"{SAID}this clone, not committed yet: commit {rel} (`git add {quoted(rel)} && git commit`); a "
                                  "`git checkout` of it would bring back what was taken out")
    if only is None:  # records this clone wrote that no branch holds: each log above verifies without them
        breaks += [(drop.ids(), drop.said()) for drop in dropped(root, journal.tips, committed.git, journal.held)]
    if progress:
        progress(total, total)
    return breaks


def _unread(rel: str, unread: list[experience.Line], count: int, torn: list[experience.Line]) -> list[tuple[str, str]]:
    """What verify says of log `rel`'s lines that hold no record (`count` in all, the first of them `unread`): the first
    SHOWN, each with its problem in full, then how many more (a million `{}` lines printed two million lines of doctor,
    1.5 GB); and its `torn` end."""
    told = [(f"{rel} at byte {line.offset}", experience.explained(line)) for line in unread[:SHOWN]]
    if count > SHOWN:
        first = unread[SHOWN]
        told.append((f"{rel} at byte {first.offset}", f"{count - SHOWN:,} {MORE} (this one: {first.problem}); verify "
                                                      f"names a log's first {SHOWN}"))
    return told + [(f"{rel} at byte {line.offset}", line.problem) for line in torn]


def _versions(record: dict[str, object], line: experience.Line, rel: str, lines_of: dict[tuple[str, str], list[tuple[str, bytes]]],
              breaks: list[tuple[str, str]]) -> None:
    """Say a record a second line holds with other bytes (core/versions.py): clones that each redacted it, merged."""
    where, key = f"{rel} at byte {line.offset}", (str(record.get("id")), str(record.get("sha256")))
    known = lines_of.setdefault(key, [])
    if known and line.raw not in (raw for _, raw in known):
        breaks.append((key[0], f"{VERSIONS} ({known[0][0]} and {where}): a union merge keeps both lines of a record that "
                               "clones redacted differently, each holding what the other took out; run `repo-memory log "
                               f"redact {quoted(key[0])}` (yourself: it is a person's command), which folds them into one line "
                               "redacting what each redacts, and refuses lines differing by more than redactions"))
    known.append((where, line.raw))


def _restore(rel: str, rewritten: str, committed: Committed) -> str:
    """What verify says of log `rel` whose bytes depart from HEAD's as `rewritten` says, with the way back."""
    if rewritten == CRLF:
        word = quoted(rel)
        again = (f"`git add {word} && rm {word} && git checkout -- {word}`: git writes it again as it holds it, records "
                 "not committed yet kept")
        if over := layout.overridden(committed.git.root, committed.git.git_dir, [rel]):
            return f"{rewritten}; {over[0].said()}; {over[0].fix()}, then {again}"
        if committed.git.run("check-attr", "eol", "--", rel, check=False).stdout.strip().endswith(": lf"):
            return f"{rewritten} (core.autocrlf, before the `text eol=lf` rule was in .gitattributes); {again}"
        return (f"{rewritten} (core.autocrlf, with no `text eol=lf` rule for logs in .gitattributes); run `repo-memory init` "
                f"(it adds the rule), then {again}")
    lost = ("nothing of it is lost: git holds every byte of it" if rewritten.startswith(CUT) else
            "records written since the last commit are then lost: copy them first")
    return f"{rewritten}; restore it with `git checkout HEAD -- {quoted(rel)}` ({lost})"


def _before(root: Path, path: Path, journal: Journal, committed: Committed, breaks: list[tuple[str, str]]) -> str:
    """The session's file before `path` when it is missing from the working tree while HEAD holds it (its first record
    then links to nothing here: restore it); '' otherwise. A deletion HEAD's history holds is no break, but its
    commit is named: the session's first records are gone from the branch, and a commit is where to find them."""
    session, part = part_of(path)
    before = segment(path, session, part - 1)
    if part < 2 or begun(before, session):
        return ""
    rel = before.relative_to(root).as_posix()
    if journal.held is not None and journal.held(rel):
        return rel
    head = committed.head()
    found = committed.git.run("log", "-1", "--format=%h", "--diff-filter=D", head, "--", rel, check=False) if head else None
    if found is not None and found.returncode == 0 and found.stdout.strip():
        breaks.append((path.relative_to(root).as_posix(), deleted(rel, found.stdout.strip())))
    return ""


def _redacted_only(rewritten: str, found: list[tuple[str, str]]) -> bool:
    """Whether a log whose committed bytes differ (`rewritten`) differs only by records a person redacted (`found`: what
    was said of its records): each departure an edit, each edited record attested."""
    return (" edited" in rewritten and " removed" not in rewritten and bool(found)
            and all(what.startswith(SAID) for _, what in found))


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0
