"""Attach repo-memory to Gemini CLI: the server entry and the hooks, both in `.gemini/settings.json`, a team file
(like .mcp.json) that calls `repo-memory` by name.

Gemini CLI's hooks are Claude Code's under other names (BeforeTool, AfterTool), with a timeout in milliseconds and a
tool matcher that is a regular expression searched anywhere in the name. It runs a project's hooks only in a folder
the person trusted, and warns once about hooks it has not seen before. PreCompress is not hooked: Gemini fires it
several times even in a short headless session, and a summary record per firing would be noise.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from repo_memory.config import Config
from repo_memory.formats import nesting
from repo_memory.guards import disk
from repo_memory.shells import gemini_trust
from repo_memory.shells.setup import (BY_NAME, GEMINI_HOOKS, SettingsError, _hooks_in, _load_json, _not_on_path, _write_json,
                                      merge_hooks, on_path)
from repo_memory.shells.teamfiles import NAME, Undo, commit_note, kept
from repo_memory.guards.shellwords import quoted

FILE = ".gemini/settings.json"
SERVER = {"command": NAME, "args": ["serve"], "trust": True}  # as `gemini mcp add --trust repo-memory repo-memory serve` writes it
# BeforeTool runs before the tools that change files or load a skill by themselves, anchored: Gemini searches the
# pattern anywhere in a tool's name, so `replace` alone would match an MCP tool named `…_replace_all` too
MATCHERS = {"BeforeTool": "^(write_file|replace|run_shell_command|activate_skill)$", "AfterTool": "*"}
BARE = {k: v for k, v in SERVER.items() if k != "trust"}  # as an older setup wrote it
OWNED = {"command", "args", "trust", "url", "httpUrl", "tcp", "type"}  # how Gemini starts the server: setup's to say
ENTRY_NOTE = "gemini-entry.json"  # in the checkout's state folder: the person's own entry setup changed, to put back
COMMENTS = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)  # a string (kept), or a comment
TIMEOUTS = {"SessionEnd": 30_000}  # milliseconds; Gemini does not wait for SessionEnd, so the commit has its time


def hook_group(event: str, handler: str, command: list[str], kind: str) -> dict[str, Any]:
    """The hook group setup writes for Gemini CLI's `event`: one named command hook (Gemini has no `mcp_tool` kind)."""
    hook = {"type": "command", "command": shlex.join([*command, "hook", handler]), "name": f"{NAME} {handler}",
            "timeout": TIMEOUTS.get(event, 10_000)}
    return {"matcher": MATCHERS.get(event, ""), "hooks": [hook]}


def load(path: Path) -> tuple[dict[str, Any], bool]:
    """The settings in `path` and whether they hold comments (Gemini CLI strips `//` and `/* */` before it parses);
    SettingsError when they are no JSON object even without them."""
    try:
        return _load_json(path), False
    except SettingsError:
        text = path.read_text(encoding="utf-8", errors="replace")
        bare = COMMENTS.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
        try:
            data = nesting.loads(bare or "{}")
        except ValueError:
            data = None
        if not isinstance(data, dict) or bare == text:
            raise
        return data, True


def attach_gemini(root: Path, dry_run: bool = False, remove: bool = False, undo: Undo = Undo(), trust: bool = False,
                  home: Path | None = None) -> list[str]:
    """Write (or, with `remove`, take out) the server entry and our hooks in `.gemini/settings.json`, keeping every
    other key; what changed. An undo edits the file only when `undo` does, and `exactly` only what setup writes; it
    takes back the folder's trust `trust` stored either way (shells/gemini_trust.py: it is this person's)."""
    path, changes = root / FILE, list[str]()
    if remove:
        changes += gemini_trust.untrust_folder(root, dry_run)
    if remove and not undo.edits(FILE):
        return changes
    settings, commented = load(path)
    before = json.loads(json.dumps(settings))
    mine = remove and undo.exactly(FILE)
    servers = settings.setdefault("mcpServers", {})
    note = Config.load(root).state_dir / ENTRY_NOTE
    noted = _noted(note) if remove else None
    restored = noted is not None
    if noted:
        servers[NAME], back = _put_back(servers.get(NAME), noted)
    elif mine and NAME in servers and servers[NAME] not in (SERVER, BARE):
        changes.append(kept(path, "the repo-memory server entry", undo.again))
    elif remove:
        servers.pop(NAME, None)
    else:
        changes += _entry(servers, path, note, dry_run)
    if not servers:
        settings.pop("mcpServers")
    settings = merge_hooks(settings, GEMINI_HOOKS, BY_NAME, remove, exact=mine, shape=hook_group)
    if mine and _hooks_in(settings):
        changes.append(kept(path, "repo-memory's hooks", undo.again))
    if commented and settings != before:  # Gemini reads comments; a JSON writer would drop them: the person edits it
        wanted = {"mcpServers": {NAME: SERVER}, "hooks": {e: [hook_group(e, h, BY_NAME, "command")] for e, h in GEMINI_HOOKS}}
        raise SettingsError(f"{path} has comments, which Gemini CLI reads but repo-memory would lose by writing it; nothing was "
                            f"changed. {'Take out of it by hand' if remove else 'Add to it by hand'}: {json.dumps(wanted, indent=2)}")
    if noted and not dry_run:
        note.unlink()
    if noted:
        changes.append(_said_back(path, servers[NAME], noted["was"], back) + (" (dry run, not written)" if dry_run else ""))
    if noted and restored and json.loads(noted["text"] or "{}") == settings:  # nothing else changed since: the file as it was
        if not dry_run:
            disk.write_atomic(path, noted["text"].encode())
    elif not commented:
        _write_json(path, settings, dry_run, changes, "hooks removed" if restored else "server and hooks removed" if remove
                    else "server and hooks installed (by name)")
    else:
        changes.append(f"{path}: already up to date")
    if not remove and not dry_run:
        changes += commit_note(root, [FILE])
    if not remove and not on_path():
        changes.append(_not_on_path("Gemini CLI cannot start the server and its hooks fail (they call it by name)"))
    if not remove:
        changes.append(f"note: Gemini CLI reads .gemini/settings.json only in the folder it starts in: start `gemini` in {root} "
                       "(in a subfolder it has no repo-memory)")
        changes += gemini_trust.trust_folder(root, home or Path.home(), trust, dry_run)
    return changes


