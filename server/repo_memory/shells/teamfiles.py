"""The files a team commits (`.mcp.json`, `.claude/settings.json`, `.codex/hooks.json`, `.gemini/settings.json`) and what an undo does to them.

Setup writes repo-memory into them by name. An undo (`setup … --remove`, `uninstall`) leaves those git holds with
repo-memory in them to the team, as teammates get it from there, unless asked (`--team`); from the rest (git holds no
copy of them) it takes out only what setup writes, exactly: an entry the person wrote stays, as git could not give it
back.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from repo_memory.errors import WorkspaceError
from repo_memory.git import repo as gitrepo, status
from repo_memory.git.repo import Git
from repo_memory.guards.shellwords import quoted

NAME = "repo-memory"
TEAM_FILES = (".mcp.json", ".claude/settings.json", ".codex/hooks.json", ".gemini/settings.json")  # what a team commits; setup edits them


@dataclass(frozen=True)
class Undo:
    """Which team files an undo edits: those of `files` not `kept` (git holds them with repo-memory in them), and with
    `exact` only what setup writes exactly; `again` is the command that, given --team, takes out what it leaves."""

    files: tuple[str, ...] = TEAM_FILES
    kept: tuple[str, ...] = ()
    exact: bool = False
    again: str = "repo-memory uninstall"

    @classmethod
    def of(cls, root: Path, files: tuple[str, ...], team: bool, again: str) -> Undo:
        """The undo of `files` in `root`: with `team`, of everything of repo-memory's in them, for the whole team."""
        return cls(files, () if team else tuple(shared_with_team(root, files)), not team, again)

    def edits(self, name: str) -> bool:
        return name in self.files and name not in self.kept

    def exactly(self, name: str) -> bool:
        return self.exact and self.edits(name)

    def notes(self, root: Path, changes: list[str], dry_run: bool) -> list[str]:
        """What the undo (its `changes`) left to the team, took from team files no teammate has, and, with --team, what
        to commit."""
        kept = [name for name in self.kept if (root / name).is_file() and NAME in (root / name).read_text(errors="replace")]
        out = [f"kept {', '.join(kept)}: your team's files (teammates keep repo-memory); `{self.again} --team` removes it there"
               ] if kept else []
        written = [name for name in self.files if self.edits(name) and any(
            change.startswith(f"{root / name}: ") and not change.startswith((f"{root / name}: kept", f"{root / name}: already"))
            for change in changes)]
        if written and self.exact:
            out.append(f"{'would take' if dry_run else 'took'} repo-memory out of {', '.join(written)} too: git holds no copy "
                       "with it in (setup wrote it, nobody committed it), so no teammate has it")
        elif not self.exact and not dry_run and (waiting := quoted(*uncommitted(root, written))):
            out.append(f"Commit the team files it changed (git add {waiting} && git commit) to detach repo-memory for everyone.")
        return out


def kept(path: Path, what: str, again: str) -> str:
    """What an undo says of repo-memory's entries it leaves in an uncommitted team file: not setup's, so the person's."""
    return f"{path}: kept {what}: not what setup writes, so yours (git holds no copy to give back); `{again} --team` takes it out"


def uncommitted(root: Path, names: Collection[str]) -> list[str]:
    """Those of `names` (relative to `root`) that git does not hold as they are: untracked, changed or deleted."""
    top, git_dir, _ = gitrepo.discover(root)
    paths = [(root / name).relative_to(top).as_posix() for name in names]
    changed, deleted, conflicted = status.worktree(Git(top, git_dir), tuple(paths)) if paths else ([], [], [])
    listed = {*changed, *deleted, *(path for path, _ in conflicted)}  # untracked, changed and deleted files alike
    return [path for path in paths if path in listed]


def shared_with_team(root: Path, names: Collection[str] = TEAM_FILES) -> list[str]:
    """Those of `names` git holds with repo-memory in them (committed, or staged for a commit): teammates get it from
    there. In a team file git does not hold so (untracked, or held without repo-memory), what setup wrote is this
    clone's only, and a plain undo takes it back."""
    top, git_dir, _ = gitrepo.discover(root)
    held = [(name, Git(top, git_dir).run("show", f":{(root / name).relative_to(top).as_posix()}", check=False)) for name in names]
    return [name for name, shown in held if shown.returncode == 0 and NAME in shown.stdout]


def held(path: Path) -> bytes | None:
    """The bytes git would check `path` out as from its index (None when it holds none, or `path` is in no repository):
    what an undo gives back when what is left of a file is just that."""
    try:
        top, _, _ = gitrepo.discover(path.parent)
    except WorkspaceError:
        return None
    return gitrepo.checked_out(top, path.relative_to(top).as_posix())


def commit_note(root: Path, names: list[str]) -> list[str]:
    """A note saying to commit the team files among `names` (relative to `root`) that git does not hold as they are."""
    waiting = uncommitted(root, [name for name in names if (root / name).is_file()])
    return [f"note: commit {', '.join(waiting)} (`git add {quoted(*waiting)} && git commit`): a team file, so teammates' "
            "clones get repo-memory too"] if waiting else []
