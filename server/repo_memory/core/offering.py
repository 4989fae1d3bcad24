"""What a harness offers its model of a skill by itself, past recall: Codex lists every SKILL.md under .agents/skills
in its prompt, Claude Code every one under .claude/skills, drafts included. A skill recall does not serve (a draft not
reviewed yet, a deprecated, invalid or quarantined one) is kept out of those lists until it is served again:
- in .agents/skills by an `agents/openai.yaml` turning Codex's implicit invocation off (core/codex_policy.py),
  committed with the skill;
- in .claude/skills (a person's own folder; our mirror copies are active skills only) by Claude Code's
  `disable-model-invocation: true`, with `metadata.withheld: true` saying it is ours to take away; a person's own
  `disable-model-invocation` stays. Left for the person to commit, as everything we change there.
A person can still name a withheld skill (`$NAME` in Codex, `/NAME` in Claude Code): their choice, not the model's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from repo_memory.config import SKILLS_DIR
from repo_memory.core import codex_policy
from repo_memory.errors import InvalidRecordError, UnsafePathError
from repo_memory.formats import frontmatter, nesting, skills
from repo_memory.guards import disk
from repo_memory.guards import paths as guard
from repo_memory.guards.shellwords import quoted

CLAUDE = ".claude/skills"  # Claude Code's own folder (core/mirror.py TARGET)
HIDDEN, OURS_TOO = ("disable-model-invocation",), ("metadata", "withheld")
WAS = "was "  # metadata.withheld: true when the person had no disable-model-invocation, else "was <their value, JSON>"


def withheld(root: Path, source: str, name: str) -> str:
    """Why skill `name` of `source` is not served as it is ('' when it is): a draft, a deprecated, invalid or
    quarantined skill reaches no model through us, and must not through a harness that loads skill folders itself."""
    rel = f"{source}/{name}/{skills.SKILL_FILE}"
    try:
        skill = skills.parse(disk.read_safely(root / rel), rel, source)
    except (OSError, UnsafePathError) as exc:
        return f"unreadable ({exc})"
    return _why(name, skill.problems[0].message if skill.problems else "", skill.flags[0] if skill.flags else "", skill.status)


def _why(name: str, problem: str, flag: str, status: str) -> str:
    if problem:
        return f"invalid: {problem}"
    if flag:
        return f"quarantined: {flag}"
    if status != "active":
        return f"draft: not reviewed yet (`repo-memory skill show {quoted(name)}`, then the accept line it prints)" if status == "draft" else status
    return ""


class Indexed(NamedTuple):
    """A skill file as the index last read it."""

    why: str  # `withheld`: why it is not served, '' when it is
    mtime_ns: int
    sha256: str  # of the SKILL.md's bytes


def indexed(rows: list[dict[str, Any]]) -> dict[str, Indexed]:
    """{name: Indexed} of each skill of the index's `rows` of one source (Store.skill_states): what the files said when
    the index last read them, without reading 10k files again (a second, at every change of one)."""
    out = {}
    for row in rows:
        problem = json.loads(row["problems"])[0]["message"] if row["problems"] else ""
        name = row["path"].rsplit("/", 2)[-2]
        out[name] = Indexed(_why(name, problem, json.loads(row["flags"])[0] if row["flags"] else "", row["status"]), row["mtime_ns"], row["sha256"])
    return out


def settle(root: Path, source: str, name: str, why: str | None = None) -> list[str]:
    """Make the view of skill `name` of the harness that reads `source` itself match ours (`why`: its `withheld`, when
    the index says it already); returns the repository paths changed (to commit with the skill)."""
    folder = guard.inside(root, *source.split("/"), name)
    if folder.is_symlink() or not (folder / skills.SKILL_FILE).is_file() or (folder / skills.MIRROR_MARKER).exists():
        return []
    served = not (withheld(root, source, name) if why is None else why)
    try:
        if source == CLAUDE:
            changed = [skills.SKILL_FILE] if _claude(folder / skills.SKILL_FILE, name, hide=not served) else []
        elif source == SKILLS_DIR:  # the folder Codex reads
            changed = codex_policy.release(folder) if served else codex_policy.withhold(folder)
        else:
            return []
    except (InvalidRecordError, UnicodeDecodeError):
        return []  # a file that does not parse cannot be edited in place: doctor names what is wrong with it
    return [f"{source}/{name}/{p}" for p in dict.fromkeys(changed)]


def _claude(path: Path, name: str, hide: bool) -> bool:
    """Set (or take away) Claude Code's `disable-model-invocation: true` on the SKILL.md at `path`; whether it changed."""
    text = disk.read_safely(path).decode("utf-8")
    meta = frontmatter.load(frontmatter.split(text, str(path)).frontmatter, str(path))
    mark = _mark(meta)
    ours = mark is not None
    if hide and not ours and meta.get(HIDDEN[0]) is not True:  # a value of the person's is kept to put back
        text = skills.edit(text, name, {HIDDEN: True, OURS_TOO: f"{WAS}{json.dumps(meta[HIDDEN[0]])}" if HIDDEN[0] in meta else True})
    elif not hide and ours and isinstance(mark, str) and (was := _json(mark.removeprefix(WAS))) is not None:
        text = skills.edit(text, name, {HIDDEN: was}, dropped=[OURS_TOO])
    elif not hide and ours:
        text = skills.edit(text, name, {}, dropped=[HIDDEN, OURS_TOO])
    else:
        return False
    disk.write_atomic(path, text.encode("utf-8"))
    return True


