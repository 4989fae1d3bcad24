"""Memory commits keep the repository tidy as git's own commands do: git packs loose objects after its own commits
(`git gc --auto`), but repo-memory commits with plumbing, which never asks; a year of memory commits left 5.5k loose
objects (29 MiB) that only a person's own commits ever packed."""

from __future__ import annotations

import hashlib
from pathlib import Path

from repo_memory.config import Config
from repo_memory.core.store import Store
from tests.conftest import git


def count(repo: Path) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())}


def contents_in_sample_folder(n: int) -> list[bytes]:
    """Blobs whose ids start with 17: `gc --auto` estimates the loose objects from the `objects/17` folder alone (git's
    builtin/gc.c), so random commits cross a test's threshold only by chance; these cross it every time."""
    found, k = [], 0
    while len(found) < n:
        body = f"note {k}\n".encode()
        if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest().startswith("17"):
            found.append(body)
        k += 1
    return found


def test_memory_commits_let_git_pack_loose_objects_when_it_would_after_a_commit_of_its_own(repo: Path):
    for n, body in enumerate(contents_in_sample_folder(3)):
        (repo / f"note-{n}.txt").write_bytes(body)
    git(repo, "add", "-A")
    git(repo, "-c", "gc.auto=0", "commit", "-q", "-m", "notes")  # the person's own commit packs nothing here
    git(repo, "config", "gc.auto", "256")  # git's threshold (6,700 by default): more than one loose object in objects/17
    git(repo, "config", "gc.autoDetach", "false")  # git then packs before it returns, so the test sees it done
    before = count(repo)
    assert before["packs"] == 0 and before["count"] >= 3, before
    store = Store(Config.load(repo))
    try:
        store.write_skill("deploy", "Procedure.", "1. step", actor="human")
        assert store.flush().sha
    finally:
        store.close()
    after = count(repo)
    assert after["packs"] >= 1 and after["count"] < before["count"], after
