"""Attach repo-memory to Codex and detach it: one server entry in ~/.codex/config.toml for every repository, hooks in
this repository's .codex/hooks.json, and with `--trust` what Codex's "Trust all and continue" stores.

config.toml is the person's file: it is edited in place with tomlkit, so their keys, comments and order stay; setup
sets only the keys it owns and says "already" when they are as it would set them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import ParseError
from tomlkit.items import AoT, Comment, Item, Table, Whitespace
from tomlkit.toml_document import TOMLDocument

from repo_memory.guards import disk
from repo_memory.shells import attach, foreign
from repo_memory.shells.setup import (BY_NAME, CODEX_HOOKS, NAME, _hooks_in, _load_json, _not_on_path, _ours, _write_json,
                                      costs, merge_hooks, on_path)
from repo_memory.shells.teamfiles import Undo, commit_note, kept

# The project's trust_level that `setup codex --trust` set carries this comment (and the level it replaced), so that
# uninstall takes back only the trust setup gave, and puts back what the person had
ADDED = "set by `repo-memory setup codex --trust`; `repo-memory uninstall` takes it back"
# The first line of a config.toml setup made (and of its folder, when setup made that too): uninstall --global removes
# only a file (a folder) so marked, once nothing else is left in it; an empty file of the person's stays
MADE = {False: "# made by `repo-memory setup codex`; `repo-memory uninstall --global` removes it once nothing else is in it",
        True: "# made by `repo-memory setup codex`, its folder too; `repo-memory uninstall --global` removes them once nothing else is in them"}


class ConfigTomlError(ValueError):
    """~/.codex/config.toml is not valid TOML, so it cannot be edited without losing what is in it."""


def attach_codex(root: Path, home: Path, dry_run: bool = False, remove: bool = False, everywhere: bool = False,
                 trust: bool = False, undo: Undo = Undo()) -> list[str]:
    """One `[mcp_servers.repo-memory]` in ~/.codex/config.toml for every repository; hooks in this repository's
    .codex/hooks.json; with `trust`, this project and exactly those hooks trusted in config.toml, as Codex's own
    "Trust all and continue" stores it. `remove` takes the hooks and their trust out (the hooks file, a team file, only
    when `undo` edits it; when it edits it `exactly`, only hooks exactly as setup writes them), and the project's
    trust if setup added it; a config.toml setup made (MADE) goes once nothing else is left in it, and its folder when
    setup made that too and it is empty then (Codex reads no file as an empty one); an empty file of the person's stays."""
    changes: list[str] = []
    config = codex_dir(home) / "config.toml"
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    doc = _parsed(text, config)
    if not remove and not config.exists():
        doc.add(tomlkit.comment(MADE[not config.parent.is_dir()].removeprefix("# ")))
    made = next((folder for folder, line in MADE.items() if text.startswith(line + "\n")), None)
    unwritten = " (dry run, not written)" if dry_run else ""
    server = f"[mcp_servers.{NAME}]"
    if not remove or everywhere:
        said = _set_server(doc, attach.command()) if not remove else "removed" if _drop(doc, ("mcp_servers", NAME)) else ""
        changes.append(f"{config}: {said} {server} (one entry for every repository){unwritten}" if said else
                       f"{config}: already {'without' if remove else 'with'} {server}")
    elif _table(doc, ("mcp_servers", NAME)) is not None:
        changes.append(f"{config}: kept {server}: it serves every repository (remove it with --global)")
    hooks_path = root / ".codex" / "hooks.json"
    mine = remove and undo.exactly(".codex/hooks.json")
    settings = merge_hooks(_load_json(hooks_path), CODEX_HOOKS, BY_NAME, remove, exact=mine)
    if mine and _hooks_in(settings):
        changes.append(kept(hooks_path, "repo-memory's hooks", undo.again))
    if not remove or undo.edits(".codex/hooks.json"):
        _write_json(hooks_path, settings, dry_run, changes, "hooks removed" if remove else "hooks installed (by name)")
    if not remove and not dry_run:
        changes += commit_note(root, [".codex/hooks.json"])
    if not remove and not on_path():
        changes.append(_not_on_path("Codex's hooks (they call it by name) fail"))
    trusted = _trusted(doc, hooks_path)
    _kept_trust(doc, trusted, codex_hook_hashes(hooks_path, settings, everyone=True))
    if trust and not remove:
        given = (_table(doc, ("projects", str(root))) or {}).get("trust_level") == "trusted"  # the person's, or ours before
        found = [] if given else foreign.committed(root, "codex")
        changes += [foreign.withheld(root, "codex", found)] if found else _trust(doc, root, hooks_path, settings,
                                                                                     f"{config}: ", unwritten)
    elif remove:
        changes += [f"{config}: removed the trust of repo-memory's hooks here{unwritten}"] if trusted else []
        changes += _untrust_project(doc, root, f"{config}: ", unwritten)
    after = tomlkit.dumps(doc)
    ends = len(text) - len(text.rstrip("\n"))
    if remove and after.strip() and len(after) - len(after.rstrip("\n")) > ends:  # the blank line setup put before its
        after = after.rstrip("\n") + "\n" * max(ends, 1)                           # tables was left at the end
    if remove and after != text and made is not None and not after.removeprefix(MADE[made] + "\n").strip():
        changes.append(f"{config}: removed the file, nothing else was in it{unwritten}")  # the file (and folder) setup made
        if not dry_run:
            config.unlink()
            with contextlib.suppress(OSError):
                if made:
                    config.parent.rmdir()  # only an empty one
    elif after != text:
        if remove and not after.strip():
            changes.append(f"{config}: kept the file, empty now: setup did not make it (yours, or an older setup's, which left no mark)")
        if not dry_run:
            config.parent.mkdir(parents=True, exist_ok=True)
            disk.write_atomic(config, after.encode())
    if not remove and not trust:
        changes += _untrusted_note(doc, root, codex_hook_hashes(hooks_path, settings))
    return changes


