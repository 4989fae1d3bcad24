"""Logs written elsewhere, read as items to import: Claude Code transcripts, Codex rollouts, and JSONL records.

Pure functions over the lines of one file (bytes, one JSON object each); core/importing.py finds and reads the files
and writes the records. Every item carries a `key` that stays the same when the file is read again, even after it
grew, so an import can skip what an earlier one wrote. What the formats hold, as read from real files (Claude Code
2.1.197 and Codex CLI 0.171.0 driven offline against tests/harness/'s scripted endpoints) and public sources:

- Claude Code writes `~/.claude/projects/<cwd, every character but A-Z a-z 0-9 as '->/<session id>.jsonl`
  (anthropics/claude-code#24067, agentclientprotocol/claude-agent-acp#307). Lines of `type` user or assistant carry
  `uuid`, `parentUuid`, `sessionId`, `timestamp`, `cwd`, `isSidechain` and `message.content`: a string, or blocks
  `text`, `thinking`, `tool_use` {id, name, input} and `tool_result` {tool_use_id, content, is_error}. A streamed
  assistant message is written as one line per block. Other types (summary, system, attachment, queue-operation,
  file-history-snapshot, last-prompt) are the harness's bookkeeping, as are assistant lines of model `<synthetic>`
  (`isApiErrorMessage`: "Not logged in · Please run /login"); in a session with hooks (2.1.3xx) the first line
  carrying `cwd` and `sessionId` is an `attachment` of a hook's result, written before the first prompt.
- Codex writes `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl` of `{timestamp, type, payload}` lines
  (RolloutLine / RolloutItem / ResponseItem in openai/codex's codex-rs/protocol). The first is `session_meta` {id,
  cwd, timestamp}; `response_item` payloads are the model's history: `message` (role user, assistant or developer),
  `function_call` {name, namespace?, arguments, call_id}, `custom_tool_call` {name, input}, `local_shell_call`,
  `*_output` {call_id, output}, `reasoning`; `compacted` holds a summary; `event_msg` and `turn_context` repeat or
  describe the rest. Rollouts from before late 2025 start with a bare {id, timestamp} line and hold bare items.

Left out on purpose: model reasoning (`thinking`, `reasoning`: often encrypted, and not what happened), context the
harness injected (system reminders, environment and instruction blocks, hook feedback) and token bookkeeping; and
calls of repo-memory's own tools with their answers, and the harness's loading of tools (`unrecorded`): the server
recorded what they wrote, and what they read is memory already, so a copy would only outrank the original.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from repo_memory.formats.experience import KINDS, PERSON_KINDS, seal, server_kind
from repo_memory.errors import InvalidArgumentError, SecretError
from repo_memory.formats import nesting
from repo_memory.formats.refs import check_session

CLAUDE, CODEX, RECORDS = "claude-code", "codex", "records"
FORMATS = (CLAUDE, CODEX, RECORDS)
# as Claude Code and Codex name our MCP tools (mcp__repo-memory__recall), and Gemini CLI (mcp_repo-memory_recall)
OUR_TOOL = re.compile(r"mcp__(?:plugin_)?[\w.-]*repo[-_]memory[\w.-]*__(\w+)|mcp_repo-memory_(\w+)")


LOADING = frozenset({"ToolSearch", "tool_search"})  # the harness loading deferred tools' schemas: no work of the session's


def unrecorded(tool: str) -> bool:
    """Whether a call of `tool` (as a harness names it to hooks and in transcripts) stays out of the log: one of
    repo-memory's MCP tools (the server records what they write; what they read is memory already), or the harness
    loading tools (a ToolSearch for our tools ranked above a decision for the decision's own words)."""
    return tool in LOADING or OUR_TOOL.fullmatch(tool) is not None


ENTRY_FIELDS = {"kind", "text", "data", "refs", "ts", "session", "actor", "covers"}
RECORD_FIELDS = ENTRY_FIELDS | {"id", "seq", "source", "sha256", "mac", "prev", "blob", "anchors"}
_TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
# Context Codex puts in user messages that no person typed (environment, instructions, hook feedback).
_CODEX_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<skills_instructions>",
                   "<permissions instructions>", "<turn_aborted>", "<hook_prompt", "<collaboration_mode>", "<apps_instructions>")


