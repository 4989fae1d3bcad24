"""Whether an agent's tool call that named a skill's files changed them: a read (`cat`, the way Codex reads every
file) is no edit, and only an edit puts an active skill back to draft (Skillbook.redraft).

The pre-tool hook notes the fingerprint (`fingerprint`) of each skill folder a call names, and its SKILL.md's sha256 (`note`); the
post-tool hook compares (`changed`), and counts what the call left as seen by its session when it changed a version
the session could update (`own`). A call no pre-tool hook saw (an older setup, a call recorded from a transcript) is
compared with what HEAD holds instead. Folders a call changed without naming them are found by their status-change
times (`touched_since`) and then compared the same way: a touch or the same bytes written again changes a time, not the
content.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from repo_memory.config import SKILLS_DIR
from repo_memory.errors import UnsafePathError
from repo_memory.formats.skills import LINKED_SKILL_FILE, MIRROR_MARKER, SKILL_FILE
from repo_memory.git import history
from repo_memory.git.committed import Committed
from repo_memory.guards import disk

WRITES_FILE = "skill-writes.json"  # when repo-memory last wrote each skill file, by its path (`wrote`)
WRITES_KEPT_NS = 86_400 * 10**9  # writes older than a day tell nothing of a tool call running now
MAX_UP = 8  # folders looked up from a named path for its skill's SKILL.md (a script deep in the skill's folder)


def folders(paths: Iterable[Path]) -> list[Path]:
    """The skill folders (holding a SKILL.md) that `paths` (resolved) are or are in, below their repository's top."""
    found = []
    for path in paths:
        for folder in [path, *path.parents][:MAX_UP]:
            if (folder / SKILL_FILE).is_file():
                found.append(folder)
                break
            if os.path.lexists(folder / ".git"):
                break
    return list(dict.fromkeys(found))


def fingerprint(folder: Path) -> str:
    """What a call may change of skill `folder`: the path, kind (an executable file too) and content of each file and
    link the review sha counts (core/skill_files.py), read in chunks. This clone's bytes, compared on this clone: no git object is computed (the
    review sha's work, core/review_sha.py), and a large file beside SKILL.md is never held in memory whole."""
    from repo_memory.core import skill_files  # only when a call names a skill: the pre-tool hook stays light

    digest = hashlib.sha256()
    for entry in skill_files.walk(folder):
        content = hashlib.sha256()
        for chunk in entry.chunks():
            content.update(chunk)
        kind = b"\0link\0" if entry.link else b"\0exec\0" if entry.executable else b"\0file\0"
        digest.update(os.fsencode(entry.rel) + kind + content.digest())
    return digest.hexdigest()


def note(paths: Iterable[Path]) -> dict[str, str]:
    """The fingerprint of each skill folder `paths` name, by its resolved path, and its SKILL.md's sha256, by that file's."""
    found = {}
    for folder in folders(paths):
        try:
            found[str(folder)] = fingerprint(folder)
            found[str(folder / SKILL_FILE)] = hashlib.sha256(disk.read_safely(folder / SKILL_FILE)).hexdigest()
        except (OSError, UnsafePathError):
            continue  # not noted: compared with HEAD after the call
    return found


def changed(folder: Path, rel: str, before: Mapping[str, str] | None, committed: Committed, indexed: str = "") -> bool:
    """Whether the skill in `folder` (at `rel` in its repository) changed during the call: against its fingerprint noted
    `before` it, else against HEAD (a file or link HEAD does not hold as it is now, as `git status` sees it, or one it
    holds that is gone, is a change: core/skill_files.py), except that SKILL.md as `indexed` (its sha256 as the index saw
    it before the call) is none: a person's edit in progress."""
    from repo_memory.core import codex_policy, skill_files

    if not folder.is_dir():
        return True  # gone: nothing to read, and the redraft finds nothing to change either
    noted = (before or {}).get(str(folder.resolve()))
    if noted is not None:
        return fingerprint(folder) != noted
    head, git = committed.head(), committed.git
    try:
        held = git.modes_at(head, (rel,)) if head else {}
        if any(not os.path.lexists(folder / f[len(rel) + 1:]) and f != f"{rel}/{codex_policy.FILE}" for f in held):
            return True
        kept = git.links_kept()
        for entry in skill_files.walk(folder):  # what the review sha counts (Codex's file as settled is no edit)
            at = f"{rel}/{entry.rel}"
            if not skill_files.held(committed, at, entry, held, head, kept) and not (
                    indexed and entry.rel == SKILL_FILE and hashlib.sha256(entry.data()).hexdigest() == indexed):
                return True
    except (OSError, UnsafePathError):
        return True
    return False


def own(folder: Path, rel: str, before: Mapping[str, str] | None, seen: str | None, committed: Committed) -> bool:
    """Whether the call that changed skill `folder` (its SKILL.md at `rel`) changed a version its session could update
    unseen: the one it last read or wrote (`seen`, a sha256) or one HEAD holds, as noted before the call (`note`). What
    it leaves is then the session's own — unless repo-memory wrote the skill while the call ran (`written_since`, which
    the caller asks) — where a call over another session's write or a person's edit is no reading of it, and a call no
    pre-tool hook noted tells nothing of the version it found."""
    was = (before or {}).get(str(folder.resolve() / SKILL_FILE))
    return was is not None and (was == seen or _committed(committed, rel, was))


def unsaved_before(folder: Path, rel: str, before: Mapping[str, str] | None, committed: Committed) -> bool:
    """Whether SKILL.md (at `rel`) held, before the call, a version no commit holds (as noted by `note`): a person's edit
    in progress, unless repo-memory wrote it and commits it (Committer.waiting, which the caller asks)."""
    was = (before or {}).get(str(folder.resolve() / SKILL_FILE))
    return was is not None and not _committed(committed, rel, was)


