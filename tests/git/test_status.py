"""Where memory files stand with git, as doctor reads it from `git status --porcelain -z`."""

from __future__ import annotations

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
