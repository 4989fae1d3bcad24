"""Who a memory commit names as its author when the repository's `.agents/repo-memory.toml` names one.

A teammate (or an agent, whose file tools can write the file) committed `author = {name = "Mallory", ...}`: every
clone's memory commits were authored, and committed with the email, of whoever the file named, over the identity git
knows for the person. The file's `author` is for where git knows no one (a CI container, a fresh machine);
REPO_MEMORY_AUTHOR, set by the person, still names who they want.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import configured, git

IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def _repository(tmp_path: Path, person: bool) -> tuple[Path, dict[str, str]]:
    """A repository whose committed config names Mallory as the author; git knows the person (or no one), as a
    terminal's git does: from user.name and user.email, not from GIT_AUTHOR_* variables."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in IDENTITY_VARS}
    env.update({"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")})
    if person:
        subprocess.run(["git", "config", "--global", "user.name", "Pat Person"], env=env, check=True)
        subprocess.run(["git", "config", "--global", "user.email", "pat@example.com"], env=env, check=True)
    repo = configured(tmp_path / "repo", 'author = { name = "Mallory", email = "mallory@example.net" }\n', "team settings")
    subprocess.run([sys.executable, "-m", "repo_memory", "init"], cwd=repo, env=env, check=True, capture_output=True)
    return repo, env


def _note(repo: Path, env: dict[str, str]) -> str:
    """The author and committer of the memory commit `log add` makes."""
    done = subprocess.run([sys.executable, "-m", "repo_memory", "log", "add", "Chose pytest-postgresql.", "-s", "ops"], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return git(repo, "log", "-1", "--format=%an <%ae> / %cn <%ce>", "--", ".agents/experience").strip()


def test_an_author_the_repository_names_never_stands_in_for_the_person_git_knows(tmp_path: Path):
    repo, env = _repository(tmp_path, person=True)
    assert _note(repo, env) == "Pat Person <pat@example.com> / repo-memory <pat@example.com>"


def test_where_git_knows_no_one_the_repositorys_author_names_the_memory_commits(tmp_path: Path):
    repo, env = _repository(tmp_path, person=False)
    assert _note(repo, env) == "Mallory <mallory@example.net> / repo-memory <mallory@example.net>"


def test_the_author_a_person_sets_in_their_environment_names_their_memory_commits(tmp_path: Path):
    repo, env = _repository(tmp_path, person=True)
    env["REPO_MEMORY_AUTHOR"] = '{"name": "Ops Bot", "email": "ops@example.com"}'
    assert _note(repo, env) == "Ops Bot <ops@example.com> / repo-memory <ops@example.com>"