def _mark(meta: dict) -> object:
    """Our `metadata.withheld` in a SKILL.md's frontmatter (True, or "was <value>"), or None when there is none."""
    mark = meta["metadata"].get("withheld") if isinstance(meta.get("metadata"), dict) else None
    return mark if mark is True or isinstance(mark, str) and mark.startswith(WAS) else None


def folders(root: Path, source: str) -> list[Path]:
    """The skill folders of `source` we may write in: real folders, not links, not generated mirror copies."""
    base = root / source
    if not base.is_dir() or base.is_symlink():
        return []
    return [f for f in sorted(base.iterdir()) if f.is_dir() and not f.is_symlink() and not (f / skills.MIRROR_MARKER).exists()]


def _json(text: str) -> object:
    try:
        return nesting.loads(text)
    except ValueError:  # a mark someone edited: the key goes, as when there was none
        return None


def settle_all(root: Path, state_dir: Path, sources: tuple[str, ...]) -> list[str]:
    """`settle` every skill folder of `sources` (a repository whose drafts were written before this, or a status a
    person changed by hand). Generated mirror copies are left alone."""
    with disk.repo_lock(state_dir):
        return [path for source in sources for path in _settle_source(root, source)]


def _settle_source(root: Path, source: str) -> list[str]:
    changed: list[str] = []
    for folder in folders(root, source):
        try:
            changed += settle(root, source, folder.name)
        except (OSError, UnsafePathError, InvalidRecordError, UnicodeDecodeError):
            continue  # a folder we cannot write: doctor reports what it can of it
    return changed


def unsettled(root: Path, source: str) -> list[tuple[str, str]]:
    """(name, what is wrong) of each skill of `source` whose place in its harness's own list is not what recall serves."""
    if source not in (SKILLS_DIR, CLAUDE):
        return []
    base, out = root / source, []
    harness = "Claude Code" if source == CLAUDE else "Codex"
    if (base / skills.SKILL_FILE).is_file():
        out.append((skills.SKILL_FILE, "a SKILL.md right in the skills folder: Gemini CLI loads it as a skill by itself, and "
                                       "repo-memory reads no skill there, so never reviews it (move it into a folder of its own)"))
    for folder in sorted(base.iterdir()) if base.is_dir() and not base.is_symlink() else []:
        if folder.is_symlink() and source == SKILLS_DIR and (folder / skills.SKILL_FILE).is_file():
            if (why := withheld(root, source, folder.name)) and codex_policy.state(folder) not in ("ours", "marked", "off"):
                out.append((folder.name, f"Codex offers this skill by itself through a link, though it is no skill to follow ({why}); "
                                         "repo-memory writes nothing through links: make it a real folder"))
        elif folder.is_dir() and not folder.is_symlink() and (folder / skills.SKILL_FILE).is_file() and not (folder / skills.MIRROR_MARKER).exists():
            why, kept_out = withheld(root, source, folder.name), _kept_out(folder, source)
            if why and not kept_out and not why.startswith(("invalid", "unreadable")):
                out.append((folder.name, f"{harness} offers this skill to its model by itself, though it is no skill to follow ({why})"))
            elif kept_out == "ours" and not why:
                out.append((folder.name, f"an active skill kept out of the skills {harness} offers its model"))
    return out


def kept_out(root: Path, sources: tuple[str, ...]) -> list[str]:
    """The skill folders (repository paths) our mark keeps out of what Codex or Claude Code offer their models."""
    return [f"{source}/{folder.name}" for source in sources if source in (SKILLS_DIR, CLAUDE)
            for folder in folders(root, source) if _kept_out(folder, source) == "ours"]


def _kept_out(folder: Path, source: str) -> str:
    """'ours' when our mark keeps the skill in `folder` from its harness's list, 'theirs' when the person's does, else ''."""
    if source != CLAUDE:
        return {"ours": "ours", "marked": "ours", "off": "theirs"}.get(codex_policy.state(folder), "")
    try:
        meta = frontmatter.load(frontmatter.split(disk.read_safely(folder / skills.SKILL_FILE).decode("utf-8"), "").frontmatter, "")
    except (OSError, UnsafePathError, InvalidRecordError, UnicodeDecodeError):
        return ""
    if _mark(meta) is not None:
        return "ours"
    return "theirs" if meta.get(HIDDEN[0]) is True else ""
