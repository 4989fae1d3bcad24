"""Attach repo-memory to Claude Code and Codex: register the server, install hooks, mirror skills — idempotent and undoable."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from repo_memory.shells import attach
from repo_memory.guards import disk

HOOKS = (("SessionStart", "session-start"), ("PostToolUse", "post-tool"), ("PreCompact", "pre-compact"),
         ("Stop", "stop"), ("SessionEnd", "session-end"))
CODEX_HOOKS = (("SessionStart", "session-start"), ("PostToolUse", "post-tool"), ("Stop", "stop"))
NAME = "repo-memory"


def _ours(hook: dict[str, Any]) -> bool:
    return bool(re.search(r"repo[-_]memory.* hook [a-z-]+$", str(hook.get("command", ""))))


def merge_hooks(settings: dict[str, Any], events: tuple[tuple[str, str], ...], command: list[str], remove: bool) -> dict[str, Any]:
    """`settings` with our hook commands added (or removed); every other hook is kept as it was."""
    hooks = settings.setdefault("hooks", {})
    for event, handler in events:
        groups = [g for g in hooks.get(event, []) if isinstance(g, dict)]
        for group in groups:
            group["hooks"] = [h for h in group.get("hooks", []) if not _ours(h)]
        groups = [g for g in groups if g.get("hooks")]
        if not remove:
            groups.append({"matcher": "*" if event == "PostToolUse" else "", "hooks": [
                {"type": "command", "command": " ".join([*command, "hook", handler]), "timeout": 60 if event == "Stop" else 10}]})
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if not hooks:
        settings.pop("hooks")
    return settings


def _write_json(path: Path, data: dict[str, Any], dry_run: bool, changes: list[str], what: str) -> None:
    before = path.read_text(encoding="utf-8") if path.exists() else None
    after = json.dumps(data, indent=2) + "\n"
    if before == after or (before is None and data == {}):
        changes.append(f"{path}: already {what}")
        return
    changes.append(f"{path}: {what}" + (" (dry run, not written)" if dry_run else ""))
    if not dry_run:
        disk.write_atomic(path, after.encode())


def _load_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8") or "{}")
    return data if isinstance(data, dict) else {}


def claude_code(root: Path, scope: str = "project", shared: bool = False, dry_run: bool = False, remove: bool = False) -> list[str]:
    """Register the server for Claude Code, install the hooks in its settings, and say what changed."""
    command = attach.command()
    base = command[:-1]
    changes: list[str] = []
    if scope == "project":
        mcp = _load_json(root / ".mcp.json")
        servers = mcp.setdefault("mcpServers", {})
        if remove:
            servers.pop(NAME, None)
        else:
            servers[NAME] = {"type": "stdio", "command": command[0], "args": command[1:]}
        if not servers:
            mcp.pop("mcpServers")
        _write_json(root / ".mcp.json", mcp, dry_run, changes, "repo-memory removed" if remove else "repo-memory registered (project scope)")
    else:
        args = ["claude", "mcp", "remove", "--scope", "user", NAME] if remove else ["claude", "mcp", "add", "--scope", "user", NAME, "--", *command]
        if shutil.which("claude") and not dry_run:
            done = subprocess.run(args, capture_output=True, text=True, timeout=60)
            changes.append(f"ran `{' '.join(args)}`: {(done.stdout or done.stderr).strip()}")
        else:
            changes.append(f"run this to {'remove' if remove else 'register'} it for every project: {' '.join(args)}")
    settings_path = root / ".claude" / ("settings.json" if shared else "settings.local.json")
    settings = merge_hooks(_load_json(settings_path), HOOKS, base, remove)
    _write_json(settings_path, settings, dry_run, changes, "hooks removed" if remove else "hooks installed")
    return changes


def codex(root: Path, home: Path, dry_run: bool = False, remove: bool = False) -> list[str]:
    """Add the server to ~/.codex/config.toml (with this workspace in its env) and the hooks to .codex/hooks.json."""
    command = attach.command()
    changes: list[str] = []
    config = home / ".codex" / "config.toml"
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    kept = _without_table(text, f"mcp_servers.{NAME}")
    block = "" if remove else (
        f"\n[mcp_servers.{NAME}]\ncommand = {json.dumps(command[0])}\nargs = {json.dumps(command[1:])}\nstartup_timeout_sec = 20\n"
        f"\n[mcp_servers.{NAME}.env]\nREPO_MEMORY_ROOT = {json.dumps(str(root))}\nREPO_MEMORY_HARNESS = \"codex\"\n"
    )
    if kept != text:  # our table is gone: drop the blank line that separated it, nothing else
        kept = kept.rstrip("\n") + "\n" if kept.strip() else ""
    new = kept.rstrip("\n") + ("\n" if kept.strip() else "") + block if block else kept
    if new == text:
        changes.append(f"{config}: already {'without' if remove else 'with'} [mcp_servers.{NAME}]")
    else:
        changes.append(f"{config}: {'removed' if remove else 'added'} [mcp_servers.{NAME}]" + (" (dry run, not written)" if dry_run else ""))
        if not dry_run:
            disk.write_atomic(config, new.encode())
    hooks_path = root / ".codex" / "hooks.json"
    settings = merge_hooks(_load_json(hooks_path), CODEX_HOOKS, command[:-1], remove)
    _write_json(hooks_path, settings, dry_run, changes, "hooks removed" if remove else "hooks installed")
    return changes


def _without_table(text: str, table: str) -> str:
    """TOML text without `[table]` and its sub-tables, every other line untouched."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        header = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$", line)
        if header:
            name = header.group(1).replace('"', "")
            skipping = name == table or name.startswith(f"{table}.")
        if not skipping:
            out.append(line)
    return "".join(out)
