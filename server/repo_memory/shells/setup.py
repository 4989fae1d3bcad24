"""Attach repo-memory to Claude Code and Codex (Gemini CLI: shells/gemini.py), and detach it: idempotent, printing
every change, undoable.

Files a team commits (`.mcp.json`, `.claude/settings.json` with `--shared`, `.codex/hooks.json`,
`.gemini/settings.json`) call `repo-memory` by name, so they work on every machine that has it on its PATH; machine-specific paths go only to per-user places
(`.claude/settings.local.json`, `~/.codex/config.toml`). One Codex entry serves every repository: the server finds
the repository from the session (MCP roots, or the directory Codex starts it in), never from a path frozen here.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repo_memory.formats import loops, nesting
from repo_memory.guards import disk, shellwords
from repo_memory.shells import attach, hookcalls, personal, settings_text, teamfiles
from repo_memory.shells.plugin import PLUGIN, plugin_enabled
from repo_memory.shells.teamfiles import NAME, Undo, commit_note, kept

HOOKS = (("SessionStart", "session-start"), ("PreToolUse", "pre-tool"), ("PostToolUse", "post-tool"), ("PreCompact", "pre-compact"),
         ("Stop", "stop"), ("SessionEnd", "session-end"))
CODEX_HOOKS = (("SessionStart", "session-start"), ("PreToolUse", "pre-tool"), ("PostToolUse", "post-tool"), ("Stop", "stop"),
               ("SessionEnd", "session-end"))
GEMINI_HOOKS = (("SessionStart", "session-start"), ("BeforeTool", "pre-tool"), ("AfterTool", "post-tool"), ("SessionEnd", "session-end"))
# PreToolUse runs only before tools that change files (Codex names its shell Bash and matches Write/Edit to apply_patch):
# it refuses writes to what only repo-memory writes and notes when the call began (shells/pretool.py).
MATCHERS = {"PostToolUse": "*", "PreToolUse": "Bash|Write|Edit|MultiEdit|NotebookEdit|apply_patch"}
BY_NAME = [NAME]  # how shared files call repo-memory
# what a setup's hooks miss when an older setup wrote them (missing_hooks' names), as doctor and the briefing say it
COSTS = {"SessionStart": "no briefing when a session starts", "PreToolUse": "an agent's own file tools can write the logs unchecked",
         "PostToolUse": "tool calls are not recorded", "AfterTool": "tool calls are not recorded",
         "PreCompact": "compactions are not noted",
         "Stop": "loop runs are not driven when the agent stops", "SessionEnd": "a session is committed only when the server exits",
         "BeforeTool": "the agent's own file tools can write the logs unchecked, and it can activate a draft skill",
         "Stop (older input)": "its Stop hook passes no transcript_path",
         "Stop (short timeout)": "the harness kills its Stop hook mid-check, leaving a loop run live with no verdict",
         "PostToolUse (older input)": "a subagent's tool calls are recorded as the main thread's"}


def _ours(hook: dict[str, Any]) -> bool:
    if hook.get("type") == "mcp_tool":
        return hook.get("server") == NAME and hook.get("tool") in hookcalls.EVENTS
    return bool(re.search(r"repo[-_]memory.* hook [a-z-]+$", str(hook.get("command", ""))))


def _our_hooks(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(event, hook) for each of repo-memory's hooks in a settings file (none when it cannot be read)."""
    try:
        return _hooks_in(nesting.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError):
        return []


