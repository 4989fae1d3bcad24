"""The MCP tools, free of the MCP SDK: each is a typed function over the server's state (`Call`) whose docstring is its
description. `shells/mcp.py` registers them with the SDK; the front (`shells/front.py`) calls them itself while the SDK
is still loading. Our errors are raised and translated at each edge (ToolError for the SDK, an isError result in the
front), so both answer alike; `tests/shells/test_startup.py` holds them to the same answers.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

import pydantic
from pydantic import Field

from repo_memory.core.reading import Item
from repo_memory.core.recall import RecallResult
from repo_memory.core.skillbook import WriteResult
from repo_memory.errors import ConflictError, InvalidArgumentError
from repo_memory.formats import refs as grammar, speech
from repo_memory.git.history import Change
from repo_memory.git.pending import noted_session
from repo_memory.guards import secretscan
from repo_memory.index.hits import INTERNAL, OMIT, empty

if TYPE_CHECKING:
    from repo_memory.core.store import Store
    from repo_memory.runner.engine import Engine

Limit = Annotated[int, Field(ge=1, le=50, description="How many hits to return (1-50).")]
Kinds = Annotated[list[str] | None, Field(description="Only these kinds: 'skill', 'loop', or experience kinds (note, decision, error, summary, tool, ...).")]
_TIME = "2026-11-30, 2026-11-30T14:00:00Z, today, yesterday, '3 days ago', 'last tuesday'"
Since = Annotated[str | None, Field(description=f"Only records written at or after this time (their ts; a record's `when` is searched by "
                                                f"its words: put that date in the query): {_TIME}. Skills and loops have no time.")]
Until = Annotated[str | None, Field(description=f"Only records written at or before this time (their ts): {_TIME}.")]
When = Annotated[str | None, Field(description=f"Changes since this time: {_TIME}.")]
AsOf = Annotated[str | None, Field(description=f"Memory as it stood then, read from git history: a time ({_TIME}) or a commit id or ref.")]
Session = Annotated[str | None, Field(description="Only the records of this session id (the `session` a hit or remember gives).")]
WriteSession = Annotated[str | None, Field(description="The session to write to; leave it out for this conversation's own.")]
Cursor = Annotated[str | None, Field(description="The `next_cursor` of the previous answer, for the next page.")]
Status = Literal["done", "progress", "no_op", "blocked"]
Kind = Annotated[str, Field(description="note, action, observation, tool, decision or error (loop verdicts and outcomes are written by the server; use feedback).")]
Speaker = Annotated[str | None, Field(description="Who said it, when the record is what a person said: their name, or \"user\" and "
                                                  "\"assistant\" for the turns of a chat (recall prefers a person's records when a question "
                                                  "names them; in a chat, the user's when it says I, the assistant's when it says you).")]
About = Annotated[str | None, Field(description="When what the record tells happened, if not just now: 2023-05-08, 2023-05-08T13:56:00Z, "
                                                "yesterday, '3 days ago'. Relative times in the text ('last week') are read from it.")]


class Call(Protocol):
    """What a tool call works on: the repository's Store and loop engine, and the session the client named in `_meta`."""

    @property
    def store(self) -> Store: ...

    @property
    def engine(self) -> Engine: ...

    @property
    def meta_session(self) -> str | None: ...


def meta_session(meta: Any, store: Store) -> str | None:
    """The harness session a call belongs to when the client names it in the call's `_meta` (Codex does), else as the
    harness's SessionStart hook noted it: Claude Code gives the server the id it started under (CLAUDE_CODE_SESSION_ID,
    the Store's own session), which `claude --continue` and `/clear` then leave behind."""
    named = (meta.get("sessionId") or meta.get("threadId")) if isinstance(meta, dict) else None
    if not (isinstance(named, str) and grammar.SESSION.match(named)):
        named = noted_session(store.config.state_dir)
    return named if named and grammar.SESSION.match(named) and named != store.session else None


@dataclass(frozen=True)
class History:
    """The commits that changed a memory item, newest first."""

    ref: str
    path: str
    commits: list[Change]


@dataclass(frozen=True)
class Remembered:
    """Ids of the records written, and where they stand with git."""

    ids: list[str]
    session: str
    commit: str


