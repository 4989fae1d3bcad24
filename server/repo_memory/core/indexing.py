"""Keeping the index in line with the memory files: incremental syncs, and rebuilding a damaged or unwanted index.

The index is a cache of the files. A damaged file is found when the connection opens (a cheap probe), by the first
query it breaks, or by doctor's full check; it is then thrown away and built again from the files.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from repo_memory.code.staleness import Staleness
from repo_memory.config import Config
from repo_memory.core.logbook import Logbook
from repo_memory.core.semantic import Semantic
from repo_memory.formats import loops, skills
from repo_memory.guards import disk
from repo_memory.guards.paths import resolves_inside
from repo_memory.index.db import Database, damage
from repo_memory.index.docs import DocIndex, Progress, SyncReport
from repo_memory.index.records import RecordIndex

log = logging.getLogger("repo_memory")


class Indexer:
    """Syncs and rebuilds the index of one repository."""

    def __init__(self, config: Config, sources: tuple[str, ...], db: Database, docs: DocIndex, records: RecordIndex, logs: Logbook,
                 staleness: Staleness):
        self.root, self.sources = config.root, sources
        self._db, self._docs, self._logs, self._staleness = db, docs, logs, staleness
        self.semantic = Semantic(config.state_dir, config.semantic, docs, records)
        db.repair = self.repair  # a write that finds the index damaged has it rebuilt and re-indexed, not just emptied
        self._linked = True  # whether the last look at every file found a skill shown through a link (none yet)

    def refresh(self, progress: Progress | None = None, changed: Collection[str] | None = None, budget: int | None = None) -> SyncReport:
        """Re-index whatever changed on disk since the last look (a damaged index is rebuilt from the files). With
        `changed`, the absolute paths that file events named: the logs are re-read if one of them is a log, and a
        skill folder's SKILL.md is looked at alone when scan would read it the same way alone (no link on the way);
        anything else — a folder, a loop spec, a file beside a skill — has every memory file looked at."""
        try:
            # A skill shown through a link changes under its target's path; a path not absolute and normal is not the watcher's.
            if changed is None or self._linked or any(not os.path.isabs(p) or os.path.normpath(p) != p for p in changed):
                return self._sync(progress, budget)
            logs = f"{self.root / '.agents' / 'experience'}{os.sep}"
            looks = {path: skills.find(self.root, self.sources, path) for path in changed if not path.startswith(logs)}
            if not all(alone for alone, _ in looks.values()):
                return self._sync(progress)
            report = SyncReport(looked="logs")
            if looks:  # a hand edit at 10k skills: this file, not a look at 10k (145 ms)
                gone = [Path(path).relative_to(self.root).as_posix() for path, (_, found) in looks.items() if found is None]
                report = replace(self._docs.sync([found for _, found in looks.values() if found], complete=False, gone=gone), looked="files")
                self._staleness.check()
            if len(looks) < len(changed):
                self._logs.sync()
            return report
        except (sqlite3.DatabaseError, MemoryError) as exc:  # MemoryError: SQLite's NOMEM on a damaged block
            if not damage(exc):
                raise
            return self.repair(str(exc), progress)

    def repair(self, why: str, progress: Progress | None = None, embedding: Progress | None = None, damaged: bool = True) -> SyncReport:
        """Discard the index file (damaged, or on request) and index every memory file again. Vectors are kept (their
        keys come from the content, not the rows); with `embedding` (a person's reindex), whatever has none is
        embedded now, with that progress."""
        self._db.rebuild(why, damaged)
        sweep(self.root)
        report = self._sync(progress)
        if embedding is not None:
            self.semantic.embed(embedding)
        return report

    def health(self) -> tuple[str, list[str], tuple[int, int] | None]:
        """(what a full check finds wrong with the index file, '' when nothing; why this process rebuilt it, each time;
        how many of the texts recall can return have a vector, of how many — None with semantic recall off)."""
        return self._db.check(), list(self._db.rebuilt), self.semantic.coverage()

    def _sync(self, progress: Progress | None, budget: int | None = None) -> SyncReport:
        """Every memory file; with `budget`, the logs only when at most that many bytes of them are new (else the
        report's `looked` is "skills and loops")."""
        links: list[str] = []  # a link showing no skill now may show one when its target's file appears
        found = [*skills.scan(self.root, self.sources, links), *loops.scan(self.root)]
        self._linked = bool(links)
        report = self._docs.sync(found, progress)
        if not self._logs.sync(budget):
            report = replace(report, looked="skills and loops")
        self._staleness.check()
        return report


def sweep(root: Path) -> list[str]:
    """Remove what killed writes left in the memory folders (half a file under a temporary name, never memory). A server
    starting, doctor and reindex do it, not every refresh (it reads every skill folder). Returns the paths removed."""
    agents = root / ".agents"
    # A memory folder that is a link out of the repository (a shared skills folder) is someone else's: not swept.
    folders: list[str | Path] = [base for base in (agents, agents / "loops", agents / "experience" / "blobs") if resolves_inside(root, base)]
    if resolves_inside(root, agents / "skills"):
        folders += disk.folders(agents / "skills")  # each skill folder, links not followed
    removed = [path.relative_to(root).as_posix() for path in disk.sweep_temps(folders)]
    for rel in removed:
        log.info("removed %s, left by an interrupted write", rel)
    return removed
