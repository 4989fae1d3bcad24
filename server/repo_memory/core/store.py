"""The Store: the one core every shell calls. Every write is validate -> guard -> write file -> index."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repo_memory.guards import disk
from repo_memory.formats import experience
from repo_memory.guards import paths as guard
from repo_memory.index import query
from repo_memory.guards import secretscan
from repo_memory.guards import duplicates as similar
from repo_memory.formats import skills
from repo_memory.code import staleness
from repo_memory.core import utility
from repo_memory.code.anchors import Code, suggest as suggest_anchors
from repo_memory.git.commit import Committer
from repo_memory.git.committed import Committed, describe, describe_skill
from repo_memory.config import SKILLS_DIR, Config
from repo_memory.errors import ConflictError, InvalidRecordError, NotFoundError, Problem, RepoMemoryError, SecretError, UnsafePathError
from repo_memory.index.skills import Hit, Index, Progress, SyncReport
from repo_memory.index.records import RecordHit, RecordIndex


DEFAULT_STATUSES = ("active", "draft")
ACTORS = ("human", "agent")


@dataclass(frozen=True)
class MemoryHit:
    """One recall hit, a skill or an experience record, in the shape every shell shows."""

    id: str
    kind: str
    title: str
    snippet: str
    score: float
    status: str
    provenance: dict[str, str]
    name: str = ""
    ts: str = ""
    session: str = ""
    covers: tuple[str, ...] = ()
    committed: bool = False
    recorded: str = ""  # "recorded by an agent (claude-code, remember) on …; committed": memory framed as data
    stale: str = ""  # why the code this memory cites changed or is gone; empty when it is current
    file: str = ""
    end: int = 0


@dataclass(frozen=True)
class RecallResult:
    """Hits for a query, the cursor of the next page, and names it may have meant when nothing matched."""

    query: str
    hits: list[MemoryHit]
    suggestions: list[str] = field(default_factory=list)
    next_cursor: str | None = None


@dataclass(frozen=True)
class SkillContent:
    """A skill (or one file inside its folder) as read from disk."""

    ref: str
    name: str
    path: str
    content: str
    sha256: str
    status: str
    origin: str
    description: str
    files: list[str]
    next_cursor: str | None = None  # content longer than one page continues at this cursor
    committed: bool = False
    recorded: str = ""


@dataclass(frozen=True)
class WriteResult:
    """What a skill write did."""

    ref: str
    path: str
    created: bool
    status: str
    sha256: str
    warnings: list[str]


@dataclass(frozen=True)
class RecordView:
    """One experience record as read from disk, with the result of verifying it."""

    id: str
    record: dict[str, Any]
    verified: bool
    problem: str
    content: str | None = None  # the full text or data of a record whose content lives in a blob
    committed: bool = False
    recorded: str = ""


@dataclass(frozen=True)
class ExperienceRead:
    """Records dereferenced from an id or range, one page at a time."""

    ref: str
    records: list[RecordView]
    next_cursor: str | None


REWRITES_FILE = "agent-rewrites.json"
REWRITES_FLAGGED = 4  # an agent rewriting one skill this often …
REWRITE_WINDOW = 600  # … within this many seconds is churning, not converging
PAGE_CHARS = 16_000  # keeps every tool result under about 20,000 characters


class Store:
    """Memory of one repository: skill and log files on disk plus the derived index."""

    def __init__(self, config: Config, session: str | None = None):
        self.config = config
        self.root = config.root
        self.index = Index(config.index_path)
        self.journal = experience.Journal(config.root, config.inline_max)
        self.records = RecordIndex(self.index, config.root)
        self.session = experience.check_session(session or config.session or experience.new_session_id())
        self.committer = Committer(config, config.commit_window, self.session)
        self.committed = Committed(self.committer.git, (".agents", *self.sources[1:]))
        self.code = Code(config.root)
        # Derived, per process: skip recomputation while the index and the cited files are unchanged.
        self.anchor_check: tuple[Any, set[str]] | None = None  # staleness.check's last signature and cited files
        self.utility_cache: tuple[Any, dict[str, Any]] | None = None  # utility.gather's last index generation and result

    def close(self, commit: bool = True) -> None:
        """Commit what is pending (unless `commit=False`: it stays recorded for the next flush), then close the index."""
        self.committer.close(commit)
        self.index.close()

    @property
    def sources(self) -> tuple[str, ...]:
        return (SKILLS_DIR, *(d for d in self.config.skill_dirs if d != SKILLS_DIR))

    def refresh(self, progress: Progress | None = None) -> SyncReport:
        """Re-index whatever changed on disk since the last look."""
        report = self.index.sync(skills.scan(self.root, self.sources), progress)
        self.records.sync(list(self.journal.files()))
        staleness.check(self)
        return report

    def reindex(self, progress: Progress | None = None) -> SyncReport:
        """Throw the index away and build it again from the files."""
        report = self.index.rebuild(skills.scan(self.root, self.sources), progress)
        self.records.sync(list(self.journal.files()))
        staleness.check(self)
        return report

    def recall(self, text: str, limit: int | None = None, include: Sequence[str] = DEFAULT_STATUSES, kinds: Sequence[str] | None = None,
               session: str | None = None, since: str | None = None, until: str | None = None, cursor: str | None = None,
               symbol: str | None = None) -> RecallResult:
        """One search over skills and experience records.

        Each source is ranked by its own BM25; the two lists are merged on scores divided by each list's best,
        so neither source drowns the other. Filters on session or time leave skills out unless `kinds` asks for them.
        With `symbol`, the answer is every memory anchored to that code symbol instead.
        """
        limit = max(1, min(limit or self.config.recall_limit, 50))
        offset = _offset(cursor)
        staleness.check(self)  # cheap when no cited code file changed: a stat per file
        if symbol:
            return self._anchored(symbol, limit, offset)
        wanted = set(kinds or ())
        unknown = wanted - {"skill", *experience.KINDS} - {k for k in wanted if k.startswith("loop.")}
        if unknown:
            raise NotFoundError(f"Unknown kinds {sorted(unknown)}; use 'skill' or experience kinds: {', '.join(experience.KINDS)}, loop.*.")
        filtered = bool(session or since or until)
        want_skills = "skill" in wanted or (not wanted and not filtered)
        record_kinds = sorted(wanted - {"skill"}) or None
        want_records = bool(record_kinds) or not wanted
        depth = offset + limit + 1
        skill_hits = [skill_hit(h) for h in self.index.search(query.parse(text), depth, include, self._weigh())] if want_skills else []
        record_hits = [record_hit(h) for h in self.recall_experience(text, depth, 0, record_kinds, session, since, until)] if want_records else []
        merged = sorted(normalised(skill_hits) + normalised(record_hits), key=lambda p: (-p[0], p[1].kind != "skill", p[1].id))
        page: list[MemoryHit] = []
        budget = PAGE_CHARS
        for _, hit in merged[offset : offset + limit]:
            budget -= 250 + len(hit.id) + len(hit.title) + len(hit.snippet) + sum(map(len, hit.covers))
            if page and budget < 0:
                break  # the rest comes with the cursor, so no result outgrows what an agent can read at once
            page.append(hit)
        more = len(merged) > offset + len(page)
        tree = self.committed.tree()
        page = self._with_staleness([self._framed(h, tree) for h in page])
        suggestions = [] if page or offset else self.similar_names(text)
        return RecallResult(query=text, hits=page, suggestions=suggestions, next_cursor=f"offset:{offset + len(page)}" if more else None)

    def _framed(self, hit: MemoryHit, tree: dict[str, tuple[str, int]] | None = None) -> MemoryHit:
        """`hit` with whether it is committed and the line that frames it as recorded data."""
        if hit.kind == "skill":
            path = hit.provenance.get("path", "")
            try:
                committed = self.committed.file(path, disk.read_safely(self.root / path), tree)
            except (OSError, UnsafePathError):
                committed = False
            origin = hit.provenance.get("origin", "")
            recorded = describe_skill(origin, hit.status, committed)
        else:
            committed = self.committed.record(hit.file, hit.end, tree)
            recorded = describe(hit.provenance.get("actor", ""), hit.ts, committed, hit.provenance.get("harness", ""),
                                hit.provenance.get("tool", ""))
        return dataclasses.replace(hit, committed=committed, recorded=recorded)

    def _weigh(self) -> Callable[[dict[str, Any]], float]:
        """Recall's multiplier for a skill row: what its uses earned, and how recently (utility.py has the formula)."""
        evidence, half_life, now = utility.gather(self), self.config.decay_half_life_days, time.time()
        return lambda row: utility.factor(evidence.get(row["name"]), int(row["mtime_ns"] or 0), half_life, now)

    def feedback(self, ref: str, outcome: str, note: str | None = None, actor: str = "agent", tool: str = "feedback") -> dict[str, Any]:
        """Record whether a memory helped, misled or was outdated: an `outcome` record citing it, which ranks skills."""
        if outcome not in utility.FEEDBACK:
            raise InvalidRecordError("feedback", [Problem(f"outcome must be one of {', '.join(utility.FEEDBACK)}", field="outcome")])
        data: dict[str, Any] = {"outcome": outcome, "ref": ref}
        if "#" in ref:
            cited = str(experience.parse_ref(ref))
            if self._missing(cited):
                raise NotFoundError(f"No record {cited}: feedback cites a skill (skill:NAME) or an experience record id.")
        else:
            name = ref.removeprefix("skill:")
            guard.check_name(name, "skill name")
            if self.index.skill(name) is None:
                self.refresh()
                if self.index.skill(name) is None:
                    raise NotFoundError(f"No skill '{name}'.", self.similar_names(name))
            cited, data["skill"] = f"skill:{name}", name
        if note:
            data["note"] = note
        text = f"{cited}: {outcome}" + (f" — {note}" if note else "")
        entry = experience.Entry(kind="outcome", text=text, data=data, refs=[cited], source=self.source(actor, tool))
        return self.append(self.session, [entry])[0]

    def _with_staleness(self, page: list[MemoryHit]) -> list[MemoryHit]:
        reasons: dict[str, list[str]] = {}
        for s in staleness.stale(self, [h.id for h in page]):
            reasons.setdefault(s.memory, []).append(s.reason)
        return [dataclasses.replace(h, stale="; ".join(reasons[h.id])) if h.id in reasons else h for h in page]

    def _anchored(self, symbol: str, limit: int, offset: int) -> RecallResult:
        """Every memory anchored to `symbol`, skills first."""
        found = staleness.anchored_to(self, symbol)
        memories = list(dict.fromkeys(m for m, _ in found))
        hits: list[MemoryHit] = []
        for memory in memories[offset : offset + limit]:
            cites = ", ".join(a for m, a in found if m == memory)
            if memory.startswith("skill:"):
                row = self.index.skill(memory[6:])
                if row is None:
                    continue
                hits.append(MemoryHit(id=memory, kind="skill", title=str(row["description"])[:200], snippet=f"cites {cites}", score=1.0,
                                      status=str(row["status"]), provenance={"origin": str(row["origin"] or "unknown"), "path": str(row["path"])},
                                      name=memory[6:]))
            else:
                with self.index.lock:
                    r = self.index.conn.execute("SELECT kind, ts, session, actor, harness, tool, text, file, offset + length FROM records "
                                                "WHERE id=?", (memory,)).fetchone()
                if r is None:
                    continue
                hits.append(MemoryHit(id=memory, kind=r[0], title=f"{r[0]} in session {r[2]} at {r[1][:16].replace('T', ' ')}",
                                      snippet=f"cites {cites}: {str(r[6] or '')[:200]}", score=1.0, status="recorded",
                                      provenance={"actor": r[3], "harness": r[4], "tool": r[5]}, ts=r[1], session=r[2], file=r[7], end=r[8]))
        hits.sort(key=lambda h: (h.kind != "skill", h.id))
        page = self._with_staleness([self._framed(h) for h in hits])
        more = len(memories) > offset + limit
        return RecallResult(query=f"symbol:{symbol}", hits=page, next_cursor=f"offset:{offset + limit}" if more else None)

    def similar_names(self, text: str, limit: int = 3) -> list[str]:
        """Existing skill names close to `text` (for did-you-mean)."""
        from rapidfuzz import fuzz, process  # only when a name was not found

        names = self.index.names()
        matches = process.extract(text.lower(), names, scorer=fuzz.WRatio, limit=limit, score_cutoff=60)
        return [m[0] for m in matches]

    def read(self, ref: str, cursor: str | None = None) -> SkillContent:
        """Dereference `ref`: 'skill:NAME', a bare skill NAME, or NAME/relative/file inside the skill's folder."""
        name, _, inner = ref.removeprefix("skill:").partition("/")
        if not name:
            raise NotFoundError("Give a skill name to read, like 'release-checklist' or 'skill:release-checklist'.")
        row = self.index.skill(name)
        if row is None:
            self.refresh()
            row = self.index.skill(name)
        if row is None:
            raise NotFoundError(f"No skill '{name}'.", self.similar_names(name))
        folder = self.root / Path(row["path"]).parent
        target = guard.inside(folder, *inner.split("/")) if inner else folder / skills.SKILL_FILE
        if not target.is_file():
            raise NotFoundError(f"Skill '{name}' has no file '{inner}'. Its files: {', '.join(self._files(folder))}.")
        data = disk.read_safely(target)
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RepoMemoryError(f"'{target.relative_to(self.root)}' is not UTF-8 text; open it from the repository directly.") from None
        content = secretscan.redact(content)[0]  # a secret a person left in a file is not handed to the agent either
        committed = self.committed.file(str(target.relative_to(self.root)), data)
        char = 0
        if cursor:
            if not re.fullmatch(r"char:\d+", cursor):
                raise NotFoundError(f"Cursor {cursor!r} is not one this server gave out; call read again without a cursor.")
            char = int(cursor[5:])
        return SkillContent(
            ref=f"skill:{name}" + (f"/{inner}" if inner else ""),
            name=name,
            path=str(target.relative_to(self.root)),
            content=content[char : char + PAGE_CHARS],
            next_cursor=f"char:{char + PAGE_CHARS}" if char + PAGE_CHARS < len(content) else None,
            sha256=hashlib.sha256(data).hexdigest(),
            status=row["status"],
            origin=row["origin"],
            description=row["description"],
            files=self._files(folder),
            committed=committed,
            recorded=describe_skill(row["origin"], row["status"], committed),
        )

    def _files(self, folder: Path) -> list[str]:
        return sorted(
            str(p.relative_to(folder)) for p in folder.rglob("*")
            if p.is_file() and not p.is_symlink() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
        )

    def write_skill(
        self,
        name: str,
        description: str,
        body: str,
        tags: Sequence[str] | None = None,
        related: Sequence[str] | None = None,
        actor: str = "agent",
        new: bool = False,
        anchors: Sequence[str] | None = None,
    ) -> WriteResult:
        """Create or update `.agents/skills/NAME/SKILL.md`; an agent's write is a draft while review is required.

        An agent creating a skill close to an existing one (similar name or description) is refused with the
        existing skill, unless it says `new=True`; a person is only warned. An agent rewriting the same skill
        REWRITES_FLAGGED times within REWRITE_WINDOW seconds is warned, and `doctor` lists the skill."""
        guard.check_name(name, "skill name")
        for other in related or ():
            guard.check_name(other, "related skill name")
        if actor not in ACTORS:
            raise ConflictError(f"actor must be one of {ACTORS}")
        path = guard.inside(self.root, SKILLS_DIR, name, skills.SKILL_FILE)
        refuse_secrets(("description", description), ("body", body), ("tags", tags), ("related", related))
        pinned = self.pin(anchors, "anchors") if anchors is not None else None
        status = "draft" if actor == "agent" and self.config.review == "required" else "active"
        warnings: list[str] = []
        with disk.repo_lock(self.config.state_dir):
            created = not path.exists()
            if created:
                metadata: dict[str, Any] = {"status": status, "origin": actor}
                if tags:
                    metadata["tags"] = list(tags)
                if related:
                    metadata["related"] = list(related)
                if pinned:
                    metadata["anchors"], metadata["anchor_hashes"] = list(pinned), pinned
                text = skills.render(name, description, body, metadata)
                close = similar.near_duplicates(name, description, self._descriptions()) if not new else []
                if close and actor == "agent":
                    other, other_description, why = close[0]
                    raise ConflictError(
                        f"Not written: skill:{other} has {why} ({other_description[:160]!r}). If it covers the same procedure, "
                        f"update it with skill_write(name={other!r}, …); if this is a different procedure, call skill_write "
                        "again with new=true.")
                warnings += [f"A similar skill exists: skill:{o} ({why}). Update it instead if it covers the same procedure."
                             for o, _, why in close[:3]]
            else:
                changes: dict[tuple[str, ...], Any] = {("description",): description}
                if actor == "agent":
                    changes[("metadata", "status")] = status
                if tags is not None:
                    changes[("metadata", "tags")] = list(tags)
                if related is not None:
                    changes[("metadata", "related")] = list(related)
                current = disk.read_safely(path).decode("utf-8")
                if pinned is None:  # rewritten against the code as it is now: re-pin the anchors it already had
                    had = skills.parse(current.encode("utf-8"), f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}", SKILLS_DIR).anchors
                    pinned = {a: r.hash or h for a, h in had.items() if (r := self.code.resolve(a))} if had else None
                if pinned is not None:
                    changes[("metadata", "anchors")] = list(pinned)
                    changes[("metadata", "anchor_hashes")] = {a: h for a, h in pinned.items() if h}
                text = skills.edit(current, name, changes, body)
                if actor == "agent" and (count := self._note_rewrite(name)) >= REWRITES_FLAGGED:
                    warnings.append(f"skill:{name} was rewritten {count} times in the last {REWRITE_WINDOW // 60} minutes; settle "
                                    "its content before writing again (doctor lists skills rewritten this often).")
            refuse_secrets((f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}", text))  # what a person left in the file counts too
            data = text.encode("utf-8")
            disk.write_atomic(path, data)
            self.index.sync([skills.Found(str(path), f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}", SKILLS_DIR, 0)], complete=False)
        self.committer.record([f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}"], f"memory(skill): {'add' if created else 'update'} {name}")
        if status == "draft":
            warnings.append(f"Saved as a draft: a person reviews it and runs `repo-memory accept {name}` (or `reject`).")
        suggested = [a for a in suggest_anchors(f"{description}\n{body}") if a not in (pinned or {}) and self.code.resolve(a).hash]
        if suggested:
            warnings.append(f"The text mentions code: pass anchors={suggested[:5]} to be told when it changes.")
        return WriteResult(
            ref=f"skill:{name}", path=f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}", created=created, status=status,
            sha256=hashlib.sha256(data).hexdigest(), warnings=warnings,
        )

    def redraft(self, rel: str, via: str) -> str | None:
        """An agent changed a file of a skill with its own file tools (`via`): while review is required, that skill
        goes back to `draft` (origin agent) — an agent cannot make anything active by editing files either.
        Returns the skill's name when its status was changed."""
        parts = rel.split("/")
        source = next((s for s in self.sources if rel.startswith(f"{s}/")), None)
        if source is None or self.config.review != "required" or len(parts) <= len(source.split("/")) + 1:
            return None
        name = parts[len(source.split("/"))]
        path = guard.inside(self.root, *source.split("/"), name, skills.SKILL_FILE)
        if not path.is_file():
            return None
        with disk.repo_lock(self.config.state_dir):
            raw = disk.read_safely(path)
            current = skills.parse(raw, f"{source}/{name}/{skills.SKILL_FILE}", source)
            if current.status == "draft" and current.origin == "agent":
                return None
            try:
                text = skills.edit(raw.decode("utf-8"), name, {("metadata", "status"): "draft", ("metadata", "origin"): "agent"})
            except (InvalidRecordError, UnicodeDecodeError):
                return None  # an invalid file is not searchable and cannot be accepted as it is; doctor reports it
            disk.write_atomic(path, text.encode("utf-8"))
            self.index.sync([skills.Found(str(path), f"{source}/{name}/{skills.SKILL_FILE}", source, self.sources.index(source))],
                            complete=False)
        if source == SKILLS_DIR:
            self.committer.record([f"{source}/{name}/{skills.SKILL_FILE}"], f"memory(skill): {name} edited by an agent ({via}), back to draft")
        return name

    def repin(self, name: str) -> list[str]:
        """A person checked skill `name` against the code: pin its anchors' current hashes; returns the anchors pinned."""
        guard.check_name(name, "skill name")
        rel = f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}"
        path = guard.inside(self.root, SKILLS_DIR, name, skills.SKILL_FILE)
        if not path.is_file():
            raise NotFoundError(f"No skill '{name}' in {SKILLS_DIR}/.", self.similar_names(name))
        with disk.repo_lock(self.config.state_dir):
            raw = disk.read_safely(path)
            cited = skills.parse(raw, rel, SKILLS_DIR).anchors
            if not cited:
                raise ConflictError(f"skill:{name} cites no code: add metadata.anchors (path/to/file.py::Class.method) first.")
            pinned = self.pin(list(cited), "metadata.anchors")
            text = skills.edit(raw.decode("utf-8"), name, {("metadata", "anchor_hashes"): pinned})
            disk.write_atomic(path, text.encode("utf-8"))
            self.index.sync([skills.Found(str(path), rel, SKILLS_DIR, 0)], complete=False)
        self.committer.record([rel], f"memory(skill): {name} checked against the code, anchors re-pinned")
        staleness.check(self)
        return list(pinned)

    def pin(self, cited: Sequence[str], field_name: str) -> dict[str, str]:
        """Each anchor's current code hash; refuses (naming every problem) when one does not resolve."""
        resolved = [self.code.resolve(a) for a in dict.fromkeys(cited)]
        problems = [Problem(f"{r.anchor}: {r.problem}", field=field_name) for r in resolved if r.problem]
        if problems:
            raise InvalidRecordError("the anchors", problems)
        return {r.anchor: r.hash for r in resolved}

    def _descriptions(self) -> list[tuple[str, str]]:
        with self.index.lock:
            rows = self.index.conn.execute("SELECT name, description FROM files WHERE kind='skill' AND winner=1").fetchall()
        return [(str(n), str(d or "")) for n, d in rows]

    def _note_rewrite(self, name: str) -> int:
        """Record an agent's rewrite of skill `name`; how many it had within the window (across sessions on this clone)."""
        path = self.config.state_dir / REWRITES_FILE
        now = time.time()
        try:
            seen = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            seen = {}
        recent = [t for t in seen.get(name, []) if now - t < REWRITE_WINDOW] + [now]
        seen = {k: [t for t in v if now - t < 86400] for k, v in seen.items() if k != name}
        seen[name] = recent
        disk.write_atomic(path, json.dumps(seen).encode("utf-8"))
        return len(recent)

    def churning(self) -> list[tuple[str, int]]:
        """Skills an agent rewrote REWRITES_FLAGGED or more times within REWRITE_WINDOW seconds, in the last day."""
        try:
            seen = json.loads((self.config.state_dir / REWRITES_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        out = []
        for name, times in sorted(seen.items()):
            times = sorted(times)
            most = max((sum(1 for u in times if 0 <= u - t < REWRITE_WINDOW) for t in times), default=0)
            if most >= REWRITES_FLAGGED:
                out.append((name, most))
        return out

    def review(self, name: str, accept: bool) -> str:
        """A person's verdict on a draft: accept makes it active; reject deletes it. Returns what was done."""
        guard.check_name(name, "skill name")
        rel = f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}"
        path = guard.inside(self.root, SKILLS_DIR, name, skills.SKILL_FILE)
        if not path.is_file():
            raise NotFoundError(f"No skill '{name}' in {SKILLS_DIR}/.", self.similar_names(name))
        raw = disk.read_safely(path)
        current = skills.parse(raw, rel, SKILLS_DIR)
        with disk.repo_lock(self.config.state_dir):
            if accept:
                if current.status == "active":
                    return f"skill:{name} is already active"
                refuse_secrets((rel, raw.decode("utf-8", errors="replace")))
                text = skills.edit(raw.decode("utf-8"), name, {("metadata", "status"): "active"})
                disk.write_atomic(path, text.encode("utf-8"))
                changed, message, done = [rel], f"memory(skill): accept {name}", f"accepted skill:{name} (status: active)"
            else:
                if current.status != "draft":
                    raise ConflictError(f"skill:{name} is {current.status}, not a draft: reject is for drafts. To retire it, "
                                        f"set `status: deprecated` under metadata in {rel}.")
                folder = path.parent
                changed = [f"{SKILLS_DIR}/{name}/{p.relative_to(folder).as_posix()}" for p in folder.rglob("*") if p.is_file()]
                for entry in sorted(folder.rglob("*"), reverse=True):  # deepest first, so folders are empty when removed
                    if entry.is_dir() and not entry.is_symlink():
                        entry.rmdir()
                    else:
                        entry.unlink()
                folder.rmdir()
                message, done = f"memory(skill): reject {name}", f"rejected and deleted the draft skill:{name}"
            self.index.sync(skills.scan(self.root, self.sources))
        self.committer.record(changed, message)
        return done

    def list_skills(self) -> list[dict[str, Any]]:
        """Every skill file the index knows, valid or not, with where it came from."""
        return self.index.rows("kind='skill'")

    # --- experience -------------------------------------------------------------------------------

    def remember(self, text: str | None, kind: str = "note", refs: Sequence[str] = (), data: Any = None, session: str | None = None,
                 actor: str = "agent", tool: str = "remember", ts: str | None = None) -> list[dict[str, Any]]:
        """Append one record to a session's log (this server's session by default) and index it."""
        cited = [r for r in refs if "::" in r]
        entry = experience.Entry(kind=kind, text=text, data=data, refs=list(refs), source=self.source(actor, tool), ts=ts,
                                 anchors=self.pin(cited, "refs") if cited else None)
        return self.append(session or self.session, [entry])

    def append(self, session: str, entries: Sequence[experience.Entry], captured: bool = False) -> list[dict[str, Any]]:
        """Append records as one write and index them at once.

        Secrets: content an agent wrote is refused; `captured` content (tool output a hook or a loop recorded) has
        each secret replaced by `[REDACTED:<rule>]` and the record's data lists the rules under `redacted`.
        """
        experience.check_session(session)
        entries = [redact_entry(e) for e in entries] if captured else entries
        if not captured:
            for number, e in enumerate(entries, start=1):
                where = "the record" if len(entries) == 1 else f"record {number}"
                refuse_secrets((f"{where}'s text", e.text), (f"{where}'s data", e.data), (f"{where}'s refs", e.refs))
        written = self.journal.append(session, entries)
        path = self.journal.path(session)
        assert path is not None
        self.records.sync([path], complete=False)
        span = f"{written[0]['id']}" + (f"-{written[-1]['seq']}" if len(written) > 1 else "")
        self.committer.record([path.relative_to(self.root).as_posix(), *self.journal.take_blobs()], f"memory(experience): {span}")
        return written

    def source(self, actor: str, tool: str) -> dict[str, str]:
        """Provenance the server assigns to a record: who (human or agent), through which harness and tool."""
        if actor not in ACTORS:
            raise ConflictError(f"actor must be one of {ACTORS}")
        return {"actor": actor, "harness": self.config.harness, "tool": tool}

    def checkpoint(self, summary: str, covers: Sequence[str], session: str | None = None, actor: str = "agent",
                   tool: str = "checkpoint") -> dict[str, Any]:
        """Write a summary record citing the ids and ranges it compresses; every cited record must exist."""
        if not covers:
            raise InvalidRecordError("checkpoint", [Problem("covers must list the ids or ranges the summary compresses, e.g. ['s#1-20']", field="covers")])
        missing = [problem for ref in covers if (problem := self._missing(ref))]
        if missing:
            raise InvalidRecordError("checkpoint", [Problem(m, field="covers") for m in missing])
        entry = experience.Entry(kind="summary", text=summary, covers=[str(experience.parse_ref(c)) for c in covers],
                                 refs=[], source=self.source(actor, tool))
        record = self.append(session or self.session, [entry])[0]
        self.committer.flush()  # a checkpoint is a natural commit point
        return record

    def _missing(self, ref: str) -> str:
        try:
            parsed = experience.parse_ref(ref)
        except NotFoundError as exc:
            return str(exc)
        found = self.records.locate(parsed.session, parsed.start, parsed.end)
        if len(found) == parsed.end - parsed.start + 1:
            return ""
        present = {row[3] for row in found}
        absent = next(n for n in range(parsed.start, parsed.end + 1) if n not in present)
        nearest = self.records.nearest(parsed.session, absent)
        hint = f" The nearest existing record is {nearest}." if nearest else f" Session '{parsed.session}' has no records."
        return f"{parsed.session}#{absent} does not exist.{hint}"

    def read_experience(self, ref: str, cursor: str | None = None) -> ExperienceRead:
        """Dereference an id or range to the records on disk, each re-verified (hash and chain)."""
        parsed = experience.parse_ref(ref)
        start, char = parsed.start, 0
        if cursor:
            match = re.fullmatch(r"seq:(\d+)(?::char:(\d+))?", cursor)
            if not match:
                raise NotFoundError(f"Cursor {cursor!r} is not one this server gave out; call read again without a cursor.")
            start, char = int(match[1]), int(match[2] or 0)
        located = self.records.locate(parsed.session, max(1, start - 1), parsed.end)
        if not any(row[3] >= start for row in located):
            self.records.sync(list(self.journal.files()))
            located = self.records.locate(parsed.session, max(1, start - 1), parsed.end)
        if not any(row[3] >= start for row in located):
            nearest = self.records.nearest(parsed.session, parsed.start)
            raise NotFoundError(f"No record {parsed}.", [nearest] if nearest else [])
        views: list[RecordView] = []
        size, next_cursor = 0, None
        previous_sha: str | None = None
        for file, offset, length, seq in located:
            line = self._line_at(file, offset, length)
            if seq < start:
                previous_sha = line.record["sha256"] if line.record else None
                continue
            view = self._view(line, previous_sha, seq, parsed.session)
            if view.record:
                source = view.record.get("source", {})
                done = self.committed.record(file, offset + length)
                view = dataclasses.replace(view, committed=done, recorded=describe(
                    source.get("actor", ""), view.record.get("ts", ""), done, source.get("harness", ""), source.get("tool", "")))
            previous_sha = line.record["sha256"] if line.record else None
            if view.content is not None and len(view.content) > PAGE_CHARS:  # a huge record gets pages of its own
                if views:
                    next_cursor = f"seq:{seq}"
                    break
                views.append(dataclasses.replace(view, content=view.content[char : char + PAGE_CHARS]))
                if char + PAGE_CHARS < len(view.content):
                    next_cursor = f"seq:{seq}:char:{char + PAGE_CHARS}"
                elif seq < located[-1][3]:
                    next_cursor = f"seq:{seq + 1}"
                break
            cost = len(json.dumps(view.record, ensure_ascii=False)) + len(view.content or "")
            if views and size + cost > PAGE_CHARS:
                next_cursor = f"seq:{seq}"
                break
            views.append(view)
            size += cost
        return ExperienceRead(ref=str(parsed), records=views, next_cursor=next_cursor)

    def _line_at(self, file: str, offset: int, length: int) -> experience.Line:
        path = guard.inside(self.root, *file.split("/"))
        with os.fdopen(disk.open_safely(path), "rb") as handle:
            handle.seek(offset)
            raw = handle.read(length)
        return experience.parse_line(raw, offset)

    def _view(self, line: experience.Line, previous_sha: str | None, seq: int, session: str) -> RecordView:
        record = line.record
        if record is None or record.get("seq") != seq or record.get("session") != session:
            return RecordView(id=f"{session}#{seq}", record={}, verified=False,
                              problem="the log no longer holds this record where it was written (edited behind the server's back); "
                                      "run `repo-memory verify` to see every break")
        problem = "" if experience.seal(record)["sha256"] == record["sha256"] else (
            "its content does not match its sha256 (edited after it was written)")
        chain_ok = seq == 1 and record["prev"] is None or previous_sha is not None and record["prev"] == previous_sha
        if not problem and not chain_ok:
            problem = "its prev hash does not match the record before it (a record was changed, removed or inserted)"
        content = None
        if "blob" in record:
            data, intact = self.journal.blob(record["blob"]["sha256"])
            content = data.decode("utf-8", errors="replace")
            if not intact and not problem:
                problem = f"blob {record['blob']['sha256']} does not match its hash"
        return RecordView(id=record["id"], record=record, verified=not problem, problem=problem, content=content)

    def recall_experience(self, text: str, limit: int = 8, offset: int = 0, kinds: Sequence[str] | None = None,
                          session: str | None = None, since: str | None = None, until: str | None = None) -> list[RecordHit]:
        """Experience records matching `text` within the filters, best first."""
        return self.records.search(query.parse(text), limit, offset, kinds, session, as_moment(since), as_moment(until))

    def verify_logs(self) -> list[tuple[str, str]]:
        """Every break in every log: (where, what), empty when all hash chains and blobs are intact."""
        breaks = []
        for path in self.journal.files():
            rel = path.relative_to(self.root).as_posix()
            try:
                lines = self.journal.lines(path)
            except UnsafePathError as exc:
                breaks.append((rel, str(exc)))
                continue
            for line in lines:
                if line.record is None:
                    breaks.append((f"{rel} at byte {line.offset}", line.problem))
            for checked in experience.check_chain(lines):
                record = checked.line.record or {}
                if not checked.verified:
                    breaks.append((record.get("id", rel), checked.problem))
                if blob := record.get("blob"):
                    try:
                        _, intact = self.journal.blob(blob["sha256"])
                    except (NotFoundError, UnsafePathError) as exc:
                        breaks.append((record["id"], str(exc)))
                        continue
                    if not intact:
                        breaks.append((record["id"], f"blob {blob['sha256']} does not match its hash"))
        return breaks


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    if not cursor.startswith("offset:") or not cursor[7:].isdigit():
        raise NotFoundError(f"Cursor {cursor!r} is not one this server gave out; call recall again without a cursor.")
    return int(cursor[7:])


def normalised(hits: list[MemoryHit]) -> list[tuple[float, MemoryHit]]:
    top = max((h.score for h in hits), default=0.0) or 1.0
    return [(h.score / top, h) for h in hits]


def skill_hit(hit: Hit) -> MemoryHit:
    title = hit.description if len(hit.description) <= 200 else hit.description[:199] + "…"
    return MemoryHit(id=hit.ref, kind="skill", title=title, snippet=hit.snippet, score=hit.score, status=hit.status,
                     provenance={"origin": hit.origin or "unknown", "path": hit.path}, name=hit.name)


def record_hit(hit: RecordHit) -> MemoryHit:
    title = f"{hit.kind} in session {hit.session} at {hit.ts[:16].replace('T', ' ')}"
    return MemoryHit(id=hit.id, kind=hit.kind, title=title, snippet=hit.snippet, score=hit.score, status="recorded",
                     provenance={"actor": hit.actor, "harness": hit.harness, "tool": hit.tool}, ts=hit.ts, session=hit.session,
                     covers=hit.covers, file=hit.file, end=hit.end)


def as_moment(value: str | None) -> str | None:
    """A date or date-time as the records' ISO form; a bare date means its midnight (UTC)."""
    if not value:
        return None
    if len(value) == 10:
        return f"{value}T00:00:00Z"
    return value


def refuse_secrets(*fields: tuple[str, Any]) -> None:
    """Raise SecretError naming the field, rule and position of the first secrets found in any field (strings inside
    lists and mappings are scanned one by one, so the error can say `data.env` or `tags[2]`)."""
    for what, value in fields:
        for where, text in _strings(what, value):
            found = secretscan.scan(text)
            if found:
                raise SecretError(where, secretscan.summary(found))


def _strings(where: str, value: Any) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(f"{where} key", str(key))
            yield from _strings(f"{where}.{key}", item)
    elif isinstance(value, (list, tuple)):
        for n, item in enumerate(value):
            yield from _strings(f"{where}[{n}]", item)
    elif value is not None and not isinstance(value, (int, float, bool)):
        yield where, str(value)


def redact_entry(entry: experience.Entry) -> experience.Entry:
    """A captured record with every secret in its text and data replaced by `[REDACTED:<rule>]`."""
    text, in_text = secretscan.redact(entry.text) if entry.text else (entry.text, [])
    data, in_data = secretscan.redact_value(entry.data)
    if not (in_text or in_data):
        return entry
    rules = sorted({f.rule for f in (*in_text, *in_data)})
    data = {**data, "redacted": rules} if isinstance(data, dict) else {"value": data, "redacted": rules}
    return dataclasses.replace(entry, text=text, data=data)
