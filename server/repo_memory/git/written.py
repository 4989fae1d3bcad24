"""Whether a pending change's files are still what its writer left: a change noted `whole` (an agent's skill update:
SKILL.md and Codex's file beside it) is committed whole or not at all.

A person's `git stash` or checkout in the commit window takes part of it away (a stash takes SKILL.md back to HEAD's
version and leaves the untracked Codex file), and an edit may land over it. Committing what is there would commit half
the change, or a person's text as the writer's. So the sha256 of each file is noted with the change when it is made
pending, and the commit checks it under its lock: a change one of whose files differs waits, pending, and is committed
as its writer's once its files are back as written (`git stash pop`) — while a stash holds them. A change whose files
are what the commit holds (the person committed their own version, or threw the change away) is settled and dropped;
one no stash holds is the person's to settle: accept or reject the skill, or `doctor --fix` lets it go.

A session's log is noted by the sha256 of the last record written to it (no file is read again to note it; a chain's
last hash vouches for the records before it). A log that lacks that line at commit time while a stash holds it (a
`git stash -u` took the untracked file) stays pending instead of being committed as deleted, and so do its session's
later records, which another file may hold (the session goes on in `+n`), so HEAD's chain gets no hole. Only the bytes
the commit reads anyway are searched, and the stash only for a log that lacks its line; a redaction keeps a record's
sha256, so it does not hold the log back.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from repo_memory.errors import GitError, NotFoundError, UnsafePathError
from repo_memory.formats.experience import BLOB_DIR
from repo_memory.git.pending import Pending
from repo_memory.git.repo import Git
from repo_memory.guards import disk
from repo_memory.guards.shellwords import quoted

GONE = "-"  # the sha256 noted of a path its writer deleted


def sha256(root: Path, path: str) -> str:
    """The sha256 of the bytes of repository path `path` as they are now (GONE: no file; '': unreadable)."""
    try:
        return hashlib.sha256(disk.read_safely(root / path)).hexdigest()
    except FileNotFoundError:
        return GONE
    except (OSError, UnsafePathError):
        return ""


def read(root: Path, path: str) -> bytes | None:
    """The bytes of repository path `path`, None when there are none (or they cannot be read)."""
    try:
        return disk.read_safely(root / path)
    except (OSError, UnsafePathError):
        return None


def noted(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """What a writer left at each of `paths`, to note with its change."""
    return {path: sha256(root, path) for path in paths}


@dataclass
class Held:
    """What `displaced` found: why each path is kept out; the entries of changes settled (their files are what the commit
    they would go on holds: nothing is left to commit) and of changes no stash holds (`let go` by `doctor --fix`)."""

    why: dict[str, str] = field(default_factory=dict)
    settled: list[Pending] = field(default_factory=list)
    loose: list[Pending] = field(default_factory=list)
    stashed: bool = False  # a stash holds one: looked for again until it is popped


def displaced(git: Git, entries: Sequence[Pending]) -> Held:
    """The paths of the pending `entries` (oldest first) to keep out of a commit: every path of a change one of whose
    files no longer holds what its latest write noted (a later write of a path it does hold supersedes it). HEAD and the
    stash are looked at only when one is off."""
    latest = {e.path: e.sha256 for e in entries if e.kind != "experience"}  # a log's sha256 is its last record's (`taken`)
    off = {path for path, sha in latest.items() if sha and sha256(git.root, path) != sha}
    held, base = Held(), git.memory_head()
    while off:  # a change is held whole: each path it wrote, and each change that wrote one of those
        paths = {off.pop()}
        while True:
            changes = {e.change for e in entries if e.change and e.path in paths}
            if not (more := {e.path for e in entries if e.change in changes} - paths):
                break
            paths |= more
        off -= paths
        group = [e for e in entries if e.change in changes]
        if all(_committed(git, base, path) for path in paths):
            held.settled += group  # the person committed the files as they are, or threw the change away
            continue
        shown = ", ".join(sorted(p.rsplit("/", 1)[-1] for p in paths))
        stash = next((s for p in paths if latest.get(p, "") not in ("", GONE) and sha256(git.root, p) != latest[p]
                      and (s := _stashed(git, p, sha=latest[p]))), "")
        if stash:
            held.stashed = True
            why = f"a `git stash` took the agent's change of {shown} away ({stash}): `git stash pop` brings it back, committed then"
        else:
            held.loose += group
            name = next((p.split("/")[p.split("/").index("skills") + 1] for p in paths if "skills" in p.split("/")[:-2]), "")
            settle = (f"`repo-memory accept {quoted(name)} --sha SHA` (`repo-memory skill show {quoted(name)}` prints it) or "
                      f"`repo-memory reject {quoted(name)}` settles it, or ") if name else ""
            why = (f"{shown} are not as repo-memory wrote them for the agent (an edit, a checkout or a dropped stash; no "
                   f"stash holds them): {settle}`repo-memory doctor --fix` lets the agent's change go")
        held.why.update(dict.fromkeys(sorted(paths), why))
    return held


def _committed(git: Git, commit: str | None, path: str) -> bool:
    """Whether the file at `path` is what `commit` holds there (both absent counts)."""
    try:
        there = hashlib.sha256(git.blob(commit, path)).hexdigest() if commit else GONE
    except (NotFoundError, GitError):
        there = GONE
    return sha256(git.root, path) == there


def overtaken(root: Path, entries: Sequence[Pending]) -> set[Pending]:
    """The entries of `entries` whose change a later write not checked overtook (a person's accept of a skill whose file
    held more than the agent wrote): committed with it, but not named as theirs in its message."""
    latest = {e.path: e.sha256 for e in entries}
    changes = {e.change for e in entries if e.change and not latest[e.path] and sha256(root, e.path) != e.sha256}
    return {e for e in entries if e.change in changes}


def taken(git: Git, entries: Sequence[Pending], read: Callable[[str], bytes | None]) -> dict[str, str]:
    """The paths of the pending `entries` to keep out of a commit, with why: each log that lacks the last record its
    writer noted (`read`: its bytes, None when gone) while a stash holds it, and every path of its session's records
    from the first of that log's on. A log no stash holds (a person deleted or dropped it) is committed as it is."""
    latest = {e.path: e for e in entries if e.kind == "experience" and e.sha256}
    short: dict[str, tuple[int, str]] = {}  # session -> the first record seq held back, and why
    for path, entry in latest.items():
        needle = f'"sha256":"{entry.sha256}"'.encode()  # a field of its canonical line (experience.canonical)
        data = read(path)
        if (data is None or needle not in data) and (stash := _stashed(git, path, needle)):
            first = min(e.first for e in entries if e.path == path)
            if first < short.get(entry.session, (first + 1, ""))[0]:
                short[entry.session] = (first, f"{entry.session}#{first} on: a `git stash` took {path.rsplit('/', 1)[-1]} "
                                        f"back ({stash}); `git stash pop` restores it, and they are committed then")
    return {e.path: short[e.session][1] for e in entries
            if e.kind == "experience" and e.session in short and e.first >= short[e.session][0]}