def _hooks_in(settings: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(event, hook) for each of repo-memory's hooks in `settings`."""
    hooks = settings.get("hooks")
    return [(event, h) for event, groups in (hooks.items() if isinstance(hooks, dict) else []) if isinstance(groups, list)
            for g in groups if isinstance(g, dict) for h in g.get("hooks") or [] if isinstance(h, dict) and _ours(h)]


def missing_hooks(root: Path) -> list[tuple[str, list[str]]]:
    """(settings file, what it lacks) of each file holding repo-memory's hooks but not all of them, an `mcp_tool` hook
    passing fewer fields than this version reads (`Stop (older input)`), or a Stop hook with less time than loop checks
    may take (`Stop (short timeout)`): an older `setup` wrote it. COSTS says what each costs."""
    out = []
    for rel, events in ((".claude/settings.json", HOOKS), (".claude/settings.local.json", HOOKS),
                        (".codex/hooks.json", CODEX_HOOKS), (".gemini/settings.json", GEMINI_HOOKS)):
        ours = _our_hooks(root / rel)
        have = {event for event, h in ours if not (event == "PreToolUse" and h.get("type") == "mcp_tool")}  # skipped unconnected
        older = sorted({event for event, h in ours if h.get("type") == "mcp_tool" and event in hookcalls.TOOLS  # passes fewer fields
                        and not set(hookcalls.template(event)) <= set(h.get("input") or {})})
        lacking = [event for event, _ in events if event not in have] + [f"{event} (older input)" for event in older]
        waits = [t for e, h in ours if e == "Stop" and isinstance(t := h.get("timeout", 600), int | float)]  # 600: the default
        lacking += ["Stop (short timeout)"] if waits and min(waits) < loops.STOP_TIMEOUT else []
        out += [(rel, lacking)] if have and lacking else []
    return out


def costs(lacking: list[str]) -> str:
    """What each of `lacking` (missing_hooks' names) costs, as doctor and the session start say it."""
    return "; ".join(f"{x}: {COSTS.get(x, x)}" for x in lacking)


def stale_hooks(root: Path) -> list[str]:
    """One line per settings file whose repo-memory hooks an older setup wrote: what they lack, what it costs, the fix."""
    return [f"{rel}: repo-memory's hooks here are an older setup's ({costs(lacking)}); "
            f"run `repo-memory setup {harness_of(rel)}` again (it keeps your own hooks)" for rel, lacking in missing_hooks(root)]


def harness_of(rel: str) -> str:
    """The `setup` command that writes the settings file `rel` (one of missing_hooks')."""
    return "claude-code --shared" if rel == ".claude/settings.json" else {".codex": "codex", ".gemini": "gemini"}.get(rel.split("/")[0], "claude-code")


def doubled_hooks(root: Path, claude_dir: Path) -> tuple[Path, list[str]] | None:
    """(the file enabling the plugin, the settings files holding setup's hooks too) when both would run: the two sets
    run every hook twice (a tool call is recorded once: shells/deliveries.py)."""
    plugin = plugin_enabled(root, claude_dir)
    holding = [rel for rel in (LOCAL_FILE, ".claude/settings.json") if _our_hooks(root / rel)]
    return (plugin, holding) if plugin and holding else None


def claude_version(cli: str | None = None) -> tuple[int, ...] | None:
    """The installed Claude Code's version (`claude --version`), None when it is not found or says no version."""
    found = cli or shutil.which("claude")
    if not found:
        return None
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(part) for part in match.groups()) if match else None


def hook_kind(asked: str, version: tuple[int, ...] | None) -> tuple[str, str]:
    """(kind, why): `mcp` — PostToolUse and Stop call the running server (no process after each tool call; the guard,
    PreToolUse, stays a command) — when asked, or when `auto` finds a Claude Code that has `mcp_tool` hooks; else `command`."""
    if asked != "auto":
        return asked, f"--hooks {asked}"
    if version is None:
        return "command", "no `claude` on PATH to ask its version, so command hooks (they work in every version)"
    shown = ".".join(map(str, version))
    if version >= hookcalls.FIRST_VERSION:
        return "mcp", (f"Claude Code {shown} calls the running server after each tool call and at stops; the guard before "
                       "file and shell calls stays a process")
    return "command", f"Claude Code {shown} predates mcp_tool hooks (2.1.118), so command hooks"


