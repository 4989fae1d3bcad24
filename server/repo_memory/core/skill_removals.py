"""A skill of `.agents/skills` removed during an agent's tool call — its folder, or its SKILL.md — while review is
required: a skill a person accepted (active or deprecated) is theirs to remove, as accepting it was theirs, so the
files the last commit before the call held of it are put back and the agent is told to ask the person. Only a skill on
disk at the call's start counts (the pre-tool hook notes them): a person's removal before it stays theirs. One made
during the call by someone else looks the same, so the agent is told what happened, not that it did it, and the person
is told too. With no note of the call's start nothing is put back: the agent is told as `doctor` would say it. A draft
is the agent's to drop (as `reject` would), and so is any skill while review is optional: Claude Code's copy of it goes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from repo_memory.config import SKILLS_DIR
from repo_memory.formats import skills
from repo_memory.git.repo import Git
from repo_memory.guards import paths
from repo_memory.guards.shellwords import quoted


@dataclass
class Removals:
    """Skills removed during a call: put back, by name, those whose removal stands, and those left removed though
    accepted (no note of the call's start tells whose removal it is)."""

    put_back: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the files put back
    left: list[str] = field(default_factory=list)


def note(marker: Path, root: Path) -> None:
    """Note, beside a call's start `marker` (shells/pretool.py), the skills of .agents/skills with a SKILL.md on disk
    now: a listdir, no git, as it runs before every file or shell call."""
    try:
        found = sorted(f.name for f in os.scandir(root / SKILLS_DIR) if os.path.isfile(os.path.join(f.path, skills.SKILL_FILE)))
    except OSError:
        found = []
    marker.with_suffix(".present").write_text(json.dumps(found), encoding="utf-8")


def noted(marker: Path) -> list[str] | None:
    """The skills `note` found on disk at the call's start (None: no pre-tool hook noted it), forgetting the note."""
    path = marker.with_suffix(".present")
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
    except (OSError, ValueError):
        return None
    return [str(n) for n in found] if isinstance(found, list) else None


def gone(root: Path, before: Collection[str] | None, named: Collection[str]) -> list[str]:
    """The skills whose SKILL.md is not on disk that were there at the call's start (`before`, the pre-tool hook's
    note); with no note, those the call names. Only these cost any git work."""
    base = root / SKILLS_DIR
    candidates = before if before is not None else {
        rel.split("/")[2] for rel in named if rel.startswith(f"{SKILLS_DIR}/") and rel.count("/") >= 2}
    return sorted(n for n in candidates if paths.SLUG.match(n) and not (base / n / skills.SKILL_FILE).is_file())


def settle(git: Git, head: str, names: Collection[str], required: bool, restore: bool) -> Removals:
    """Put back (when `restore`), as commit `head` holds them, the files missing of each of `names` that it holds as no
    draft, while review is `required`; the others' removal stands. A skill `head` does not hold is none of this."""
    done = Removals()
    for name in names:
        folder = f"{SKILLS_DIR}/{name}"
        found = git.run("show", f"{head}:{folder}/{skills.SKILL_FILE}", check=False)
        if found.returncode != 0:
            continue
        if not required or skills.parse(found.stdout.encode("utf-8"), f"{folder}/{skills.SKILL_FILE}", SKILLS_DIR).status == "draft":
            done.dropped.append(name)
            continue
        if not restore:
            done.left.append(name)
            continue
        missing = [p for p, _ in _listed(git, head, folder) if not os.path.lexists(git.root / p)]
        if missing:  # `--` before the paths: a skill's name is never read as an option
            git.run("checkout", head, "--", *missing)
            done.paths += missing
        done.put_back.append(name)
    return done


def told(done: Removals, head: str) -> list[str]:
    """What the agent is told: a removal during its call (its own, or someone's meanwhile: the two look alike) was
    undone; one no pre-tool note dates is said as `doctor` says it, and left."""
    return [f"repo-memory: skill:{n}, a skill a person accepted, was removed during your call (by it, or by someone "
            f"else meanwhile), and removing it is the person's to decide: its files were put back as commit {head[:7]} "
            f"held them. If it should go, tell the person (they remove {SKILLS_DIR}/{n}, or set `status: deprecated`)."
            for n in done.put_back] + \
           [f"repo-memory: memory file(s) git holds were deleted from the working tree: {SKILLS_DIR}/{n}, skill:{n}, "
            f"which a person accepted; removing it is theirs to decide, so tell the person (`git restore "
            f"{SKILLS_DIR}/{n}` brings it back)." for n in done.left]


def to_person(done: Removals, head: str, tool: str) -> str:
    """What the person is told of a removal put back: if it was theirs, how to make it again."""
    return " ".join(f"repo-memory: skill:{n} (accepted) was removed during an agent's {tool} call and put back as commit "
                    f"{head[:7]} held it: an agent may not remove an accepted skill. If you removed it, remove it again "
                    f"(`git rm -r {quoted(f'{SKILLS_DIR}/{n}')}` and commit)." for n in done.put_back)


def _listed(git: Git, commit: str, folder: str) -> list[tuple[str, str]]:
    """(path, mode) of each file commit `commit` holds under `folder`."""
    out = git.run("ls-tree", "-r", "-z", "--full-tree", commit, "--", f"{folder}/", check=False).stdout
    return [(entry.partition("\t")[2], entry.split(" ", 1)[0]) for entry in out.split("\0") if "\t" in entry]
