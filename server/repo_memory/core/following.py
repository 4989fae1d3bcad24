"""What the harnesses load by themselves follows what recall serves after skill files change under a clone (a pull, a
checkout, a teammate's hand edit), not only after our own writes: Claude Code's copies in .claude/skills, when this
clone makes them (core/mirror.py), and Codex's agents/openai.yaml beside each skill of .agents/skills (core/offering.py).

A running server follows after each re-index (shells/serve.py), the session-start hook before its briefing. The index's
digests of the skills, kept in the state folder between processes, say what changed: a look costs one query when
nothing did. Nothing is done while a git operation is under way (a merge stopped on a conflict, a pull writing the
checkout): a later look does it. Commits are those `sync` makes: the copies are ignored by git, and a Codex file is
committed with its skill only when that SKILL.md is as a commit holds it. A person's edit in progress is theirs: a skill
whose agents/ (what settling writes) holds a change no commit has is left alone (doctor names it), and a copy in
.claude/skills a person edited is kept (core/mirror.py).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory.config import SKILLS_DIR
from repo_memory.core import codex_policy, mirror, offering
from repo_memory.formats.skills import SKILL_FILE
from repo_memory.errors import InvalidRecordError, RepoMemoryError, UnsafePathError
from repo_memory.git.repo import IN_PROGRESS, Git
from repo_memory.guards import disk

if TYPE_CHECKING:
    from repo_memory.core.store import Store

log = logging.getLogger("repo_memory")
SEEN = "followed.json"  # in the state folder: the skills' digests and the copies' stamps as the last look left them
MESSAGE = "memory(skill): the harnesses list only the skills recall serves"


@dataclass
class InStep:
    """What a look changed: the mirror pass (None when copies are not in use here), Codex's files, those committed."""

    mirrored: mirror.MirrorReport | None = None
    settled: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)


def follow(store: Store) -> InStep | None:
    """Bring the copies and Codex's files in step with the skills as the index has them; None when nothing changed since
    the last look (or a git operation is under way)."""
    config = store.config
    if any((config.git_dir / name).exists() for name in (*IN_PROGRESS, "index.lock")):
        return None  # the checkout is being written, or waits on a person: the files are not what they will be
    path, copying = config.state_dir / SEEN, mirror.in_use(store.root, config.state_dir)
    # The index digests each SKILL.md; a file beside one (a checklist a pull changed) is seen in its copy's stamp.
    skills_now, copies = store.skill_digests(), mirror.stamps(store.root) if copying else {}
    offers = codex_stamps(store.root, skills_now)  # a pull may take or bring Codex's file and leave SKILL.md as it was
    now = {"skills": skills_now, "copies": copies, "offers": offers, "limit": config.mirror_limit}
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = None  # the first look here: everything
    if now == seen:
        return None
    if not isinstance(seen, dict) or not isinstance(seen.get("skills"), dict) or not isinstance(seen.get("copies"), dict):
        seen = {"skills": {}, "copies": {}}  # the first look here (or one a version without stamps left): everything
    offered = seen["offers"] if isinstance(seen.get("offers"), dict) else {}  # none: a look before they were kept
    done, names = InStep(), sorted(n for n, digest in skills_now.items() if seen["skills"].get(n) != digest
                                   or offered.get(n, "unseen") != offers.get(n))
    recheck = {n for n, stamp in copies.items() if seen["copies"].get(n) != stamp}
    view = offering.indexed(store.skill_states(SKILLS_DIR))  # the changed skills were just read: no SKILL.md is read again
    with disk.repo_lock(config.state_dir):
        clean, theirs = held(store.root, config.git_dir, [f"{SKILLS_DIR}/{name}" for name in names])
        for name in names:
            if f"{SKILLS_DIR}/{name}" in theirs:
                continue  # a person is editing what we would write: never touched, never committed as ours
            try:
                changed = offering.settle(store.root, SKILLS_DIR, name, view[name][0] if name in view else None)
            except (OSError, UnsafePathError, InvalidRecordError, UnicodeDecodeError):
                continue  # a folder we cannot write: doctor reports what it can of it
            done.settled += changed
            done.committed += changed if f"{SKILLS_DIR}/{name}" in clean else []
    if done.committed:
        store.commit_files(done.committed, MESSAGE)
    settled = {p[len(SKILLS_DIR) + 1:].split("/")[0] for p in done.settled}
    offers.update(codex_stamps(store.root, settled))  # the Codex files as settling left them
    if copying:  # what settling wrote beside a SKILL.md is in the copies made now: not a change for the next look
        copies.update(mirror.stamps(store.root, only=settled))
        done.mirrored = mirror.of(store, view, recheck)
        for name in done.mirrored.removed:
            copies.pop(name, None)
    disk.write_atomic(path, json.dumps(now).encode("utf-8"))
    return done


def keep(store: Store) -> None:
    """`follow`, for a server's watcher and the session-start hook: a failure is logged (doctor names what is left)."""
    try:
        follow(store)
    except (RepoMemoryError, OSError) as exc:
        log.warning("could not bring the skills Claude Code and Codex load by themselves in step: %s", exc)


OURS = (codex_policy.FOLDER, codex_policy.FOLDER_ASIDE)  # what settling writes in a skill folder of .agents/skills


def codex_stamps(root: Path, names: Iterable[str]) -> dict[str, list[int] | None]:
    """{skill: [mtime_ns, size] of its Codex file (agents/openai.yaml), or None when it has none}: a stat a skill."""
    out: dict[str, list[int] | None] = {}
    for name in names:
        try:
            st = os.lstat(root / SKILLS_DIR / name / codex_policy.FILE)
            out[name] = [st.st_mtime_ns, st.st_size]
        except OSError:
            out[name] = None
    return out


def held(root: Path, git_dir: Path, folders: list[str]) -> tuple[set[str], set[str]]:
    """Of skill folders `folders` (repository paths, in .agents/skills): those whose SKILL.md is as a commit holds it (git
    has it, not ignored, no edit waits), and those where a change no commit has waits in what settling writes (OURS):
    a person's edit in progress. Two git calls, whatever the number of folders."""
    if not folders:
        return set(), set()
    git, depth = Git(root, git_dir), SKILLS_DIR.count("/") + 2
    specs = folders if len(folders) <= 100 else [SKILLS_DIR]  # past that, one look at the whole folder is cheaper
    tracked = set(git.run("ls-files", "-z", "--", *specs, check=False).stdout.split("\0"))
    changed = [entry[3:].split("/") for entry in git.run("status", "--porcelain", "-z", "--no-renames", "--untracked-files=all",
                                                         "--", *specs, check=False).stdout.split("\0") if entry]
    dirty = {"/".join(parts[:depth]) for parts in changed if parts[depth:] == [SKILL_FILE]}
    theirs = {"/".join(parts[:depth]) for parts in changed if len(parts) > depth and parts[depth] in OURS}
    return {folder for folder in folders if f"{folder}/{SKILL_FILE}" in tracked and folder not in dirty}, theirs
