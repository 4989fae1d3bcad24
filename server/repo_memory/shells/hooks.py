"""Harness hook handlers: JSON in, JSON out, and never a blocked harness because of an error of ours."""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from repo_memory.config import Config
from repo_memory.formats import experience, refs, when
from repo_memory.git import sparse
from repo_memory.git.pending import harness_pid, note_session
from repo_memory.guards import paths, secretscan
from repo_memory.errors import NotFoundError, RepoMemoryError, WorkspaceError
from repo_memory.core.store import Store
from repo_memory.core import agent_commits, following, mirror, offering, skill_changes, skill_removals
from repo_memory.git.repo import Git
from repo_memory.shells import deliveries, elsewhere, embedder, finish, hookbudget, hookcalls, pretool, tool_records
from repo_memory.shells.loopstop import stop

log = logging.getLogger("repo_memory")


def handle(event: str, payload: dict[str, Any], root: str | None = None) -> dict[str, Any]:
    """Answer one hook event; on any failure, the answer lets the harness carry on."""
    try:
        return _handle(event, payload, root)
    except Exception as exc:  # the one top-level handler of a hook process: a harness is never blocked by our bug
        log.warning("hook %s failed (%s: %s); the harness carries on", event, type(exc).__name__, str(exc)[:300])
        return {}


def _handle(event: str, payload: dict[str, Any], root: str | None = None) -> dict[str, Any]:
    handler = HANDLERS.get(event)
    if handler is None:
        log.warning("unknown hook event %r; known: %s", event, ", ".join(HANDLERS))
        return {}
    if event == "pre-tool":  # before every file or shell call: no Store, no index (shells/pretool.py)
        return pretool.handle(payload, root)
    session = payload.get("session_id")
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    try:
        config = Config.load(root or cwd or None, lenient=True)
        if event == "session-end":  # the harness may end this hook before it commits: Claude Code gives a plugin's 1.5 s
            _finisher(config.root)
        # One harness session, one log; the harness, not this process, answers for what its hooks write (git/pending.py)
        store = Store(config, session=session if isinstance(session, str) and refs.SESSION.match(session) else None,
                      owner=harness_pid())
    except (RepoMemoryError, OSError, sqlite3.Error) as exc:
        log.warning("hook %s: %s", event, exc)
        return {}
    try:
        return run(store, event, payload)
    finally:
        # One commit per tool call would bury the history: hooks leave writes pending (durably, owned by the harness),
        # and the session's end, a checkpoint, or any later process once the harness is gone commits them.
        store.close(commit=False)


def _finisher(root: Path) -> None:
    """Start the process that commits what the harness's session leaves pending once the harness is gone (a harness
    that ends this hook first, or kills it); a failure to start one costs the session's end nothing else."""
    try:
        if (harness := harness_pid()) > 1:  # 1: the harness did not wait for this hook, and is gone already
            finish.start(root, harness, if_pending=True)
    except (OSError, ValueError) as exc:
        log.warning("hook session-end: no finisher (%s); the next repo-memory process commits what is left", exc)


