"""What a harness offers its model of a skill by itself, past recall: Codex lists every SKILL.md under .agents/skills
in its prompt, Claude Code every one under .claude/skills, drafts included. A skill recall does not serve (a draft not
reviewed yet, a deprecated, invalid or quarantined one) is kept out of those lists until it is served again:
- in .agents/skills (and .codex/skills) by an `agents/openai.yaml` turning Codex's implicit invocation off, committed
  with the skill; the skill's own `agents/` folder is held aside meanwhile as `agents.held/`, and comes back;
- in .claude/skills (a person's own folder; our mirror copies are active skills only) by Claude Code's
  `disable-model-invocation: true`, with `metadata.withheld: true` saying it is ours to take away; a person's own
  `disable-model-invocation` stays.
A person can still name a withheld skill (`$NAME` in Codex, `/NAME` in Claude Code): their choice, not the model's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from repo_memory.errors import InvalidRecordError, UnsafePathError
from repo_memory.formats import frontmatter, skills
from repo_memory.guards import disk
from repo_memory.guards import paths as guard

AGENTS, HELD, POLICY = "agents", "agents.held", "openai.yaml"
CLAUDE = ".claude/skills"  # Claude Code's own folder (core/mirror.py TARGET)
HIDDEN, OURS_TOO = ("disable-model-invocation",), ("metadata", "withheld")
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
    if folder.is_symlink() or not (folder / skills.SKILL_FILE).is_file() or (folder / skills.MIRROR_MARKER).exists():
        return []
    served = not withheld(root, source, name)
    if source == CLAUDE:
        try:
            changed = [skills.SKILL_FILE] if _claude(folder / skills.SKILL_FILE, name, hide=not served) else []
        except (InvalidRecordError, UnicodeDecodeError):
            return []  # a file that does not parse cannot be edited in place: doctor names what is wrong with it
    else:
        changed = _release(folder) if served else _withhold(folder)
    return [f"{source}/{name}/{p}" for p in dict.fromkeys(changed)]


def _claude(path: Path, name: str, hide: bool) -> bool:
    """Set (or take away) Claude Code's `disable-model-invocation: true` on the SKILL.md at `path`; whether it changed."""
    text = disk.read_safely(path).decode("utf-8")
    meta = frontmatter.load(frontmatter.split(text, str(path)).frontmatter, str(path))
    ours = isinstance(meta.get("metadata"), dict) and meta["metadata"].get("withheld") is True
    if hide and not ours and meta.get("disable-model-invocation") is not True:
        text = skills.edit(text, name, {HIDDEN: True, OURS_TOO: True})
    elif not hide and ours:
        text = skills.edit(text, name, {}, dropped=[HIDDEN, OURS_TOO])
    else:
        return False
    disk.write_atomic(path, text.encode("utf-8"))
    return True


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
            except (OSError, UnsafePathError, InvalidRecordError, UnicodeDecodeError):
                continue  # a folder we cannot write: doctor reports what it can of it
    return changed


def unsettled(root: Path, source: str) -> list[tuple[str, str]]:
    """(name, what is wrong) of each skill of `source` whose place in its harness's own list is not what recall serves."""
    base, out = root / source, []
    harness = "Claude Code" if source == CLAUDE else "Codex"
    for folder in sorted(base.iterdir()) if base.is_dir() and not base.is_symlink() else []:
        if folder.is_dir() and not folder.is_symlink() and (folder / skills.SKILL_FILE).is_file() and not (folder / skills.MIRROR_MARKER).exists():
            why, kept_out = withheld(root, source, folder.name), _kept_out(folder, source)
            if why and not kept_out and not why.startswith(("invalid", "unreadable")):
                out.append((folder.name, f"{harness} offers this skill to its model by itself, and recall does not serve it ({why})"))
            elif kept_out == "ours" and not why:
                out.append((folder.name, f"an active skill kept out of the skills {harness} offers its model"))
    return out


def _kept_out(folder: Path, source: str) -> str:
    """'ours' when our mark keeps the skill in `folder` from its harness's list, 'theirs' when the person's does, else ''."""
    if source != CLAUDE:
        return "ours" if is_ours(folder) else ""
    try:
        meta = frontmatter.load(frontmatter.split(disk.read_safely(folder / skills.SKILL_FILE).decode("utf-8"), "").frontmatter, "")
    except (OSError, UnsafePathError, InvalidRecordError, UnicodeDecodeError):
        return ""
    if isinstance(meta.get("metadata"), dict) and meta["metadata"].get("withheld") is True:
        return "ours"
    return "theirs" if meta.get("disable-model-invocation") is True else ""


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
