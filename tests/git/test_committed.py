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
    assert committed.record(".agents/skills/s/SKILL.md", 5) and committed.file(".agents/skills/s/SKILL.md", b"three\n")


def test_a_line_is_committed_only_with_its_newline(repo: Path):
    """A torn last line git holds is no line: once a newline completes it on disk, HEAD held every byte of it but the
    one that makes it a line, and it was served as committed."""
    log = repo / ".agents/experience/2026-12/s.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b'{"a":1}\n{"b":')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a torn tail committed")
    log.write_bytes(b'{"a":1}\n{"b":2}\n')  # grown past HEAD, HEAD's bytes a prefix of it
    committed = Committed(Git(repo, repo / ".git"))
    rel = ".agents/experience/2026-12/s.jsonl"
    assert committed.record(rel, 7)  # the first line, its newline at byte 7
    assert not committed.record(rel, 13) and not committed.record(rel, 15)  # the torn one, however it ends on disk
