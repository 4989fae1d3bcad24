"""What a harness offers its model of a skill by itself, past recall: Codex lists every SKILL.md under .agents/skills
in its prompt, drafts included. A skill recall does not serve (a draft not reviewed yet, a deprecated, invalid or
quarantined one) carries an `agents/openai.yaml` that turns Codex's implicit invocation off, committed with it; once it
is served again the file goes, and the skill's own `agents/` folder, held aside meanwhile as `agents.held/`, comes back.
A person can still name a withheld skill to Codex (`$NAME`): that is their choice, not the model's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from repo_memory.errors import UnsafePathError
from repo_memory.formats import skills
from repo_memory.guards import disk
from repo_memory.guards import paths as guard

AGENTS, HELD, POLICY = "agents", "agents.held", "openai.yaml"
OURS = (b"# repo-memory wrote this file: this skill is not reviewed yet (a draft) or not served (deprecated, invalid or\n"
        b"# quarantined), so Codex leaves it out of the skills it offers its model. `repo-memory accept NAME` takes the\n"
        b"# file away, and puts back the skill's own agents/ folder, kept meanwhile as agents.held/.\n"
        b"policy:\n  allow_implicit_invocation: false\n")


def withheld(root: Path, source: str, name: str) -> str:
    """Why skill `name` of `source` is not served as it is ('' when it is): a draft, a deprecated, invalid or
    quarantined skill reaches no model through us, and must not through a harness that loads skill folders itself."""
    rel = f"{source}/{name}/{skills.SKILL_FILE}"
    try:
        skill = skills.parse(disk.read_safely(root / rel), rel, source)
    except (OSError, UnsafePathError) as exc:
        return f"unreadable ({exc})"
    if not skill.valid:
        return f"invalid: {skill.problems[0].message}"
    if skill.flags:
        return f"quarantined: {skill.flags[0]}"
    if skill.status != "active":
        return f"draft: not reviewed yet (`repo-memory accept {name}`)" if skill.status == "draft" else skill.status
    return ""


def settle(root: Path, source: str, name: str) -> list[str]:
    """Make Codex's view of skill `name` match ours; returns the repository paths changed (to commit with the skill)."""
    folder = guard.inside(root, *source.split("/"), name)
    if folder.is_symlink() or not (folder / skills.SKILL_FILE).is_file():
        return []
    changed = _release(folder) if not withheld(root, source, name) else _withhold(folder)
    return [f"{source}/{name}/{p}" for p in dict.fromkeys(changed)]


def settle_all(root: Path, state_dir: Path, sources: tuple[str, ...]) -> list[str]:
    """`settle` every skill folder of `sources` (a repository whose drafts were written before this, or a status a
    person changed by hand). Generated mirror copies are left alone."""
    with disk.repo_lock(state_dir):
        return [path for source in sources for path in _settle_source(root, source)]


def _settle_source(root: Path, source: str) -> list[str]:
    base, changed = root / source, []
    if not base.is_dir() or base.is_symlink():
        return []
    for folder in sorted(base.iterdir()):
        if folder.is_dir() and not folder.is_symlink() and not (folder / skills.MIRROR_MARKER).exists():
            try:
                changed += settle(root, source, folder.name)
            except (OSError, UnsafePathError):
                continue  # a folder we cannot write: doctor reports what it can of it
    return changed


def unsettled(root: Path, source: str) -> list[tuple[str, str]]:
    """(name, what is wrong) of each skill of `source` whose place in Codex's own list is not what recall serves."""
    base, out = root / source, []
    for folder in sorted(base.iterdir()) if base.is_dir() and not base.is_symlink() else []:
        if folder.is_dir() and not folder.is_symlink() and (folder / skills.SKILL_FILE).is_file() and not (folder / skills.MIRROR_MARKER).exists():
            why, ours = withheld(root, source, folder.name), is_ours(folder)
            if why and not ours:
                out.append((folder.name, f"Codex offers this skill to its model by itself, and recall does not serve it ({why})"))
            elif ours and not why:
                out.append((folder.name, "an active skill kept out of the skills Codex offers its model (agents/openai.yaml)"))
    return out


def is_ours(folder: Path) -> bool:
    """Whether `folder`/agents is exactly the file this module writes, and nothing else."""
    agents = folder / AGENTS
    try:
        return (not agents.is_symlink() and agents.is_dir() and os.listdir(agents) == [POLICY]
                and not (agents / POLICY).is_symlink() and (agents / POLICY).read_bytes() == OURS)
    except OSError:
        return False


def ours_in(folder: Path) -> tuple[Path, ...]:
    """Our file in skill `folder`, if it is there: not the skill's content, so not part of what a person reviews."""
    return (folder / AGENTS / POLICY,) if is_ours(folder) else ()


def _entries(path: Path, rel: str) -> list[str]:
    """The files and links at `path` (a link is one entry, never followed), as paths under `rel`."""
    if path.is_symlink() or not path.is_dir():
        return [rel] if os.path.lexists(path) else []
    return [f"{rel}/{Path(d, f).relative_to(path).as_posix()}" for d, _, files in os.walk(path) for f in files]


def _remove(path: Path) -> None:
    shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()


def _withhold(folder: Path) -> list[str]:
    """Put our policy in place; a skill's own agents/ goes aside to agents.held/ (replacing one held before: that
    one is in the commit that held it)."""
    if is_ours(folder):
        return []
    agents, held = folder / AGENTS, folder / HELD
    changed = []
    if agents.is_dir() and not agents.is_symlink() and not _entries(agents, AGENTS):
        shutil.rmtree(agents)  # empty folders only (our file taken away): nothing to hold, and what is held stays
    if os.path.lexists(agents):
        if os.path.lexists(held):
            changed += _entries(held, HELD)
            _remove(held)
        changed += _entries(agents, AGENTS)
        os.rename(agents, held)  # renames a link itself, never what it points to
        changed += _entries(held, HELD)
    disk.write_atomic(guard.inside(folder, AGENTS, POLICY), OURS)
    return [*changed, f"{AGENTS}/{POLICY}"]


def _release(folder: Path) -> list[str]:
    """Take our policy away and put back what it held aside; a skill's own agents/ in place is left alone."""
    agents, held = folder / AGENTS, folder / HELD
    changed = []
    if is_ours(folder):
        _remove(agents)
        changed.append(f"{AGENTS}/{POLICY}")
    if os.path.lexists(held) and not os.path.lexists(agents):
        changed += _entries(held, HELD)
        os.rename(held, agents)
        changed += _entries(agents, AGENTS)
    return changed