@dataclass(frozen=True)
class Checkpointed:
    """The summary record written and the ids it covers."""

    id: str
    covers: list[str]
    commit: str


def recall(call: Call, query: str = "", limit: Limit = 8, kinds: Kinds = None, session: Session = None, since: Since = None,
           until: Until = None, cursor: Cursor = None, as_of: AsOf = None,
           symbol: Annotated[str | None, Field(description="A code symbol (Class.method or src/app.py::Class.method): every memory "
                                                           "citing it, instead of a search.")] = None) -> RecallResult:
    """Search this repository's memory (skills, loops and experience) with a natural-language query; returns compact hits to `read`.

    Example: recall(query="how do we cut a release") -> hits like {"id": "skill:release-checklist", ...};
    recall(query="migration failure", kinds=["error", "decision"], since="2026-11-01") searches experience only.
    A summary hit lists in `covers` the ids it compresses. Pass `next_cursor` back as `cursor` for more.
    as_of (a date or commit id) answers from memory as it stood then: skills at that commit, experience recorded up to it.
    symbol ("Class.method" or "src/app.py::Class.method") returns every memory anchored to that code instead.
    A hit with stale=true cites code that changed since it was written: stale_reason says what; check before relying on it.
    """
    if not query.strip() and not symbol:
        raise InvalidArgumentError("Give a query (what you are about to do) or a symbol (Class.method) to recall.")
    return call.store.recall(query, limit, kinds, session, since, until, cursor, symbol, as_of)


def read(call: Call, ref: str, cursor: Cursor = None, as_of: AsOf = None) -> Item:
    """Read a memory item in full by id: a skill ("skill:release-checklist" or "release-checklist"), a file inside
    a skill's folder ("release-checklist/scripts/tag.sh"), a loop ("loop:fix-failing-tests", with its latest runs), an
    experience record ("2026-12-02-a1b2c3#17") or a range ("2026-12-02-a1b2c3#10-20"), or a whole session or loop run.
    Records come back exactly as stored, each with `verified` (hash and chain checked); long content is paged: pass
    `next_cursor` back as `cursor`. as_of: a date or commit id — the item as it stood then, read from git history."""
    item = call.store.read(ref, cursor, as_of)
    if item.kind == "skill":
        call.engine.note_read(item.name)
    return item


def history(call: Call, ref: str, since: When = None, limit: Annotated[int, Field(ge=1, le=50)] = 10) -> History:
    """The commits that changed a memory item (a skill, "loop:NAME", or a session id), newest first, each with its diff.

    Example: history(ref="release-checklist") -> who changed the procedure, when, and what changed.
    """
    path, found = call.store.history(ref, since, limit)
    return History(ref=ref, path=path, commits=found)


def remember(call: Call, text: str, kind: Kind = "note", refs: list[str] | None = None, data: dict[str, Any] | None = None,
             session: WriteSession = None, speaker: Speaker = None, when: About = None) -> Remembered:
    """Append a record to this session's experience log (append-only, kept in git); returns its id.

    Example: remember(text="Migrations must run before the app starts: the health check queries the new column.",
    kind="decision", refs=["2026-12-02-a1b2c3#12"]). Put everything that should be found in `text`: `data` holds
    structured details that `read` returns but recall does not search (ids, numbers). Content over 64 KiB is stored
    as a blob and the record keeps a preview.
    Recording what a person said? Pass speaker="Caroline" (or write the text as Caroline: "..."). Recording something
    that happened at another time than now? Pass when="2023-05-08" so "yesterday" in the text means 7 May.
    """
    data = speech.told(text, data, speaker, when)
    written = call.store.remember(text, kind, refs or [], data, session or call.meta_session, actor="agent", tool="remember")
    return Remembered(ids=[r["id"] for r in written], session=written[0]["session"], commit=call.store.commit_status("experience"))