def run(store: Store, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Answer `event` over an open Store: a hook process's own, or the running server's (shells/hookcalls.py). A lone
    surrogate in the payload (tool output cut mid-pair, escaped in the harness's JSON) becomes U+FFFD, as a log holds."""
    payload = experience.scrub(payload)
    if event == "pre-tool":
        return pretool.answer(store.config, payload, lambda: store.flush("all"))
    if event != "session-start" and not store.sparse.holds(f"{sparse.MEMORY}/"):
        return {}  # memory is not on disk to write: the session's start told the agent once, not at every tool call
    try:
        if event != "stop" and not deliveries.first_delivery(store.config.state_dir, event, payload):
            return {}  # our hooks registered twice (settings.local.json and the plugin, say): record it once
        return HANDLERS[event](store, payload)
    except WorkspaceError as exc:  # a part of memory off disk (the logs): what goes there is not written, quietly
        (log.debug if store.sparse.left_out() else log.warning)("hook %s failed, letting the harness continue: %s", event, exc)
        return {}
    except (RepoMemoryError, OSError, sqlite3.Error, KeyError, ValueError) as exc:
        log.warning("hook %s failed, letting the harness continue: %s", event, exc)
        return {}


def answer_call(store: Store, tool: str, arguments: dict[str, Any]) -> str:
    """The text a hidden hook tool (shells/hookcalls.py) answers with: the hook's JSON output, as a command hook would
    print it."""
    event = hookcalls.EVENTS[tool]
    try:
        return json.dumps(run(store, hookcalls.HANDLER[event], hookcalls.payload(event, arguments)))
    except Exception as exc:  # the one top-level handler of a hook run in the server: a harness is never blocked by our bug
        log.warning("hook %s failed (%s: %s); the harness carries on", event, type(exc).__name__, str(exc)[:300])
        return "{}"


def _session(store: Store, payload: dict[str, Any]) -> str:
    """The session a hook's records go to: the harness's, as the payload names it (a server answering hooks may hear
    of several: a subagent's), else the Store's own."""
    named = payload.get("session_id")
    return named if isinstance(named, str) and refs.SESSION.match(named) and named != store.config.session else store.session


FIRST_LOOK_BYTES = 4 << 20  # of logs the session-start hook indexes itself (about a second); more is left to the server


def session_start(store: Store, payload: dict[str, Any]) -> dict[str, Any]:
    """A short briefing: live loop runs, active skills, and the last summary of the previous session — each with ids to read.

    The start itself is not recorded: a session that records nothing leaves no file and no commit (its first record
    carries its time). The session is noted for the harness's MCP server (git/pending.py: note_session)."""
    if isinstance(payload.get("session_id"), str) and refs.SESSION.match(payload["session_id"]):
        note_session(store.config.state_dir, payload["session_id"])
    # A fresh clone's first look at a year of logs takes longer than the harness waits for this hook, and the server
    # it is starting does it too: the logs are left to the server past FIRST_LOOK_BYTES, the briefing says so.
    first_look = store.refresh(budget=FIRST_LOOK_BYTES).looked == "skills and loops"
    following.keep(store)  # a pull since the last session: what Claude Code and Codex load by themselves follows it
    context = (store.sparse.said() or store.briefing()) + ("\n- this clone's experience logs are being indexed for the first time (the server is doing it): "
                                  "recall may not find older records for a minute" if first_look else "")
    told = [store.config.problem] if store.config.problem else []  # settings it cannot read: said, to agent and person
    answer: dict[str, Any] = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                     "additionalContext": "\n- ".join([context, *told])}}
    ours = {"claude-code": ".claude", "gemini-cli": ".gemini"}.get(store.config.harness)
    if ours:  # an upgrade (`git pull && ./install.sh`) leaves the hooks an older setup wrote
        from repo_memory.shells.setup import stale_hooks

        told += [line for line in stale_hooks(store.root) if line.startswith(ours)]
    return {**answer, "systemMessage": "repo-memory: " + " ".join(told)} if told else answer


def post_tool(store: Store, payload: dict[str, Any]) -> dict[str, Any]:
    """Record a tool call (shells/tool_records.py: its input, the first 2,000 characters of its output's text, and where
    the rest is), and redraft the skills it changed."""
    call = tool_records.made(store, payload)
    if call is None:
        return {}
    tool, text, data = call
    # The skills the call names, and every skill whose files changed while it ran, however it reached them.
    named, since = _memory_paths(store, tool, payload.get("tool_input")), pretool.started(store.config.state_dir, payload)
    before = pretool.noted(store.config.state_dir, payload)  # the named skill folders' fingerprints: a read is no edit
    put_back, removals, person = _removals(store, tool, payload, named)  # before `committed` forgets the HEAD the call began at
    if put_back:  # the log says it too, committed with the session
        data["put_back"] = put_back
    pretool.committed(store.config, payload)  # commits the call made itself (`git commit`) are the agent's
    taken = mirror.take(store.root, store.config.state_dir, named, since)  # Claude Code loads a copy: the edit goes to its skill
    try:  # the call is recorded below whatever befalls a skill it changed
        (redrafted, kept_out), failed = store.redraft([*named, *(t.skill for t in taken if t.skill)], tool, since, before), []
    except (RepoMemoryError, OSError) as exc:
        redrafted, kept_out, failed = [], [], [f"repo-memory: the skills this call changed were not checked ({exc}); `repo-memory doctor` lists them."]
    if redrafted:
        data["redrafted"] = redrafted
        mirror.withdraw(store.root, store.config.state_dir, redrafted)  # Claude Code's copies of them go
    read = _skill_read(store, tool, payload.get("tool_input"))
    if read:  # the harness's own way of reading a skill: a live run of this session credits it as if read through us
        from repo_memory.runner.engine import Engine

        engine = Engine(store)
        if runs := engine.live_for(_session(store, payload), harness_pid()):
            engine.note_read(read, runs)
    if store.sparse.holds(f"{experience.EXPERIENCE_DIR}/"):  # logs a sparse checkout leaves out: the skills still count
        store.log(_session(store, payload), [_entry(store, payload, text, data)], captured=True)
    notes = removals + failed + skill_changes.told(store.root, redrafted, kept_out)
    notes += elsewhere.redraft(store, tool, payload, before)  # a skill of another repository the harness reaches: a draft there
    notes += mirror.told(taken) + _unserved_read(store, tool, payload.get("tool_input"))
    answer = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": " ".join(notes)}} if notes else {}
    return {**answer, "systemMessage": person} if person else answer


