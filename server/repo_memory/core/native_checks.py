"""What doctor says about the harnesses' own memories of this repository: when one is on (and how much of it is not
in the repository yet), when it and repo-memory's briefing both speak at session start, and the Codex setting that
keeps threads using repo-memory out of Codex's memories.

Settings read (none is written): Claude Code's `autoMemoryEnabled` (.claude/settings.local.json, .claude/settings.json,
then `<config dir>/settings.json`; the first that sets it wins) and `CLAUDE_CODE_DISABLE_AUTO_MEMORY`; a managed
policy file is not read. Codex's `[features] memories`, `[memories] use_memories` and `disable_on_external_context`
(alias `no_memories_if_mcp_or_web_search`) in `$CODEX_HOME/config.toml` (developers.openai.com/codex/memories).
Claude Code's auto memory is on by default, so it is reported once it has written something for this repository.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repo_memory.core import native_memory as native
from repo_memory.core.importing import Memory
from repo_memory.core.native_memory import CLAUDE, CODEX, Homes
from repo_memory.formats import nesting
from repo_memory.formats.native_memory import table

OFF = ("1", "true", "yes", "on")  # values of CLAUDE_CODE_DISABLE_AUTO_MEMORY that turn auto memory off
ISSUE = "openai/codex#19663"  # with Codex's memories on, the agent skipped memory MCP tools


@dataclass(frozen=True)
class Notice:
    """One finding of a doctor check (a harness's memory, stale memories), with what to do (core/doctor.py turns it
    into a Finding)."""

    level: str
    path: str
    message: str
    fix: str


def notices(memory: Memory, root: Path, git_dir: Path, homes: Homes) -> list[Notice]:
    return _claude(memory, root, git_dir, homes) + _codex(memory, root, homes)


def claude_enabled(root: Path, homes: Homes) -> tuple[bool, str]:
    """Whether Claude Code's auto memory is on for `root`, and what turned it off."""
    if homes.auto_memory_off.strip().lower() in OFF:
        return False, "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set"
    value, path = native.claude_setting(root, homes, "autoMemoryEnabled")
    return (False, f"autoMemoryEnabled is false in {homes.short(path, root)}") if value is False and path else (True, "")


def _claude(memory: Memory, root: Path, git_dir: Path, homes: Homes) -> list[Notice]:
    folder = native.claude_folder(root, git_dir, homes)
    found = native.read_claude(folder) if folder.is_dir() else []
    if not found:
        return []
    on, off = claude_enabled(root, homes)
    pending = native.MemoryImport(memory, homes, write=False).run(CLAUDE, [folder], found).added
    where = homes.short(folder)
    state = "is on for this repository" if on else f"is off ({off}), and what it wrote is still there"
    held = f"{pending} of its {len(found)} memories are on this machine only" if pending else f"all {len(found)} memories are imported"
    fix = ("Run `repo-memory log import --claude-memory` to bring them in for review (again after sessions: it adds only "
           "what is new or changed)." if pending else "Nothing to do.")
    out = [Notice("warning" if pending else "info", where, f"Claude Code's auto memory {state}: {held}", fix)]
    index = folder / "MEMORY.md"
    hook = _session_start(native.claude_settings(root, homes), root, homes)
    if on and hook and index.is_file() and index.read_text(encoding="utf-8", errors="replace").strip():
        out.append(Notice("warning", where, f"two memories speak at session start: Claude Code loads {homes.short(index)} "
                          f"and repo-memory's SessionStart hook ({hook}) adds its briefing; they can disagree, and both "
                          "cost context", "Pick one. Keep repo-memory's (reviewed, shared with the team): import what Claude "
                          "kept (`repo-memory log import --claude-memory`), then set `\"autoMemoryEnabled\": false` in "
                          ".claude/settings.json (the team) or .claude/settings.local.json (you). Or keep Claude's: remove "
                          f"repo-memory's SessionStart entry from {hook}."))
    return out


