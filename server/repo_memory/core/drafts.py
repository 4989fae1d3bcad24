"""Draft skills proposed from imported harness memories: never active, each citing the record it came from.

Whether a memory deserves to be a skill is a judgement; the server makes no model call, so it cannot make it. What
it can tell deterministically is a procedure's shape: a memory holding numbered steps (`1.`, `2.`, …). Only those
are proposed, as drafts (even where `review = "optional"` would let an agent's skill be active) that a person
accepts (`repo-memory accept NAME`) or rejects. Everything else stays a record; an agent that should judge the rest
is pointed at the `distill-session` prompt on the session (`claude-memory`, `codex-memories`).

Each proposal is recorded in the same session (`data.proposed_skill`, `data.proposed_from`), so a memory is
proposed once, however often the import runs and whether or not the draft was rejected since.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from repo_memory.core.skillbook import WriteResult
from repo_memory.errors import NotFoundError, RepoMemoryError
from repo_memory.formats import native_memory
from repo_memory.formats.experience import Entry, Line
from repo_memory.guards import markers

MIN_STEPS = 2
# Where the skill came from, which stays true once it is accepted; that it is a draft is `metadata.status`'s to say (and
# doctor's, recall's and `skill show`'s), never the body's: the body is what an agent gets of an accepted skill.
NOTE = "Proposed by `repo-memory log import --propose-skills` from {id}, a memory {harness} kept in {file}."
HARNESSES = {"claude-code": "Claude Code's auto memory", "codex": "Codex's memories"}


class Drafting(Protocol):
    """What proposing needs of the Store (core/store.py)."""

    def lines(self, session: str) -> list[Line]: ...

    def skill_exists(self, name: str) -> bool: ...

    def write_skill(self, name: str, description: str | None, body: str | None, tags: Sequence[str] | None = None,
                    related: Sequence[str] | None = None, actor: str = "agent", new: bool = False,
                    anchors: Sequence[str] | None = None, draft: bool = False) -> WriteResult: ...

    def log(self, session: str, entries: Sequence[Entry], captured: bool = False) -> list[dict[str, Any]]: ...

    def source(self, actor: str, tool: str) -> dict[str, str]: ...


@dataclass(frozen=True)
class Proposal:
    """A memory with a procedure's shape, and what became of it: a draft skill, or why not."""

    record: str
    skill: str
    written: bool
    why: str = ""


def propose(book: Drafting, session: str, write: bool = True) -> list[Proposal]:
    """Propose a draft skill for each memory of `session` (its newest version) that holds numbered steps and was not
    proposed before."""
    try:
        records = [line.record for line in book.lines(session) if line.record]
    except NotFoundError:
        return []
    done = {r["data"]["proposed_from"] for r in records if isinstance(r.get("data"), dict) and "proposed_from" in r["data"]}
    newest: dict[str, dict[str, Any]] = {}
    for record in records:
        memory = record.get("data", {}).get("memory") if isinstance(record.get("data"), dict) else None
        if isinstance(memory, dict):
            newest[f"{memory.get('file')}#{memory.get('entry', '')}"] = record
    out = []
    for record in newest.values():
        text = record.get("text") or ""
        if record["id"] in done or native_memory.steps(text) < MIN_STEPS:
            continue
        out.append(_one(book, session, record, text, write))
    return out


def _one(book: Drafting, session: str, record: dict[str, Any], text: str, write: bool) -> Proposal:
    memory = record["data"]["memory"]
    name = _name(str(memory.get("name") or memory.get("title") or memory.get("entry") or memory.get("file")))
    if markers.find(text):
        return Proposal(record["id"], name, False, "it holds injection markers (quarantined)")
    if book.skill_exists(name):
        return Proposal(record["id"], name, False, f"skill:{name} exists")
    if not write:
        return Proposal(record["id"], name, False, "dry run")
    description = str(memory.get("description") or memory.get("title") or text.split("\n", 1)[0])[:300]
    steps = text.strip().removeprefix(description).strip()  # the record starts with its title; the skill has it as description
    harness = HARNESSES.get(str(memory.get("harness")), str(memory.get("harness")))
    body = f"{steps}\n\n{NOTE.format(id=record['id'], harness=harness, file=memory.get('file'))}\n"
    try:
        book.write_skill(name, description, body, actor="agent", draft=True)
    except RepoMemoryError as exc:  # a near-duplicate of a skill, a refused name: the memory stays a record
        return Proposal(record["id"], name, False, str(exc).split("\n")[0][:200])
    note = Entry(kind="note", text=f"Proposed the draft skill {name} from {record['id']}.", refs=[record["id"]],
                 data={"proposed_skill": name, "proposed_from": record["id"]}, source=book.source("agent", "import"))
    book.log(session, [note])
    return Proposal(record["id"], name, True)


def _name(text: str) -> str:
    """A skill name (a slug of at most 64 characters) from a memory's name or title."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", text.lower())).strip("-")[:64].strip("-") or "imported-memory"