def _removals(store: Store, tool: str, payload: dict[str, Any], named: list[str]) -> tuple[list[str], list[str], str]:
    """Put back the accepted skills removed during the call (core/skill_removals.py), committing them again when the
    call's own commit took them; Claude Code's copies of those whose removal stands go. Returns the skills put back, what
    the agent is told, and what the person is. No git work unless a skill on disk at the call's start is gone."""
    before = skill_removals.noted(pretool.marker(store.config.state_dir, payload))
    gone = skill_removals.gone(store.root, before, named) if tool in (*FILE_TOOLS, *SHELL_TOOLS) else []
    git = Git(store.root, store.config.git_dir)
    head = (pretool.head_before(store.config.state_dir, payload) or agent_commits.head(git)) if gone else ""
    if not head:
        return [], [], ""
    done = skill_removals.settle(git, head, gone, store.config.review == "required", restore=before is not None)
    if done.dropped:
        mirror.withdraw(store.root, store.config.state_dir, done.dropped)
    if done.paths and agent_commits.head(git) != head:
        store.commit_files(done.paths, f"memory(skill): put back {', '.join(done.put_back)}, removed during an agent's {tool} "
                                       "call (by it, or by someone else meanwhile)")
    return done.put_back, skill_removals.told(done, head), skill_removals.to_person(done, head, tool)


def _entry(store: Store, payload: dict[str, Any], text: str, data: dict[str, Any]) -> experience.Entry:
    return experience.Entry("tool", text=text, data=data, source=store.source("agent", f"hook:{payload.get('hook_event_name', 'PostToolUse')}"))


def _unserved_read(store: Store, tool: str, tool_input: Any) -> list[str]:
    """A word on a SKILL.md a file tool read that recall does not serve (a draft, deprecated, invalid, quarantined):
    a harness may list drafts to its model by itself (Gemini CLI does), and the model may open one."""
    named = tool_input.get("file_path") or tool_input.get("path") if isinstance(tool_input, dict) and tool in READ_TOOLS else None
    if not isinstance(named, str) or not named.endswith("SKILL.md"):
        return []
    path = Path(os.path.normpath(store.root / named))  # `..` taken out, links kept: a linked skill folder is read by its link
    try:
        rel = path.relative_to(store.root).as_posix()
    except ValueError:
        try:
            rel = path.resolve().relative_to(store.root.resolve()).as_posix()  # the repository by another path
        except (ValueError, OSError):
            return []
    source = next((s for s in store.sources if rel.startswith(f"{s}/") and rel.count("/") == s.count("/") + 2), None)
    why = offering.withheld(store.root, source, rel.split("/")[-2]) if source else ""
    return [f"repo-memory: {rel} is no skill repo-memory serves ({why}): it is not reviewed as it stands, so do not "
            "follow it; recall serves the reviewed skills."] if why else []


FILE_TOOLS, SHELL_TOOLS, PATCH_FILES = pretool.FILE_TOOLS, pretool.SHELL_TOOLS, pretool.PATCH_FILES
READ_TOOLS = tool_records.READ_TOOLS