PLUGIN_NOTE, TEAMS_LEFT = "note: the Claude Code plugin", "left as it is: the team's"  # setup wrote no hooks: who brings them
TIMEOUTS = {"Stop": loops.STOP_TIMEOUT, "SessionEnd": hookcalls.SESSION_END_TIMEOUT}  # seconds; Codex warns above 3


Group = Callable[[str, str, list[str], str], dict[str, Any]]  # (event, handler, command, kind) -> the group setup writes


def merge_hooks(settings: dict[str, Any], events: tuple[tuple[str, str], ...], command: list[str], remove: bool,
                kind: str = "command", exact: bool = False, shape: Group | None = None) -> dict[str, Any]:
    """`settings` with our hooks added (or removed); every other hook is kept as it was. With `kind` "mcp", the events
    the running server can answer call its hidden hook tools (shells/hookcalls.py); the rest stay commands. With
    `exact`, only a hook exactly as setup writes it into a team file (`written`) is removed. `shape` makes a hook group
    as the harness reads it (Claude Code's and Codex's form by default)."""
    make = shape or _group
    hooks = settings.setdefault("hooks", {})
    for event, handler in events:
        groups = [g for g in hooks.get(event, []) if isinstance(g, dict)]
        mine = None if remove else make(event, handler, command, kind)
        at = next((i for i, g in enumerate(groups) if g == mine), None)  # already as setup writes it: stays in its place
        for i, group in enumerate(groups):
            if i != at:
                group["hooks"] = [h for h in group.get("hooks", [])
                                  if not (h in written(event, make, events) if exact and remove else _ours(h))]
        groups = [g for g in groups if g.get("hooks")]
        if mine is not None and at is None:
            groups.append(mine)
        if groups:
            hooks[event] = groups
        else:
            hooks.pop(event, None)
    if not hooks:
        settings.pop("hooks")
    return settings


def _group(event: str, handler: str, command: list[str], kind: str) -> dict[str, Any]:
    """The hook group setup writes for `event`: repo-memory's one hook, of `kind`, calling `command`."""
    # A shell runs it: a path with a space (or quote) in it must be quoted, or the hook runs its first word
    ours: dict[str, Any] = {"type": "command", "command": shlex.join([*command, "hook", handler])}
    if kind == "mcp" and event in hookcalls.SERVED:
        ours = {"type": "mcp_tool", "server": NAME, "tool": hookcalls.TOOLS[event], "input": hookcalls.template(event)}
    return {"matcher": MATCHERS.get(event, ""), "hooks": [{**ours, "timeout": TIMEOUTS.get(event, 10)}]}


def written(event: str, shape: Group = _group, events: tuple[tuple[str, str], ...] = HOOKS + CODEX_HOOKS) -> list[dict[str, Any]]:
    """The hooks setup writes for `event` into a team file, of either kind: by name, or (an older setup) by this
    install's path; `shape` and `events` as merge_hooks takes them."""
    handler = dict(events).get(event)
    hooks = [shape(event, handler, command, kind)["hooks"][0] for kind in ("command", "mcp")
             for command in (BY_NAME, attach.command()[:-1])] if handler else []
    return hooks + [{**h, "timeout": 60} for h in hooks if event == "Stop"]  # as an older setup gave the Stop hook 60 s


