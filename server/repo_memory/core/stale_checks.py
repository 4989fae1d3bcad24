"""What doctor says about memories whose cited code changed: what happened to each file (the commit that changed
it, where git moved it), the fix that works for each kind of memory, and the records already settled."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from repo_memory.code.staleness import Stale

SHOWN = 5  # memories a finding names before "and N more"


class Memory(Protocol):
    """What these checks read of the Store."""

    def stale(self, memories: list[str] | None = None, checkable: bool = True) -> list[Stale]: ...

    def code_changes(self, paths: Collection[str]) -> dict[str, str]: ...


@dataclass(frozen=True)
class Notice:
    """One finding about stale memories, with what to do (core/doctor.py turns it into a Finding)."""

    level: str
    path: str
    message: str
    fix: str


def changes(store: Memory, items: list[Stale]) -> dict[str, str]:
    """What happened to each file `items` cite: "last changed in HASH SUBJECT", "moved to PATH in HASH SUBJECT" or
    "uncommitted changes in PATH" (one git pass for them all)."""
    return store.code_changes({item.anchor.partition("::")[0] for item in items})


def notices(store: Memory) -> list[Notice]:
    """The stale memories not settled, one notice per anchor; the settled records in one line, as information."""
    found = store.stale()
    waiting = [item for item in found if not item.settled]
    happened = changes(store, waiting)
    out = []
    for item in waiting:
        change = happened.get(item.anchor.partition("::")[0])
        out.append(Notice("warning", item.memory, f"stale: {item.reason}" + (f" ({change})" if change else ""), _fix([item.memory])))
    settled = sorted({item.memory for item in found if item.settled})
    if settled:
        out.append(Notice("info", ".agents/experience/", f"stale: {_count(len(settled), 'record')} settled: {_listed(settled)}: "
                          "cited code changed since, and a later record corrected it, feedback called it outdated or "
                          "misled, or a person checked it (`repo-memory stale --pin`)", "Nothing to fix: they stay as "
                          "history (recall still marks them stale); `repo-memory stale --json` says what settled each."))
    return out


def _fix(memories: list[str]) -> str:
    skills = [m.removeprefix("skill:") for m in memories if m.startswith("skill:")]
    loops = [m for m in memories if m.startswith("loop:")]
    records = [m for m in memories if "#" in m]
    said = []
    if skills:
        name = skills[0] if len(skills) == 1 else "NAME"
        said.append(f"Check {'the skill' if len(skills) == 1 else 'each skill'} against the code and update it, or run "
                    f"`repo-memory stale --pin {name}` when it still holds.")
    if loops:
        name = loops[0] if len(loops) == 1 else "loop:NAME"
        said.append(f"Check {'the loop' if len(loops) == 1 else 'each loop'} against the code and edit its memory.anchors, "
                    f"or run `repo-memory stale --pin {name}` when it still holds.")
    if records:
        rid = records[0] if len(records) == 1 else "ID"
        said.append(f"Records are append-only: settle {'it' if len(records) == 1 else 'each'} with `repo-memory stale --pin "
                    f"{rid}` when it still holds, `repo-memory feedback {rid} outdated` when it does not, or a correction "
                    f"citing it and the code as it is now (`repo-memory log add TEXT -r {rid} -r PATH::SYMBOL`).")
    if len(memories) > 1:
        said.append("`repo-memory stale` lists them all.")
    return " ".join(said)


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _listed(names: list[str]) -> str:
    return ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
