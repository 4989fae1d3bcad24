"""Which memories are stale: the code their anchors cite changed, or is gone, since the memory was written.

The baseline of an anchor is the hash pinned in the memory when it was written (`metadata.anchor_hashes` of a
skill, `anchors` of a record). An anchor a person wrote by hand (and every anchor of a loop spec) has none; its
baseline is the code as this clone first saw it (kept in `<git-dir>/repo-memory/anchor-baselines.json`, so a
re-index does not forget it) once git is done writing the working tree: a pull brings a teammate's skill and the
code it describes in one checkout, and git writes `.agents/` before most code, so a look mid-checkout would take the
old code for the skill's. The state of every anchor lives in the index, with the stamp (inode, size, mtime, ctime) of the
file it was read from and the form of the hashes; `check` brings it up to date, re-parsing only cited files whose
stamp changed, also in a process that has parsed nothing yet (a server starting, `repo-memory stale`, doctor).

Older releases hashed definitions otherwise (code/fingerprint.py: no decorators, no Python blocks, `\\` continuations
and trailing commas counted). A baseline equal to such an older hash of the code as it is now is taken as this
code's: the translation is kept beside the first-seen baselines (`memory|anchor|old hash` -> new hash), so nothing
turns stale on upgrade and a decorator changed later is seen. A pin that does not match the code now is first looked
up in git (code/pinned.py): translated from the code as the commit that wrote it holds it, so a clone made after the
code was re-wrapped says what the clone that saw the upgrade says. An index an older release wrote has stamps of another
form, so every cited file is read once on upgrade and its translations are learnt while the code is still the code
they were pinned over, not first when it is re-wrapped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from repo_memory.code.anchors import MISSING, UNCHECKED, Code, Resolved
from repo_memory.errors import did_you_mean
from repo_memory.formats.experience import FOLLOW_TOOL
from repo_memory.git.repo import IN_PROGRESS
from repo_memory.guards import disk
from repo_memory.index.activity import Activity
from repo_memory.index.anchors import AnchorIndex, State
from repo_memory.index.citations import Citation, Citations
from repo_memory.index.db import Database
from repo_memory.index.docs import DocIndex

BASELINES = "anchor-baselines.json"
PIN_TOOL = "stale"  # the tool of the note `repo-memory stale --pin ID` writes: a person checked the record
PERSON_TOOLS = ("cli", PIN_TOOL)  # a person's commands that may settle a record: `log add`, `stale --pin` (not `log
# import`: its file may claim any actor)
RETIRING = ("outdated", "misled")  # feedback that a record no longer holds
# The record at (log, offset, length) when it is authentic (marked by this clone or held by git) and sealed, else
# None: core/provenance.py. Without one, no person's record settles anything.
Vouch = Callable[[str, int, int], dict[str, Any] | None]
Moves = Callable[[Collection[str]], dict[str, str]]  # of files that do not exist, where git moved each: old path -> new
FOLLOWS = "`repo-memory stale --follow-renames` follows such a move"


@dataclass(frozen=True)
class Stale:
    """One stale anchor of a memory, with what happened to the code."""

    memory: str
    anchor: str
    reason: str
    baseline: str = ""  # the hash of the code the memory was written against ('' when never seen)
    settled: str = ""  # for a record: what retired it (a correction, feedback, a person's check); it is history then
    gone: bool = False  # the anchor names no code now (renamed, deleted, misspelled): edit it, pinning cannot help


@dataclass(frozen=True)
class Changed:
    """Code a stale record cites that changed, as a correction is matched against it."""

    anchor: str
    baseline: str
    gone: bool  # it names no code now
    renamed_in: str  # the file a symbol that is gone may be under another name in: its own, or where git moved it


class Staleness:
    """Anchor states of one repository's memories, recomputed only when the index or a cited file changed."""

    def __init__(self, db: Database, code: Code, state_dir: Path, git_dir: Path | None = None, vouch: Vouch | None = None,
                 pinned: Callable[[str, str], str | None] | None = None, moves: Moves | None = None):
        self._db, self._code, self._state_dir, self._git_dir, self._vouch = db, code, state_dir, git_dir, vouch
        self._pinned = pinned  # (anchor, pin) -> the pin in this release's form, from git history (code/pinned.py)
        self._moves = moves  # an anchor into a moved file is judged in the file it moved to
        self._docs, self._activity, self._anchors, self._citations = DocIndex(db), Activity(db), AnchorIndex(db), Citations(db)
        self._last: tuple[Any, dict[str, str]] | None = None  # the index generation of the last check, the cited files' stamps

    def check(self) -> int:
        """Recompute every anchor's state; returns how many rows changed."""
        signature = self._db.generation()
        if self._last and self._last[0] == signature and all(self._code.stamp(p) == s for p, s in self._last[1].items()):
            return 0  # the same memories cite the same, unchanged files: nothing to recompute (a stat per cited file)
        cited = self._docs.anchored() + self._activity.anchored()
        existing = self._anchors.states()
        if not cited and not existing:
            self._last = (signature, {})
            return 0
        first_seen = self._baselines()
        learned, unsettled = False, self._git_dir is not None and git_writing(self._git_dir)
        deferred = False
        wanted: dict[tuple[str, str], State] = {}
        decoded = [(memory, json.loads(raw)) for memory, raw in cited]
        known = {a: (c, p, s) for (_, a), (_, c, p, s) in existing.items()}
        with self._code.batch():
            stamps = {path: self._code.stamp(path) for path in {a.partition("::")[0] for _, pins in decoded for a in pins}}
            # Only anchors into files changed since the index last saw them (by any process), or new ones, are resolved;
            # by file, so that one syntax tree serves every anchor into it.
            todo = sorted({a for _, pins in decoded for a in pins if a not in known or known[a][2] != stamps[a.partition("::")[0]]})
            resolved = {a: (r.hash, r.problem, r.legacy) for a in todo if (r := self._code.resolve(a))}
        resolved = {**{a: (c, p, ()) for a, (c, p, _) in known.items() if a not in resolved}, **resolved}
        for memory, pins in decoded:
            for anchor, pinned in pins.items():
                current, problem, legacy = resolved[anchor]
                baseline = pinned or first_seen.get(f"{memory}|{anchor}", "")
                older = f"{memory}|{anchor}|{baseline}"
                if pinned and current and pinned != current and older not in first_seen and self._pinned is not None:
                    if (over := self._pinned(anchor, pinned)) is not None:  # the pin's commit says what code it was taken of
                        first_seen[older], learned = over, True
                baseline = first_seen.get(older, baseline)  # an older release's hash form, translated when first met
                if baseline and baseline in legacy:  # pinned by an older release, and only the hash form changed since
                    baseline = first_seen[older] = current
                    learned = True
                elif not baseline and current and unsettled:  # not this code's baseline, maybe: no alarm, nothing learned
                    baseline, deferred = current, True
                elif not baseline and current:
                    baseline = first_seen[f"{memory}|{anchor}"] = current
                    learned = True
                wanted[(memory, anchor)] = (baseline, current, problem, stamps[anchor.partition("::")[0]])
        if learned:
            self._save_baselines(first_seen)
        changed = {key: state for key, state in wanted.items() if existing.get(key) != state}
        gone = [key for key in existing if key not in wanted]
        if changed or gone:
            self._anchors.replace(changed, gone)
        # The index as it stands after our own write: the next check skips unless something else changes it, or
        # a baseline waits for git to finish.
        self._last = None if deferred else (self._db.generation(), stamps)
        return len(changed) + len(gone)

    def stale(self, memories: list[str] | None = None, check: bool = False, checkable: bool = True,
              settle: bool = False) -> list[Stale]:
        """Stale anchors of `memories` (all memories when None); `check`: look at the cited code files first. Not
        `checkable`: the anchors whose code cannot be checked instead (a language not parsed, a file too big), never stale.
        `settle`: say of each stale record what settled it, if anything did (`settled`)."""
        if check:
            self.check()
        rows = [row for row in self._anchors.stale(memories) if row[4].startswith(UNCHECKED) != checkable]
        moved = self._moved({a for _, a, _, _, p in rows if p == MISSING})
        near: dict[str, str] = {}  # what an anchor that names nothing may have meant (a person's typo, a rename)
        for _, a, _, c, p in rows:
            if not c and not p.startswith(UNCHECKED) and a not in near and (a not in moved or moved[a][1].problem):
                near[a] = f".{said}" if (said := did_you_mean(self._code.near(moved[a][0] if a in moved else a))) else ""
        found = [Stale(m, a, (_moved_reason(m, a, b, *moved[a]) if a in moved else _reason(a, b, c, p)) + near.get(a, ""), b,
                       gone=not c) for m, a, b, c, p in rows]
        return self._settled(found, {(m, a) for m, a, _, c, _ in rows if not c}, moved) if settle else found

    def _moved(self, anchors: Collection[str]) -> dict[str, tuple[str, Resolved]]:
        """Of `anchors`, whose files do not exist, those into a file git moved: the same symbol in the file it moved to
        (where the code is now, as `--follow-renames` would cite it), and how that resolves."""
        files = self._moves({a.partition("::")[0] for a in anchors}) if anchors and self._moves is not None else {}
        out = {}
        for anchor in anchors:
            path, _, symbol = anchor.partition("::")
            if path in files:
                out[anchor] = (new := f"{files[path]}::{symbol}", self._code.resolve(new))
        return out

    def _settled(self, found: list[Stale], gone: set[tuple[str, str]],
                 moved: dict[str, tuple[str, Resolved]]) -> list[Stale]:
        """A record cannot be edited, so a later record citing it in its refs settles it, but only one of these:
        - feedback that it is outdated or misled (the server writes it; an agent saying so only retires the record);
        - a correction: it cites code of the record that changed, as that code is now (the hash it pinned is the
          current one: `fresh`); for code that is gone (`gone`: its file or symbol no longer resolves), the same file
          or the same symbol elsewhere, and the file git moved it to when that file does not define it (`moved`: it was
          renamed there). A record citing no code, other code, or the code as it was corrects nothing, and a correction
          stops settling once the code changes again;
        - a person's record: written by `repo-memory log add` or `stale --pin` (the MCP tools write as an agent, and an
          agent's shell is refused `log add`), read back as repo-memory wrote it or as git holds it (`vouch`), and not
          a follow-up pinning the very code the record was written against (written before the change).
        One query per 500 stale records; a log line read per person's record that cites one."""
        changed: dict[str, list[Changed]] = {}  # record id -> its changed code
        for item in found:
            if "#" in item.memory:  # a record id; skills and loops are edited or pinned instead
                renamed_in = item.anchor.partition("::")[0]  # where a symbol that is gone may be under its new name
                if item.anchor in moved:
                    new, there = moved[item.anchor]
                    renamed_in = "" if there.hash else new.partition("::")[0]  # still defined there: the symbol only
                changed.setdefault(item.memory, []).append(
                    Changed(item.anchor, item.baseline, (item.memory, item.anchor) in gone, renamed_in))
        why: dict[str, str] = {}
        for c in self._citations.of(list(changed)):
            if c.cited in why:
                continue
            if c.kind == "outcome":
                if c.outcome in RETIRING:
                    why[c.cited] = f"reported {c.outcome} in {c.citing}"
                continue
            corrects = any(_corrects(anchor, changed[c.cited]) for anchor in c.fresh)
            if c.tool == FOLLOW_TOOL:  # repo-memory's word that the code moved unchanged: true while that code is
                if corrects:
                    why[c.cited] = f"followed to where its code moved by {c.citing}"
                continue
            follow_up = any(c.pinned.get(old.anchor) == old.baseline for old in changed[c.cited] if old.baseline)
            if (c.tool == PIN_TOOL or not corrects) and not follow_up and self._persons(c):
                why[c.cited] = f"checked by a person in {c.citing}"
            elif corrects:
                why[c.cited] = f"corrected by {c.citing}"
        return [replace(item, settled=why.get(item.memory, "")) for item in found]

    def _persons(self, c: Citation) -> bool:
        """Whether `c` is a person's record: says so, from a person's command, and is authentic as read back."""
        if c.actor != "human" or c.tool not in PERSON_TOOLS or self._vouch is None:
            return False
        record = self._vouch(c.file, c.offset, c.length)
        source = record.get("source") if record else None
        return bool(record and record.get("id") == c.citing and isinstance(source, dict)
                    and source.get("actor") == "human" and source.get("tool") in PERSON_TOOLS)

    def anchored_to(self, symbol: str) -> list[tuple[str, str]]:
        """(memory, anchor) for every memory citing `symbol`: `path::Class.method`, `Class.method` or a trailing part."""
        out = []
        for memory, anchor in self._anchors.pairs():
            path, _, name = anchor.partition("::")
            if symbol in (anchor, name) or name.endswith(f".{symbol}") or (symbol.endswith(f"::{name}") and path.endswith(symbol.split("::")[0])):
                out.append((memory, anchor))
        return out

    def resolvable(self, memory: str) -> list[tuple[str, str]]:
        """(anchor, hash of its code now) of each anchor of `memory` that resolves."""
        return self._anchors.current(memory)

    def repin_first_seen(self, memory: str) -> list[str]:
        """A person checked `memory` (one without pinned hashes, like a loop) against the code: take the code as it is now."""
        self.check()
        baselines = self._baselines()
        rows = self._anchors.current(memory)
        for anchor, current in rows:
            baselines[f"{memory}|{anchor}"] = current
        self._save_baselines(baselines)
        self._last = None
        self.check()
        return [a for a, _ in rows]

    def _baselines(self) -> dict[str, str]:
        try:
            return dict(json.loads((self._state_dir / BASELINES).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return {}

    def _save_baselines(self, baselines: dict[str, str]) -> None:
        disk.write_atomic(self._state_dir / BASELINES, json.dumps(baselines, sort_keys=True).encode("utf-8"))


def git_writing(git_dir: Path) -> bool:
    """Whether git may be writing the working tree now: a checkout, merge or reset holds index.lock throughout, and a
    merge, rebase, cherry-pick or bisect that stopped leaves its marker (the code on disk may be half old, half new)."""
    return any((git_dir / name).exists() for name in ("index.lock", *IN_PROGRESS))


def _corrects(anchor: str, changed: list[Changed]) -> bool:
    """Whether code cited as it is now (`anchor`) is code of a stale record (`changed`): the same anchor; or, for code
    that is gone, the same symbol (a file moved) or a symbol of the file it may have been renamed in."""
    path, _, symbol = anchor.partition("::")
    return any(anchor == old.anchor or old.gone and (path == old.renamed_in or symbol == old.anchor.partition("::")[2])
               for old in changed)


def _moved_reason(memory: str, anchor: str, baseline: str, new: str, there: Resolved) -> str:
    """What is stale of `anchor` when its file moved: said of the code at `new`, the same symbol in the moved file."""
    moved = f"{anchor}: its file moved to {new.partition('::')[0]}"
    if there.problem:
        return f"{moved}: {there.problem}"
    if baseline and there.hash != baseline and baseline not in there.legacy:
        return f"{moved}, and the code changed since the memory was written ({baseline[:8]} -> {there.hash[:8]})"
    fix = f"edit its memory.anchors to {new}" if memory.startswith("loop:") else FOLLOWS
    return f"{moved}, where its code is {'unchanged' if baseline else 'defined'} ({fix})"


def _reason(anchor: str, baseline: str, current: str, problem: str) -> str:
    if problem:
        return f"{anchor}: {problem}"
    return f"{anchor}: the code changed since the memory was written ({baseline[:8]} -> {current[:8]})"
