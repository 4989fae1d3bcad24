"""The programs the harnesses' files name to run repo-memory (hooks, server entries), and which of them are not there.

An older setup wrote this install's absolute path into a person's files (settings.local.json's hooks, ~/.codex/config.toml,
Claude Code's user and local scopes); once repo-memory is reinstalled elsewhere every hook fails with exit 127 and the harness
lists a server that cannot start, without a word. Each program is checked as the harness runs it: a path must be an
executable file; a bare name must be on PATH (this process's PATH: the harness's own may differ, so that is a warning).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repo_memory.formats import nesting
from repo_memory.shells.setup import NAME, _our_hooks, harness_of
from repo_memory.guards.shellwords import quoted


@dataclass(frozen=True)
class Dead:
    """A settings file whose entries name a program that is not there, and how to mend it."""

    level: str  # "error": the path is gone or not executable; "warning": a name this PATH does not find
    path: str  # relative to the repository, or ~/…
    message: str
    fix: str


HOOK_FILES = (".claude/settings.json", ".claude/settings.local.json", ".codex/hooks.json", ".gemini/settings.json")
SERVER_FILES = (".mcp.json", ".gemini/settings.json")  # a JSON file's mcpServers.repo-memory
LOCAL = "~/.claude.json (local scope)"


def dead(root: Path, home: Path, codex_home: Path) -> list[Dead]:
    """Every file whose repo-memory hooks or server entry name a program that cannot run, one finding per file."""
    named: dict[str, list[tuple[str, str]]] = {}  # file shown -> (what names it, the program)
    for rel in HOOK_FILES:
        for event, hook in _our_hooks(root / rel):
            if hook.get("type", "command") == "command" and isinstance(hook.get("command"), str):
                named.setdefault(rel, []).append((f"hook {event}", _program(hook["command"])))
    for rel in SERVER_FILES:
        entry = ((_json(root / rel).get("mcpServers") or {}).get(NAME)) or {}
        if isinstance(entry, dict) and isinstance(entry.get("command"), str):
            named.setdefault(rel, []).append(("the server entry", entry["command"]))
    state = _json(home / ".claude.json")  # Claude Code's user scope (`setup claude-code --scope user` wrote a path there)
    user = (state.get("mcpServers") or {}).get(NAME) if isinstance(state.get("mcpServers"), dict) else None
    if isinstance(user, dict) and isinstance(user.get("command"), str):
        named.setdefault("~/.claude.json", []).append(("the user-scope server entry", user["command"]))
    local = _local_entry(state, root)  # `claude mcp add --scope local`: kept under the project's path, it wins over .mcp.json
    if isinstance(local.get("command"), str):
        named.setdefault(LOCAL, []).append(("the local-scope server entry", local["command"]))
    for config, shown in ((codex_home / "config.toml", _short(codex_home / "config.toml", home)), (root / ".codex/config.toml", ".codex/config.toml")):
        entry = _toml(config).get("mcp_servers", {}).get(NAME)
        if isinstance(entry, dict) and isinstance(entry.get("command"), str):
            named.setdefault(shown, []).append(("[mcp_servers.repo-memory]", entry["command"]))
    out = []
    for shown, entries in named.items():
        gone: dict[tuple[str, str], list[str]] = {}  # (program, why it cannot run) -> what names it
        for what, program in entries:
            if why := _unrunnable(program, root):
                gone.setdefault((program, why), []).append(what)
        if not gone:
            continue
        by_path = any("/" in program for program, _ in gone)
        said = "; ".join(f"{_named(whats)} run{'s' if len(whats) == 1 else ''} `{program}`, which {why}"
                         for (program, why), whats in gone.items())
        whats = [what for named_by in gone.values() for what in named_by]
        costs = [cost for cost, kind in (("each of these hooks fails (exit 127)", True), ("the server never starts", False))
                 if any(what.startswith("hook ") == kind for what in whats)]
        out.append(Dead("error" if by_path else "warning", shown, f"{said}: {' and '.join(costs)}",
                        _fix(shown, by_path, codex_home, home)))
    return out


def _named(whats: list[str]) -> str:
    """`hook Stop`, `hooks SessionStart, Stop`, or the entry's own name."""
    events = [what.removeprefix("hook ") for what in whats if what.startswith("hook ")]
    others = [what for what in whats if not what.startswith("hook ")]
    return ", ".join(others + ([f"hook{'s' if len(events) > 1 else ''} {', '.join(events)}"] if events else []))


def _program(command: str) -> str:
    """The program a hook's shell command runs: its first word."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return words[0] if words else command


def _unrunnable(program: str, root: Path) -> str:
    """Why `program` cannot run as the harness would run it ('' when it can): a path (relative ones from the repository,
    where the harness starts them) must be an executable file, a bare name must be on PATH."""
    if "/" not in program:
        return "" if shutil.which(program) else "this PATH does not find"
    path = Path(program).expanduser()
    path = path if path.is_absolute() else root / path
    if not path.exists():
        return "does not exist"
    return "" if path.is_file() and os.access(path, os.X_OK) else "is not executable"


def _fix(shown: str, by_path: bool, codex_home: Path, home: Path) -> str:
    if not by_path:
        here = Path(sys.executable).parent / NAME
        return (f"Link the command onto your PATH: `ln -s {quoted(str(here))} ~/.local/bin/` (a folder on PATH), or add its folder to PATH "
                "in your shell profile; if it is a program of your own, install it or correct the entry.")
    if shown == ".codex/config.toml":
        return ("setup writes only ~/.codex/config.toml, and this project's file overrides it: take [mcp_servers.repo-memory] "
                "out of .codex/config.toml, or set its `command` to `repo-memory` (or this install's path).")
    if shown == LOCAL:
        return (f"Run `claude mcp remove --scope local {NAME}` in this repository: the project's .mcp.json, which setup "
                "keeps current, then starts the server.")
    if shown == "~/.claude.json":
        return f"Run `claude mcp remove --scope user {NAME}`, then `repo-memory setup claude-code --scope user`."
    harness = "codex" if shown == _short(codex_home / "config.toml", home) else harness_of(shown)
    shared = " --shared" if shown == ".claude/settings.json" else ""
    return (f"Run `repo-memory setup {harness}{shared}` again: it rewrites repo-memory's entries with this install's "
            "command and keeps everything else in the file.")


def _local_entry(state: dict[str, Any], root: Path) -> dict[str, Any]:
    """This repository's local-scope entry in ~/.claude.json (projects, keyed by the repository's path), or {}."""
    projects = state.get("projects")
    for key in dict.fromkeys((str(root), str(root.resolve()))):
        project = projects.get(key) if isinstance(projects, dict) else None
        entry = ((project.get("mcpServers") or {}) if isinstance(project, dict) else {}).get(NAME)
        if isinstance(entry, dict):
            return entry
    return {}


def _short(path: Path, home: Path) -> str:
    return f"~/{path.relative_to(home).as_posix()}" if path.is_relative_to(home) else str(path)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = nesting.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # a file that cannot be read: its own check (setup, the harness) says so
    return data if isinstance(data, dict) else {}


def _toml(path: Path) -> dict[str, Any]:
    try:
        data = nesting.toml(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data.get("mcp_servers", {}), dict) else {}