def feedback(call: Call, ref: str, outcome: Literal["helped", "misled", "outdated"], note: str | None = None) -> Remembered:
    """Say whether a memory you used helped, misled you, or was outdated; skills that help rank higher in recall.

    ref: a skill ("skill:release-checklist") or an experience record id. note: what happened, briefly.
    Example: feedback(ref="skill:deploy-staging", outcome="outdated", note="the script moved to tools/deploy.sh").
    """
    record = call.store.feedback(ref, outcome, note, actor="agent", tool="feedback", session=call.meta_session)
    return Remembered(ids=[record["id"]], session=record["session"], commit=call.store.commit_status("experience"))


def checkpoint(call: Call, summary: str, covers: list[str], session: WriteSession = None) -> Checkpointed:
    """Record a compact summary of earlier records, citing the ids or ranges it covers (e.g. ["s#1-40", "s#45"]).

    Every cited record must exist. Later, `recall` finds the summary and `read` of its covers gives the evidence.
    """
    record = call.store.checkpoint(summary, covers, session or call.meta_session, actor="agent", tool="checkpoint")
    return Checkpointed(id=record["id"], covers=record["covers"], commit=call.store.commit_status("experience"))


def skill_write(call: Call, name: str, description: str | None = None, body: str | None = None, tags: list[str] | None = None, related: list[str] | None = None,
                new: bool = False, anchors: list[str] | None = None) -> WriteResult:
    """Create or update a skill: a reusable procedure saved as .agents/skills/<name>/SKILL.md.

    name: slug, e.g. "release-checklist" (lowercase letters, digits, hyphens; at most 64 characters).
    description: one sentence saying what it does and when to use it (at most 1024 characters).
    body: markdown with concrete steps, e.g. "1. Run `make test`\\n2. Tag with `git tag vX.Y.Z`".
    tags, related: optional keywords and names of related skills.
    An existing skill keeps its other fields and formatting; only what you pass changes (e.g. only tags). A new
    skill needs description and body.
    A new skill close to an existing one is refused with that skill's name: update it instead, or pass new=true
    when it really is a different procedure.
    anchors: code the skill describes, e.g. ["src/release.py::bump_version"]; recall flags the skill stale when it changes.
    """
    result = call.store.write_skill(name, description, body, tags=tags, related=related, actor="agent", new=new, anchors=anchors,
                                    session=call.meta_session)
    return dataclasses.replace(result, commit=call.store.commit_status())


def loop_start(call: Call, name: str, session: str | None = None, new: bool = False) -> dict[str, Any]:
    """Start a run of the loop spec .agents/loops/<name>.md: returns the run id, goal, notes, bound skills,
    what earlier runs learned, and the instruction. The server verifies your work; you do not judge success yourself.
    A loop with a live run is not started again (continue that run with loop_step) unless new=true."""
    if not new and (live := call.engine.live(name)):
        run = live[0]
        raise ConflictError(f"Loop {name} already has a live run {run.run} (started {datetime.fromtimestamp(run.started, UTC):%Y-%m-%dT%H:%M:%SZ}, "
                            f"{run.iterations} iteration(s)): continue it with loop_step(run='{run.run}', report=...), or call "
                            f"loop_start(name='{name}', new=true) for a second run. A person ends a run with `repo-memory loop abort RUN`.")
    harness_session = session or call.meta_session or call.store.config.session
    return call.engine.start(name, harness_session=harness_session, harness_pid=os.getppid())


def loop_step(call: Call, run: str, report: str, status: Status = "done", checklist: dict[str, bool] | None = None,
              skills: list[str] | None = None) -> dict[str, Any]:
    """Report an iteration of a loop run: the server records the report, runs the spec's verification steps
    (cheapest first), and answers state "continue" with what failed and where, or a terminal state
    (succeeded, no_op, blocked, budget_exhausted, no_progress, unverifiable, aborted).

    status: "done" (you think the goal is met), "progress", "no_op" (nothing needed doing), "blocked" (cannot proceed; say why).
    checklist: answers to the spec's level-2 checklist items, e.g. {"Changelog updated": true}.
    skills: names of skills you used. The run's outcome is credited to the skills its spec binds and to those you
    read (read tool) during the run; the answer lists any named skill it did not credit.
    """
    return call.engine.step(run, report, status, checklist, skills)


def loop_status(call: Call, run: str | None = None) -> dict[str, Any]:
    """Live and past loop runs (or one run): loop, state, iterations, start time."""
    return {"runs": call.engine.status(run)}


