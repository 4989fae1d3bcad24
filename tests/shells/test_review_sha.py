"""What a skill folder's review sha counts, driven as a harness and a person drive them: files git ignores are no part
of a skill (core/skill_files.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


from repo_memory.core import skill_files

from tests.conftest import git
from tests.shells.test_pretool import active_deploy, hook, shell_call
from tests.shells.test_skill_links import shown

IMPORT_HELPER = f"env -u PYTHONDONTWRITEBYTECODE {sys.executable} -c \"import sys; sys.path.insert(0, '.agents/skills/deploy'); import helper\""


def deploy_with_helper(repo: Path) -> Path:
    skill = active_deploy(repo)
    (skill.parent / "helper.py").write_text("print('deploying')\n", encoding="utf-8")
    (repo / ".gitignore").write_text("__pycache__/\n*.pyc\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "deploy helper")
    return skill


def test_running_a_skills_helper_leaves_the_skill_active_and_its_ignored_bytecode_out_of_it(repo: Path):
    """The __pycache__ that importing helper.py left (ignored by .gitignore) counted as part of the skill: the active
    skill went back to draft, the .pyc was committed past .gitignore, and `skill show` listed it."""
    skill = deploy_with_helper(repo)
    answer = shell_call(repo, IMPORT_HELPER)
    assert list(skill.parent.glob("__pycache__/*.pyc")), "the helper's import wrote no bytecode"
    assert "status: active" in skill.read_text(encoding="utf-8") and "draft" not in json.dumps(answer), answer
    hook(repo, "session-end", {"session_id": "s9", "hook_event_name": "SessionEnd", "reason": "exit"})
    assert ".pyc" not in git(repo, "log", "--all", "--name-only", "--format=")
    assert shown(repo)["files"] == ["SKILL.md", "helper.py"]


def test_a_tracked_file_counts_though_gitignore_matches_it_and_outside_git_nothing_is_left_out(repo: Path, tmp_path: Path):
    """Ignore rules leave untracked files out; a file a person committed anyway (`git add -f`) is part of the skill."""
    skill = deploy_with_helper(repo)
    (skill.parent / "vendored.pyc").write_bytes(b"\x00bytecode")
    git(repo, "add", "-f", ".agents/skills/deploy/vendored.pyc")
    git(repo, "commit", "-q", "-m", "vendored bytecode")
    (skill.parent / "stray.pyc").write_bytes(b"\x00stray")
    assert [e.rel for e in skill_files.walk(skill.parent)] == ["SKILL.md", "helper.py", "vendored.pyc"]
    before = shown(repo)["review_sha"]
    (skill.parent / "vendored.pyc").write_bytes(b"\x00changed")
    assert shown(repo)["review_sha"] != before
    outside = tmp_path / "elsewhere" / "deploy"
    outside.mkdir(parents=True)
    (outside / ".gitignore").write_text("*.pyc\n", encoding="utf-8")
    (outside / "x.pyc").write_bytes(b"\x00")
    assert [e.rel for e in skill_files.walk(outside)] == [".gitignore", "x.pyc"]
