"""The one shape of a search hit, from the index to every shell (the MCP output schema is generated from it).

What a model reads is this hit as JSON (Claude Code and Codex pass a result's structured content on as it is), so a
field is left out when it is empty, and nothing the id already says is repeated: a record's session is the id's
prefix, its kind and time are fields of their own, who recorded it is `recorded`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated


class Wire:
    """How a field goes into an answer, for the MCP shell (shells/tools.py `typing_return` reads it from `Annotated`)."""

    def __init__(self, what: str):
        self.what = what

    def __repr__(self) -> str:
        return f"Wire({self.what!r})"


def empty(value: object) -> bool:
    """Whether an OMIT field says nothing and is left out: None, False, or an empty text, list or mapping."""
    return value is None or value is False or isinstance(value, (str, list, tuple, dict)) and not value


OMIT = Wire("omit")  # left out when empty ("", [], {}, None, False); never `required` in the output schema
INTERNAL = Wire("internal")  # the server's own: never in an answer nor in its schema

# `matched` of a record hit whose own text holds no word of the query (the ranking is not changed by it):
NEIGHBOURS = "only in records beside it"  # the query's words: in its neighbours, indexed with it (index/records.py)
MEANING = "by meaning only"  # no word of the query in it, found by similarity of meaning


@dataclass(frozen=True)
class Hit:
    """A skill, loop or experience record that matched a query, framed as recorded data."""

    id: str  # what `read` takes: skill:NAME, loop:NAME or SESSION#SEQ
    kind: str  # skill, loop, or the record's kind (note, decision, summary, loop.end, ...)
    snippet: str
    score: float
    title: Annotated[str, OMIT] = ""  # a skill's or loop's description (a record's kind, session and time are fields)
    status: Annotated[str, OMIT] = ""  # active / draft / deprecated for skills and loops
    provenance: Annotated[dict[str, str], OMIT] = field(default_factory=dict)  # origin and path of a skill or loop
    name: Annotated[str, OMIT] = ""
    ts: Annotated[str, OMIT] = ""  # a record's time, 2026-12-05T23:20:03Z
    when: Annotated[str, OMIT] = ""  # the time a record is about (remember's `when`), when it is not its ts
    covers: Annotated[tuple[str, ...], OMIT] = ()  # a summary's cited ids and ranges
    committed: Annotated[bool, OMIT] = False
    recorded: str = ""  # "recorded by an agent (claude-code, remember)", "...; not committed yet" when HEAD does not hold it
    stale: Annotated[bool, OMIT] = False  # the code it cites changed or is gone
    stale_reason: Annotated[str, OMIT] = ""
    matched: Annotated[str, OMIT] = ""  # NEIGHBOURS or MEANING when the hit's own text holds no word of the query
    session: Annotated[str, INTERNAL] = ""  # a record's session (its id's prefix)
    source: Annotated[dict[str, str], INTERNAL] = field(default_factory=dict)  # a record's actor, harness and tool
