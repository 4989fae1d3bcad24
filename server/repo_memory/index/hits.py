"""The one shape of a search hit, from the index to every shell (the MCP output schema is generated from it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hit:
    """A skill, loop or experience record that matched a query, framed as recorded data."""

    id: str  # what `read` takes: skill:NAME, loop:NAME or SESSION#SEQ
    kind: str  # skill, loop, or the record's kind (note, decision, summary, loop.end, ...)
    title: str
    snippet: str
    score: float
    status: str  # active / draft / deprecated for skills and loops; "recorded" for records
    provenance: dict[str, str]  # origin and path of a document; actor, harness and tool of a record
    name: str = ""
    ts: str = ""
    session: str = ""
    covers: tuple[str, ...] = ()  # a summary's cited ids and ranges
    committed: bool = False
    recorded: str = ""  # "recorded by an agent (claude-code, remember) on …; committed"
    stale: bool = False  # the code it cites changed or is gone
    stale_reason: str = ""
