"""Where memory files stand with git, as doctor reads it from `git status --porcelain -z`."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from repo_memory.git import status
from repo_memory.git.repo import Git
from repo_memory.shells.cli import cli

from tests.conftest import git, write_skill_file


def test_a_skill_renamed_with_git_mv_is_named_by_both_its_paths_and_doctor_fix_names_real_folders(runner: CliRunner, repo: Path):
    """With -z a rename is `R  new\\0old\\0`: the old path is a bare field, and reading it as `XY path` cut its first three
    characters, so doctor listed `ents/skills/deploy-app/SKILL.md` and said to `git add .agents/skills ents/skills`."""
    write_skill_file(repo, "deploy-app", "How to deploy.", "1. make deploy")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skill")
    git(repo, "mv", ".agents/skills/deploy-app", ".agents/skills/deploy-svc")
    skill = repo / ".agents/skills/deploy-svc/SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace("name: deploy-app", "name: deploy-svc"), encoding="utf-8")
    git(repo, "add", "-A")

    changed, deleted, conflicted = status.worktree(Git(repo, repo / ".git"), (".agents",))
    assert changed == [".agents/skills/deploy-app/SKILL.md", ".agents/skills/deploy-svc/SKILL.md"]
    assert (deleted, conflicted) == ([], [])
    out = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "ents/skills" not in out.replace(".agents/skills", ""), out
    assert "`git add .agents/skills && git commit`" in out, out


def test_repo_memorys_git_status_leaves_the_persons_index_alone(repo: Path):
    """`git status` takes .git/index.lock while it looks, to write back what it refreshed: a person's `git commit`
    starting then dies with "Unable to create '.git/index.lock': File exists" (3 of 7 failed commits in a soak probe's
    repro, the server checking a skill's folder after each write). repo-memory runs git as a background process should
    (GIT_OPTIONAL_LOCKS=0): a status that found a file's stat changed writes no index, so it took no lock."""
    write_skill_file(repo, "deploy-app", "How to deploy.", "1. make deploy")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skill")
    written = repo.parent / "index-written"
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\necho \"$@\" >> '{written}'\n", encoding="utf-8")
    hook.chmod(0o755)
    skill = repo / ".agents/skills/deploy-app/SKILL.md"
    os.utime(skill, (skill.stat().st_atime, skill.stat().st_mtime - 3600))  # the same bytes, other stat data: to refresh
    index = (repo / ".git" / "index").read_bytes()

    assert status.worktree(Git(repo, repo / ".git"), (".agents",)) == ([], [], [])
    assert not written.exists(), written.read_text(encoding="utf-8")
    assert (repo / ".git" / "index").read_bytes() == index
    git(repo, "status", "--porcelain")  # a person's own status still refreshes it (the test can fail)
    assert written.exists()