def _write_json(path: Path, data: dict[str, Any], dry_run: bool, changes: list[str], what: str) -> None:
    """Write `data` to `path` when it differs from what the file holds; an empty mapping removes the file (we never
    leave a `{}` behind). Only what changes is written, laid out as the text around it (shells/settings_text.py): a
    team's committed file keeps its layout, its non-ASCII text and its key order."""
    before = path.read_text(encoding="utf-8") if path.exists() else None
    if (json.loads(before or "{}") if before is not None else None) == (data or None):
        changes.append(f"{path}: already up to date ({what})")
        return
    changes.append(f"{path}: {what}" + (" (dry run, not written)" if dry_run else ""))
    if dry_run:
        return
    if not data:
        path.unlink(missing_ok=True)
        return
    found = re.search(r"^([ \t]+)\S", before or "", re.MULTILINE)
    indent = found.group(1) if found else 2
    after = settings_text.edited(before, data, indent) if before else None
    text = (after or json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode()
    # a file on one line setup laid out afresh (settings_text.edited), once just what git holds again: as git holds it
    copy = teamfiles.held(path) if path.parent.is_dir() else None
    if copy is not None and b"\n" not in copy.strip() and _parsed(copy) == data:
        text = copy
    disk.write_atomic(path, text)


def _parsed(text: bytes) -> Any:
    try:
        return nesting.loads(text)
    except ValueError:
        return None


class SettingsError(ValueError):
    """A settings file setup edits holds no JSON object, so editing it would lose what is in it."""


def _load_json(path: Path) -> dict[str, Any]:
    """The JSON object in `path` ({} when there is no file); SettingsError when it holds anything else."""
    if not path.exists():
        return {}
    then = f"Fix it, or move it away (e.g. `mv {shellwords.quoted(str(path), f'{path}.bak')}`), then run this again; nothing was changed."
    try:
        data = nesting.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg}), so the harness "
                            f"cannot read it either. {then}") from exc
    except ValueError as exc:  # not UTF-8, or nested deeper than repo-memory reads (formats/nesting.py)
        raise SettingsError(f"{path} cannot be read ({exc}). {then}") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path} holds a JSON {type(data).__name__}, not a JSON object, so repo-memory cannot "
                            f"edit it without losing what is in it. {then}")
    return data


def check(paths: list[Path]) -> None:
    """Raise SettingsError for the first of `paths` that could not be edited: called before anything is written."""
    for path in paths:
        _load_json(path)


NOT_ON_PATH = "note: `repo-memory` is not on your PATH"


def _not_on_path(consequence: str) -> str:
    return (f"{NOT_ON_PATH}, so {consequence}: link it onto PATH, e.g. `mkdir -p ~/.local/bin && ln -s "
            f"{shellwords.quoted(attach.command()[0])} ~/.local/bin/` (only the command: all of its folder would put repo-memory's own "
            "python and pip before yours)")


def on_path() -> str | None:
    """Where `repo-memory` is found on PATH (None when it is not)."""
    return shutil.which(NAME)


SERVER = {"type": "stdio", "command": NAME, "args": ["serve"]}  # setup's entry in .mcp.json
RULES = [f"mcp__{NAME}", f"mcp__plugin_{NAME}_{NAME}"]  # Claude Code permission rules: every tool from .mcp.json, from the plugin
LOCAL_FILE = personal.LOCAL_FILE


def _grant(settings: dict[str, Any], remove: bool, exact: bool = False) -> dict[str, Any]:
    """`settings` with the rules that let every repo-memory tool run added to `permissions.allow` (or taken out; with
    `exact`, only when both are there, as setup writes them)."""
    permissions = settings.setdefault("permissions", {})
    allow = permissions.get("allow", [])
    if not (exact and remove) or set(RULES) <= set(allow):
        allow = [rule for rule in allow if rule not in RULES] + ([] if remove else RULES)
    permissions["allow"] = allow
    if not allow:
        permissions.pop("allow")
    if not permissions:
        settings.pop("permissions")
    return settings


