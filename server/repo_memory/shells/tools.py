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
from pydantic import BaseModel, ConfigDict, Field

from repo_memory import layout
from repo_memory.core import mirror
from repo_memory.core.reading import Item, flagged
from repo_memory.core.recall import RecallResult
from repo_memory.core.skillbook import WriteResult
from repo_memory.errors import ConflictError, InvalidArgumentError, NotFoundError
from repo_memory.formats import refs as grammar, speech
from repo_memory.git.history import Change
from repo_memory.git.pending import noted_session
from repo_memory.guards import secretscan
from repo_memory.index.hits import INTERNAL, OMIT, empty

if TYPE_CHECKING:
    from repo_memory.core.store import Store
    from repo_memory.runner.engine import Engine


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)  # '' is no query: the description says when query may be left out


_TIME = "2026-11-30, 2026-11-30T14:00:00Z, 'yesterday', '3 days ago'"
Limit = Annotated[int, Field(ge=1, le=50, description="How many hits (1-50).")]
Kinds = Annotated[list[str] | None, Field(description="Only these kinds: skill, loop, or record kinds (note, decision, error, summary, tool, ...).")]
Since = Annotated[str | None, Field(description=f"Only records written at or after this time: {_TIME}. Searches experience only; for "
                                                "when something happened, put its date in the query.")]
Until = Annotated[str | None, Field(description="Only records written at or before this time (the forms of since).")]
When = Annotated[str | None, Field(description=f"Only changes since this time: {_TIME}.")]
AsOf = Annotated[str | None, Field(description="Memory as it stood then, from git history: a time (2026-11-30, 'yesterday') or a commit "
                                               "id; skills at that commit, experience recorded up to it.")]
Session = Annotated[str | None, Field(description="Only the records of this session id (a record id's part before `#`).")]
WriteSession = Annotated[str | None, Field(description="The session to write to; leave it out for this conversation's own.")]
Cursor = Annotated[str | None, Field(description="The `next_cursor` of the previous answer, for the next page.")]
Kind = Annotated[str, Field(description="note, action, observation, tool, decision or error (use feedback for how a memory worked).")]
Speaker = Annotated[str | None, Field(description="Who said it, when the record is what a person said: their name (recall prefers "
                                                  "their records when a query names them).")]
About = Annotated[str | None, Field(description="When what it tells happened, if not now (2026-11-30, 'yesterday'); relative times in "
                                                "the text are read from it.")]
Status = Annotated[Literal["done", "progress", "no_op", "blocked"], Field(
    description="done (you think the goal is met), progress, no_op (nothing needed doing) or blocked (you cannot go on: say why).")]
Run = Annotated[str, Field(description="The run id loop_start gave.")]


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


class Remembered(BaseModel):  # a model, not a dataclass: the SDK rebuilds a dataclass without the rule that drops an empty note
    """Ids of the records written, where they stand with git, and a note when there is more to say."""

    model_config = ConfigDict(frozen=True)

    ids: list[str]
    session: str
    commit: str
    note: str | None = Field(default=None, exclude_if=lambda note: note is None)


QUARANTINED = ("Quarantined: the record holds what injection hides behind ({flags}): recall and session briefings leave it "
               'out, read(ref="{id}") still returns it. If those characters were not meant, remember the text again without '
               "them (a record is never edited).")
BLOB_NOTE = ("The text ({size:,} bytes) is kept as a blob: recall searches its first 2,000 characters, read returns all of it.")


@dataclass(frozen=True)
class Checkpointed:
    """The summary record written and the ids it covers."""

    id: str
    covers: list[str]
    commit: str


def recall(call: Call, query: Annotated[str, Field(json_schema_extra=_no_default, description="What you are about to do or want to know, "
                                                                                            "in words. Needed unless symbol is given.")] = "",
           limit: Limit = 8, kinds: Kinds = None, session: Session = None, since: Since = None, until: Until = None, cursor: Cursor = None,
           as_of: AsOf = None,
           symbol: Annotated[str | None, Field(description="A code symbol (Class.method or src/app.py::Class.method) or a file "
                                                           "(src/app.py): every memory citing it, or code in that file, instead of "
                                                           "a search.")] = None) -> RecallResult:
    """Search this repository's memory (skills, loops and experience) in words; returns compact hits to `read` by id.

    Example: recall(query="how do we cut a release") -> hits like {"id": "skill:release-checklist", ...};
    recall(query="migration failure", kinds=["error", "decision"], since="2026-11-01") searches experience only.
    A summary hit lists in `covers` the ids it compresses. A hit with stale=true cites code that changed since it was
    written: stale_reason says what; check before relying on it.
    """
    if not query.strip() and not symbol:
        raise InvalidArgumentError("Give a query (what you are about to do) or a symbol (Class.method) to recall.")
    return call.store.recall(query, limit, kinds, session, since, until, cursor, symbol, as_of)