def _stashed(git: Git, path: str, needle: bytes = b"", sha: str = "") -> str:
    """The stash entry (`stash@{n}`) whose work tree or untracked files hold `path` with `needle` in it (or of `sha`), or ''."""
    listed = git.run("log", "-g", "--format=%H %P", "refs/stash", "--", check=False).stdout.splitlines()
    for n, line in enumerate(listed):
        commits = line.split()
        for commit in commits[:1] + commits[3:4]:  # the work tree, and the untracked files of `git stash -u`
            try:
                data = git.blob(commit, path)
                if (needle in data) if needle else hashlib.sha256(data).hexdigest() == sha:
                    return f"stash@{{{n}}}"
            except (NotFoundError, GitError):
                continue
    return ""


BLOBS = f"{BLOB_DIR}/"


def with_blobs(entries: Sequence[Pending], listed: Sequence[Pending]) -> list[Pending]:
    """`entries` to commit, and the pending output blobs of the sessions whose logs they commit: git commits a log
    whole, with the records another writer (a hook of a harness still running) appended to it, so the blobs those cite go
    too, or HEAD would hold records citing files it lacks."""
    sessions, chosen = {e.session for e in entries if e.kind != "doc" and not e.path.startswith(BLOBS)}, set(entries)
    return [*entries, *(e for e in listed if e.path.startswith(BLOBS) and e.session in sessions and e not in chosen)]