def _untrusted_note(doc: TOMLDocument, root: Path, ours: dict[str, str]) -> list[str]:
    """What setup without --trust says of the hooks Codex will skip (nothing when it trusts them all already): those an
    upgrade's setup added beside hooks trusted before, named with what each loses, or all of them."""
    config = doc.unwrap()
    stale = _events(_stale(config, ours))
    if _project_level(config, root) == "trusted" and not stale:
        return []
    if _project_level(config, root) == "trusted" and len(stale) < len(_events(ours)):
        return [f"note: Codex skips repo-memory's hooks here that no trust covers yet ({costs(stale)}); the other "
                f"{len(_events(ours)) - len(stale)} stay trusted. `repo-memory setup codex --trust` trusts "
                f"{'it' if len(stale) == 1 else 'them'} too, as the others were (or open `codex` here and answer 'Hooks need "
                "review' with 'Trust all and continue')."]
    return ["note: Codex runs a repository's hooks only once you trust them. Either open `codex` here and answer "
            "'Hooks need review' with 'Trust all and continue' (or review each in /hooks), or run "
            "`repo-memory setup codex --trust` to trust this project and exactly the hooks above. Until then tool "
            "calls are not recorded; what the agent remembers is still committed when the session ends."]


def _parsed(text: str, path: Path) -> TOMLDocument:
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise ConfigTomlError(f"{path} is not valid TOML ({exc}), so Codex cannot read it either: fix it, then run "
                              "`repo-memory setup codex` again") from exc


def _set_server(doc: TOMLDocument, command: list[str]) -> str:
    """Set the keys of our server entry that setup owns, keeping every other key of it where it is; what it did
    ("added", "changed", or '' when all were already so)."""
    owned: dict[str, Any] = {"command": command[0], "args": command[1:]}
    entry = _table(doc, ("mcp_servers", NAME))
    if entry is None:
        fresh = tomlkit.table()
        fresh.update({**owned, "startup_timeout_sec": 20, "env": {"REPO_MEMORY_HARNESS": "codex"}})
        _table(doc, ("mcp_servers",), create=True).append(NAME, fresh)
        return "added"
    env = entry.get("env")
    if not isinstance(env, (Table, dict)):
        entry["env"] = env = tomlkit.table()
    changed = [key for key, value in owned.items() if entry.get(key) != value]
    for key in changed:
        entry[key] = owned[key]
    if env.get("REPO_MEMORY_HARNESS") != "codex":
        env["REPO_MEMORY_HARNESS"] = "codex"
        changed.append("env")
    return "changed" if changed else ""


