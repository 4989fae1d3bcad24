"""What doctor says of the copies in .claude/skills: each way they are not what `mirror.of` makes them, and copies
git tracks (which no ignore rule hides, so each sync leaves them modified)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory.config import SKILLS_DIR
from repo_memory.core.mirror import TARGET, MirrorReport, _chosen, _copied, _digest, _worth, edited, in_use
from repo_memory.formats import skills
from repo_memory.git.repo import Git
from repo_memory.guards.shellwords import quoted

if TYPE_CHECKING:
    from repo_memory.core.store import Store

EDITED = ("its files differ from what repo-memory wrote there (a hand edit, which git does not keep: the copies are ignored): "
          "sync and the follow after a pull leave it as it is, so it no longer follows its source")
SYNC = "Run `repo-memory sync` (a running server, and the next session's start, do it by themselves)."  # following.follow


def drift(store: Store) -> list[tuple[str, str, str]]:
    """(folder, what is wrong, what to do) of each way .claude/skills is not what `mirror.of` makes it: a copy a person edited
    (kept as it is), a copy of a skill recall no longer serves (Claude Code still loads it), a copy out of date, and
    where copies are in use, a served skill not copied."""
    root, report, base = store.root, MirrorReport(), store.root / TARGET
    names = _chosen(root, report, store.config.mirror_limit, _worth(store), store.skill_changed)
    out = []
    for copy in sorted(base.iterdir()) if base.is_dir() else []:
        name, marker = copy.name, copy / skills.MIRROR_MARKER
        if copy.is_symlink() or not marker.is_file():
            continue
        if edited(copy):
            out.append((f"{TARGET}/{name}", EDITED, f"To keep the edit, move it into {SKILLS_DIR}/{name} (the copy is made from "
                        f"there; commit it to share it); then, or to drop it, delete {TARGET}/{name} and run `repo-memory sync`."))
        elif name in names and _digest(root / SKILLS_DIR / name) != _copied(copy):
            out.append((f"{TARGET}/{name}", "the mirrored copy is out of date with its source", SYNC))
        elif name in report.beyond:
            out.append((f"{TARGET}/{name}", f"a copy past mirror_limit ({store.config.mirror_limit}): Claude Code lists it on "
                                            "every request, while recall serves it anyway", SYNC))
        elif name not in names:
            why = report.withheld.get(name) or f"no longer in {SKILLS_DIR}"
            out.append((f"{TARGET}/{name}", f"a copy of a skill recall no longer serves ({why}): Claude Code still loads it", SYNC))
    if said := tracked(root, store.config.git_dir):
        out.append((f"{TARGET}/", said[0], f"Run {said[1]}"))
    if in_use(root, store.config.state_dir):
        out += [(f"{TARGET}/{name}", f"{SKILLS_DIR}/{name} is served and not copied here, so Claude Code does not "
                 "load it by itself", SYNC) for name in names if not os.path.lexists(base / name)]
    return out


def tracked_note(root: Path, git_dir: Path) -> str:
    """What sync and setup say of generated copies git tracks ('' when none)."""
    said = tracked(root, git_dir)
    return f"note: {said[0]}: run {said[1]}" if said else ""


def tracked(root: Path, git_dir: Path, target: str = TARGET) -> tuple[str, str] | None:
    """(what is wrong, the fix) when git tracks generated copies: an older version left them unignored, a `git add -A` took
    them, and each sync after a skill change leaves them modified (no ignore rule hides a tracked file). Untracking them
    is a commit teammates' clones follow (their next pull deletes the files), so it is the person's to make, not ours."""
    listed = Git(root, git_dir).run("ls-files", "-z", "--", target, check=False).stdout.split("\0") if (root / target).is_dir() else []
    folders = sorted(rel.rsplit("/", 1)[0] for rel in listed  # a copy's marker, right in its folder
                     if rel.endswith(f"/{skills.MIRROR_MARKER}") and rel.count("/") == target.count("/") + 2)
    one = len(folders) == 1
    return (f"git tracks the generated cop{'y' if one else 'ies'} {' '.join(folders)} (committed before repo-memory made git "
            f"ignore {'it' if one else 'them'}), so each sync after a change of {'its' if one else 'their'} skill leaves "
            f"{'it' if one else 'them'} modified", f"`git rm -r --cached {quoted(*folders)}`, then commit: the files stay "
            "here, ignored from then on; teammates' clones drop them at their next pull, and their own sync copies them again."
            ) if folders else None