@dataclass(frozen=True)
class Item:
    """One thing that happened, ready to become an experience record; `key` identifies it within its session."""

    key: str
    kind: str
    actor: str
    text: str | None
    data: dict[str, Any] = field(default_factory=dict)
    ts: str | None = None
    refs: tuple[str, ...] = ()
    covers: tuple[str, ...] | None = None
    session: str | None = None  # records name their own session; transcripts hold one
    harness: str | None = None
    writer: str = ""  # the clone that wrote it, for a record exported from a clone's log (its source names it)
    origin: str = ""  # a record's id in its records file: its own, or an entry's SESSION#N (its session's Nth entry there)
    exported: bool = False  # a record as `log tail --json` prints it (its own id and hash), not an entry
    anchors: dict[str, str] = field(default_factory=dict)  # an exported record's code refs, hashed where it was written


@dataclass(frozen=True)
class Transcript:
    """A harness session read from its file: its id, where it ran, and what happened in it."""

    harness: str
    session: str
    cwd: str
    items: list[Item]
    harness_id: str = ""  # the harness's own id of the session: what its hooks and tools named it while it ran


def detect(lines: Iterable[bytes]) -> str:
    """Which format a file is in, from its first lines: a Codex rollout, a Claude Code transcript, or records."""
    for raw in lines:
        obj = _json(raw)
        if obj is None:
            continue
        if obj.get("type") == "session_meta" or {"id", "instructions"} <= obj.keys() and "kind" not in obj:
            return CODEX
        if "sessionId" in obj or obj.get("type") in ("summary", "file-history-snapshot", "queue-operation"):
            return CLAUDE
        if "kind" in obj or "text" in obj:
            return RECORDS
    return RECORDS


def project_dir(cwd: str) -> str:
    """The folder under ~/.claude/projects where Claude Code keeps the transcripts of sessions started in `cwd`."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def claude_code(lines: Iterable[bytes], name: str = "") -> Transcript:
    """The items of a Claude Code transcript; `name` (the file's stem) names the session when no line does."""
    items: list[Item] = []
    tools: dict[str, str] = {}  # tool_use id -> tool name, to name each result
    session, cwd, ts = "", "", None
    for raw in lines:
        obj = _json(raw)
        if obj is None:
            continue
        # Any line may be the first to name the session and its folder: with hooks, an attachment (hook_success) line
        # comes before the first prompt.
        session, cwd = session or str(obj.get("sessionId") or ""), cwd or str(obj.get("cwd") or "")
        if obj.get("type") not in ("user", "assistant") or not isinstance(obj.get("message"), dict):
            continue
        ts = _ts(obj.get("timestamp")) or ts
        key, extra = str(obj.get("uuid") or _digest(raw)), {"sidechain": True} if obj.get("isSidechain") else {}
        content = obj["message"].get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content if isinstance(content, list) else []
        if obj.get("isMeta") or obj.get("isApiErrorMessage") or obj["message"].get("model") == "<synthetic>":
            continue  # the harness's own text: caveats for the model, its errors ("Not logged in", "API Error: …")
        for n, block in enumerate(b for b in blocks if isinstance(b, dict)):
            item = _claude_block(block, obj, tools)
            if item is not None:
                kind, actor, text, data = item
                items.append(Item(f"{key}:{n}" if n else key, kind, actor, text, {**data, **extra}, ts))
    return Transcript(CLAUDE, _session_name("claude", session or name), cwd, items, session or name)


def _claude_block(block: dict[str, Any], line: dict[str, Any], tools: dict[str, str]) -> tuple[str, str, str, dict[str, Any]] | None:
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str) and block["text"].strip():
        if line["type"] == "assistant":
            return "note", "agent", block["text"], {}
        if line.get("isCompactSummary"):
            return "note", "agent", block["text"], {"compacted": True}
        return "note", "human", block["text"], {}
    if kind in ("tool_use", "server_tool_use"):
        name = str(block.get("name") or "tool")
        tools[str(block.get("id"))] = name
        if unrecorded(name):
            return None
        return "tool", "agent", render_call(name, block.get("input")), {"tool": name, "call_id": str(block.get("id", ""))}
    if kind in ("tool_result", "web_search_tool_result"):
        call = str(block.get("tool_use_id", ""))
        if unrecorded(tools.get(call, "")):
            return None
        error = bool(block.get("is_error"))
        return "error" if error else "observation", "agent", _text_of(block.get("content")), {"tool": tools.get(call, ""), "call_id": call}
    return None  # thinking, images, anything newer: not imported