def _memory_paths(store: Store, tool: str, tool_input: Any) -> list[str]:
    """Memory files (repository-relative) that a file-editing or shell tool call names."""
    if tool not in FILE_TOOLS and tool not in SHELL_TOOLS:
        return []
    names: list[str] = []
    values = tool_input.values() if isinstance(tool_input, dict) else [tool_input]
    for value in values:
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            if not isinstance(text, str):
                continue
            if tool in FILE_TOOLS and "\n" not in text.strip():
                names.append(text.strip())  # a file_path / notebook_path argument
            names += PATCH_FILES.findall(text)
            if tool in SHELL_TOOLS or tool == "apply_patch":
                names += re.findall(r"(?:^|[\s'\"=>])((?:\S*/)?(?:" + "|".join(re.escape(s) for s in store.sources) + r")/[^\s'\";|&>]+)", text)
    out = []
    for name in names:
        path = Path(name) if Path(name).is_absolute() else store.root / name
        try:
            rel = path.resolve().relative_to(store.root.resolve()).as_posix()
        except (ValueError, OSError):
            continue
        if any(rel.startswith(f"{s}/") for s in store.sources) and rel not in out:
            out.append(rel)
    return out


def _skill_read(store: Store, tool: str, tool_input: Any) -> str:
    """The skill a harness tool call read (Claude Code's Skill tool, Gemini CLI's activate_skill, or a Read of a
    SKILL.md), or ''."""
    if not isinstance(tool_input, dict):
        return ""
    if tool in ("Skill", "activate_skill") and isinstance(tool_input.get("skill") or tool_input.get("name"), str):
        name = str(tool_input.get("skill") or tool_input["name"]).rsplit(":", 1)[-1]  # Claude Code's, Gemini CLI's
    elif tool in READ_TOOLS and isinstance(tool_input.get("file_path") or tool_input.get("path"), str):
        path = Path(tool_input.get("file_path") or tool_input["path"])
        parts = path.parts
        if path.name != "SKILL.md" or len(parts) < 2:
            return ""
        name = parts[-2]
    else:
        return ""
    return name if paths.SLUG.match(name) and store.skill_exists(name) else ""


def compact(store: Store, payload: dict[str, Any]) -> dict[str, Any]:
    """Before (or after) the harness compacts its context: a summary record covering this session's records since the last checkpoint."""
    session = _session(store, payload)
    try:
        records = [ln.record for ln in store.lines(session) if ln.record]
    except NotFoundError:
        records = []
    last_summary = max((r["seq"] for r in records if r["kind"] == "summary"), default=0)
    uncovered = [r for r in records if r["seq"] > last_summary]
    if not uncovered:
        return {}
    covers = [f"{uncovered[0]['session']}#{uncovered[0]['seq']}-{uncovered[-1]['seq']}" if len(uncovered) > 1 else uncovered[0]["id"]]
    text = str(payload.get("summary") or payload.get("compact_summary") or "")
    if not text:
        kinds = sorted({r["kind"] for r in uncovered})
        text = (f"The harness compacted its context ({payload.get('trigger', 'auto')}); {len(uncovered)} record(s) since the last checkpoint "
                f"({', '.join(kinds)}) stay readable by id.")
        if payload.get("custom_instructions"):
            text += f" Instructions given: {secretscan.redact(str(payload['custom_instructions'])[:300])[0]}"
    store.checkpoint(text, covers, session, actor="agent", tool=f"hook:{payload.get('hook_event_name', 'PreCompact')}")
    return {}


