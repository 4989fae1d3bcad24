"""Memory through time: the commits that changed an item, and an item as it stood at a date or commit (read from git objects)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repo_memory.formats import experience
from repo_memory.guards import paths as guard
from repo_memory.formats import loops
from repo_memory.index import query
from repo_memory.formats import skills
from repo_memory.config import SKILLS_DIR
from repo_memory.errors import NotFoundError, UnsafePathError
from repo_memory.git.repo import Git
from repo_memory.index.skills import Index
from repo_memory.core.store import DEFAULT_STATUSES, MemoryHit, RecallResult, Store, normalised, record_hit, skill_hit

DIFF_CHARS = 4000


@dataclass(frozen=True)
class Change:
    """One commit that touched an item, with its diff (rendered by the textconv driver when configured)."""

    sha: str
    date: str
    author: str
    subject: str
    diff: str


def path_of(store: Store, ref: str) -> str:
    """The repository path behind a reference: a skill, `loop:NAME`, a session id or an experience id."""
    if ref.startswith("loop:"):
        return f"{loops.LOOPS_DIR}/{guard.check_name(ref[5:], 'loop name')}.md"
    if "#" in ref or ref.startswith("session:"):
        session = ref.removeprefix("session:").split("#")[0]
        path = store.journal.path(experience.check_session(session))
        if path is None:
            raise NotFoundError(f"No session '{session}'.")
        return path.relative_to(store.root).as_posix()
    name = ref.removeprefix("skill:").split("/")[0]
    if not experience.SESSION.match(name) or ".." in name:  # a skill name or a session id; never a path
        raise UnsafePathError(f"'{name}' is not a skill name, loop:NAME or session id.")
    row = store.index.skill(name)
    if row is not None:
        return str(row["path"])
    if (store.root / loops.LOOPS_DIR / f"{name}.md").is_file():
        return f"{loops.LOOPS_DIR}/{name}.md"
    path = store.journal.path(name) if experience.SESSION.match(name) else None
    if path is not None:
        return path.relative_to(store.root).as_posix()
    return f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}"  # a deleted skill still has history


def changes(git: Git, path: str, since: str | None = None, limit: int = 20) -> list[Change]:
    """Commits that changed `path`, newest first, each with its diff."""
    args = ["log", f"-n{limit}", "--format=%H%x1f%aI%x1f%an%x1f%s", *([f"--since={since}"] if since else []), "--", path]
    out = []
    for line in git.run(*args).stdout.splitlines():
        sha, date, author, subject = line.split("\x1f")
        diff = git.run("show", "--format=", "--textconv", sha, "--", path).stdout
        out.append(Change(sha, date, author, subject, diff if len(diff) <= DIFF_CHARS else diff[:DIFF_CHARS] + "\n… (diff truncated)"))
    return out


def at(git: Git, path: str, as_of: str) -> tuple[str, bytes]:
    """(commit, bytes) of `path` at a commit or a date (the last commit at or before it); read from objects, no checkout."""
    if as_of.startswith("-"):
        raise NotFoundError(f"'{as_of}' is not a date or a commit.")  # never let a value become an option
    commit = git.run("rev-parse", "-q", "--verify", f"{as_of}^{{commit}}", check=False).stdout.strip()
    if not commit:
        commit = git.run("rev-list", "-1", f"--before={as_of}", "HEAD", check=False).stdout.strip()
    if not commit:
        raise NotFoundError(f"No commit at or before '{as_of}'; give a date like 2026-11-30 or a commit id.")
    if git.run("cat-file", "-e", f"{commit}:{path}", check=False).returncode != 0:
        raise NotFoundError(f"{path} did not exist at {commit[:12]} ({as_of}).")
    return commit, git.blob(commit, path)


@dataclass(frozen=True)
class PastItem:
    """An item as it stood at a commit: whole-file text, or the records of an experience id or range."""

    commit: str
    path: str
    text: str
    records: list[dict[str, Any]]


def read_at(store: Store, git: Git, ref: str, as_of: str) -> PastItem:
    """Dereference `ref` as memory stood at `as_of` (a date or a commit)."""
    path = path_of(store, ref)
    commit, data = at(git, path, as_of)
    if "#" in ref:
        wanted = experience.parse_ref(ref)
        records = [ln.record for ln in experience.parse_lines(data) if ln.record and wanted.start <= ln.record["seq"] <= wanted.end]
        if not records:
            raise NotFoundError(f"No record {wanted} in {path} at {commit[:12]}.")
        return PastItem(commit, path, "", records)
    return PastItem(commit, path, data.decode("utf-8", errors="replace"), [])


def resolve(git: Git, as_of: str) -> tuple[str, str]:
    """(commit, its UTC commit time as the records' ISO form) for a commit id or a date."""
    if as_of.startswith("-"):
        raise NotFoundError(f"'{as_of}' is not a date or a commit.")
    commit = git.run("rev-parse", "-q", "--verify", f"{as_of}^{{commit}}", check=False).stdout.strip()
    if not commit:
        commit = git.run("rev-list", "-1", f"--before={as_of}", "HEAD", check=False).stdout.strip()
    if not commit:
        raise NotFoundError(f"No commit at or before '{as_of}'; give a date like 2026-11-30 or a commit id.")
    seconds = int(git.run("show", "-s", "--format=%ct", commit).stdout.strip())
    return commit, datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.999999Z")


_PAST_INDEXES: dict[tuple[str, str], Index] = {}


def skill_index_at(store: Store, commit: str) -> Index:
    """An in-memory index of the skills as they were at `commit` (read from git objects; cached per commit)."""
    key = (str(store.root), commit)
    if key not in _PAST_INDEXES:
        git = store.committer.git
        listed = git.run("ls-tree", "-r", "--name-only", commit, "--", *store.sources).stdout.splitlines()
        with tempfile.TemporaryDirectory(prefix="repo-memory-as-of-") as tmp:
            root = Path(tmp)
            for rel in listed:
                if rel.endswith(f"/{skills.SKILL_FILE}") and rel.count("/") >= 3:
                    target = root / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(git.blob(commit, rel))
            index = Index(Path(":memory:"))
            index.sync(skills.scan(root, store.sources))
        if len(_PAST_INDEXES) >= 4:
            _PAST_INDEXES.pop(next(iter(_PAST_INDEXES))).close()
        _PAST_INDEXES[key] = index
    return _PAST_INDEXES[key]


def recall_at(store: Store, text: str, as_of: str, limit: int = 8, kinds: list[str] | None = None) -> RecallResult:
    """`recall` as memory stood at `as_of`: skills from that commit's tree, experience recorded up to that time."""
    commit, moment = resolve(store.committer.git, as_of)
    wanted = set(kinds or ())
    hits: list[tuple[float, MemoryHit]] = []
    if not wanted or "skill" in wanted:
        found = skill_index_at(store, commit).search(query.parse(text), limit, DEFAULT_STATUSES)
        hits += normalised([skill_hit(h) for h in found])
    record_kinds = sorted(wanted - {"skill"}) or None
    if not wanted or record_kinds:
        found_records = store.recall_experience(text, limit, 0, record_kinds, None, None, moment)
        hits += normalised([record_hit(h) for h in found_records])
    hits.sort(key=lambda p: (-p[0], p[1].kind != "skill", p[1].id))
    return RecallResult(query=text, hits=[h for _, h in hits[:limit]])