def unknown(name: str, arguments: dict[str, Any]) -> str:
    """Why `arguments` hold names tool `name` does not take ('' when they do not): dropped without a word, an agent's
    `tags` on a remember were lost while it was told the record was written."""
    taken = [p for p in inspect.signature(BY_NAME[name]).parameters if p != "call"]
    extra = sorted(set(arguments) - set(taken))
    if not extra:
        return ""
    return (f"{name} takes no {', '.join(repr(e) for e in extra)[:200]}: its arguments are {', '.join(taken)}. Nothing was done; "
            "call it again without " + ("it." if len(extra) == 1 else "them."))


def text_of(structured: Any) -> str:
    """A tool result's text: its structured content as one line of JSON (the SDK's indented form cost a recall about
    a fifth more bytes, read by the model as tokens)."""
    return json.dumps(structured, ensure_ascii=False, separators=(",", ":"))


def typing_return(fn: Callable[..., Any]) -> Any:
    """A tool's return type as the SDK and the early front give it out: a dataclass becomes its wire model (`wire`)."""
    return wire(typing.get_type_hints(fn, include_extras=True)["return"])


def structured(value: Any) -> Any:
    """`value`, a tool's result, as the structured content of its answer (what the SDK and the early front send)."""
    adapter = pydantic.TypeAdapter(wire(type(value)))
    return adapter.dump_python(adapter.validate_python(value), mode="json", by_alias=True)


_WIRES: dict[Any, Any] = {}


def wire(hint: Any) -> Any:
    """`hint` with each dataclass in it replaced by a pydantic model of its answer: read from the object's attributes,
    leaving out the fields marked INTERNAL and, when empty, those marked OMIT (index/hits.py), so neither is `required`
    in the output schema. The SDK's own model of a dataclass dropped those marks and required every field with a
    default factory: a record hit read as 558 bytes, 110 of them its snippet (docs/agent.md)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        return Annotated[(wire(args[0]), *hint.__metadata__)]
    if args and origin is not Literal:
        return origin[tuple(wire(a) for a in args)] if origin not in (typing.Union, types.UnionType) else typing.Union[tuple(wire(a) for a in args)]
    if not (isinstance(hint, type) and dataclasses.is_dataclass(hint)):
        return hint
    if hint not in _WIRES:
        hints, fields = typing.get_type_hints(hint, include_extras=True), dict[str, Any]()
        for f in dataclasses.fields(hint):
            marks = getattr(hints[f.name], "__metadata__", ())
            if INTERNAL in marks:
                continue
            given = {"default": f.default} if f.default is not dataclasses.MISSING else (
                {"default_factory": f.default_factory} if f.default_factory is not dataclasses.MISSING else {})
            fields[f.name] = (wire(hints[f.name]), Field(**given, exclude_if=empty if OMIT in marks else None))
        _WIRES[hint] = pydantic.create_model(hint.__name__, __config__=pydantic.ConfigDict(from_attributes=True), __doc__=hint.__doc__,
                                             **fields)
    return _WIRES[hint]


READ_ONLY, WRITES, APPENDS = "read-only", "writes", "appends"
TOOLS: tuple[tuple[Callable[..., Any], str], ...] = (
    (recall, READ_ONLY), (read, READ_ONLY), (history, READ_ONLY), (remember, APPENDS), (feedback, APPENDS), (checkpoint, APPENDS),
    (skill_write, WRITES), (loop_start, APPENDS), (loop_step, APPENDS), (loop_status, READ_ONLY),
)
BY_NAME = {fn.__name__: fn for fn, _ in TOOLS}
WRITERS = frozenset(fn.__name__ for fn, effect in TOOLS if effect != READ_ONLY)


def size(arguments: Any) -> int:
    """What a call's arguments weigh against the write budget: their JSON, in bytes."""
    return len(json.dumps(arguments, ensure_ascii=False, default=str).encode("utf-8", errors="replace"))


def said(exc: BaseException) -> str:
    """What an error tells the agent: its text, with anything the secret scanner flags (an argument the agent sent,
    echoed so it can fix it) redacted."""
    return secretscan.redact(str(exc))[0]
