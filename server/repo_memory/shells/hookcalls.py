"""Hooks answered by the running server, without a process: Claude Code's `mcp_tool` hooks (since 2.1.118) call tools
of an already-connected MCP server. These tools are never listed in `tools/list`, so the model is not offered them
and Claude Code refuses a model's call to them ("No such tool available"); only a hook reaches them.

Claude Code substitutes `${path}` templates from the hook's input into the tool's arguments, objects as JSON text;
`payload` turns them back into the hook input the handlers in shells/hooks.py expect. SessionStart and SessionEnd stay
command hooks: Claude Code runs them before the server is connected and after it is closed. So does PreToolUse (the
guard): Claude Code skips an `mcp_tool` hook whose server is not connected (still starting, or failed) and runs the
tool unchecked; `hook_pre_tool` stays for the hooks an older setup wrote.
"""

from __future__ import annotations

import json
import sys
from typing import Any

# event -> the hidden tool that answers it, and the hook input fields it is called with
TOOLS = {"PreToolUse": "hook_pre_tool", "PostToolUse": "hook_post_tool", "Stop": "hook_stop"}
EVENTS = {tool: event for event, tool in TOOLS.items()}
SERVED = ("PostToolUse", "Stop")  # what setup's `mcp` hooks send the server; a call it misses is recorded at session end
HANDLER = {"PreToolUse": "pre-tool", "PostToolUse": "post-tool", "Stop": "stop"}
FIELDS = {
    "PreToolUse": ("session_id", "cwd", "tool_name", "tool_input", "tool_use_id"),
    # agent_id and agent_type: present when a subagent made the call (Claude Code leaves them out for the main thread)
    "PostToolUse": ("session_id", "cwd", "tool_name", "tool_input", "tool_response", "tool_use_id", "agent_id", "agent_type"),
    "Stop": ("session_id", "cwd", "transcript_path", "last_assistant_message", "stop_hook_active"),  # the path tells two stops apart
}
JSON_FIELDS = ("tool_input", "tool_response")
FIRST_VERSION = (2, 1, 118)  # the first Claude Code with `mcp_tool` hooks
SESSION_END_TIMEOUT = 3  # seconds setup's SessionEnd hooks name (setup.TIMEOUTS); Codex caps SessionEnd at 3


def payload_of(raw: bytes) -> dict[str, Any]:
    """A command hook's input, the JSON on its stdin; bytes that are not UTF-8 (tool output a harness passed on) read
    as U+FFFD. Anything but a JSON object is an empty input, said on stderr (a person trying a hook by hand)."""
    try:
        payload = json.loads(raw.decode("utf-8", "replace")) if raw.strip() else {}
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        print("repo-memory hook: stdin holds no JSON object, taken as an empty input (a harness passes the hook's input "
              "as one; `repo-memory hook --help` shows one to try)", file=sys.stderr)
    return payload if isinstance(payload, dict) else {}


def template(event: str) -> dict[str, str]:
    """The `input` of our `mcp_tool` hook for `event`: each field of the hook input, substituted by Claude Code."""
    return {"hook_event_name": event, **{name: f"${{{name}}}" for name in FIELDS[event]}}


def payload(event: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The hook input the handlers expect, from the arguments Claude Code substituted (JSON text back to values)."""
    out: dict[str, Any] = {k: v for k, v in arguments.items() if k in FIELDS[event] and v not in ("", None)}
    out["hook_event_name"] = event
    for name in JSON_FIELDS:
        if isinstance(out.get(name), str):
            try:
                out[name] = json.loads(out[name])
            except ValueError:
                pass  # a plain string (a shell command's output) stays as it is
    if "stop_hook_active" in out:
        out["stop_hook_active"] = str(out["stop_hook_active"]).lower() == "true"
    return out