def _codex(memory: Memory, root: Path, homes: Homes) -> list[Notice]:
    config = _toml(homes.codex / "config.toml")
    features, settings = table(config.get("features")), table(config.get("memories"))
    folders = native.codex_folders(homes)
    here, _ = native.read_codex(folders, root, homes) if folders else ([], [])
    on = features.get("memories") is True
    if not on and not here:
        return []
    pending = native.MemoryImport(memory, homes, write=False).run(CODEX, folders, here).added if here else 0
    where = homes.short(homes.codex / "config.toml")
    state = "are on for every repository on this machine" if on else "are off, and what they kept is still there"
    held = (f"{len(here)} name this repository, {pending} of them not imported yet" if pending else
            f"the {len(here)} that name this repository are imported" if here else "none names this repository yet")
    fix = ("Run `repo-memory log import --codex-memories` to bring them in for review (it imports only memories that "
           "name this repository's paths)." if pending else "Nothing to do.")
    out = [Notice("warning" if pending else "info", where, f"Codex's memories {state}: {held}", fix)]
    if not on:
        return out
    attached = _attached_to_codex(root, homes, config)
    hook = _session_start([root / ".codex" / "hooks.json", homes.codex / "hooks.json"], root, homes)
    summary = next((f / "memory_summary.md" for f in folders if (f / "memory_summary.md").is_file()), None)
    if hook and summary and settings.get("use_memories") is not False:
        out.append(Notice("warning", where, f"two memories speak at session start: Codex injects {homes.short(summary)} and "
                          f"repo-memory's SessionStart hook ({hook}) adds its briefing", "Pick one. Keep repo-memory's: "
                          "`[memories] use_memories = false` in ~/.codex/config.toml (Codex stops injecting its summary; "
                          f"import it first with `repo-memory log import --codex-memories`). Or keep Codex's: remove "
                          f"repo-memory's SessionStart entry from {hook}."))
    external = settings.get("disable_on_external_context", settings.get("no_memories_if_mcp_or_web_search"))
    if attached and external is not True:
        out.append(Notice("warning", where, "threads that use repo-memory's tools also feed Codex's memories, so what they "
                          "learned is kept twice, once outside the repository (and with Codex's memory on, agents have "
                          f"skipped memory MCP tools: {ISSUE})", "Set `disable_on_external_context = true` under `[memories]` "
                          "in ~/.codex/config.toml: a thread that called an MCP tool (repo-memory's) then makes no Codex "
                          "memories."))
    return out


def _session_start(files: list[Path], root: Path, homes: Homes) -> str:
    """The first settings or hooks file that runs repo-memory at session start (its SessionStart hooks, or the
    repo-memory plugin enabled), as a short path; '' when none does."""
    for path in files:
        data = native.read_json(path)
        hooks, plugins = table(data.get("hooks")), table(data.get("enabledPlugins"))
        if _ours(hooks.get("SessionStart")) or any(str(k).startswith("repo-memory@") and v is True for k, v in plugins.items()):
            return homes.short(path, root)
    return ""


def _ours(groups: Any) -> bool:
    text = json.dumps(groups) if groups else ""
    return "repo-memory" in text or "repo_memory" in text


def _attached_to_codex(root: Path, homes: Homes, config: dict[str, Any]) -> bool:
    """Whether Codex sessions here can call repo-memory: its MCP server or hooks are configured."""
    servers = {**table(config.get("mcp_servers")), **table(_toml(root / ".codex" / "config.toml").get("mcp_servers"))}
    return any(_ours({k: v}) for k, v in servers.items()) \
        or bool(_session_start([root / ".codex" / "hooks.json", homes.codex / "hooks.json"], root, homes))


def _toml(path: Path) -> dict[str, Any]:
    try:
        return nesting.toml(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # TOMLDecodeError, TooDeep
        return {}
