"""A team rollout through Claude Code's plugin marketplace: `.claude/settings.json` names the marketplace
(`extraKnownMarketplaces`) and enables the plugin (`enabledPlugins`); each teammate's Claude Code installs it when they
trust the folder. The plugin brings the server, the hooks and the skills, so the raw registration (`.mcp.json`, our
hooks in either settings file) is taken out: two registrations would run two servers and every hook twice.
"""

from __future__ import annotations

import re
from pathlib import Path

from repo_memory.shells import setup as attaching

MARKETPLACE = "repo-memory"
PLUGIN = f"{attaching.NAME}@{MARKETPLACE}"
_GITHUB = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")


def source(where: str, root: Path) -> tuple[dict[str, str], str]:
    """The marketplace source for `where` (a GitHub owner/repo, a git URL, or a folder holding
    .claude-plugin/marketplace.json), and a note for the person when it will not work on teammates' machines."""
    folder = Path(where).expanduser()
    if not folder.is_absolute():
        folder = root / folder
    if (folder / ".claude-plugin" / "marketplace.json").is_file():
        return {"source": "directory", "path": str(folder.resolve())}, (
            f"note: the marketplace is a folder on this machine ({folder.resolve()}); a teammate needs it at the same path. "
            "For a team, publish repo-memory's repository and pass its git URL or GitHub owner/repo")
    if re.match(r"^(https?|ssh|git)://|^git@", where):
        return {"source": "git", "url": where}, ""
    if _GITHUB.match(where):
        return {"source": "github", "repo": where}, ""
    raise ValueError(f"'{where}' is not a folder with .claude-plugin/marketplace.json, a git URL or a GitHub owner/repo")


def team_plugin(root: Path, where: str, remove: bool = False, dry_run: bool = False) -> list[str]:
    """Write (or take out) the team's plugin rollout in .claude/settings.json and take out the raw registration."""
    changes: list[str] = []
    shared_path, local_path, mcp_path = root / ".claude" / "settings.json", root / attaching.LOCAL_FILE, root / ".mcp.json"
    attaching.check([] if remove else [local_path, mcp_path])  # before the shared file is written: no half-done rollout
    settings = attaching._load_json(shared_path)
    known = settings.setdefault("extraKnownMarketplaces", {})
    enabled = settings.setdefault("enabledPlugins", {})
    if remove:
        known.pop(MARKETPLACE, None)
        enabled.pop(PLUGIN, None)
    else:
        found, note = source(where, root)
        known[MARKETPLACE] = {"source": found}
        enabled[PLUGIN] = True
        if note:
            changes.append(note)
    for key in ("extraKnownMarketplaces", "enabledPlugins"):
        if not settings[key]:
            settings.pop(key)
    # The plugin's tools are mcp__plugin_repo-memory_repo-memory__*: the rule setup grants covers them.
    settings = attaching._grant(attaching.merge_hooks(settings, attaching.HOOKS, attaching.BY_NAME, True), remove)
    attaching._write_json(shared_path, settings, dry_run, changes, "plugin rollout removed" if remove else
                          f"plugin {PLUGIN} enabled for the team, its marketplace named, its tools allowed (commit this file)")
    if remove:
        return changes
    if local_path.exists():
        local = attaching._grant(attaching.merge_hooks(attaching._load_json(local_path), attaching.HOOKS, attaching.BY_NAME, True), True)
        local["enabledMcpjsonServers"] = [s for s in local.get("enabledMcpjsonServers", []) if s != attaching.NAME]
        if not local["enabledMcpjsonServers"]:
            local.pop("enabledMcpjsonServers")
        attaching._write_json(local_path, local, dry_run, changes, "our hooks and rules taken out (the plugin brings them)")
    if mcp_path.exists():
        mcp = attaching._load_json(mcp_path)
        servers = mcp.get("mcpServers", {})
        if attaching.NAME in servers:
            servers.pop(attaching.NAME)
            if not servers:
                mcp.pop("mcpServers")
            attaching._write_json(mcp_path, mcp, dry_run, changes, "repo-memory removed (the plugin starts it)")
    changes.append("next: commit .claude/settings.json; each teammate's Claude Code installs the plugin when they trust this "
                   "folder (`claude plugin list` shows repo-memory@repo-memory enabled)")
    return changes