def claude_code(root: Path, scope: str = "project", shared: bool = False, dry_run: bool = False, remove: bool = False,
                trust: bool = False, home: Path | None = None, undo: Undo = Undo(), hooks: str = "command",
                claude_dir: Path | None = None) -> list[str]:
    """Register the server for Claude Code, approve it for this user, grant its tools, install the hooks, and say what
    changed. The hooks and the permission rule live in exactly one settings file: settings.local.json (this user), or
    settings.json with `shared` (the team); setting up in one takes them out of the other. `remove` takes out everything
    of ours from this user's files, and from the team's files (.mcp.json, settings.json) that `undo` edits; from those
    it edits `exactly` (git holds no copy of them), only what is exactly as setup writes it (SERVER, `written`).
    `trust` answers the folder's trust dialog for this user as Claude Code stores it (~/.claude.json). With the
    repo-memory plugin enabled (`claude_dir`: ~/.claude), the plugin brings the server and the hooks: setup only
    allows its tools, and takes its own hooks out."""
    changes: list[str] = []
    home = home or Path.home()
    local_path, shared_path = root / LOCAL_FILE, root / ".claude" / "settings.json"
    team = not remove or undo.edits(".claude/settings.json")
    # every file is read (and refused when it cannot be edited) before any is written: no half-done setup
    team_mcp = scope == "project" and (not remove or undo.edits(".mcp.json"))
    mcp = _load_json(root / ".mcp.json") if team_mcp else {}
    local, shared_settings = _load_json(local_path), _load_json(shared_path) if team else {}
    plugin = None if remove else plugin_enabled(root, claude_dir or home / ".claude")
    if plugin:
        changes.append(f"{PLUGIN_NOTE} {PLUGIN} is enabled ({plugin}): it brings the server and the hooks, so "
                       "setup adds neither (two sets of hooks run every hook twice) and only allows its tools. To use "
                       f"setup's instead: `claude plugin disable {PLUGIN}`, then run this again.")
    if team_mcp and not plugin:
        servers = mcp.setdefault("mcpServers", {})
        older = {"type": "stdio", "command": attach.command()[0], "args": attach.command()[1:]}  # an older setup wrote its path
        if remove and undo.exactly(".mcp.json") and NAME in servers and servers[NAME] not in (SERVER, older):
            changes.append(kept(root / ".mcp.json", "the repo-memory server entry", undo.again))
        elif remove:
            servers.pop(NAME, None)
        else:
            servers[NAME] = dict(SERVER)
        if not servers:
            mcp.pop("mcpServers")
        _write_json(root / ".mcp.json", mcp, dry_run, changes, "repo-memory removed" if remove else "repo-memory registered (project scope, by name)")
        if not remove and not on_path():
            changes.append(_not_on_path("Claude Code cannot start it"))
    elif scope == "user":
        args = ["claude", "mcp", "remove", "--scope", "user", NAME] if remove else ["claude", "mcp", "add", "--scope", "user", NAME, "--", *attach.command()]
        if remove and not _user_scoped(home):  # asking `claude` would make its state in a HOME that has none
            changes.append(f"{home / '.claude.json'}: already without {NAME} in user scope")
        elif shutil.which("claude") and not dry_run:
            done = subprocess.run(args, capture_output=True, text=True, timeout=60)
            changes.append(f"ran `{' '.join(args)}`: {(done.stdout or done.stderr).strip()}")
        else:
            changes.append(f"run this to {'remove' if remove else 'register'} it for every project: {' '.join(args)}")
    # approve the project server for this user, so it is Connected, not "Pending approval"; any undo takes out the
    # approval a project setup wrote (left, it kept the personal file that loses its exclude line), never the person's
    approved = (remove or scope == "project" and not plugin) and personal.approve(root, local, remove, dry_run)
    yours = remove and approved
    teams = not remove and not shared and _team_holds_ours(shared_path)  # the team's choice: left, and not copied
    in_local = not remove and not shared and not teams
    local = _grant(merge_hooks(local, HOOKS, attach.command()[:-1], not in_local or bool(plugin), hooks), not in_local)
    what = (f"tools allowed, no hooks (the plugin {PLUGIN} brings them)" if plugin and in_local else
            "hooks installed, tools allowed and repo-memory approved (for you)" if in_local else
            f"no hooks or tool permission (the plugin {PLUGIN} brings the hooks; the permission is in .claude/settings.json)"
            if plugin else "repo-memory approved for you (hooks and tool permission are in .claude/settings.json)" if not remove else
            "hooks and tool permission removed (the approval of repo-memory is yours: kept)" if yours else
            "hooks, tool permission and approval removed")
    _write_json(local_path, local, dry_run, changes, what)
    if teams:
        changes.append(f"{shared_path}: {TEAMS_LEFT} (git holds repo-memory's hooks or tool permission in it), "
                       "so none are copied to settings.local.json (Claude Code would run both)")
    elif team:
        in_shared = not remove and shared
        held = json.dumps(shared_settings)  # what the team's file holds, to leave it alone when nothing of ours changes
        mine = remove and undo.exactly(".claude/settings.json")
        settings = _grant(merge_hooks(shared_settings, HOOKS, BY_NAME, not in_shared or bool(plugin), hooks, mine), not in_shared, mine)
        if mine and (_hooks_in(settings) or set(RULES) & set((settings.get("permissions") or {}).get("allow") or [])):
            changes.append(kept(shared_path, "repo-memory's hooks or tool permission", undo.again))
        if in_shared or json.dumps(settings) != held:
            _write_json(shared_path, settings, dry_run, changes, f"tools allowed, no hooks (the plugin {PLUGIN} brings them)"
                        if plugin and in_shared else "hooks installed and tools allowed (shared, by name)" if in_shared else
                        "hooks and tool permission removed" + ("" if remove else " (they are in settings.local.json now)"))
    if local and not remove:
        changes += personal.ignored(root, local_path, dry_run)
    if remove:  # what setup added for this person beyond the files: the exclude line, the folder trust
        changes += personal.unignore(root, dry_run, bool(local), _holds_ours) + personal.untrust_folder(root, dry_run)
    if not remove:  # a plugin's or user-scope server needs no approval, but is started only in a trusted folder
        changes += ([] if dry_run else commit_note(root, ([".mcp.json"] if scope == "project" else []) + ([".claude/settings.json"] if shared else [])))
        again = f"repo-memory setup claude-code{' --scope user' if scope == 'user' else ''}{' --shared' if shared else ''}"  # as run
        changes += personal.trust_folder(root, home, trust, dry_run, personal.PENDING if scope == "project" and not plugin else personal.UNCHECKED, again)
    return changes