def codex(lines: Iterable[bytes], name: str = "") -> Transcript:
    """The items of a Codex rollout; `name` (the file's stem) names the session when its first line does not."""
    items: list[Item] = []
    tools: dict[str, str] = {}  # call_id -> tool name
    session, cwd, ts = "", "", None
    for raw in lines:
        obj = _json(raw)
        if obj is None:
            continue
        kind, payload = obj.get("type"), obj.get("payload")
        if "payload" not in obj:  # a rollout from before late 2025: a bare first line, then bare items
            kind, payload = ("session_meta", obj) if "instructions" in obj and not session else ("response_item", obj)
        ts = _ts(obj.get("timestamp")) or ts
        if not isinstance(payload, dict):
            continue
        if kind == "session_meta":
            session, cwd = session or str(payload.get("id") or ""), cwd or str(payload.get("cwd") or "")
            ts = ts or _ts(payload.get("timestamp"))
        elif kind == "compacted" and isinstance(payload.get("message"), str):
            items.append(Item(_digest(raw), "note", "agent", payload["message"], {"compacted": True}, ts))
        elif kind == "response_item":
            item = _codex_item(payload, tools)
            if item is not None:
                items.append(Item(_digest(raw), item[0], item[1], item[2], item[3], ts))
    stem = re.search(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", name)
    harness_id = session or (stem.group() if stem else name)
    return Transcript(CODEX, _session_name("codex", harness_id), cwd, items, harness_id)


def _codex_item(p: dict[str, Any], tools: dict[str, str]) -> tuple[str, str, str, dict[str, Any]] | None:
    kind, call = p.get("type"), str(p.get("call_id") or "")
    if kind == "message" and p.get("role") in ("user", "assistant"):
        text = "\n".join(b["text"] for b in p.get("content") or [] if isinstance(b, dict) and isinstance(b.get("text"), str))
        if not text.strip() or p["role"] == "user" and text.lstrip().startswith(_CODEX_INJECTED):
            return None
        return "note", "human" if p["role"] == "user" else "agent", text, {}
    if kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        name = {"local_shell_call": "local_shell", "web_search_call": "web_search"}.get(kind, str(p.get("name") or "tool"))
        if p.get("namespace"):
            name = f"{p['namespace']}__{name}"  # how Codex names an MCP tool to its hooks: mcp__server__tool
        tools[call] = name
        if unrecorded(name):
            return None
        args = p.get("arguments", p.get("input", p.get("action")))
        if isinstance(args, str) and kind == "function_call":
            try:
                args = nesting.loads(args)
            except ValueError:
                pass
        return "tool", "agent", render_call(name, args), {"tool": name, "call_id": call}
    if kind in ("function_call_output", "custom_tool_call_output"):
        if unrecorded(tools.get(call, "")):
            return None
        output = p.get("output")
        failed = isinstance(output, dict) and output.get("success") is False
        text = _text_of(output.get("content") if isinstance(output, dict) else output)
        return "error" if failed else "observation", "agent", text, {"tool": tools.get(call, ""), "call_id": call}
    return None  # reasoning, tool search, anything newer


def render_call(name: str, args: Any) -> str:
    """A tool call as text a person (and the secret scanner) reads: the name, then each argument, strings unescaped."""
    if isinstance(args, dict):
        lines = [f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}" for k, v in args.items()]
        return "\n".join([name, *lines])
    if args is None or args == "":
        return name
    return f"{name}\n{args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)}"


def _text_of(content: Any) -> str:
    """The text of a tool's output: a string, or blocks whose text parts are joined (an image is named, not kept)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") if isinstance(b.get("text"), str) else f"[{b.get('type', 'block')}]" for b in content if isinstance(b, dict)]
        return "\n".join(p for p in parts if p)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def records(lines: Iterable[bytes], session: str, checked: bool = False) -> Iterator[tuple[int, Item | str]]:
    """(line number, item or what is wrong with the line) for JSONL records: full records as `repo-memory log tail
    --json` prints them, or entries {kind, text, data?, refs?, ts?, session?, actor?}; `session` takes entries that name none.

    A record keeps its session and time; its key is its own `source_id` (it was imported before) or its id and hash,
    and one whose content does not match its hash is refused. An entry's key is a hash of its line and how often that
    line came before (a `source_id` in its data claims nothing), so the same file twice adds nothing.
    `checked`: every line passed `problems` already.
    """
    seen: dict[str, int] = {}
    entries: dict[str, int] = {}  # entries of each session so far: the Nth is SESSION#N to the file's refs and covers
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        obj = _json(raw)
        if obj is None:
            yield number, "not a JSON object"
            continue
        problem = "" if checked else _problem(obj)
        if problem:
            yield number, problem
            continue
        full = "sha256" in obj and "seq" in obj
        data = obj.get("data")
        kind = str(obj.get("kind") or "note")
        if server_kind(kind):  # a loop's verdicts, skill use and outcomes are the server's to write, never imported as such
            data, kind = _merge(data, {"imported_kind": kind}), "note"
        if full and obj.get("blob"):
            data = _merge(data, {"source_blob": obj["blob"]})  # its content stayed in the other repository's blob
        if full and isinstance(data, dict) and isinstance(data.get("source_id"), str):
            key = data["source_id"]  # its hash holds: it is the record that was imported as that one
        elif full:
            key = f"{obj['id']}@{obj['sha256'][:12]}"
        else:
            digest = _digest(raw)
            target = f"{obj.get('session') or session}/{digest}"
            seen[target] = count = seen.get(target, 0) + 1
            key = digest if count == 1 else f"{digest}.{count}"
        src: dict[str, Any] = obj["source"] if isinstance(obj.get("source"), dict) else {}
        actor = src.get("actor") or obj.get("actor") or "human"
        harness = src.get("harness") if isinstance(src.get("harness"), str) else None
        writer = str(src["clone"]) if full and isinstance(src.get("clone"), str) else ""
        named = str(obj.get("session") or session)
        entries[named] = entries.get(named, 0) + (not full)
        yield number, Item(key, kind, actor, obj.get("text"), _merge(data, {"source_id": key}), _ts(obj.get("ts")),
                           tuple(obj.get("refs") or ()), tuple(obj["covers"]) if obj.get("covers") is not None else None,
                           named, harness, writer, str(obj["id"]) if full else f"{named}#{entries[named]}", full,
                           dict(obj["anchors"]) if full and isinstance(obj.get("anchors"), dict) else {})


AS_NEW = ("To bring a changed or redacted record in as a new record of this repository, drop id, seq, sha256, mac, prev "
          "and source from its line and leave out the redaction records (docs/security.md shows a jq command for it)")


def _problem(obj: dict[str, Any]) -> str:
    """What keeps a JSONL line from being imported ('' when nothing)."""
    full = "sha256" in obj and "seq" in obj
    unknown = sorted(set(obj) - (RECORD_FIELDS if full else ENTRY_FIELDS))
    if unknown:
        return f"unknown field(s) {', '.join(unknown)}; an entry has {', '.join(sorted(ENTRY_FIELDS))}"
    if full and (not isinstance(obj["sha256"], str) or seal(obj)["sha256"] != obj["sha256"]):
        return ("its content does not match its sha256 (edited after it was exported, or redacted by a person's `log "
                "redact`, whose sha256 covers the text before), so it is not the record it names: an export is a file "
                f"anyone can write, and a redaction record in it proves nothing here. {AS_NEW}")
    kind = obj.get("kind", "note")
    if kind in PERSON_KINDS:
        return ("a redaction record attests a record of the repository where a person redacted it, and only their "
                f"`log redact` writes one: it is never imported. {AS_NEW}")
    if not isinstance(kind, str) or kind not in KINDS and not server_kind(kind):
        return f"kind {str(kind)[:40]!r} is not one of {', '.join(KINDS)}"
    if obj.get("text") is not None and not isinstance(obj["text"], str):
        return "text must be a string"
    if obj.get("text") is None and obj.get("data") is None and not (full and obj.get("blob")):
        return "give text or data"
    if obj.get("data") is None and not (full and obj.get("blob")) and not obj["text"].strip():
        return "text is empty: say what happened (or give data)"
    for name in ("refs", "covers"):
        value = obj.get(name)
        if value is not None and not (isinstance(value, list) and all(isinstance(r, str) for r in value)):
            return f"{name} must be a list of strings"
    if obj.get("ts") is not None and _ts(obj["ts"]) is None:
        return f"ts {str(obj['ts'])[:40]!r} is not an ISO 8601 time, e.g. 2026-12-02T10:31:07Z"
    if obj.get("session") is not None:
        wrong = session_problem(obj["session"]) if isinstance(obj["session"], str) else "session must be a string"
        if wrong:
            return wrong
    src: dict[str, Any] = obj["source"] if isinstance(obj.get("source"), dict) else {}
    if (src.get("actor") or obj.get("actor") or "human") not in ("human", "agent"):
        return "actor must be human or agent"
    return ""


@functools.lru_cache(maxsize=4096)
def session_problem(session: str) -> str:
    """Why `session` cannot name a session ('' when it can); a file names the same few sessions over and over."""
    try:
        check_session(session)
    except (InvalidArgumentError, SecretError) as exc:
        return str(exc)
    return ""


def _merge(data: Any, extra: dict[str, Any]) -> dict[str, Any]:
    """`data` with `extra` added: into it when it is an object, else around it as {"value": data}."""
    if isinstance(data, dict):
        return {**data, **extra}
    return {**({"value": data} if data is not None else {}), **extra}


def _ts(value: Any) -> str | None:
    """A time in the records' form (UTC, ending in Z), or None when `value` is not an ISO 8601 time."""
    if not isinstance(value, str):
        return None
    if _TS.match(value):
        return value
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _session_name(prefix: str, session_id: str) -> str:
    """`<prefix>-<harness session id>`, with characters a session name cannot hold replaced."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "-", session_id).strip("-.") or hashlib.sha256(session_id.encode()).hexdigest()[:12]
    return f"{prefix}-{cleaned}"[:128]


def _digest(raw: bytes) -> str:
    """A key for a line that has no id of its own: its bytes never change once written."""
    return hashlib.blake2b(raw.strip(), digest_size=10).hexdigest()


def _json(raw: bytes) -> dict[str, Any] | None:
    try:  # a byte that is not UTF-8 (a tool's output copied raw) is read as U+FFFD: the line's JSON still holds
        obj = nesting.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None  # a torn last line of a session still being written, or not JSON at all
    return obj if isinstance(obj, dict) else None
