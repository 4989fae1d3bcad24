"""What a repository's committed harness files hold beyond repo-memory's own entries, which a harness's trust of the
folder would switch on: `setup --trust` stores no trust over them.

A harness gates a project's own configuration on the person trusting the folder: Claude Code starts `.mcp.json`'s
servers and obeys `.claude/settings.json` (its hooks, `permissions.allow`, helper commands), Codex reads the project's
`.codex/config.toml` (its MCP servers, sandbox and approval settings, model providers), Gemini CLI `.gemini/settings.json`.
An upstream the person has not read (an open-source project, a stranger's branch) can commit any of these; trusting the
folder for repo-memory's sake must not switch them on unseen. Only what HEAD holds counts: a person's uncommitted edit
is theirs.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

from repo_memory.git import repo as gitrepo

NAME = "repo-memory"
_SHELL = re.compile(r"[;&|$`<>()\n\\]")  # a command line doing more than run one program with plain words
_HELPERS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper", "statusLine")  # commands Claude Code runs
_CODEX_OURS = frozenset({"mcp_servers", "projects", "hooks"})  # tables of a config.toml setup may hold (the user-wide one)


def committed(root: Path, harness: str) -> list[str]:
    """What HEAD's harness files for `harness` (claude-code, codex, gemini) hold that repo-memory did not write."""
    if harness == "claude-code":
        return [*_servers(_json(root, ".mcp.json"), ".mcp.json"), *_claude(_json(root, ".claude/settings.json"))]
    if harness == "codex":
        return _codex(_file(root, ".codex/config.toml"))
    settings = _json(root, ".gemini/settings.json")
    return [*_servers(settings, ".gemini/settings.json"), *_hooks(settings, ".gemini/settings.json")]


def withheld(root: Path, harness: str, found: list[str]) -> str:
    """The note `setup --trust` gives instead of trusting the folder, naming what trust would switch on."""
    files = {"claude-code": ".mcp.json .claude/settings.json", "codex": ".codex/config.toml",
             "gemini": ".gemini/settings.json"}[harness]
    shown = "; ".join(found[:8]) + (f"; and {len(found) - 8} more" if len(found) > 8 else "")
    return (f"note: did not trust {root}: trusting it would also switch on what the repository's committed harness files "
            f"hold that repo-memory did not write — {shown}. Read them first (`git log -p -- {files}`); if you trust them, "
            f"answer the harness's own trust prompt when you start it here, then run this setup again")


def _file(root: Path, rel: str) -> str:
    data = gitrepo.run_at(root, "show", f"HEAD:{rel}")
    return data.decode("utf-8", "replace") if data else ""


def _json(root: Path, rel: str) -> dict[str, Any]:
    try:
        found = json.loads(_file(root, rel) or "{}")
    except (ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def _ours(command: Any) -> bool:
    """Whether a command line is one of repo-memory's: one program, run with plain words, repo-memory itself."""
    text = " ".join(map(str, command)) if isinstance(command, list) else str(command)
    try:
        words = shlex.split(text)
    except ValueError:
        return False
    return not _SHELL.search(text) and any(w.rsplit("/", 1)[-1] in (NAME, "repo_memory") for w in words)


def _server(entry: Any) -> str:
    if not isinstance(entry, dict):
        return repr(entry)[:80]
    return " ".join(str(p) for p in [entry.get("command") or entry.get("url") or entry.get("httpUrl") or "",
                                      *(entry.get("args") or [])])[:120]


def _servers(settings: dict[str, Any], where: str) -> list[str]:
    servers = settings.get("mcpServers")
    return [f"MCP server {name!r} ({_server(entry)}) in {where}" for name, entry in (servers or {}).items()
            if isinstance(servers, dict) and not (name == NAME and isinstance(entry, dict)
                                                  and _ours([entry.get("command", ""), *(entry.get("args") or [])]))]


def _hooks(settings: dict[str, Any], where: str) -> list[str]:
    found = []
    events = settings.get("hooks")
    for event, groups in (events.items() if isinstance(events, dict) else ()):
        for group in groups if isinstance(groups, list) else []:
            for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
                command = hook.get("command", "") if isinstance(hook, dict) else hook
                if not _ours(command):
                    found.append(f"{event} hook `{str(command)[:100]}` in {where}")
    return found


def _claude(settings: dict[str, Any]) -> list[str]:
    where = ".claude/settings.json"
    found = _hooks(settings, where)
    allowed = (settings.get("permissions") or {}).get("allow") if isinstance(settings.get("permissions"), dict) else None
    found += [f"permission {rule!r} in {where}" for rule in allowed or [] if not str(rule).startswith(f"mcp__{NAME}")]
    found += [f"{key} command in {where}" for key in _HELPERS if key in settings]
    return found


def _codex(text: str) -> list[str]:
    try:
        config = tomllib.loads(text) if text else {}
    except tomllib.TOMLDecodeError:
        return []
    servers = config["mcp_servers"] if isinstance(config.get("mcp_servers"), dict) else {}
    found = [f"MCP server {name!r} ({_server(entry)}) in .codex/config.toml" for name, entry in servers.items()
             if not (name == NAME and isinstance(entry, dict) and _ours([entry.get("command", ""), *(entry.get("args") or [])]))]
    return found + [f"setting {key!r} in .codex/config.toml" for key in config if key not in _CODEX_OURS]
