"""What a hook keeps of a tool call: its input, the text of its output (formats/tool_output.py) up to EXCERPT
characters, and where the whole output is when the record holds less: git, for a file read as HEAD holds it, else a
blob of the full response (unless `tool_output_blobs = false`, when the record only says how long it was)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from repo_memory.core.store import Store
from repo_memory.errors import GitError
from repo_memory.formats import experience, harness_logs, nesting, tool_output
from repo_memory.git.repo import Git
from repo_memory.guards import secretscan

EXCERPT = tool_output.OPENING
READ_TOOLS = ("Read", "read_file", "view")


def made(store: Store, payload: dict[str, Any]) -> tuple[str, str, dict[str, Any]] | None:
    """The tool a PostToolUse input names, and its record's text and data; None for a call not recorded."""
    tool = payload.get("tool_name")
    if not isinstance(tool, str) or not tool.strip():
        return None  # every PostToolUse names its tool: input that does not is not one, and an empty record is noise
    if harness_logs.unrecorded(tool):
        # The server recorded what its tools wrote, and what they read is memory already: a copy of a `remember` call,
        # or of a `recall` answer holding the decision's text, outranked the decision for its own words (as did the
        # harness's ToolSearch that loaded them).
        return None
    # Secrets are redacted in the structured values, before they are serialized (JSON escaping would hide a secret's
    # edges from the scanner) and before any byte reaches a blob (a blob is written as is).
    tool_input, in_input = secretscan.redact_value(payload.get("tool_input"))
    response, found = secretscan.redact_value(payload.get("tool_response", payload.get("tool_output")))
    found += in_input
    said = tool_output.content(response)  # what the call returned, without the harness's field names and flags
    summary = json.dumps(tool_input, ensure_ascii=False, default=str)[:300] if tool_input is not None else ""
    data: dict[str, Any] = {"tool": tool, "input": _bounded(tool_input), "output_text": said[:EXCERPT]}
    if isinstance(payload.get("tool_use_id"), str):
        data["call_id"] = payload["tool_use_id"][:200]  # the harness's id of the call: an import of its transcript skips it
    if isinstance(payload.get("agent_id"), str) and payload["agent_id"]:  # a subagent's call, recorded in its parent's session
        data["subagent"] = {"id": payload["agent_id"][:200], "type": str(payload.get("agent_type") or "")[:200]}
    if len(said) > EXCERPT:
        data.update(_kept(store, tool, tool_input, response, len(said)))
    if found:
        data["redacted"] = sorted({f.rule for f in found})
    return tool, f"{tool} {summary}".strip(), data


def _kept(store: Store, tool: str, tool_input: Any, response: Any, chars: int) -> dict[str, Any]:
    """Where the output a record cuts is whole: the file git holds, a blob of the response, or only its length."""
    out: dict[str, Any] = {"output_chars": chars}
    if (file := _committed_file(store, tool, tool_input, response)) is not None:
        return {**out, "output_file": file}  # git keeps it already: a copy in a blob was one more of every file read
    if store.config.tool_output_blobs and store.sparse.holds(f"{experience.EXPERIENCE_DIR}/"):  # blobs are in the logs' folder
        whole = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False, default=str)
        out["output_blob"] = store.put_blob(whole.encode("utf-8"))
    return out


def _committed_file(store: Store, tool: str, tool_input: Any, response: Any) -> dict[str, str] | None:
    """{path, git_blob} of the file a file tool read when it is, byte for byte, as HEAD holds it and what the tool
    returned is of it; else None."""
    named = (tool_input.get("file_path") or tool_input.get("path")) if isinstance(tool_input, dict) and tool in READ_TOOLS else None
    if not isinstance(named, str) or not named:
        return None
    path = Path(os.path.normpath(store.root / named))
    try:
        rel = path.relative_to(store.root).as_posix()
        body = path.read_bytes()
        committed = Git(store.root, store.config.git_dir).run("rev-parse", "--verify", "-q", f"HEAD:{rel}", check=False).stdout.strip()
    except (ValueError, OSError, GitError):
        return None  # outside the repository, unreadable, or no git to ask
    if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest() != committed:  # changed since HEAD, or not in it
        return None
    shown = max(tool_output.leaves(response), key=len, default="")  # a Read's content: the rest is its path
    return {"path": rel, "git_blob": committed} if shown and shown in body.decode("utf-8", "replace") else None


def _bounded(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) > EXCERPT or nesting.deeper(value, nesting.DEPTH - 2):  # readers refuse a record nested deeper
        return text[:EXCERPT] + "…"  # (formats/nesting.py): the record, its data and this input are 2 levels more
    return value