def _trust(doc: TOMLDocument, root: Path, hooks_path: Path, settings: dict[str, Any], where: str, unwritten: str) -> list[str]:
    """Trust this project and exactly our hooks in it, as "Trust all and continue" does; what changed."""
    project = _table(doc, ("projects", str(root)), create=True)
    before = project.get("trust_level")
    if before != "trusted":
        level = tomlkit.string("trusted")
        level.comment(ADDED + (f" (it was {json.dumps(str(before))})" if before is not None else ""))
        project["trust_level"] = level
    hooks = codex_hook_hashes(hooks_path, settings)
    state = _table(doc, ("hooks", "state"), create=True)
    fresh = {key: digest for key, digest in hooks.items() if (state.get(key) or {}).get("trusted_hash") != digest}
    for key, digest in fresh.items():
        if key in state:
            state[key]["trusted_hash"] = digest
        else:
            entry = tomlkit.table()
            entry["trusted_hash"] = digest
            state.append(key, entry)
    if before == "trusted" and not fresh:
        return [f"{where}already trusted this project and repo-memory's {len(CODEX_HOOKS)} hooks in it"]
    was = f" (it was {before}: you asked for trust with --trust)" if before not in (None, "trusted") else ""
    return [f"{where}trusted this project{was} and repo-memory's {len(CODEX_HOOKS)} hooks in it, as Codex's "
            f"'Trust all and continue' would{unwritten}"]


def _untrust_project(doc: TOMLDocument, root: Path, where: str, unwritten: str) -> list[str]:
    """Take back the project's trust that `--trust` set (it marks it), putting back the level it replaced; trust the
    person gave stays."""
    project = _table(doc, ("projects", str(root)))
    level = project.get("trust_level") if project is not None else None
    if project is None or not isinstance(level, Item) or ADDED not in level.trivia.comment:
        return []
    was = re.search(r'\(it was ("[^"]*")\)', level.trivia.comment)
    if was:
        project["trust_level"] = tomlkit.string(json.loads(was.group(1)))
        project["trust_level"].trivia.comment_ws = project["trust_level"].trivia.comment = ""  # tomlkit keeps the old item's comment
        return [f"{where}set this project's trust back to {was.group(1)}, as it was before `setup codex --trust`{unwritten}"]
    del project["trust_level"]
    if not project:
        _drop(doc, ("projects", str(root)))
    return [f"{where}removed the trust of this project that `setup codex --trust` added (Codex asks again){unwritten}"]


def codex_dir(home: Path) -> Path:
    """Where Codex keeps its config: $CODEX_HOME, else ~/.codex (what Codex itself reads)."""
    return Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else home / ".codex"


def serving_entry(home: Path) -> Path | None:
    """config.toml when it holds the server entry, which serves every repository Codex runs in; None when it does not."""
    config = codex_dir(home) / "config.toml"
    try:
        doc = _parsed(config.read_text(encoding="utf-8"), config)
    except (OSError, ConfigTomlError):
        return None
    return config if _table(doc, ("mcp_servers", NAME)) is not None else None


def untrusted_hooks(root: Path, codex_home: Path) -> str:
    """Why Codex will not run (some of) repo-memory's hooks in `root`, and what each skipped one loses ('' when it runs
    them all, or when this user has no Codex config): the project is not trusted, or a hook's trust in config.toml is
    missing or no longer matches it (a hook added in front of ours moves its key; an edited one changes its hash; an
    upgrade's setup adds a hook no earlier trust covered). Codex skips such hooks without a word."""
    found = _trust_state(root, codex_home)
    if found is None or not found[2]:
        return ""
    level, ours, skipped = found
    if level != "trusted":
        return (f"Codex runs no hook here: this project is {'marked ' + level if level else 'not trusted'} in "
                f"{codex_home}/config.toml ({costs(skipped)})")
    return (f"Codex skips {len(skipped)} of repo-memory's {len(ours)} hooks here, as their trust in {codex_home}/config.toml "
            f"is missing or was given to the file as it was before a change ({costs(skipped)}); the other "
            f"{len(ours) - len(skipped)} run")


