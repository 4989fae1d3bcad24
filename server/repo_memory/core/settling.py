"""A person's ways out of staleness besides editing: a record checked against the code (`stale --pin ID`), and the
skills and records that follow the files git moved (`stale --follow-renames`).

Records are append-only, so both write a note (kind `note`, actor the person, tool `stale` or `follow-renames`) citing
the record and the code as it is now, committed like any experience: it settles the record (code/staleness.py). When
that code changes again a person's pin still settles it (the note is what goes stale), but the note `--follow-renames`
wrote, repo-memory's word that the code moved unchanged, no longer does. A skill's anchors are rewritten in its SKILL.md to the new
path, keeping the hash of the code it was written against: a skill whose code also changed in the move stays stale.
Neither rewrites a SKILL.md holding a person's uncommitted edit: the memory commit would take it along.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from repo_memory.code.anchors import Code
from repo_memory.code.staleness import PIN_TOOL, Stale, Staleness
from repo_memory.config import SKILLS_DIR
from repo_memory.core.logbook import Logbook
from repo_memory.core.reviewing import unsaved
from repo_memory.errors import ConflictError, NotFoundError, RepoMemoryError, disk_refused, nearest, refused_by_disk
from repo_memory.formats import experience, skills
from repo_memory.formats import refs as grammar
from repo_memory.git.committed import Committed
from repo_memory.git.committer import Committer
from repo_memory.guards import disk, paths
from repo_memory.guards.shellwords import quoted
from repo_memory.index.docs import DocIndex

# Past.code_changes says "moved to NEW in HASH SUBJECT"; the path ends at the first " in <hash>" (a path holding that is
# not worth the doubt)
MOVED = re.compile(r"moved to (?P<new>.+?) in (?P<commit>[0-9a-f]{4,40})(?: |$)")
FOLLOW = "repo-memory stale --follow-renames"


def followed_to(code: Code, anchors: Collection[str], moved: Mapping[str, str]) -> dict[str, str]:
    """Anchor -> the same symbol at the path its file moved to (`moved`: old path -> new), when it is defined there."""
    out = {}
    for anchor in anchors:
        path, _, symbol = anchor.partition("::")
        if path in moved and code.resolve(new := f"{moved[path]}::{symbol}").hash:
            out[anchor] = new
    return out


def settles(code: Code, items: Collection[Stale], to: Mapping[str, str]) -> bool:
    """Whether `stale --follow-renames` settles the record whose stale anchors are `items` (`to`: from `followed_to`):
    every one is code that moved unchanged. Any other is left to a person."""
    return all(s.anchor in to and code.resolve(to[s.anchor]).hash == s.baseline for s in items)


@dataclass(frozen=True)
class Followed:
    """What `stale --follow-renames` did: skills re-anchored (name -> [(old, new)]), records settled (record -> note),
    and what it left to a person, one line each."""

    skills: dict[str, list[tuple[str, str]]]
    records: dict[str, str]
    left: list[str]


class Settling:
    """Pins of records and renames followed, for one repository."""

    def __init__(self, *, root: Path, state_dir: Path, staleness: Staleness, code: Code, logs: Logbook, docs: DocIndex,
                 committer: Committer, committed: Committed, changes: Callable[[Collection[str]], dict[str, str]],
                 repin_skill: Callable[[str], list[str]]):
        self.root, self.state_dir, self._staleness, self._code, self._logs = root, state_dir, staleness, code, logs
        self._docs, self._committer, self._committed = docs, committer, committed
        self._changes, self._repin_skill = changes, repin_skill
        self._moved: tuple[str | None, dict[str, str]] = (None, {})  # HEAD, and where git moved a file by then ('': not)

    def pin(self, name: str, session: str) -> tuple[list[str], str]:
        """A person checked `name` (a skill, loop:NAME or a record id) against the code: the code as it is now is its
        baseline. Returns the anchors pinned, and the id of the note that settles a record ('' for the others)."""
        if name.startswith("loop:"):
            loop = name.removeprefix("loop:")
            if self._docs.get(loop, "loop") is None:
                raise NotFoundError(f"No loop '{loop}'; `repo-memory loop list` names them.",
                                    [f"loop:{n}" for n in nearest(loop, self._docs.names("loop"))])
            self._refuse_unresolved(name, f"memory.anchors in .agents/loops/{loop}.md")
            return self._staleness.repin_first_seen(name), ""
        if grammar.parse(name).kind == "record":
            return self.pin_record(name, session)
        name = name.removeprefix("skill:")
        self.refuse_moved(name)  # its files moved: say where, not "does not exist" per anchor
        path, rel = self._skill_file(name)
        if path.is_file():
            self._refuse_unsaved(path, rel, "pinning it", f"repo-memory stale --pin {quoted(name)}")
        self._refuse_unresolved(f"skill:{name}", f"metadata.anchors in {rel}")
        return self._repin_skill(name), ""

    def _refuse_unresolved(self, memory: str, where: str) -> None:
        """Pinning takes the anchors as written: one that names no definition is refused with what it may have meant."""
        unresolved = "; ".join(s.reason for s in self._staleness.stale([memory], check=True) if s.gone)
        if unresolved:
            ended = unresolved if unresolved.endswith("?") else f"{unresolved}."
            raise ConflictError(f"{memory} cites code that names no definition: {ended} Edit {where} to "
                                f"the definition meant, then run `repo-memory stale --pin {quoted(memory.removeprefix('skill:'))}` "
                                "if it still needs a new baseline.")

    def moves(self, files: Collection[str]) -> dict[str, str]:
        """Where git moved each of `files` that is gone: old path -> the path it has now (Past.code_changes follows a
        move after a move)."""
        gone = [f for f in files if not (self.root / f).exists()]
        if not gone:
            return {}
        head = self._committed.git.head()  # the user's HEAD (memory may commit elsewhere): a move is a commit of code
        if self._moved[0] != head:
            self._moved = (head, {})
        known = self._moved[1]  # recall asks of every hit whose file is gone: one `git log` per HEAD, not per hit
        if asked := [f for f in gone if f not in known]:
            said = self._changes(asked)
            known.update({f: m["new"] if (m := MOVED.match(said.get(f, ""))) else "" for f in asked})
        return {f: known[f] for f in gone if known[f]}

    def moved_anchors(self, items: list[Stale], moved: dict[str, str] | None = None) -> dict[str, str]:
        """Stale anchor -> the same symbol at the path its file moved to (`moved`, else looked up), when found there."""
        moved = self.moves({s.anchor.partition("::")[0] for s in items}) if moved is None else moved
        return followed_to(self._code, [s.anchor for s in items], moved)

    def refuse_moved(self, name: str) -> None:
        """`stale --pin NAME` of a skill whose cited files moved would fail on each 'file does not exist': say where
        they went and how to follow them."""
        moved = self.moved_anchors(self._staleness.stale([f"skill:{name}"], check=True))
        if moved:
            listed = "; ".join(f"{old} moved to {new.partition('::')[0]}" for old, new in moved.items())
            raise ConflictError(f"skill:{name} cites code that git moved: {listed}. Run `repo-memory stale "
                                "--follow-renames` to re-anchor it to the new paths, then `repo-memory stale --pin "
                                f"{name}` if its code also changed.")

    def pin_record(self, record: str, session: str) -> tuple[list[str], str]:
        """A person checked `record` against the code: a note citing it and the code as it is now (a moved file at its
        new path); returns the anchors cited and the note's id."""
        if missing := self._logs.missing(record):
            raise NotFoundError(f"{missing} `repo-memory stale` lists the stale records.")
        stale = self._staleness.stale([record], check=True)
        moved = self.moved_anchors(stale)
        now = dict(self._staleness.resolvable(record))
        now.update({new: h for new in moved.values() if (h := self._code.resolve(new).hash)})
        if not now and not stale:
            raise ConflictError(f"{record} cites no code (path/to/file.py::Name in its refs): there is nothing to pin.")
        lost = [s.anchor for s in stale if s.anchor not in now and s.anchor not in moved]
        text = f"Checked against the code by a person: {record} still holds."
        text += f" It cites code that is gone: {', '.join(lost)}." if lost else ""
        note = self._note(session, [(record, text, now)])[0]
        return list(now), note

    def follow_renames(self, session: str) -> Followed:
        """Re-anchor every skill citing a moved file to its new path; settle every record whose cited code moved
        unchanged with a note citing it there. A record whose code also changed, and a skill that cannot be rewritten
        (a person's uncommitted edit, a link), are left to a person: one refused stops no other."""
        stale = [s for s in self._staleness.stale(check=True, settle=True) if not s.settled]
        files = self.moves({s.anchor.partition("::")[0] for s in stale})
        moved = self.moved_anchors(stale, files)
        by_memory: dict[str, list[Stale]] = {}
        for item in stale:
            by_memory.setdefault(item.memory, []).append(item)
        skilled: dict[str, list[tuple[str, str]]] = {}
        notes: list[tuple[str, str, dict[str, str]]] = []
        left: list[str] = []
        for memory, items in by_memory.items():
            follow = [s for s in items if s.anchor in moved]
            if lost := [s.anchor for s in items if s.anchor not in moved and s.anchor.partition("::")[0] in files]:
                left.append(self._not_at_new_path(memory, lost, files))  # its file moved, its symbol is not there
            if not follow:
                continue
            went = ", ".join(f"{s.anchor} -> {moved[s.anchor]}" for s in follow)
            if memory.startswith("skill:"):
                try:
                    if done := self._reanchor(memory[6:], {s.anchor: (moved[s.anchor], s.baseline) for s in follow}):
                        skilled[memory[6:]] = done
                except RepoMemoryError as exc:
                    left.append(f"{memory}: {exc}")
                except OSError as exc:
                    if not refused_by_disk(exc):
                        raise
                    left.append(f"{memory}: {disk_refused(exc, f'run `{FOLLOW}` again')}")
            elif "#" not in memory:  # a loop spec pins no hash to carry over (its baseline is this clone's): a person's edit
                left.append(f"{memory}: edit its memory.anchors by hand ({went})")
            elif settles(self._code, items, moved):
                notes.append((memory, f"The code {memory} cites moved unchanged ({went}), as `{FOLLOW}` found.",
                              {moved[s.anchor]: s.baseline for s in follow}))
            elif not lost:  # one that is lost is said above: settled only once it cites code that is there
                left.append(f"{memory}: its code moved and changed; check it, then `repo-memory stale --pin {quoted(memory)}`")
        written = self._note(session, notes, experience.FOLLOW_TOOL) if notes else []
        settled = dict(zip((memory for memory, _, _ in notes), written, strict=True))
        self._staleness.check()
        return Followed(skilled, settled, left)

    def _not_at_new_path(self, memory: str, lost: list[str], files: dict[str, str]) -> str:
        """What a person is left with when `memory` cites a symbol its moved file does not define: which, where it went,
        what it may have meant, and where to edit the anchor (a record: how to settle it)."""
        said = []
        for anchor in lost:
            path, _, symbol = anchor.partition("::")
            near = self._code.near(f"{files[path]}::{symbol}")
            meant = f" (did you mean {', '.join(near[:3])}?)" if near else ""
            said.append(f"{anchor}: its file moved to {files[path]}, which defines no {symbol}{meant}")
        name = memory.partition(":")[2]
        if memory.startswith("skill:") and self._skill_file(name)[0].is_file():
            fix = f"edit metadata.anchors in {self._skill_file(name)[1]} to the definition meant, then commit"
        elif memory.startswith("loop:"):
            fix = f"edit memory.anchors in .agents/loops/{name}.md to the definition meant"
        elif "#" in memory:
            fix = (f"records are append-only: write a correction citing it and the code meant (`repo-memory log add TEXT -r "
                   f"{quoted(memory)} -r PATH::SYMBOL`), or `repo-memory feedback {quoted(memory)} outdated`")
        else:
            fix = "edit its anchors by hand to the definition meant"
        return f"{memory}: {'; '.join(said)}: {fix}"

    def _note(self, session: str, notes: list[tuple[str, str, dict[str, str]]], tool: str = PIN_TOOL) -> list[str]:
        """Append one note per (record, text, code it cites now) in one write, by the person's command `tool`; their ids."""
        source = self._logs.source("human", tool)
        entries = [experience.Entry(kind="note", text=text, refs=[record, *cited], source=source, anchors=cited or None)
                   for record, text, cited in notes]
        return [r["id"] for r in self._logs.append(session, entries)]

    def _skill_file(self, name: str) -> tuple[Path, str]:
        paths.check_name(name, "skill name")
        return paths.inside(self.root, SKILLS_DIR, name, skills.SKILL_FILE), f"{SKILLS_DIR}/{name}/{skills.SKILL_FILE}"

    def _refuse_unsaved(self, path: Path, rel: str, doing: str, again: str) -> None:
        """Refuse to rewrite a SKILL.md holding a person's uncommitted edit (`reviewing.unsaved`), saying how to go on."""
        try:
            unsaved(self._committer, self._committed, path, rel, doing)
        except ConflictError as exc:
            raise ConflictError(f"{exc} Then run `{again}` again.") from None

    def _reanchor(self, name: str, moves: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
        """Rewrite skill `name`'s anchors old -> new in place (a person's comments and layout kept), each keeping the
        hash of the code it was written against; the anchors renamed."""
        path, rel = self._skill_file(name)
        if not path.is_file():  # a skill in another folder (.claude/skills): its file is the person's to edit
            raise NotFoundError(f"No skill '{name}' in {SKILLS_DIR}/: edit the anchors of the skill of that name by hand.")
        with disk.repo_lock(self.state_dir):
            self._refuse_unsaved(path, rel, "re-anchoring it", FOLLOW)
            raw = disk.read_safely(path)
            cited = skills.parse(raw, rel, SKILLS_DIR).anchors
            renames = {old: new for old, (new, _) in moves.items() if old in cited}
            if not renames:
                return []
            renamed: dict[tuple[str, ...], dict[str, str]] = {("metadata", "anchors"): renames}
            changes: dict[tuple[str, ...], object] = {}
            if all(cited[old] == moves[old][1] for old in renames):  # each pinned hash is the one kept: rename its key
                renamed[("metadata", "anchor_hashes")] = renames
            elif any(cited.values()) or any(moves[old][1] for old in renames):  # a hash to add or change: the whole map
                pinned = {renames.get(a, a): moves[a][1] if a in renames else h for a, h in cited.items()}
                changes[("metadata", "anchor_hashes")] = {a: h for a, h in pinned.items() if h}
            text = skills.edit(raw.decode("utf-8"), name, changes, renamed=renamed)
            disk.write_atomic(path, text.encode("utf-8"))
            self._docs.note([skills.Found(str(path), rel, SKILLS_DIR, 0)])
        self._committer.record([rel], f"memory(skill): {name} re-anchored to code git moved", session=None)
        return list(renames.items())
