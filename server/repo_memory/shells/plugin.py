"""The repo-memory Claude Code plugin (plugin/, offered by .claude-plugin/): whether it serves a clone, and taking it out.

Claude Code enables a plugin by `enabledPlugins` in a settings file: the user's (~/.claude/settings.json, `claude
plugin install`'s default scope), the project's (.claude/settings.json, a team file) or this clone's own
(.claude/settings.local.json, `--scope local`); the most specific file naming it decides. An enabled plugin brings
the server and the hooks whatever setup wrote, so an undo that leaves it has not detached repo-memory.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from repo_memory.formats import nesting
from repo_memory.shells import personal
from repo_memory.shells.teamfiles import NAME

PLUGIN = f"{NAME}@{NAME}"  # the Claude Code plugin, from the marketplace of the same name (.claude-plugin/)


def settings_files(root: Path, claude_dir: Path) -> tuple[tuple[str, Path], ...]:
    """(scope, file) of each settings file that can enable a plugin for `root`, the most specific first."""
    return (("local", root / personal.LOCAL_FILE), ("project", root / ".claude" / "settings.json"), ("user", claude_dir / "settings.json"))


def enablings(root: Path, claude_dir: Path) -> list[tuple[str, Path]]:
    """(scope, file) of every settings file enabling the plugin in `root`, the most specific first, up to one that
    disables it there: each must go before the plugin stops serving `root`."""
    found = []
    for scope, path in settings_files(root, claude_dir):
        enabled = _enabled(path)
        if PLUGIN in enabled:
            if enabled[PLUGIN] is not True:
                break
            found.append((scope, path))
    return found


def enabling(root: Path, claude_dir: Path) -> tuple[str, Path] | None:
    """(scope, file) of the settings file that enables the plugin in `root` (None when none does)."""
    found = enablings(root, claude_dir)
    return found[0] if found else None


def _enabled(path: Path) -> dict[str, object]:
    """The `enabledPlugins` of the settings file at `path` ({} when it has none or cannot be read)."""
    try:
        enabled = nesting.loads(path.read_text(encoding="utf-8")).get("enabledPlugins")
    except (OSError, ValueError, AttributeError):
        return {}
    return enabled if isinstance(enabled, dict) else {}


def plugin_enabled(root: Path, claude_dir: Path) -> Path | None:
    """The settings file that enables the repo-memory plugin in `root` (None when none does)."""
    found = enabling(root, claude_dir)
    return found[1] if found else None


def removal(scope: str) -> str:
    """The command that stops the plugin enabled at `scope` from serving (a team file's: only disabled there, to commit)."""
    if scope == "project":
        return f"`claude plugin disable {PLUGIN} --scope project`, then commit .claude/settings.json (the team's file)"
    return f"`claude plugin uninstall {PLUGIN} --scope {scope}`" + (" in this folder" if scope == "local" else "")


def serving(root: Path, claude_dir: Path) -> list[str]:
    """How uninstall names the plugin at each scope that still enables it for `root`, with the command that removes it."""
    return [f"the Claude Code plugin {PLUGIN}, enabled in {path} ({removal(scope)})" for scope, path in enablings(root, claude_dir)]


def uninstall_user_scope(root: Path, claude_dir: Path, dry_run: bool) -> list[str]:
    """Uninstall the plugin when the user's settings enable it (it serves every repository, whatever a project or clone
    says), as `--global` asks; one enabled only for this project or clone is named by uninstall's last line instead."""
    if _enabled(claude_dir / "settings.json").get(PLUGIN) is not True:
        return []
    args = ["claude", "plugin", "uninstall", PLUGIN, "--scope", "user"]
    if dry_run or not shutil.which("claude"):
        return [f"{'would run' if dry_run else 'run this to remove the plugin from every project:'} `{' '.join(args)}`"]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd=root)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [f"could not run `{' '.join(args)}` ({exc}): run it yourself"]
    return [f"ran `{' '.join(args)}`: {(done.stdout or done.stderr).strip()}"]
