"""The Store: the one core every shell calls. Every write is validate -> guard -> write file -> index."""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process

from repo_memory import disk, guard, query, skills
from repo_memory.config import SKILLS_DIR, Config
from repo_memory.errors import ConflictError, NotFoundError, RepoMemoryError
from repo_memory.index import Hit, Index, Progress, SyncReport

log = logging.getLogger("repo_memory")

DEFAULT_STATUSES = ("active", "draft")
ACTORS = ("human", "agent")


@dataclass(frozen=True)
class RecallResult:
    """Hits for a query, plus names it may have meant when nothing matched."""

    query: str
    hits: list[Hit]
    suggestions: list[str] = field(default_factory=list)


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


@dataclass(frozen=True)
class WriteResult:
    """What a skill write did."""

    ref: str
    path: str
    created: bool
    status: str
    sha256: str
    warnings: list[str]


class Store:
    """Memory of one repository: skill files on disk plus the derived index."""

    def __init__(self, config: Config):
        self.config = config
        self.root = config.root
        self.index = Index(config.index_path)

    def close(self) -> None:
        self.index.close()

    @property
    def sources(self) -> tuple[str, ...]:
        return (SKILLS_DIR, *(d for d in self.config.skill_dirs if d != SKILLS_DIR))

    def refresh(self, progress: Progress | None = None) -> SyncReport:
        """Re-index whatever changed on disk since the last look."""
        return self.index.sync(skills.scan(self.root, self.sources), progress)

    def reindex(self, progress: Progress | None = None) -> SyncReport:
        """Throw the index away and build it again from the files."""
        return self.index.rebuild(skills.scan(self.root, self.sources), progress)

    def recall(self, text: str, limit: int | None = None, include: Sequence[str] = DEFAULT_STATUSES) -> RecallResult:
        """Search skills with natural-language `text`."""
        limit = max(1, min(limit or self.config.recall_limit, 50))
        hits = self.index.search(query.parse(text), limit, include)
        suggestions = [] if hits else self.similar_names(text)
        return RecallResult(query=text, hits=hits, suggestions=suggestions)

    def similar_names(self, text: str, limit: int = 3) -> list[str]:
        """Existing skill names close to `text` (for did-you-mean)."""
        names = self.index.names()
        matches = process.extract(text.lower(), names, scorer=fuzz.WRatio, limit=limit, score_cutoff=60)
        return [m[0] for m in matches]

    def read(self, ref: str) -> SkillContent:
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
        data = target.read_bytes()
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RepoMemoryError(f"'{target.relative_to(self.root)}' is not UTF-8 text; open it from the repository directly.") from None
        return SkillContent(
            ref=f"skill:{name}" + (f"/{inner}" if inner else ""),
            name=name,
            path=str(target.relative_to(self.root)),
            content=content,
            sha256=hashlib.sha256(data).hexdigest(),
            status=row["status"],
            origin=row["origin"],
            description=row["description"],
            files=self._files(folder),
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
    ) -> WriteResult:
        """Create or update `.agents/skills/NAME/SKILL.md`; an agent's write is a draft while review is required."""
        guard.check_name(name, "skill name")
        for other in related or ():
            guard.check_name(other, "related skill name")
        if actor not in ACTORS:
            raise ConflictError(f"actor must be one of {ACTORS}")
        path = guard.inside(self.root, SKILLS_DIR, name, skills.SKILL_FILE)
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
                text = skills.render(name, description, body, metadata)
                warnings += self._near_duplicates(name)
            else:
                changes: dict[tuple[str, ...], Any] = {("description",): description}
                if actor == "agent":
                    changes[("metadata", "status")] = status
                if tags is not None:
                    changes[("metadata", "tags")] = list(tags)
                if related is not None:
                    changes[("metadata", "related")] = list(related)
                current = path.read_text(encoding="utf-8")
                text = skills.edit(current, name, changes, body)
            data = text.encode("utf-8")
            disk.write_atomic(path, data)
            self.index.sync([skills.Found(str(path), f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}", SKILLS_DIR, 0)], complete=False)
        if status == "draft":
            warnings.append(f"Saved as a draft: a person reviews it and sets `status: active` in {SKILLS_DIR}/{name}/SKILL.md.")
        return WriteResult(
            ref=f"skill:{name}", path=f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}", created=created, status=status,
            sha256=hashlib.sha256(data).hexdigest(), warnings=warnings,
        )

    def _near_duplicates(self, name: str) -> list[str]:
        close = process.extract(name, self.index.names(), scorer=fuzz.ratio, limit=3, score_cutoff=85)
        return [f"A similar skill already exists: '{m[0]}'. Update it instead if it covers the same procedure." for m in close if m[0] != name]

    def list_skills(self) -> list[dict[str, Any]]:
        """Every skill file the index knows, valid or not, with where it came from."""
        return self.index.rows("kind='skill'")


def start_refresher(store: Store, interval: float = 2.0) -> threading.Event:
    """Re-index changed files in a daemon thread; set the returned event to stop.

    It waits `interval` seconds between passes, or ten times as long as the last pass took, so a
    very large library never spends more than a tenth of a core on looking for changes.
    """
    stop = threading.Event()

    def loop() -> None:
        wait = interval
        while not stop.wait(wait):
            started = time.monotonic()
            try:
                store.refresh()
            except (OSError, RepoMemoryError, sqlite3.Error) as exc:  # keep serving; the next pass retries
                log.warning("background re-index failed: %s", exc)
            wait = max(interval, 10 * (time.monotonic() - started))

    threading.Thread(target=loop, name="repo-memory-refresh", daemon=True).start()
    return stop