def _committed(committed: Committed, rel: str, sha256: str) -> bool:
    """Whether HEAD holds `rel` as the file whose sha256 is `sha256`: its blob's bytes, or those a checkout writes of
    it (core.autocrlf=true checks a skill out with CRLF, a filter smudges it)."""
    head = committed.head()
    entry = committed.git.entry(head, rel) if head else None
    if entry is None:
        return False  # HEAD has no such file: the version was on disk only
    if hashlib.sha256(committed.git.read(entry[0])).hexdigest() == sha256:
        return True
    return hashlib.sha256(history.checked_out(committed.git, rel, entry[0])).hexdigest() == sha256


def wrote(state_dir: Path, rel: str, writer: str) -> None:
    """Note that `writer` (a Skillbook: a session's server, a person's command) wrote skill file `rel` now (the caller
    holds the repository lock)."""
    path, now = state_dir / WRITES_FILE, time.time_ns()
    known = {k: [w for w in v if now - w[0] < WRITES_KEPT_NS][-32:] for k, v in _writes(state_dir).items()}
    known[rel] = [*known.get(rel, []), (now, writer)]
    disk.write_atomic(path, json.dumps({k: v for k, v in known.items() if v}).encode("utf-8"))


def written_since(state_dir: Path, rel: str, ns: int, writer: str) -> bool:
    """Whether another writer than `writer` (another session's skill_write, a person's accept) wrote skill file `rel`
    at or after `ns`: what the session of `writer` last saw of it is no longer all there is."""
    return any(at >= ns and who != writer for at, who in _writes(state_dir).get(rel, []))


def _writes(state_dir: Path) -> dict[str, list[tuple[int, str]]]:
    try:
        known = json.loads((state_dir / WRITES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(known, dict):
        return {}
    return {k: [(w[0], w[1]) for w in v if isinstance(w, list) and len(w) == 2 and isinstance(w[0], int)]
            for k, v in known.items() if isinstance(v, list)}


def told(root: Path, names: Sequence[str], kept_out: Sequence[str] = ()) -> list[str]:
    """What an agent is told of the skills its tool call changed (`names`, from Skillbook.redraft): drafts again, or
    broken where SKILL.md is a link now; and of those left uncommitted (`kept_out`): a person's edit is in the file."""
    linked = [n for n in names if (root / SKILLS_DIR / n / SKILL_FILE).is_symlink()]
    drafts = ", ".join(f"skill:{n}" for n in names if n not in linked)
    return ([f"repo-memory: {drafts} changed by this session's file edits, so it is a draft again until a person runs "
             "`repo-memory accept`."] if drafts else []) + [
        f"repo-memory: skill:{n} is broken: {LINKED_SKILL_FILE}. Put a real SKILL.md file back in its place (`repo-memory "
        "doctor` says how); a person reviews it then." for n in linked] + [
        f"repo-memory: {SKILLS_DIR}/{n}/{SKILL_FILE} held changes that no commit holds and repo-memory did not write (a "
        "person's edit in progress?), so your edit is not committed as yours: leave the file as it is (do not commit, "
        "discard, stash or check out it) and tell the person." for n in kept_out]


def skill_of(rel: str, sources: Iterable[str]) -> str | None:
    """The skill folder (`source/name`) repository path `rel` is in, or None outside every skill."""
    for source in sources:
        if rel.startswith(f"{source}/") and (name := rel[len(source) + 1:].split("/")[0]):
            return f"{source}/{name}"
    return None


def touched_since(root: Path, sources: Iterable[str], ns: int) -> list[str]:
    """SKILL.md of every skill folder in `sources` (not mirror copies) whose folder or files changed at or after `ns`
    (status-change times, which a program cannot set back)."""
    return [f"{source}/{folder.name}/{SKILL_FILE}" for source, folder in _folders(root, sources)
            if _changed_since(folder.path, ns)]


def _folders(root: Path, sources: Iterable[str]) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """(source, folder) of every skill folder in `sources`, mirror copies left out."""
    for source in sources:
        try:
            folders = [e for e in os.scandir(root / source) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        yield from ((source, folder) for folder in folders if not os.path.exists(os.path.join(folder.path, MIRROR_MARKER)))


def changed_between(root: Path, sources: Iterable[str], since: int, until: int) -> list[str]:
    """The files (repository-relative) in skill folders of `sources` (not mirror copies) whose status-change times fall
    between `since` and `until` (ns), each folder's SKILL.md with them: what a call that ran then changed, found after
    later calls ran, where `touched_since` would take their changes too."""
    found: list[str] = []
    for source, folder in _folders(root, sources):
        hits = [os.path.relpath(os.path.join(where, name), folder.path) for where, dirs, files in os.walk(folder.path)
                for name in (".", *dirs, *files) if since <= _ctime(os.path.join(where, name)) <= until]
        if hits:
            skill = f"{source}/{folder.name}"
            found += [f"{skill}/{SKILL_FILE}", *(f"{skill}/{Path(h).as_posix()}" for h in hits if h != ".")]
    return list(dict.fromkeys(found))


def _ctime(path: str) -> int:
    try:
        return os.lstat(path).st_ctime_ns
    except OSError:
        return -1


def _changed_since(folder: str, ns: int) -> bool:
    """Whether `folder` or anything in it has a status-change time at or after `ns` (links are not followed)."""
    for where, dirs, files in os.walk(folder):
        for name in (".", *dirs, *files):
            try:
                if os.lstat(os.path.join(where, name)).st_ctime_ns >= ns:
                    return True
            except OSError:
                continue
    return False

