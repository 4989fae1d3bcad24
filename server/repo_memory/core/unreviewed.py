"""What a draft skill changes against the version a person last accepted, file by file: SKILL.md and every file and
link beside it that the review sha counts (core/skill_files.py), so that the person accepting the sha `skill show`
prints has seen each change it takes — an agent's edit of a script beside SKILL.md most of all."""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path

from repo_memory.core import codex_policy, reviewing, skill_files
from repo_memory.formats import skills
from repo_memory.git import history
from repo_memory.git.committed import Committed
from repo_memory.git.repo import Git
from repo_memory.guards.terminal import visible

EXECUTABLE, FILE = 0o100755, 0o100644


@dataclass(frozen=True)
class FileChange:
    """One file of the skill folder that differs from the accepted version: `change` is added, changed, deleted or
    mode (its content the same); `diff` a unified diff of text, or a binary file's size and sha256 (or a link's target)."""

    path: str
    change: str
    diff: str


@dataclass(frozen=True)
class Unreviewed:
    """A draft's changes since `accepted`, the commit holding the version a person last accepted ('' when none was)."""

    accepted: str
    changes: tuple[FileChange, ...]


def against(git: Git, committed: Committed, state_dir: Path, path: Path, rel: str) -> Unreviewed:
    """What skill folder `path.parent` (its SKILL.md `rel`) holds now that the version a person last accepted did not:
    against nothing when none was, every file then added (SKILL.md, which `skill show` prints, left out)."""
    found = reviewing.last_accepted(git, rel, state_dir)
    folder, skill = path.parent, rel.rsplit("/", 1)[0]
    now = {entry.rel: entry for entry in skill_files.walk(folder)}
    if found is None:
        return Unreviewed("", tuple(_added(entry) for rel_, entry in now.items() if rel_ != skills.SKILL_FILE))
    target, links_kept = found[2], git.links_kept()
    then = {full[len(skill) + 1:]: mode for full, mode in git.modes_at(target, (skill,)).items()}
    if codex_policy.ours_in(folder):  # our file in the draft, which offering.settle writes: no content a person reviews
        then.pop(codex_policy.FILE, None)
    changes = []
    for name in sorted(set(then) | set(now)):
        entry, full = now.get(name), f"{skill}/{name}"
        held = git.entry(target, full) if name in then else None
        old = history.checked_out(git, full, held[0]) if held else None
        if entry is None or old is None:
            if entry is not None:
                changes.append(_added(entry))
            else:
                gone = _diff(name, old or b"", b"", then.get(name) == skill_files.LINK)
                changes.append(FileChange(visible(name, lines=False), "deleted", gone))
            continue
        mode = "" if entry.link or then[name] not in (FILE, EXECUTABLE) or _mode(entry) == then[name] else \
            f"mode {then[name]:o} -> {_mode(entry):o}\n"  # a `chmod +x` is a change of kind too (same_kind)
        if entry.data() != old and not committed.file(full, entry.data(), target) or not mode and not skill_files.same_kind(
                entry, then[name], links_kept):
            if name != skills.SKILL_FILE or not _status_only(folder.name, entry.data(), old):
                changes.append(FileChange(entry.shown, "changed", mode + _diff(name, old, entry.data(), entry.link)))
        elif mode:
            changes.append(FileChange(entry.shown, "mode", mode))
    return Unreviewed(target, tuple(changes))


def _status_only(name: str, draft: bytes, accepted: bytes) -> bool:
    """Whether SKILL.md `draft` is `accepted` but for its review status (what accept sets back)."""
    try:
        return skills.edit(draft.decode("utf-8"), name, {("metadata", "status"): "active"}).encode("utf-8") == accepted
    except (UnicodeDecodeError, ValueError):
        return False


def _added(entry: skill_files.Entry) -> FileChange:
    return FileChange(entry.shown, "added", _diff(entry.rel, b"", entry.data(), entry.link))


def _diff(name: str, old: bytes, new: bytes, link: bool) -> str:
    """A unified diff of `old` and `new` when both are text, control characters shown escaped
    (guards/terminal.py); else each side's size and sha256 (a link: its target)."""
    if link:
        return f"link -> {visible(new.decode('utf-8', 'backslashreplace'), False)}\n" if new else "link removed\n"
    then, now = _text(old), _text(new)
    if then is None or now is None:
        return "".join(f"{side}: binary, {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}\n"
                       for side, data in (("accepted", old), ("now", new)) if data)
    shown = visible(name, lines=False)
    lines = difflib.unified_diff(_lines(then), _lines(now), f"a/{shown}", f"b/{shown}")
    return "".join(visible(line) if line.endswith("\n") else visible(line) + "\n\\ No newline at end of file\n"
                   for line in lines)


def _lines(text: str) -> list[str]:
    """`text`'s lines as git counts them, each with its newline: a lone CR (or U+2028) ends none, and is shown
    escaped inside its line (str.splitlines ended a line there, and the diff called it the end of the file)."""
    parts = text.split("\n")
    return [f"{part}\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _mode(entry: skill_files.Entry) -> int:
    return EXECUTABLE if entry.executable else FILE  # git keeps the owner's execute bit only