def _entry(servers: dict[str, Any], path: Path, note: Path, dry_run: bool) -> list[str]:
    """Put setup's server entry in `servers`; in place of the person's own, keep what they set that setup does not own
    (env, timeout, …) and note theirs, with the file, in `note` for an undo to put back. What it says it changed."""
    yours, earlier = servers.get(NAME), _noted(note)
    ours = {**SERVER, **{k: v for k, v in yours.items() if k not in OWNED}} if isinstance(yours, dict) else dict(SERVER)
    if isinstance(yours, dict) and earlier and yours != ours:  # changed since an earlier setup: theirs is what undoing gives
        yours = _put_back(yours, earlier)[0]
    servers[NAME] = ours
    if not isinstance(yours, dict) or yours in (SERVER, BARE, ours):
        return []
    if not dry_run:
        text = earlier["text"] if earlier else path.read_text(encoding="utf-8")
        disk.write_atomic(note, (json.dumps({"was": yours, "wrote": ours, "text": text}, indent=2) + "\n").encode())
    ran = quoted(*[str(yours.get("command") or yours.get("httpUrl") or yours.get("url")), *map(str, yours.get("args") or [])])
    changed = ", ".join(sorted(k for k in OWNED if yours.get(k) != ours.get(k)))
    keeping = ", ".join(k for k in ours if k not in OWNED)
    return [f"{path}: your repo-memory server entry ran `{ran}`: setup set its {changed} to start `repo-memory serve` by "
            f"name, as a team file must{f', and kept your {keeping}' if keeping else ''}; `repo-memory setup gemini --remove` "
            "puts yours back" + (" (dry run, not written)" if dry_run else "")]


def _put_back(entry: Any, noted: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`entry` with what setup changed in the person's own (`noted`) put back, where it still holds setup's value: what
    the person set since stays theirs; an entry taken out since is theirs again whole. The entry, and the keys put back."""
    was, wrote = noted["was"], noted["wrote"]
    if not isinstance(entry, dict):
        return dict(was), sorted(k for k in OWNED if was.get(k) != wrote.get(k))
    back, out = [], dict(entry)
    for key in sorted(OWNED):
        if was.get(key) != wrote.get(key) and entry.get(key) == wrote.get(key):
            back.append(key)
            if key in was:
                out[key] = was[key]
            else:
                out.pop(key, None)
    return out, back


def _said_back(path: Path, entry: dict[str, Any], was: dict[str, Any], back: list[str]) -> str:
    """What an undo says it did with the person's own entry: put back whole, or setup's keys in it only."""
    if entry == was:
        return f"{path}: kept your own repo-memory server entry: put back as it was before setup"
    since = ", ".join(k for k in sorted({*entry, *was}) if entry.get(k) != was.get(k))
    return (f"{path}: kept your own repo-memory server entry: put back {', '.join(back) or 'nothing'} as before setup, "
            f"and kept what you changed in it since ({since})")


def _noted(note: Path) -> dict[str, Any] | None:
    """The person's own entry setup changed (`_entry`'s note), None when there is none."""
    try:
        noted = json.loads(note.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return noted if isinstance(noted, dict) and {"was", "wrote", "text"} <= noted.keys() else None


def still_serving(root: Path, home: Path) -> list[str]:
    """The Gemini CLI settings that still start repo-memory in `root` after an undo, each with how to take it out: the
    project's file (the team's, kept), and a user-scope entry (`gemini mcp add --scope user`, every folder)."""
    serving = []
    for path, how in ((root / FILE, "the team's file: `repo-memory uninstall --team` takes it out, commit that"),
                      (home / FILE, f"`gemini mcp remove --scope user {NAME}`")):
        try:
            settings = load(path)[0]
        except (OSError, SettingsError):
            continue
        if isinstance(servers := settings.get("mcpServers"), dict) and NAME in servers:
            serving.append(f"the {NAME} entry{' and hooks' if _hooks_in(settings) else ''} in {path} ({how})")
    return serving