def read(call: Call, ref: Annotated[str, Field(description='A recall hit\'s id, or: a skill ("skill:NAME" or "NAME"), a file in its folder '
                                                           '("NAME/scripts/tag.sh"), "loop:NAME", a record ("2026-12-02-a1b2c3#17"), a '
                                                           'range ("…#10-20"), a session or loop run id.')],
         cursor: Cursor = None, as_of: AsOf = None) -> Item:
    """Read a memory item in full: a skill with the files beside it, a loop with its latest runs, experience records
    each with `verified` (hash and chain checked) and, read alone by its id, a tool call's whole output it kept
    (`output`). Long content is paged. stale=true (on a skill, loop or record): the
    code it cites changed since it was written; stale_reason says what, check before relying on it."""
    from repo_memory.core import stale_checks  # (doctor's module, and what it imports: not at the server's start)

    item = flagged(call.store.read(ref, cursor, as_of), stale_checks.told(call.store))  # with the commit that changed the code
    if item.kind == "skill":
        call.engine.note_read(item.name)
    return item


def history(call: Call, ref: Annotated[str, Field(description='A skill name, "loop:NAME" or a session id.')], since: When = None,
            limit: Annotated[int, Field(ge=1, le=50, description="How many commits (1-50).")] = 10) -> History:
    """The commits that changed a memory item, newest first, each with its diff.

    Example: history(ref="release-checklist") -> who changed the procedure, when, and what changed.
    """
    path, found = call.store.history(ref, since, limit)
    return History(ref=ref, path=path, commits=found)


def remember(call: Call, text: Annotated[str, Field(description="The record, self-contained: everything recall should find it by. Over "
                                                               "64 KiB it is kept as a blob and recall searches its first 2,000 characters.")],
             kind: Kind = "note",
             refs: Annotated[list[str] | None, Field(description="What it relates to: ids (a record, \"skill:NAME\") or anything else, "
                                                                 "such as a URL or a ticket.")] = None,
             data: Annotated[dict[str, Any] | None, Field(description="Structured details (ids, numbers) that read returns and recall "
                                                                      "does not search.")] = None,
             session: WriteSession = None, speaker: Speaker = None, when: About = None) -> Remembered:
    """Append a record to this session's experience log (append-only, kept in git); returns `ids`, a list holding its id.

    Example: remember(text="Migrations must run before the app starts: the health check queries the new column.",
    kind="decision", refs=["2026-12-02-a1b2c3#12"]).
    """
    data = speech.told(text, data, speaker, when)
    written = call.store.remember(text, kind, refs or [], data, session or call.meta_session, actor="agent", tool="remember")
    blob = written[0].get("blob")
    held = call.store.flagged([written[0]["id"]])  # what recall will leave out, said now rather than found never
    notes = [BLOB_NOTE.format(size=blob["bytes"]) if blob and blob.get("field") == "text" else "", _where(call.store),
             *(QUARANTINED.format(flags="; ".join(json.loads(flags)), id=rid) for rid, flags in held)]
    return Remembered(ids=[r["id"] for r in written], session=written[0]["session"], commit=call.store.commit_status("experience"),
                      note=" ".join(n for n in notes if n) or None)


def _where(store: Store) -> str:
    """Which repository a record went to, when the server may have been started in one nobody chose: init never ran in it;
    or that the branch checked out predates init, which ran in this clone."""
    if layout.initialised(store.root, store.config.common_dir):
        return ""
    if layout.set_up_in_clone(store.root, store.config.common_dir):
        return ("`repo-memory init` ran in this clone, but this branch predates it (it lacks init's .gitattributes rules): "
                "the record went to this branch's .agents/, begun now if it had none, and what was written on branches made "
                "after init stays on them. Tell the person, who may want to merge such a branch in, or switch back to it.")
    return (f"Written to the repository at {store.root}, where `repo-memory init` never ran: if that is not the project you "
            "work in, tell the person to name the repository in this server's config (--root /path/to/repo).")


def feedback(call: Call, ref: Annotated[str, Field(description='The skill ("skill:NAME") or record id you used.')],
             outcome: Annotated[Literal["helped", "misled", "outdated"], Field(description="How it worked out.")],
             note: Annotated[str | None, Field(description="What happened, briefly.")] = None) -> Remembered:
    """Say whether a memory you used helped, misled you, or was outdated; skills that help rank higher in recall.

    Example: feedback(ref="skill:deploy-staging", outcome="outdated", note="the script moved to tools/deploy.sh").
    """
    record = call.store.feedback(ref, outcome, note, actor="agent", tool="feedback", session=call.meta_session)
    return Remembered(ids=[record["id"]], session=record["session"], commit=call.store.commit_status("experience"))


