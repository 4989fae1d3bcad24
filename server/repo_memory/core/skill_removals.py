"""An agent's tool call that removed a skill of `.agents/skills` — its folder, or its SKILL.md — while review is
required: a skill a person accepted (active or deprecated) is theirs to remove, as accepting it was theirs, so the
files the last commit before the call held of it are put back and the agent is told to ask the person. A draft is the
agent's to drop (as `reject` would), and so is any skill while review is optional: Claude Code's copy of it goes.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field

from repo_memory.config import SKILLS_DIR
from repo_memory.formats import skills
from repo_memory.git.repo import Git


@dataclass
class Removals:
    """What a call removed: skills put back, by name, and those whose removal stands."""

    put_back: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # the files put back


def removed(git: Git, head: str, named: Collection[str], since: int | None) -> list[str]:
    """Skills of .agents/skills whose SKILL.md commit `head` (before the call) holds and the disk does not: those the
    call names, or whose folder (the skills folder, for a folder gone) changed at or after `since` (ns)."""
    base = git.root / SKILLS_DIR
    held = {p.split("/")[2] for p, _ in _listed(git, head, SKILLS_DIR) if p.count("/") == 3 and p.endswith(f"/{skills.SKILL_FILE}")}
    gone = []
    for name in sorted(held):
        if (base / name / skills.SKILL_FILE).is_file():
            continue
        said = any(rel == f"{SKILLS_DIR}/{name}" or rel.startswith(f"{SKILLS_DIR}/{name}/") for rel in named)
        where = base / name if (base / name).is_dir() else base
        if said or since is not None and _ctime(where) >= since:
            gone.append(name)
    return gone


def settle(git: Git, head: str, names: Collection[str], required: bool) -> Removals:
    """Put back, as commit `head` holds them, the files missing of each of `names` that it holds as no draft, while
    review is `required`; the others' removal stands."""
    done = Removals()
    for name in names:
        folder = f"{SKILLS_DIR}/{name}"
        text = git.run("show", f"{head}:{folder}/{skills.SKILL_FILE}", check=False).stdout
        if not required or skills.parse(text.encode("utf-8"), f"{folder}/{skills.SKILL_FILE}", SKILLS_DIR).status == "draft":
            done.dropped.append(name)
            continue
        missing = [p for p, _ in _listed(git, head, folder) if not os.path.lexists(git.root / p)]
        if missing:  # `--` before the paths: a skill's name is never read as an option
            git.run("checkout", head, "--", *missing)
            done.paths += missing
        done.put_back.append(name)
    return done


def told(done: Removals, head: str) -> list[str]:
    """What the agent is told of the accepted skills its call removed."""
    return [f"repo-memory: skill:{n} is a skill a person accepted, and removing it is theirs to decide: your call's "
            f"removal was undone (its files put back as commit {head[:7]} held them). If it should go, tell the person "
            f"(they remove {SKILLS_DIR}/{n}, or set `status: deprecated`)." for n in done.put_back]


def _listed(git: Git, commit: str, folder: str) -> list[tuple[str, str]]:
    """(path, mode) of each file commit `commit` holds under `folder`."""
    out = git.run("ls-tree", "-r", "-z", "--full-tree", commit, "--", f"{folder}/", check=False).stdout
    return [(entry.partition("\t")[2], entry.split(" ", 1)[0]) for entry in out.split("\0") if "\t" in entry]


def _ctime(path: os.PathLike[str]) -> int:
    try:
        return os.lstat(path).st_ctime_ns
    except OSError:
        return -1