def trusted_before(root: Path, codex_home: Path) -> bool:
    """Whether this user trusted repo-memory's hooks here (the project, and one of them at least, as they are now)."""
    found = _trust_state(root, codex_home)
    return found is not None and found[0] == "trusted" and len(found[2]) < len(found[1])


def _trust_state(root: Path, codex_home: Path) -> tuple[str | None, list[str], list[str]] | None:
    """(the project's trust level, the events of repo-memory's hooks in .codex/hooks.json, those Codex skips), or
    None when there are no hooks of ours or no Codex config here (a broken config.toml Codex itself reports)."""
    hooks_path = root / ".codex" / "hooks.json"
    try:
        ours = codex_hook_hashes(hooks_path, _load_json(hooks_path))
        config = tomllib.loads((codex_home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError, AttributeError):
        return None
    if not ours:
        return None
    level = _project_level(config, root)
    return level, _events(ours), _events(list(ours) if level != "trusted" else _stale(config, ours))


def _project_level(config: dict[str, Any], root: Path) -> str | None:
    """The trust level config.toml gives `root`: its own, or that of the nearest folder above it that has one."""
    levels = {Path(p): str(v.get("trust_level")) for p, v in (config.get("projects") or {}).items() if isinstance(v, dict)}
    return next((levels[p] for p in (root, *root.parents) if p in levels), None)


def _events(keys: Collection[str]) -> list[str]:
    """The events (as hooks.json names them, in setup's order) of the `hooks.state` keys `keys`."""
    named = {key.split(":")[-3] for key in keys}
    return [event for event, _ in CODEX_HOOKS if CODEX_EVENTS[event] in named]


def _stale(config: dict[str, Any], ours: dict[str, str]) -> list[str]:
    state = (config.get("hooks") or {}).get("state") or {}
    return [key for key, digest in ours.items() if (state.get(key) or {}).get("trusted_hash") != digest]


CODEX_EVENTS = {"SessionStart": "session_start", "PostToolUse": "post_tool_use", "Stop": "stop", "SessionEnd": "session_end",
                "PreToolUse": "pre_tool_use", "UserPromptSubmit": "user_prompt_submit", "PreCompact": "pre_compact"}
NO_MATCHER = {"Stop", "UserPromptSubmit"}  # events whose matcher Codex ignores, and leaves out of a hook's identity


def codex_hook_hashes(hooks_path: Path, settings: dict[str, Any], everyone: bool = False) -> dict[str, str]:
    """The `hooks.state` key and `trusted_hash` of each of our hooks in `settings` (the content of `hooks_path`), computed
    as Codex does: sha256 of the compact, key-sorted JSON of the hook's event, matcher and handlers (timeouts as Codex
    clamps them), keyed `<hooks.json path>:<event>:<group index>:<handler index>`."""
    out = {}
    for event, groups in (settings.get("hooks") or {}).items():
        for g, group in enumerate(groups):
            for h, hook in enumerate(group.get("hooks", [])):
                if not (everyone or _ours(hook)) or event not in CODEX_EVENTS or "command" not in hook:
                    continue
                handler = {"async": bool(hook.get("async", False)), "command": hook["command"], "type": hook.get("type", "command"),
                           "timeout": min(int(hook.get("timeout", 600)), 3) if event == "SessionEnd" else int(hook.get("timeout", 600))}
                ident: dict[str, Any] = {"event_name": CODEX_EVENTS[event], "hooks": [handler]}
                if event not in NO_MATCHER:
                    ident["matcher"] = group.get("matcher", "")
                digest = hashlib.sha256(json.dumps(ident, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
                out[f"{hooks_path}:{CODEX_EVENTS[event]}:{g}:{h}"] = f"sha256:{digest}"
    return out


def _kept_trust(doc: TOMLDocument, trusted: list[str], hashes: dict[str, str]) -> None:
    """Keep the trust of each hook (`trusted`: its `hooks.state` keys) that is in the hooks file as it was trusted
    (`hashes`: key -> hash of every hook now in the file), under its new key if it moved; the trust of a hook changed
    or gone (ours, on --remove) goes. A re-run used to drop the trust of every hook in the file, the person's own
    among them, and Codex then skipped them without a word."""
    state = _table(doc, ("hooks", "state"))
    recorded = {key: str((state.get(key) or {}).get("trusted_hash", "")) for key in trusted}
    # the same hook at the same place: its entry stays as Codex wrote it; every other entry goes, all before any moves
    # in, so a trust can move onto a key whose own entry goes (two hooks that swapped places, or one that moved up)
    stays = [key for key in trusted if recorded[key] and hashes.get(key) == recorded[key]]
    gone = [key for key in trusted if key not in stays]
    for key in gone:
        _drop(doc, ("hooks", "state", key))
    taken = set(stays)
    for key in gone:
        free = [k for k, digest in hashes.items() if digest == recorded[key] and k not in taken]
        if recorded[key] and free:
            taken.add(free[0])
            entry = tomlkit.table()
            entry["trusted_hash"] = recorded[key]
            _table(doc, ("hooks", "state"), create=True).append(free[0], entry)


def _trusted(doc: TOMLDocument, hooks_path: Path) -> list[str]:
    """The `hooks.state` keys in config `doc` that trust a hook of `hooks_path`."""
    state = _table(doc, ("hooks", "state"))
    return [key for key in (state or {}) if key.startswith(f"{hooks_path}:")]


def _table(doc: TOMLDocument, path: tuple[str, ...], create: bool = False) -> Any:
    """The table at `path` (a Table, or tomlkit's view of one written in parts), None when there is none; with
    `create`, made (last in the file) when missing."""
    here: Any = doc
    for key in path:
        inner = here.get(key)
        if inner is None and create:  # a header of its own only once it holds a key: `[a.b]`, not `[a]` then `[a.b]`
            inner = tomlkit.table(is_super_table=True)
            here.append(key, inner)
            inner = here[key]
        if inner is None or not hasattr(inner, "get") or isinstance(inner, (str, int, list)):
            return None
        here = inner
    return here


def _drop(doc: TOMLDocument, path: tuple[str, ...]) -> bool:
    """Remove the table at `path` and its sub-tables; whether there was one. tomlkit keeps the comment lines above a
    header in the table before it: those that end the table removed are the person's words over the next table,
    so they move to that table's header (or stay at the end of the file)."""
    parent, table = _table(doc, path[:-1]), _table(doc, path)
    if parent is None or table is None:
        return False
    if not isinstance(table, Table):  # written in parts, or inline: no lines of its own to look at
        del parent[path[-1]]
        return True
    order, mine = list(_headers(doc)), list(_headers(table.value))
    last = (mine[-1] if mine else table).value.body
    tail = len(last)
    while tail and last[tail - 1][0] is None and isinstance(last[tail - 1][1], (Comment, Whitespace)):
        tail -= 1
    while tail < len(last) and not isinstance(last[tail][1], Comment):
        tail += 1  # the blank lines before the first comment separated the table; they go with it
    words = [item for _, item in last[tail:]]
    at = next((i for i, t in enumerate(order) if t is table), None)
    following = order[at + len(mine) + 1:] if at is not None else []
    del parent[path[-1]]
    if words and following:
        following[0].trivia.indent = "".join(item.as_string() for item in words) + following[0].trivia.indent
    for item in words if not following else []:
        doc.add(item)
    return True


def _headers(container: Container) -> Iterator[Table]:
    """Every table of `container` that writes a header line, in the order they stand in the file."""
    for _, item in container.body:
        tables = item.body if isinstance(item, AoT) else [item] if isinstance(item, Table) else []
        for table in tables:
            if not table.is_super_table():
                yield table
            yield from _headers(table.value)
