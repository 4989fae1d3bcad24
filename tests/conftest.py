"""Shared fixtures: real git repositories in tmp dirs, a Store over them, a CLI runner."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory import layout
from repo_memory.config import Config
from repo_memory.core.store import Store

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Person", "GIT_AUTHOR_EMAIL": "person@example.com",
    "GIT_COMMITTER_NAME": "Test Person", "GIT_COMMITTER_EMAIL": "person@example.com",
}


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never see the developer's workspace variables or git config."""
    for var in ("REPO_MEMORY_ROOT", "CLAUDE_PROJECT_DIR", "REPO_MEMORY_REVIEW", "REPO_MEMORY_COMMIT", "REPO_MEMORY_RECALL_LIMIT"):
        monkeypatch.delenv(var, raising=False)
    # Embedding costs CPU seconds per hundred texts: tests of lexical behaviour run without it, and the tests of
    # hybrid recall (tests/core/test_semantic.py) turn it on.
    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "false")
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path_factory.getbasetemp() / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # Each clone's key (guards/authorship.py) goes to the test run's folder, not the developer's ~/.local/state.
    monkeypatch.setenv("REPO_MEMORY_KEY_DIR", str(tmp_path_factory.getbasetemp() / "keys"))
    # repo-memory is installed and on PATH, as for a user: git hooks and the diff driver call it by name.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env={**os.environ, **GIT_ENV})
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
    return proc.stdout


def conflicted(repo: Path, theirs: Callable[[], object], ours: Callable[[], object], branch: str = "topic") -> None:
    """A merge git stops with a conflict: `theirs()` committed on a new `branch`, `ours()` on main, then `git merge`."""
    git(repo, "checkout", "-q", "-b", branch)
    theirs()
    git(repo, "commit", "-q", "-am", branch)
    git(repo, "checkout", "-q", "main")
    ours()
    git(repo, "commit", "-q", "-am", "main")
    assert subprocess.run(["git", "merge", "-q", branch], cwd=repo, capture_output=True).returncode != 0


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    layout.init(path)
    return path


def configured(path: Path, settings: str, message: str = "settings") -> Path:
    """A new repository at `path` whose one commit is `.agents/repo-memory.toml` holding `settings` (no init yet)."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / ".agents").mkdir()
    (path / ".agents/repo-memory.toml").write_text(settings, encoding="utf-8")
    git(path, "add", ".agents")
    git(path, "commit", "-q", "-m", message)
    return path


def initialised(tmp_path: Path, name: str = "origin") -> Path:
    """A repository with one commit of a person's file, set up by `repo-memory init` run as a person runs it."""
    path = tmp_path / name
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("hi\n", encoding="utf-8")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "init")
    done = subprocess.run([sys.executable, "-m", "repo_memory", "init"], cwd=path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return path


@pytest.fixture
def store(repo: Path) -> Iterator[Store]:
    s = Store(Config.load(repo))
    yield s
    s.close()


def write_skill_file(repo: Path, name: str, description: str = "A skill.", body: str = "Steps.", folder: str = ".agents/skills",
                     extra: str = "") -> Path:
    """Write a SKILL.md by hand, the way a person would."""
    path = repo / folder / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}\n{extra}---\n\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def skill_row(store: Store, name: str) -> dict | None:
    """The searchable index row of skill `name`, as listings show it."""
    return next((r for r in store.skills() if r["name"] == name and r["winner"]), None)


def skill_names(store: Store) -> list[str]:
    return sorted(r["name"] for r in store.skills() if r["winner"])


def index_snapshot(store: Store) -> tuple[list, list]:
    """What the index holds of documents and records, read through a second connection to the same file."""
    from repo_memory.index.db import Database
    from repo_memory.index.docs import DocIndex
    from repo_memory.index.records import RecordIndex

    db = Database(store.config.index_path)
    try:
        return DocIndex(db).snapshot(), RecordIndex(db, store.root).snapshot()
    finally:
        db.close()


def sqlite_steps(store: Store, action: Callable[[], object]) -> int:
    """SQLite's virtual-machine steps (in tens) on the index's own connection while `action` runs: how much the index
    works, not what it answers, and not how busy the machine is."""
    counted = [0]
    conn = store._db.conn

    def count() -> int:
        counted[0] += 1
        return 0
    conn.set_progress_handler(count, 10)
    try:
        action()
    finally:
        conn.set_progress_handler(None, 0)
    return counted[0]


def kept(where: Store | Path, name: str) -> str:
    """The session a name a person or a job chose is written as in this clone: `<name>.<clone>` (Journal.owned)."""
    from repo_memory.git.clone import clone_id

    if isinstance(where, Store):
        return f"{name}.{where.key.clone}"
    config = Config.load(where)
    assert config.key_dir is not None
    return f"{name}.{clone_id(config.common_dir, config.clone_dir, config.key_dir)}"


def named(ref: str) -> str:
    """An id or a session as the name it was chosen by, without the clone whose log it is (`notes.1a2b3c4d#1`: `notes#1`)."""
    return re.sub(r"\.[0-9a-f]{8}(?=#|$)", "", ref)


def records_of(store: Store, session: str) -> list[dict]:
    """Every valid record of `session`'s log, as stored."""
    return [ln.record for ln in store.lines(session) if ln.record]
