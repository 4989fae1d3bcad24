"""Records this clone wrote and committed, dropped from every branch by a force push and `git pull --rebase` or a
`git reset`: verify and doctor say so with the checkout that brings them back, and a checkpoint does not cover them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import InvalidRecordError
from tests.conftest import git, initialised


def cli_run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True)


def errors(repo: Path) -> list[dict[str, str]]:
    return [f for f in json.loads(cli_run(repo, "doctor", "--json").stdout) if f["level"] == "error"]


def add(repo: Path, text: str) -> str:
    done = cli_run(repo, "log", "add", text, "-s", "walrus")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, Path]:
    """(teammate, person): the teammate's two records were pushed, the person's stale clone force-pushed over them,
    and the teammate then ran `git pull --rebase` as README says."""
    person = initialised(tmp_path, "person")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", "origin.git")
    git(person, "remote", "add", "origin", str(tmp_path / "origin.git"))
    git(person, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), "teammate")
    teammate = tmp_path / "teammate"
    assert add(teammate, "the walrus db is postgres 16").endswith("#1")
    assert add(teammate, "walrus backups run nightly").endswith("#2")
    git(teammate, "push", "-q", "origin", "main")
    (person / "a.txt").write_text("person's work\n", encoding="utf-8")
    git(person, "commit", "-q", "-am", "person's work")
    git(person, "push", "-q", "--force", "origin", "main")
    git(teammate, "pull", "-q", "--rebase")
    assert not list((teammate / ".agents/experience").rglob("walrus*.jsonl"))  # git dropped both memory commits
    return teammate, person


def dropped_commit(repo: Path) -> str:
    """The reflog's newest commit of the dropped records."""
    return git(repo, "log", "-g", "-1", "--format=%h", "HEAD", "--", ".agents/experience/").strip()


@pytest.mark.parametrize("after", ["nothing more", "a record after the pull"])
def test_records_a_force_push_and_pull_rebase_dropped_are_an_error_with_the_checkout_that_brings_them_back(
        clones: tuple[Path, Path], after: str):
    """verify said 'All experience logs verify', doctor nothing, and the session went on at #3 as if #1-2 were there."""
    teammate, person = clones
    commit = dropped_commit(teammate)
    if after != "nothing more":
        assert add(teammate, "walrus pool is 20").endswith("#3")
    verify = cli_run(teammate, "verify")
    assert verify.returncode == 1, verify.stdout
    assert "#1-2" in verify.stdout and f"git checkout {commit}" in verify.stdout, verify.stdout
    (finding,) = errors(teammate)
    assert f"git checkout {commit}" in finding["message"] and finding["path"].endswith("#1-2"), finding
    restore = finding["message"].partition("`git checkout ")[2].partition("`")[0]
    subprocess.run(f"git checkout {restore}", shell=True, cwd=teammate, check=True)
    git(teammate, "commit", "-q", "-m", "memory: restore walrus")
    assert cli_run(teammate, "verify").returncode == 0 and errors(teammate) == []
    shown = cli_run(teammate, "log", "show", "walrus").stdout
    assert "postgres 16" in shown and "backups run nightly" in shown, shown
    assert cli_run(person, "verify").returncode == 0 and errors(person) == []  # a clone that never had them


def test_a_deliberate_reset_is_said_once_and_accepting_the_loss_silences_it(tmp_path: Path):
    """A person dropping memory on purpose is told what went, and how to accept it; accepted, verify passes."""
    repo = initialised(tmp_path, "repo")
    add(repo, "first")
    add(repo, "second")
    git(repo, "reset", "-q", "--hard", "HEAD~2")
    verify = cli_run(repo, "verify")
    assert verify.returncode == 1 and "repo-memory log accept-loss" in verify.stdout, verify.stdout
    session = verify.stdout.partition("repo-memory log accept-loss ")[2].partition("`")[0]
    accepted = cli_run(repo, "log", "accept-loss", session)
    assert accepted.returncode == 0 and "#1-2" in accepted.stdout, accepted.stdout + accepted.stderr
    assert cli_run(repo, "verify").returncode == 0 and errors(repo) == []
    assert add(repo, "third").endswith("#3")  # the session goes on after its last id, never again from #1


def test_a_checkpoint_does_not_cover_records_a_reset_took_from_the_log(tmp_path: Path):
    """A live session's checkpoint said it covered #1-3 while #1-2 were gone: the index still had them."""
    repo = initialised(tmp_path, "repo")
    store = Store(Config.load(repo))
    try:
        session = store.remember("first", session="walrus")[0]["session"]
        store.remember("second", session=session)
        store.flush("all")
        git(repo, "reset", "-q", "--hard", "HEAD~1")
        store.remember("third", session=session)
        with pytest.raises(InvalidRecordError, match=f"{session}#1 does not exist") as refused:
            store.checkpoint("all of it", [f"{session}#1-3"], session=session)
        assert f"nearest existing record is {session}#1." not in str(refused.value), refused.value  # it said so of #1 itself
        assert "git reset, clean or stash took it" in str(refused.value), refused.value
    finally:
        store.close()


def test_a_checkpoint_does_not_cover_pending_records_a_git_clean_deleted(tmp_path: Path):
    """Two records not committed yet, then `git clean -fd`: a checkpoint covering them was taken, its commit's chain
    pointing at records no file holds."""
    repo = initialised(tmp_path, "repo")
    store = Store(Config.load(repo))
    try:
        session = store.remember("first", session="walrus")[0]["session"]
        store.remember("second", session=session)
        git(repo, "clean", "-q", "-fd")
        with pytest.raises(InvalidRecordError, match=f"{session}#1 does not exist"):
            store.checkpoint("both", [f"{session}#1-2"], session=session)
    finally:
        store.close()