def session_end(store: Store, payload: dict[str, Any]) -> dict[str, Any]:
    """Record the tool calls Claude Code's hooks never delivered (as many as the budget allows), close the session's
    log with an end record (when it recorded something not yet committed, or left calls) saying what was left, then commit its
    experience. A session whose hooks ran through its server (mcp hooks) was committed by that server as the harness
    closed it, just before this hook: an end record would begin a file and a commit of its own, for one bookkeeping line."""
    try:
        lines = [ln.record for ln in store.lines(store.session) if ln.record]
    except NotFoundError:
        lines = []
    left, (started, budget) = "", hookbudget.budget()
    if store.config.harness == "claude-code":
        added, left = _record_undelivered(store, payload, lines, started + budget * hookbudget.RECORDED_SHARE)
        lines = [ln.record for ln in store.lines(store.session) if ln.record] if added else lines
    last = [record["id"] for record in lines][-1:]
    if left or last and not all(view.committed for view in store.read(last[0]).records):  # lifecycle: out of default recall
        store.log(store.session, [experience.Entry("observation", text=f"Session ended ({payload.get('reason', 'other')}).{left}",
                                                   data={"event": "SessionEnd", "reason": payload.get("reason")},
                                                   source=store.source("agent", "hook:SessionEnd"))], captured=True)
    if time.monotonic() - started < budget * (1 - hookbudget.COMMIT_SHARE):  # else a commit the harness cuts off: the finisher's
        store.flush(session=store.session)  # deferred (a person's `git commit` under way): the finisher commits it too
    if lines and store.config.semantic:  # what the session wrote gets its vectors though its server is gone (shells/embedder.py)
        embedder.start(store.root)
    deliveries.forget_old(store.config.state_dir)
    return {}


def _record_undelivered(store: Store, payload: dict[str, Any], records: list[dict[str, Any]], deadline: float) -> tuple[int, str]:
    """Record, in one write, the calls in Claude Code's transcript that no PostToolUse hook delivered (an `mcp_tool` hook
    is skipped while its server is not connected: still starting, or failed to) and no log of this repository holds, as
    that hook would have, until `deadline` (time.monotonic): how many, and what the end record says of the rest."""
    begun = time.monotonic()
    named = payload.get("transcript_path")
    transcript = Path(named) if isinstance(named, str) and named else deliveries.claude_transcript(store.session)
    if transcript is None:
        return 0, ""
    back = deliveries.undelivered(transcript, store.session, deadline)
    # Call ids are unique: a call this session's log, or a log of the conversation it resumed, holds is recorded
    recorded = deliveries.recorded(records) | deliveries.recorded_in(store, back.others)
    missed = [call for call in back.calls if call["tool_use_id"] not in recorded]
    entries, touched, done = [], list[tuple[str, list[str], dict[str, str]]](), 0  # (tool, files, folders noted before)
    for call in missed:
        if (now := time.monotonic()) + (now - begun) * hookbudget.WRITE_COST > deadline:
            break
        done += 1
        if made := tool_records.made(store, {**call, "hook_event_name": "SessionEnd"}):
            entries.append(_entry(store, {"hook_event_name": "SessionEnd"}, made[1], made[2]))
            touched.append((made[0], *_changed_by(store, made[0], {**call, "session_id": payload.get("session_id")})))
    if entries:
        store.log(store.session, entries, captured=True)
    for tool, rels, before in touched:
        if rels:  # a skill an agent's tool changed is a draft again, as the PostToolUse hook would have made it
            store.redraft(rels, tool, before=before)  # a folder the pre-tool hook did not note is compared with HEAD
    return len(entries), back.said(len(missed) - done, transcript)


ENDED_SLACK_NS = 50_000_000  # a transcript's time is in ms, written once the call ended: its file times are no later


def _changed_by(store: Store, tool: str, call: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """The memory files a call read back from the transcript named, and those in skill folders whose status-change
    times fall between its start (its pre-tool hook's note) and its end (the transcript's time of its result, else
    now), as the post-tool hook finds them; and the skill folders' fingerprints noted before it (pretool.began)."""
    named, since = _memory_paths(store, tool, call.get("tool_input")), pretool.started(store.config.state_dir, call)
    before = pretool.noted(store.config.state_dir, call)
    if since is None:  # no pre-tool hook saw it: only what it names is known
        return named, before
    try:
        until = int(when.timestamp(call["ended"]) * 1e9) + ENDED_SLACK_NS
    except (KeyError, TypeError, ValueError):
        until = -1
    until = until if until >= since else time.time_ns()  # no time, or one no clock of this machine wrote: up to now
    return [*named, *skill_changes.changed_between(store.root, store.sources, since, until)], before


def _pre_tool(store: Store, payload: dict[str, Any]) -> dict[str, Any]:
    raise AssertionError("pre-tool is answered by shells/pretool.py without a Store")  # handle() never calls this


HANDLERS = {"session-start": session_start, "pre-tool": _pre_tool, "post-tool": post_tool, "pre-compact": compact, "post-compact": compact,
            "stop": stop, "session-end": session_end}
