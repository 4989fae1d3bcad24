"""What `setup claude-code` writes for this person beyond its hooks and rules, and taking exactly that back: the
approval of the project's repo-memory server in `.claude/settings.local.json`, the line in .git/info/exclude that keeps
that file out of git, and Claude Code's trust of the folder in ~/.claude.json. Setup marks what it added (a comment over
the exclude line; a note in this checkout's state folder for the approval it wrote and the trust it stored), so an undo
takes back only that: an approval the person gave, a line they wrote, or a folder they trusted themselves, stays.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repo_memory import layout
from repo_memory.config import Config
from repo_memory.git import clone
from repo_memory.git import repo as gitrepo
from repo_memory.git.repo import Git
from repo_memory.guards import disk
from repo_memory.shells import foreign, settings_text
from repo_memory.guards.shellwords import quoted

LOCAL_FILE = ".claude/settings.local.json"
EXCLUDED = f"/{LOCAL_FILE}"
MARK = "# added by `repo-memory setup claude-code` (your own settings stay out of git); `repo-memory uninstall` takes it out"
TRUST_NOTE = "claude-trust.json"  # in the checkout's state folder: the trust `setup claude-code --trust` stored
APPROVAL_NOTE = "claude-approval.json"  # in the same folder: setup wrote the approval (the person had given none)
NAME = "repo-memory"


def approve(root: Path, settings: dict[str, Any], remove: bool, dry_run: bool) -> bool:
    """Approve the project's repo-memory server in `settings` (the personal file's), so Claude Code starts it without
    asking, noting that setup wrote it; with `remove`, take out the approval only when setup's note says it wrote it
    (the person's own stays). Whether `settings` now approves it."""
    note = Config.load(root).state_dir / APPROVAL_NOTE
    approved = settings.get("enabledMcpjsonServers", [])
    wrote = note.is_file()
    if remove and wrote or not remove and NAME not in approved:
        approved = [s for s in approved if s != NAME] + ([] if remove else [NAME])
        if not dry_run:
            if remove:
                note.unlink()
            else:
                disk.write_atomic(note, b'{"approved": "repo-memory"}\n')
    settings["enabledMcpjsonServers"] = approved
    if not approved:
        settings.pop("enabledMcpjsonServers")
    return NAME in approved


def ignored(root: Path, path: Path, dry_run: bool) -> list[str]:
    """Make sure git ignores `path` (personal settings with this machine's paths): a marked line in .git/info/exclude."""
    relative = path.relative_to(root).as_posix()
    top, git_dir, common_dir = gitrepo.discover(root)
    git = Git(top, git_dir)
    if git.run("check-ignore", "-q", "--no-index", relative, check=False).returncode == 0:
        return []
    if git.run("ls-files", "--error-unmatch", relative, check=False).returncode == 0:
        return [f"note: git tracks {relative}, which holds this machine's paths (and Claude Code ignores the permissions in "
                f"a tracked one): `git rm --cached {quoted(relative)}` and commit"]
    exclude = common_dir / "info" / "exclude"  # git reads it there only, also in a linked worktree
    if not dry_run:
        layout.add_lines(exclude, [MARK, f"/{relative}"])
    return [f"{exclude}: git now ignores /{relative} (your own file, in this clone only)" + (" (dry run, not written)" if dry_run else "")]


def _marked(lines: list[str]) -> int | None:
    """Where the exclude line setup added starts in `lines` (its mark, then the line), None when there is none."""
    bare = [line.rstrip("\r\n") for line in lines]
    return next((i for i in range(len(bare) - 1) if bare[i] == MARK and bare[i + 1] == EXCLUDED), None)


def unignore(root: Path, dry_run: bool, left: bool, holds: Callable[[Path], bool]) -> list[str]:
    """Take out the exclude line setup added (the one under its mark) once no other checkout of the repository `holds`
    setup's personal settings file (the line, in the common git dir, keeps them all out of git); a line the person
    wrote stays. `left`: whether this checkout's file keeps anything (the person's own) once setup's entries are out."""
    with contextlib.suppress(OSError):
        top, _, common_dir = gitrepo.discover(root)
        exclude = common_dir / "info" / "exclude"
        lines = exclude.read_text(encoding="utf-8").splitlines(keepends=True)
        if (at := _marked(lines)) is None:
            return []
        if needing := [str(checkout) for checkout in clone.other_checkouts(top) if holds(checkout)]:
            return [f"{exclude}: kept the line {EXCLUDED} that setup added: setup's {LOCAL_FILE} in {', '.join(needing)} "
                    "needs it (it goes with the last checkout's `repo-memory setup claude-code --remove`)"]
        if not dry_run:
            disk.write_atomic(exclude, "".join(lines[:at] + lines[at + 2:]).encode())
        yours = " (what is left in that file is yours: git sees it again)" if left else ""
        return [f"{exclude}: removed the line {EXCLUDED} that setup added{yours}" + (" (dry run, not written)" if dry_run else "")]
    return []


def approved_by_setup(checkout: Path) -> bool:
    """Whether setup wrote the approval in `checkout`'s personal settings file (its note says so)."""
    with contextlib.suppress(OSError, ValueError):
        return (Config.load(checkout).state_dir / APPROVAL_NOTE).is_file()
    return False


def claude_state(path: Path) -> dict[str, Any] | None:
    """The JSON object in ~/.claude.json ({} when there is none), None when it holds anything else."""
    try:
        state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _save(path: Path, before: str | None, state: dict[str, Any]) -> None:
    """Write `state` to `path` changing only what changed (Claude Code's own layout kept, a file on one line too: the
    folder's trust is short); nothing left removes the file."""
    if not state:
        path.unlink(missing_ok=True)
        return
    after = settings_text.edited(before, state, 2, one_line=True) if before else None
    disk.write_atomic(path, (after or json.dumps(state, indent=2, ensure_ascii=False) + "\n").encode())


# What `claude mcp list` shows for repo-memory in a folder not trusted yet: a project's .mcp.json server waits for the
# person's approval; since Claude Code 2.1.337 a user-scope or a plugin's server is listed but not started there.
# A team's plugin rollout (.claude/settings.json) is installed only then: nothing of repo-memory is listed before.
PENDING = "shows repo-memory as 'Pending approval'"
UNCHECKED = "(2.1.337 and later) lists repo-memory as 'Not checked (folder not trusted)' in `claude mcp list`"
UNINSTALLED = "installs the team's plugin (and lists repo-memory in `claude mcp list`) only once you trust this folder:"


def trust_folder(root: Path, home: Path, trust: bool, dry_run: bool, until: str = PENDING,
                 again: str = "repo-memory setup claude-code") -> list[str]:
    """Claude Code starts a project's .mcp.json servers interactively (and `claude mcp list` reports them Connected,
    or checks a user-scope or plugin's server at all) only in a folder whose trust dialog was answered:
    `projects[<folder>].hasTrustDialogAccepted` in ~/.claude.json. `until`: what it shows before, for the note, which
    names `again` with --trust as the command that stores the answer."""
    path = home / ".claude.json"
    state = claude_state(path)
    if state is None:
        return [f"note: {path} is not valid JSON; Claude Code will ask whether you trust this folder the first time you run `claude` here"]
    projects = state.get("projects")
    trusted = any(isinstance(p, dict) and p.get("hasTrustDialogAccepted") and (root == Path(k) or Path(k) in root.parents)
                  for k, p in (projects if isinstance(projects, dict) else {}).items())
    if trusted:
        return []
    if not trust:
        until = until if until.endswith(":") else f"{until} until you trust this folder:"
        return [f"note: Claude Code {until} run `claude` here once and answer 'Yes, I trust this folder', or run "
                f"`{again} --trust` to store that answer for you."]
    if found := foreign.committed(root, "claude-code"):
        return [foreign.withheld(root, "claude-code", found)]
    if not dry_run:
        before = path.read_text(encoding="utf-8") if path.exists() else None
        entry = state.setdefault("projects", {}).setdefault(str(root), {})
        was = {"was": entry["hasTrustDialogAccepted"]} if "hasTrustDialogAccepted" in entry else {}  # a "no" the person gave
        entry["hasTrustDialogAccepted"] = True
        _save(path, before, state)
        note = Config.load(root).state_dir / TRUST_NOTE
        disk.write_atomic(note, (json.dumps({"file": str(path), "folder": str(root), **was}, indent=2) + "\n").encode())
    return [f"{path}: trusted {root}, as answering Claude Code's 'Do you trust the files in this folder?' with yes stores it"
            + (" (dry run, not written)" if dry_run else "")]


def untrust_folder(root: Path, dry_run: bool) -> list[str]:
    """Take back the trust `trust_folder` stored (its note names the file and the folder, where the checkout was then):
    the key it set goes back to the answer it replaced (`false`), or goes, and the folder's entry (and the file) when
    nothing else is left in it. A trust the person gave stays: setup stored none, so there is no note."""
    note = Config.load(root).state_dir / TRUST_NOTE
    try:
        stored = json.loads(note.read_text(encoding="utf-8"))
        path, folder = Path(stored["file"]), str(stored["folder"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    state = claude_state(path) or {}
    projects: dict[str, Any] = state["projects"] if isinstance(state.get("projects"), dict) else {}
    entry: dict[str, Any] = projects[folder] if isinstance(projects.get(folder), dict) else {}
    taken = entry.get("hasTrustDialogAccepted") is True  # else already taken back, by hand or in Claude Code
    if not dry_run:
        if taken:
            before = path.read_text(encoding="utf-8")
            if "was" in stored:
                entry["hasTrustDialogAccepted"] = stored["was"]
            else:
                del entry["hasTrustDialogAccepted"]
            if not entry:
                del projects[folder]
            if not projects:
                del state["projects"]
            _save(path, before, state)
        note.unlink(missing_ok=True)
    return [f"{path}: took back the trust of {folder} that `setup claude-code --trust` stored (`claude` asks again there)"
            + (" (dry run, not written)" if dry_run else "")] if taken else []


def left_behind(root: Path) -> list[str]:
    """What uninstall leaves of what setup may have written: an exclude line without setup's mark (an older setup's,
    or the person's own). The marked one is not left: uninstall takes it out (a dry run only says so)."""
    with contextlib.suppress(OSError):
        exclude = gitrepo.discover(root)[2] / "info" / "exclude"
        lines = exclude.read_text(encoding="utf-8").splitlines(keepends=True)
        if (at := _marked(lines)) is not None:
            del lines[at:at + 2]
        if EXCLUDED in (line.rstrip("\r\n") for line in lines):
            return [f"the line {EXCLUDED} in {exclude} (no mark says setup added it: yours, or an older setup's; it keeps "
                    "that file, your own settings, out of git)"]
    return []
