"""An agent's tool call that changed a skill's files puts an active skill back to draft while review is required, and
commits what the agent changed as its edit (core/skill_changes.py tells an edit from a read); never a person's edit in
progress that the call found in the file, which stays theirs to commit."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from repo_memory.config import SKILLS_DIR
from repo_memory.core import offering, reviewing, skill_changes
from repo_memory.errors import InvalidRecordError
from repo_memory.formats import skills
from repo_memory.git.committed import Committed
from repo_memory.git.committer import Committer
from repo_memory.guards import disk, paths
from repo_memory.index.docs import DocIndex


class Redrafted(NamedTuple):
    """The skills a redraft made drafts again, and those of them it left uncommitted: a person's edit was in the file."""

    names: list[str]
    kept_out: list[str]


class Redrafts:
    """Redrafts of the skills of one repository, crediting a session's own edit as seen by it (`seen`, by name: the
    SKILL.md sha256 this process last served or wrote, shared with the Skillbook whose writes `writer` names)."""

    def __init__(self, *, root: Path, state_dir: Path, sources: tuple[str, ...], review: str, docs: DocIndex,
                 committer: Committer, committed: Committed, seen: dict[str, str], writer: str):
        self.root, self.state_dir, self.sources, self.review_policy = root, state_dir, sources, review
        self._docs, self._committer, self._committed, self._seen, self._writer = docs, committer, committed, seen, writer

    def redraft(self, rels: Sequence[str], via: str, since: int | None = None,
                before: Mapping[str, str] | None = None) -> Redrafted:
        """Skills' files changed by `via` (an agent's tool call, a merge): those `rels` names — of a tool call (`before`
        given), only those whose folder changed during it (a read is no change) — and with `since` (ns) every one whose
        files' change times fall in the call and whose content changed go back to `draft` while review is required.
        Returns the names whose status changed, and those it left uncommitted."""
        kept_out: list[str] = []
        named = [rel for rel in rels if before is None or (folder := skill_changes.skill_of(rel, self.sources)) is None
                 or skill_changes.changed(self.root / folder, folder, before, self._committed)]
        timed = skill_changes.touched_since(self.root, self.sources, since) if since is not None else []
        touched = [*named, *(rel for rel in timed if rel in named or self._changed_during(rel, before, since))]
        names = sorted({name for rel in touched if (name := self._redraft(rel, via, set(named), since, before, kept_out))})
        return Redrafted(names, sorted(set(kept_out)))

    def _changed_during(self, rel: str, before: Mapping[str, str] | None, since: int | None) -> bool:
        """Whether the skill whose SKILL.md is `rel`, touched while a call ran, has content other than before it: as
        noted before it, else as HEAD holds it (a person's accept or a redraft is committed at once; a touch or the same
        bytes written again is no change), SKILL.md also as the index saw it before the call (a person's edit in progress)."""
        seen = self._docs.rows("path=?", (rel,), "sha256, checked_ns")
        indexed = seen[0]["sha256"] if seen and since is not None and seen[0]["checked_ns"] < since else ""
        folder = rel.rsplit("/", 1)[0]
        return skill_changes.changed(self.root / folder, folder, before, self._committed, indexed)

    def _redraft(self, rel: str, via: str, named: set[str], since: int | None, before: Mapping[str, str] | None,
                 kept_out: list[str]) -> str | None:
        parts = rel.split("/")
        source = next((s for s in self.sources if rel.startswith(f"{s}/")), None)
        if source is None or len(parts) <= len(source.split("/")) + 1:
            return None
        name, required = parts[len(source.split("/"))], self.review_policy == "required"
        md, path = f"{source}/{name}/{skills.SKILL_FILE}", paths.inside(self.root, *source.split("/"), name) / skills.SKILL_FILE
        if not path.is_file() or (path.parent / skills.MIRROR_MARKER).exists():  # a generated copy: mirror.take
            return None
        if path.is_symlink():  # never written through: in .agents/skills it is no longer served (skills.LINKED_SKILL_FILE)
            return name if source == SKILLS_DIR else None
        with disk.repo_lock(self.state_dir):
            # repo-memory wrote it while the call ran (another session's skill_write): what the call left is not all its own
            overwritten = since is not None and skill_changes.written_since(self.state_dir, md, since, self._writer)
            raw = disk.read_safely(path)
            current = skills.parse(raw, md, source)
            text = None
            if required and (current.status != "draft" or current.origin != "agent"):
                try:
                    text = skills.edit(raw.decode("utf-8"), name, {("metadata", "status"): "draft", ("metadata", "origin"): "agent"})
                except (InvalidRecordError, UnicodeDecodeError):
                    pass  # an invalid file is not searchable and cannot be accepted as it is; doctor reports it
                else:
                    disk.write_atomic(path, text.encode("utf-8"))
                    skill_changes.wrote(self.state_dir, md, self._writer)
                    self._docs.note([skills.Found(str(path), md, source, self.sources.index(source))])
            own = source == SKILLS_DIR and not overwritten
            if own and skill_changes.own(path.parent, md, before, self._seen.get(name), self._committed):
                self._seen[name] = hashlib.sha256(raw if text is None else text.encode("utf-8")).hexdigest()  # its own edit
            if not required:  # nothing to review: the agent's edit is its work on the files, as with code
                return None
            # a person's edit the call found in the file is theirs to commit, never the agent's (as skill_write refuses)
            persons = self._committer.mode in ("auto", "private") and not self._committer.waiting(md) \
                and skill_changes.unsaved_before(path.parent, md, before, self._committed)
            # its edit of the draft HEAD holds is the agent's, committed as such: not a person's edit in progress (unsaved)
            mine = [] if persons else [md] if text is not None or source == SKILLS_DIR and not self._committed.file(md, raw) \
                and skill_changes.own(path.parent, md, before, None, self._committed) else []
            offered = offering.settle(self.root, source, name)  # also when it was a draft: the agent may have changed agents/
            beside = reviewing.agents_change(self._committer.git, self._committed, f"{source}/{name}", named, since) if source == SKILLS_DIR else []
        if persons and source == SKILLS_DIR:
            kept_out.append(name)
        if source == SKILLS_DIR and (mine or offered or beside):
            self._committer.record([*mine, *offered, *beside], f"memory(skill): {name} edited by an agent ({via}), " + (
                "back to draft" if text is not None and mine else "still a draft" if mine or beside else "kept from Codex's list"),
                whole=True)
        return name if text is not None else None
