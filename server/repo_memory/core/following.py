"""What the harnesses load by themselves follows what recall serves after skill files change under a clone (a pull, a
checkout, a teammate's hand edit), not only after our own writes: Claude Code's copies in .claude/skills, when this
clone makes them (core/mirror.py), and Codex's agents/openai.yaml beside each skill of .agents/skills (core/offering.py).

A running server follows after each re-index (shells/serve.py), the session-start hook before its briefing. The index's
digests of the skills, kept in the state folder between processes, say what changed: a look costs one query when
nothing did. Nothing is done while a git operation is under way (a merge stopped on a conflict, a pull writing the
checkout): a later look does it. Commits are those `sync` makes: the copies are ignored by git, and a Codex file is
committed with its skill only when that SKILL.md is as a commit holds it (a person's edit in progress is theirs).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory.config import SKILLS_DIR
from repo_memory.core import mirror, offering
from repo_memory.errors import InvalidRecordError, RepoMemoryError, UnsafePathError
from repo_memory.git.repo import IN_PROGRESS, Git
from repo_memory.guards import disk

if TYPE_CHECKING:
    from repo_memory.core.store import Store

log = logging.getLogger("repo_memory")
SEEN = "followed.json"  # in the state folder: {skill name: digest} as the last look left the harnesses' lists
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
    now, path = store.skill_digests(), config.state_dir / SEEN
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = None  # the first look here: everything
    if now == seen:
        return None
    done = InStep()
    with disk.repo_lock(config.state_dir):
        for name in sorted(n for n in now if not isinstance(seen, dict) or seen.get(n) != now[n]):
            try:
                changed = offering.settle(store.root, SKILLS_DIR, name)
            except (OSError, UnsafePathError, InvalidRecordError, UnicodeDecodeError):
                continue  # a folder we cannot write: doctor reports what it can of it
            done.settled += changed
            done.committed += changed if changed and committed(store.root, config.git_dir, f"{SKILLS_DIR}/{name}") else []
    if done.committed:
        store.commit_files(done.committed, MESSAGE)
    if mirror.in_use(store.root, config.state_dir):
        done.mirrored = mirror.of(store)
    disk.write_atomic(path, json.dumps(now).encode("utf-8"))
    return done


def keep(store: Store) -> None:
    """`follow`, for a server's watcher and the session-start hook: a failure is logged (doctor names what is left)."""
    try:
        follow(store)
    except (RepoMemoryError, OSError) as exc:
        log.warning("could not bring the skills Claude Code and Codex load by themselves in step: %s", exc)


def committed(root: Path, git_dir: Path, folder: str) -> bool:
    """Whether the SKILL.md of skill `folder` (a repository path) is as a commit holds it: git has it, no edit waits."""
    rel, git = f"{folder}/SKILL.md", Git(root, git_dir)
    return (root / rel).is_file() and git.run("ls-files", "--error-unmatch", "--", rel, check=False).returncode == 0 \
        and git.run("status", "--porcelain", "--", rel, check=False).stdout.strip() == ""  # tracked (not ignored), unchanged