def _team_holds_ours(path: Path) -> bool:
    """Whether git holds the settings file `path` with repo-memory's hooks or tool rules in it (a team's `--shared`)."""
    copy = teamfiles.held(path)
    held = _parsed(copy) if copy is not None else None
    return isinstance(held, dict) and bool(_hooks_in(held) or set(RULES) & set((held.get("permissions") or {}).get("allow") or []))


def _holds_ours(checkout: Path) -> bool:
    """Whether `checkout`'s personal settings file holds what setup writes there: its hooks, tool rules or approval."""
    try:
        local = _load_json(checkout / LOCAL_FILE)
        allow = set((local.get("permissions") or {}).get("allow") or [])
        return bool(_hooks_in(local) or allow & set(RULES) or NAME in (local.get("enabledMcpjsonServers") or [])
                    and personal.approved_by_setup(checkout))
    except (OSError, SettingsError, AttributeError, TypeError):  # one it cannot read holds nothing setup could take out
        return False


def _user_scoped(home: Path) -> bool:
    """Whether Claude Code may hold repo-memory in user scope (`mcpServers` of ~/.claude.json, or a file it cannot tell)."""
    state = personal.claude_state(home / ".claude.json")
    return bool(os.environ.get("CLAUDE_CONFIG_DIR")) or state is None or NAME in (state.get("mcpServers") or {})


def tidy(root: Path) -> None:
    """Remove the folders setup's files lived in (.claude/skills, .claude, .codex, .gemini) when nothing is left in them."""
    for folder in (root / ".claude" / "skills", root / ".claude", root / ".codex", root / ".gemini"):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only an empty one
