"""What doctor and `repo-memory stale` say about memories whose cited code changed: what happened to each file (the
commit that changed it, where git moved it), summed up by cause with one fix each, and the records already settled.

A directory move makes every memory citing a file in it stale at once (1,030 lines of doctor on Django, one warning
and one fix per anchor): one finding per cause says how many, names the first few and gives the one command that
helps; `repo-memory stale` lists them all.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Protocol

from repo_memory.code.anchors import MISSING, Code
from repo_memory.code.lineage import NEVER
from repo_memory.code.staleness import Stale
from repo_memory.core.native_checks import Notice
from repo_memory.core.settling import MOVED, followed_to, settles
from repo_memory.guards.shellwords import quoted

SHOWN = 5  # memories a finding names before "and N more"
# causes a pin cannot help, nor --follow-renames: the anchor itself needs editing
UNRESOLVED = ("cite code removed or renamed in ", "cite code never defined", "cite code its moved file does not define",
              "cite code at paths git moved", "cite files that do not exist")


class Memory(Protocol):
    """What these checks read of the Store."""

    def stale(self, memories: list[str] | None = None, checkable: bool = True) -> list[Stale]: ...

    def code_changes(self, paths: Collection[str], anchors: Collection[str] = ()) -> dict[str, str]: ...

    @property
    def root(self) -> Path: ...


def shown(item: Stale, change: str) -> str:
    """A stale anchor's reason with what happened to its code (from `changes`), the move said once: the reason already
    names where a moved file went."""
    if (moved := MOVED.match(change)) and f"its file moved to {moved['new']}" in item.reason:
        change = f"moved in {change[moved.start('commit'):]}"
    return f"{item.reason} ({change})" if change else item.reason


def told(store: Memory) -> Callable[[list[str]], list[Stale]]:
    """Store.stale for a read: each stale anchor's reason with what happened to its code, as `repo-memory stale` says
    it (`changes`, one git pass, only when something is stale): the commit that changed, moved, renamed or removed it."""
    def stale(memories: list[str]) -> list[Stale]:
        found = store.stale(memories)
        happened = changes(store, found) if found else {}
        return [dataclasses.replace(item, reason=shown(item, happened.get(item.anchor, ""))) for item in found]
    return stale


def changes(store: Memory, items: list[Stale]) -> dict[str, str]:
    """What happened to the code each of `items` cites, by anchor: "moved to PATH in HASH SUBJECT" or "uncommitted
    changes in PATH" (of the file; one git pass for them all), else what the file's history says of the definition:
    "last changed in HASH SUBJECT", "removed or renamed in HASH SUBJECT", or that it was never defined."""
    pins: dict[str, set[str]] = {}  # anchor -> the baselines of the memories citing it
    for item in items:
        pins.setdefault(item.anchor, set()).add(item.baseline)
    said = store.code_changes({item.anchor.partition("::")[0] for item in items}, pins)
    return {item.anchor: said.get(item.anchor) or said.get(item.anchor.partition("::")[0], "") for item in items}


def notices(store: Memory) -> list[Notice]:
    """The stale memories not settled, one notice per cause; the settled records in one line, as information."""
    found = store.stale()
    waiting = [item for item in found if not item.settled]
    happened = changes(store, waiting)
    followable = followed(store, waiting, happened)
    groups: dict[tuple[str, str], list[Stale]] = {}
    for item in waiting:
        groups.setdefault(_cause(item, happened, followable), []).append(item)
    out = [_notice(cause, where, items, happened) for (cause, where), items in groups.items()]
    settled = sorted({item.memory for item in found if item.settled})
    if settled:
        out.append(Notice("info", ".agents/experience/", f"stale: {_count(len(settled), 'record')} settled: {_listed(settled)}: "
                          "cited code changed since, and a later record corrected it, feedback called it outdated or "
                          "misled, or a person checked it (`repo-memory stale --pin`)", "Nothing to fix: they stay as "
                          "history (recall still marks them stale); `repo-memory stale --json` says what settled each."))
    return out


def followed(store: Memory, items: list[Stale], happened: dict[str, str]) -> dict[tuple[str, str], bool]:
    """Of `items`, (memory, anchor) of each whose file moved (`happened`, from `changes`) to a file defining its symbol,
    with whether `stale --follow-renames` follows it: a skill's (re-anchored), a record's whose code all moved unchanged
    (settled); not a loop's, nor a record's whose code also changed: those it leaves to a person."""
    moved = {path: m["new"] for item in items if (m := MOVED.match(happened.get(item.anchor, "")))
             for path in [item.anchor.partition("::")[0]]}
    if not moved:
        return {}
    code = Code(store.root)
    to = followed_to(code, [item.anchor for item in items], moved)
    of: dict[str, list[Stale]] = {}
    for item in items:
        of.setdefault(item.memory, []).append(item)
    follows = {m for m, stale in of.items() if m.startswith("skill:") or "#" in m and settles(code, stale, to)}
    return {(item.memory, item.anchor): item.memory in follows for item in items if item.anchor in to}


def fix(item: Stale, happened: dict[str, str], followable: Mapping[tuple[str, str], bool]) -> str:
    """What to do about one stale anchor, as doctor says it (`happened` from `changes`, `followable` from the Store)."""
    return _fix(_cause(item, happened, followable)[0], [item.memory])


def _cause(item: Stale, happened: dict[str, str], followable: Mapping[tuple[str, str], bool]) -> tuple[str, str]:
    """(the words for what happened to the code, the folder it happened in) of one stale anchor; `followable`: from
    `followed`."""
    path = item.anchor.partition("::")[0]
    change = happened.get(item.anchor, "")
    follows = followable.get((item.memory, item.anchor))
    if (moved := MOVED.match(change)) and follows is None:
        said = f"{path} moved to {moved['new']}, which defines no {item.anchor.partition('::')[2]}"
        return f"cite code its moved file does not define: {said}", ""
    if moved and not follows and item.memory.startswith("loop:"):  # its anchors carry no hash: a person's to edit
        return f"cite code at paths git moved: {path} moved to {moved['new']}", ""
    if moved and not follows:  # --follow-renames leaves the record to a person, to check and pin
        return f"cite code that moved and changed in {change[moved.start('commit'):]}", ""
    if moved:
        old, new = _moved_folders(path, moved["new"])
        return f"cite files moved in {change[moved.start('commit'):]} ({old} moved to {new})", old
    if change.startswith("last changed in "):
        return f"cite code changed in {change.removeprefix('last changed in ')}", ""
    if change.startswith(("removed or renamed in ", NEVER)):  # nothing to pin: the anchor itself needs editing
        said = "never defined (a misspelled anchor?)" if change.startswith(NEVER) else change
        return f"cite code {said}: {item.reason}", ""
    if MISSING in item.reason:  # deleted, not committed, or never there: a pin cannot help either
        return f"cite files that do not exist: {item.reason}", ""
    if change.startswith("uncommitted changes in "):
        return "cite code with uncommitted changes", ""
    return "cite code that changed or is gone", ""


def _moved_folders(old: str, new: str) -> tuple[str, str]:
    """The folders a move renamed (pkg/ and lib/ for pkg/a.py -> lib/a.py); the paths when the file name changed."""
    a, b = old.split("/"), new.split("/")
    same = 0
    while same < min(len(a), len(b)) - 1 and a[-1 - same] == b[-1 - same]:
        same += 1
    if not same:
        return old, new
    return "/".join(a[:-same]) + "/", "/".join(b[:-same]) + "/"


def _notice(cause: str, where: str, items: list[Stale], happened: dict[str, str]) -> Notice:
    items = sorted(items, key=lambda item: ("#" in item.memory, item.memory))  # skills and loops named before records
    memories = list(dict.fromkeys(item.memory for item in items))
    if len(memories) == 1 and len(items) == 1:  # one anchor: its own words, as `repo-memory stale` shows it
        said = f"stale: {shown(items[0], happened.get(items[0].anchor, ''))}"
        return Notice("warning", memories[0], said, _fix(cause, memories))
    if len(memories) == 1:
        named = f"{memories[0]}: {_listed([item.anchor for item in items])}"
    else:
        first: dict[str, str] = {}
        for item in items:
            first.setdefault(item.memory, item.anchor)
        named = _listed([f"{memory} ({anchor})" for memory, anchor in first.items()])
    path = memories[0] if len(memories) == 1 else where or _folder([item.anchor.partition("::")[0] for item in items])
    counts = f"{_count(len(items), 'anchor')} of {_count(len(memories), 'memory', 'memories')}"
    return Notice("warning", path, f"stale: {counts} {cause}: {named}", _fix(cause, memories))


def _fix(cause: str, memories: list[str]) -> str:
    if cause.startswith(UNRESOLVED):
        return _edit_anchors(memories, restore=cause.startswith(UNRESOLVED[-1]))
    if cause.startswith("cite files moved"):
        return ("`repo-memory stale --follow-renames` re-anchors the skills to the new paths and settles the records whose "
                "code moved unchanged; `repo-memory stale` then lists what is left to check.")
    skills = [m.removeprefix("skill:") for m in memories if m.startswith("skill:")]
    loops = [m for m in memories if m.startswith("loop:")]
    records = [m for m in memories if "#" in m]
    said = []
    if skills:
        name = quoted(skills[0]) if len(skills) == 1 else "NAME"
        said.append(f"Check {'the skill' if len(skills) == 1 else 'each skill'} against the code and update it, or run "
                    f"`repo-memory stale --pin {name}` when it still holds.")
    if loops:
        name = quoted(loops[0]) if len(loops) == 1 else "loop:NAME"
        said.append(f"Check {'the loop' if len(loops) == 1 else 'each loop'} against the code and edit its memory.anchors, "
                    f"or run `repo-memory stale --pin {name}` when it still holds.")
    if records:
        rid = quoted(records[0]) if len(records) == 1 else "ID"
        said.append(f"Records are append-only: settle {'it' if len(records) == 1 else 'each'} with `repo-memory stale --pin "
                    f"{rid}` when it still holds, `repo-memory feedback {rid} outdated` when it does not, or a correction "
                    f"citing it and the code as it is now (`repo-memory log add TEXT -r {rid} -r PATH::SYMBOL`).")
    if len(memories) > 1:
        said.append("`repo-memory stale` lists them all.")
    return " ".join(said)


def _edit_anchors(memories: list[str], restore: bool = False) -> str:
    """The fix of an anchor that names no definition now: edit it where it is written (a record: settle it), or
    (`restore`, its file does not exist) put the file back."""
    said = [f"Edit metadata.anchors in .agents/skills/{m.removeprefix('skill:')}/SKILL.md" for m in memories if m.startswith("skill:")]
    said += [f"edit memory.anchors in .agents/loops/{m.removeprefix('loop:')}.md" for m in memories if m.startswith("loop:")]
    records = [m for m in memories if "#" in m]
    out = "; ".join(said) + " to the definition meant" + (", or restore the file" if restore else "") + " (`repo-memory "\
        "stale --pin` pins the anchors as written, so it cannot help until they resolve), then commit." if said else ""
    if records:
        rid = quoted(records[0]) if len(records) == 1 else "ID"
        out += (" " if out else "") + (f"Records are append-only: `repo-memory feedback {rid} outdated`, or a correction citing it "
                                       f"and the code meant (`repo-memory log add TEXT -r {rid} -r PATH::SYMBOL`).")
    return out


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _listed(names: list[str]) -> str:
    return ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _folder(files: list[str]) -> str:
    """The deepest folder holding every one of `files` ('.' for the top of the repository)."""
    common = os.path.commonpath(files) if files else ""
    if common in files:
        common = os.path.dirname(common)
    return f"{common}/" if common else "."