def checkpoint(call: Call, summary: Annotated[str, Field(description="What the records tell, compactly: what was done, decided, learned.")],
               covers: Annotated[list[str], Field(description='The record ids and ranges it summarises, e.g. ["s#1-40", "s#45"]; each '
                                                              "must exist.")],
               session: WriteSession = None) -> Checkpointed:
    """Record a compact summary of earlier records. Later, `recall` finds the summary and `read` of its covers gives the evidence."""
    record = call.store.checkpoint(summary, covers, session or call.meta_session, actor="agent", tool="checkpoint")
    return Checkpointed(id=record["id"], covers=record["covers"], commit=call.store.commit_status("experience"))


def skill_write(call: Call, name: Annotated[str, Field(description='A slug, e.g. "release-checklist": ASCII lowercase letters a-z, '
                                                                   "digits, hyphens (at most 64).")],
                description: Annotated[str | None, Field(description="One sentence: what it does and when to use it (at most 1024 "
                                                                      "characters).")] = None,
                body: Annotated[str | None, Field(description='Markdown with concrete steps, e.g. "1. Run `make test`\\n2. Tag with '
                                                              '`git tag vX.Y.Z`".')] = None,
                tags: Annotated[list[str] | None, Field(description="Keywords.")] = None,
                related: Annotated[list[str] | None, Field(description="Names of related skills.")] = None,
                new: Annotated[bool, Field(description="true: a new skill, though close to an existing one (without it, such a write "
                                                       "is refused with that skill's name: update that one instead).")] = False,
                anchors: Annotated[list[str] | None, Field(description='Code it describes, e.g. ["src/release.py::bump_version"]; recall '
                                                                       "flags the skill stale when that changes.")] = None) -> WriteResult:
    """Create or update a skill: a reusable procedure saved as .agents/skills/<name>/SKILL.md. A new skill needs
    description and body; an update changes only the fields you pass and keeps the rest and its formatting. Read a
    skill before you update it: a write over a version you have not read (a name in use) is refused."""
    result = call.store.write_skill(name, description, body, tags=tags, related=related, actor="agent", new=new, anchors=anchors,
                                    session=call.meta_session)
    mirror.withdraw(call.store.root, call.store.config.state_dir, [name])  # a draft now: Claude Code's copy goes
    return dataclasses.replace(result, commit=call.store.commit_status())


def loop_start(call: Call, name: Annotated[str, Field(description="The loop: .agents/loops/<name>.md.")],
               session: Annotated[str | None, Field(description="The harness session the run belongs to (its hooks follow the run); "
                                                                "leave it out for this conversation's own.")] = None,
               new: Annotated[bool, Field(description="true: start another run while one is live.")] = False) -> dict[str, Any]:
    """Start a run of a loop spec: returns the run id, goal, notes, bound skills, what earlier runs learned, and the
    instruction. The server verifies your work; you do not judge success yourself. A loop with a live run is not
    started again: continue that run with loop_step."""
    if not new and (live := call.engine.live(name)):
        run = live[0]
        raise ConflictError(f"Loop {name} already has a live run {run.run} (started {datetime.fromtimestamp(run.started, UTC):%Y-%m-%dT%H:%M:%SZ}, "
                            f"{run.iterations} iteration(s)): continue it with loop_step(run='{run.run}', report=...), or call "
                            f"loop_start(name='{name}', new=true) for a second run. A person ends a run with `repo-memory loop abort RUN`.")
    harness_session = session or call.meta_session or call.store.config.session
    return call.engine.start(name, harness_session=harness_session, harness_pid=os.getppid())


def loop_step(call: Call, run: Run, report: Annotated[str, Field(description="What you did in this iteration.")], status: Status = "done",
              checklist: Annotated[dict[str, bool] | None, Field(description='The spec\'s level-2 checklist items, word for word, each '
                                                                             'true when it holds: {"Changelog updated": true}.')] = None,
              skills: Annotated[list[str] | None, Field(description="Skills you used: the run's outcome is credited to them, besides "
                                                                    "those the spec binds and those you read.")] = None) -> dict[str, Any]:
    """Report an iteration of a loop run: the server records the report, runs the spec's verification steps
    (cheapest first), and answers state "continue" with what failed and where, or a terminal state
    (succeeded, no_op, blocked, budget_exhausted, no_progress, unverifiable, aborted)."""
    return call.engine.step(run, report, status, checklist, skills)


def loop_status(call: Call, run: Annotated[str | None, Field(description="One run's id; leave it out for all runs.")] = None) -> dict[str, Any]:
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


def no_such_tool(name: str) -> str:
    """What a call of a tool that does not exist is told: the tool it most likely meant (as a misspelled skill name is
    answered) and the tools there are."""
    from rapidfuzz import fuzz, process, utils  # only when a name was not found

    near = process.extract(name, list(BY_NAME), scorer=fuzz.WRatio, processor=utils.default_process, limit=2, score_cutoff=75)
    best = [tool for tool, score, _ in near if score == near[0][1]]
    return said(NotFoundError(f"No tool '{name[:60]}'.", best)) + f" The tools are {', '.join(BY_NAME)}."


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
