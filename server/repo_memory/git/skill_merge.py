"""The review gate at merge time: git's merge driver for SKILL.md files (`repo-memory init` registers it).

Git's text merge can join one side's `status: active` (a person accepted that text) to the other side's rewrite by an
agent (a draft): no conflict, and an active skill whose text no person accepted. The driver merges as git does
(`git merge-file`); when the clean result reads as active, one side was a draft, and the result is no side's active
text, it is written as a draft (by an agent), so a person accepts it before it is served. A conflict stays a conflict.
A clone without the driver in its .git/config merges as git does: core/merges.py catches that result afterwards.
"""

from __future__ import annotations

from pathlib import Path

from repo_memory.errors import InvalidRecordError
from repo_memory.formats import skills
from repo_memory.git.repo import Git

NAME = "repo-memory-skill"
LINE = f".agents/skills/*/{skills.SKILL_FILE} merge={NAME}"
# git quotes each %-path for the shell. merge-skill exits 0 (clean) or 1 (git's markers written); a repo-memory that is
# missing, or too old to know merge-skill (exit 2), or failing otherwise gets `ours` back as it was and git's own merge,
# since git would take the file as it stands for a conflict's result: our side alone, no markers.
DRIVER = ('f() { if command -v repo-memory >/dev/null 2>&1 && cp -p "$2" "$2.ours"; then repo-memory merge-skill "$@"; r=$?; '
          'if [ $r -le 1 ]; then rm -f "$2.ours"; return $r; fi; mv -f "$2.ours" "$2"; fi; '
          'git merge-file --marker-size="$5" -L ours -L base -L theirs "$2" "$1" "$3"; }; f %O %A %B %P %L')


def merge(base: Path, ours: Path, theirs: Path, path: str, marker_size: int = 7) -> int:
    """Merge `theirs` into `ours` (rewritten in place, as git asks of a driver) from their common `base`; 0 when clean
    (an unreviewed change joined to accepted text written as a draft), 1 on a conflict (git's markers written), 2 when
    `git merge-file` failed (the driver line then runs git's merge itself)."""
    before, other = ours.read_bytes(), theirs.read_bytes()
    here = Path.cwd()  # git runs a driver at the top of the work tree, on temporary files
    done = Git(here, here / ".git").run("merge-file", f"--marker-size={marker_size}", "-L", "ours", "-L", "base", "-L", "theirs",
                                        "--", *(str(p.resolve()) for p in (ours, base, theirs)), check=False)
    if done.returncode != 0:
        return 1 if 0 < done.returncode < 128 else 2  # the number of conflicts, or an error: `ours` is then git's to merge
    merged = ours.read_bytes()
    if unreviewed(merged, (before, other), path):
        name = path.rsplit("/", 2)[-2] if path.count("/") >= 1 else ""
        try:
            text = skills.edit(merged.decode("utf-8"), name, {("metadata", "status"): "draft", ("metadata", "origin"): "agent"})
        except (InvalidRecordError, UnicodeDecodeError):
            return 0  # an invalid SKILL.md is served nowhere; doctor names what is wrong with it
        ours.write_bytes(text.encode("utf-8"))
    return 0


def unreviewed(merged: bytes, sides: tuple[bytes, ...], path: str) -> bool:
    """Whether `merged`, the clean merge of `sides`, reads as active though one side was a draft and it is the text of
    no side that was active: a change no person accepted, joined to text a person did."""
    if _status(merged, path) != "active":
        return False
    statuses = [_status(side, path) for side in sides]
    return "draft" in statuses and all(merged != side for side, status in zip(sides, statuses) if status == "active")


def _status(data: bytes, path: str) -> str:
    return skills.parse(data, path, path.rsplit("/", 2)[0]).status  # no status at all reads as active
