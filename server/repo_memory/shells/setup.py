"""Attach repo-memory to Claude Code and Codex, and detach it: idempotent, printing every change, undoable.

Files a team commits (`.mcp.json`, `.claude/settings.json` with `--shared`, `.codex/hooks.json`) call `repo-memory`
by name, so they work on every machine that has it on its PATH; machine-specific paths go only to per-user places
(`.claude/settings.local.json`, `~/.codex/config.toml`). One Codex entry serves every repository: the server finds
the repository from the session (MCP roots, or the directory Codex starts it in), never from a path frozen here.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from repo_memory.guards import disk
from repo_memory.shells import attach

HOOKS = (("SessionStart", "session-start"), ("PostToolUse", "post-tool"), ("PreCompact", "pre-compact"),
         ("Stop", "stop"), ("SessionEnd", "session-end"))
CODEX_HOOKS = (("SessionStart", "session-start"), ("PostToolUse", "post-tool"), ("Stop", "stop"), ("SessionEnd", "session-end"))
NAME = "repo-memory"
BY_NAME = [NAME]  # how shared files call repo-memory


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
    """Write `data` to `path`; an empty mapping removes the file (we never leave a `{}` behind)."""
    before = path.read_text(encoding="utf-8") if path.exists() else None
    after = json.dumps(data, indent=2) + "\n" if data else None
    if before == after:
        changes.append(f"{path}: already {what}")
        return
    changes.append(f"{path}: {what}" + (" (dry run, not written)" if dry_run else ""))
    if dry_run:
        return
    if after is None:
        path.unlink(missing_ok=True)
    else:
        disk.write_atomic(path, after.encode())


def _load_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    data = json.loads(path.read_text(encoding="utf-8") or "{}")
    return data if isinstance(data, dict) else {}


def on_path() -> str | None:
    """Where `repo-memory` is found on PATH (None when it is not)."""
    return shutil.which(NAME)


def claude_code(root: Path, scope: str = "project", shared: bool = False, dry_run: bool = False, remove: bool = False) -> list[str]:
    """Register the server for Claude Code, approve it for this user, install the hooks, and say what changed."""
    changes: list[str] = []
    if scope == "project":
        mcp = _load_json(root / ".mcp.json")
        servers = mcp.setdefault("mcpServers", {})
        if remove:
            servers.pop(NAME, None)
        else:
            servers[NAME] = {"type": "stdio", "command": NAME, "args": ["serve"]}
        if not servers:
            mcp.pop("mcpServers")
        _write_json(root / ".mcp.json", mcp, dry_run, changes, "repo-memory removed" if remove else "repo-memory registered (project scope, by name)")
        if not remove and not on_path():
            changes.append(f"note: `repo-memory` is not on your PATH, so Claude Code cannot start it: add {Path(attach.command()[0]).parent} "
                           "to PATH (e.g. in your shell profile)")
    else:
        args = ["claude", "mcp", "remove", "--scope", "user", NAME] if remove else ["claude", "mcp", "add", "--scope", "user", NAME, "--", *attach.command()]
        if shutil.which("claude") and not dry_run:
            done = subprocess.run(args, capture_output=True, text=True, timeout=60)
            changes.append(f"ran `{' '.join(args)}`: {(done.stdout or done.stderr).strip()}")
        else:
            changes.append(f"run this to {'remove' if remove else 'register'} it for every project: {' '.join(args)}")
    local_path = root / ".claude" / "settings.local.json"
    local = _load_json(local_path)
    if scope == "project":  # approve the project server for this user, so it is Connected, not "Pending approval"
        approved = [s for s in local.get("enabledMcpjsonServers", []) if s != NAME] + ([] if remove else [NAME])
        local["enabledMcpjsonServers"] = approved
        if not approved:
            local.pop("enabledMcpjsonServers")
    if shared:
        _write_json(local_path, local, dry_run, changes, "repo-memory's approval removed" if remove else "repo-memory approved for you")
        settings_path = root / ".claude" / "settings.json"
        settings = merge_hooks(_load_json(settings_path), HOOKS, BY_NAME, remove)
        _write_json(settings_path, settings, dry_run, changes, "hooks removed" if remove else "hooks installed (shared, by name)")
    else:
        local = merge_hooks(local, HOOKS, attach.command()[:-1], remove)
        _write_json(local_path, local, dry_run, changes, "hooks and approval removed" if remove else "hooks installed and repo-memory approved (for you)")
    return changes


def codex(root: Path, home: Path, dry_run: bool = False, remove: bool = False, everywhere: bool = False) -> list[str]:
    """One `[mcp_servers.repo-memory]` in ~/.codex/config.toml for every repository; hooks in this repository's .codex/hooks.json."""
    command = attach.command()
    changes: list[str] = []
    config = home / ".codex" / "config.toml"
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    kept = _without_table(text, f"mcp_servers.{NAME}")
    had = kept != text
    if remove and not everywhere:
        if had:
            changes.append(f"{config}: kept [mcp_servers.{NAME}]: it serves every repository (remove it with --global)")
    else:
        block = "" if remove else (
            f"\n[mcp_servers.{NAME}]\ncommand = {json.dumps(command[0])}\nargs = {json.dumps(command[1:])}\nstartup_timeout_sec = 20\n"
            f"\n[mcp_servers.{NAME}.env]\nREPO_MEMORY_HARNESS = \"codex\"\n"
        )
        if had:  # our table is gone: drop the blank line that separated it, nothing else
            kept = kept.rstrip("\n") + "\n" if kept.strip() else ""
        new = kept.rstrip("\n") + ("\n" if kept.strip() else "") + block if block else kept
        if new == text:
            changes.append(f"{config}: already {'without' if remove else 'with'} [mcp_servers.{NAME}]")
        else:
            verb = "removed" if remove else ("changed" if had else "added")
            changes.append(f"{config}: {verb} [mcp_servers.{NAME}] (one entry for every repository)" + (" (dry run, not written)" if dry_run else ""))
            if not dry_run:
                disk.write_atomic(config, new.encode())
    hooks_path = root / ".codex" / "hooks.json"
    settings = merge_hooks(_load_json(hooks_path), CODEX_HOOKS, BY_NAME, remove)
    _write_json(hooks_path, settings, dry_run, changes, "hooks removed" if remove else "hooks installed (by name)")
    if not remove:
        changes.append("note: Codex runs a repository's hooks only in a trusted project, after you review them: open `codex` here, "
                       "trust the project, and approve the hooks in /hooks")
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
