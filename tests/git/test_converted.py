"""A file git converts between the commit and the disk (core.autocrlf, an LFS filter) is still the committed file when
`git status` calls it clean: an agent may update it, a draft may be rejected, and read does not call it uncommitted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import ConflictError

from tests.conftest import git, initialised

BUILD = ".agents/skills/build/SKILL.md"


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True)


def origin(tmp_path: Path, attributes: str = "") -> Path:
    """A repository with a person's skill `build` and an agent's draft `zebra-feeding`, both committed."""
    repo = initialised(tmp_path)
    if attributes:
        git(repo, "lfs", "install", "--local")
        with (repo / ".gitattributes").open("a", encoding="utf-8") as out:
            out.write(attributes)
        git(repo, "commit", "-q", "-am", "skills in LFS")
    assert cli(repo, "skill", "new", "build", "-d", "How to build; use when building", "--body", "1. make").returncode == 0
    store = Store(Config.load(repo))
    try:
        store.write_skill("zebra-feeding", "Feeding zebras at the zoo; use when feeding", "1. hay", new=True)
    finally:
        store.close()
    assert not git(repo, "status", "--porcelain"), git(repo, "status", "--porcelain")
    return repo


def updated_and_rejected(repo: Path) -> None:
    """What an agent and a person do to skills HEAD holds, all of it allowed, in a clone `git status` calls clean."""
    assert not git(repo, "status", "--porcelain"), git(repo, "status", "--porcelain")
    store = Store(Config.load(repo))
    try:
        item = store.read("skill:build")
        assert item.committed and "not committed" not in item.recorded, item.recorded
        notes = repo / ".agents/skills/build/notes.md"
        notes.write_text("beside it\n", encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "a person's notes beside the skill")
        store.write_skill("build", "How to build; use when building", "1. make all\n2. then test")
        assert "make all" in (repo / BUILD).read_text(encoding="utf-8")
        done = store.review("build", accept=False)  # the agent's draft of it: back to the text HEAD holds, notes as they are
        assert "back to its last accepted version" in done and "kept" not in done, done
        assert (repo / BUILD).read_text(encoding="utf-8").replace("\r\n", "\n").endswith("\n1. make\n")  # the skill, not a pointer
        assert notes.read_text(encoding="utf-8").replace("\r\n", "\n") == "beside it\n"
        store.read("skill:build")  # the agent reads what the reject left before writing it again
        store.write_skill("build", "How to build; use when building", "1. make all\n2. then test")
        store.review("build", accept=True)
        assert "rejected" in store.review("zebra-feeding", accept=False).lower()
        assert not (repo / ".agents/skills/zebra-feeding").exists()
        store.flush()
        assert not git(repo, "status", "--porcelain"), git(repo, "status", "--porcelain")
        # a person's edit no commit holds is still refused, converted or not
        (repo / BUILD).write_bytes((repo / BUILD).read_bytes() + b"3. my edit in progress\n")
        with pytest.raises(ConflictError, match="no commit holds"):
            store.write_skill("build", "How to build; use when building", "1. make all")
        assert not store.read("skill:build").committed
    finally:
        store.close()


def test_a_clone_with_autocrlf_updates_and_rejects_the_skills_git_checked_out_with_crlf(tmp_path: Path):
    """Git for Windows' default: the skills are checked out with CRLF, git status is clean, and repo-memory compared
    the disk's bytes with the blob's: every committed skill was "a person's edit in progress"."""
    repo = origin(tmp_path)
    there = tmp_path / "clone"
    git(tmp_path, "-c", "core.autocrlf=true", "clone", "-q", str(repo), str(there))
    for key, value in (("core.autocrlf", "true"), ("user.email", "t@example.com"), ("user.name", "T")):
        git(there, "config", key, value)
    assert cli(there, "init").returncode == 0
    assert b"\r\n" in (there / BUILD).read_bytes()  # git converted it at checkout
    updated_and_rejected(there)


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed")
def test_skills_kept_in_git_lfs_are_the_committed_ones_when_git_status_says_so(tmp_path: Path):
    """`*.md filter=lfs`: HEAD holds a pointer, the disk the skill; the pointer is what git's clean filter makes of it."""
    repo = origin(tmp_path, "*.md filter=lfs diff=lfs merge=lfs -text\n")
    assert git(repo, "cat-file", "-p", f"HEAD:{BUILD}").startswith("version https://git-lfs")  # a pointer in the commit
    updated_and_rejected(repo)
