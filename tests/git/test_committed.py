"""Whether memory is committed follows HEAD as the user moves it: commits, branch switches, detaching, packing refs."""

from __future__ import annotations

from pathlib import Path

from repo_memory.git.committed import Committed
from repo_memory.git.repo import Git

from tests.conftest import git


def test_committed_follows_head_through_commits_checkouts_detach_and_pack_refs(repo: Path):
    memory = repo / ".agents/skills/s/SKILL.md"
    memory.parent.mkdir(parents=True)
    memory.write_bytes(b"one\n")
    committed = Committed(Git(repo, repo / ".git"))
    assert committed.head() is None and not committed.file(".agents/skills/s/SKILL.md", b"one\n")  # an unborn branch
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    assert committed.head() == git(repo, "rev-parse", "HEAD").strip()
    assert committed.file(".agents/skills/s/SKILL.md", b"one\n")
    git(repo, "checkout", "-qb", "other")
    memory.write_bytes(b"two\n")
    git(repo, "commit", "-qam", "second")
    assert committed.file(".agents/skills/s/SKILL.md", b"two\n") and not committed.file(".agents/skills/s/SKILL.md", b"one\n")
    git(repo, "checkout", "-q", "main")
    assert committed.file(".agents/skills/s/SKILL.md", b"one\n")
    git(repo, "checkout", "-q", "--detach", "other")
    assert committed.file(".agents/skills/s/SKILL.md", b"two\n")
    git(repo, "checkout", "-q", "main")
    git(repo, "pack-refs", "--all")
    assert committed.head() == git(repo, "rev-parse", "main").strip()
    memory.write_bytes(b"three\n")
    git(repo, "commit", "-qam", "third")
    assert committed.record(".agents/skills/s/SKILL.md", 6) and committed.file(".agents/skills/s/SKILL.md", b"three\n")
