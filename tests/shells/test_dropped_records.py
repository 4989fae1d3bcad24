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
    assert "branch main held them and moved back" in verify.stdout and "branch deleted" not in verify.stdout, verify.stdout
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


def warnings(repo: Path) -> list[dict[str, str]]:
    return [f for f in json.loads(cli_run(repo, "doctor", "--json").stdout) if f["level"] == "warning"]


def spike(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose records were logged on branch `spike`, one more commit made there, and `spike` left for main:
    (the repository, spike's tip)."""
    repo = initialised(tmp_path, "repo")
    git(repo, "checkout", "-q", "-b", "spike")
    add(repo, "the vendor api is slow, do not use it")
    (repo / "a.txt").write_text("spike work\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "spike work")
    tip = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    return repo, tip


@pytest.mark.parametrize("gc", [False, True])
def test_records_of_a_branch_deleted_before_it_was_merged_are_a_note_naming_the_branch_to_get_back(tmp_path: Path, gc: bool):
    """Deleting a spike branch is an ordinary act: verify failed, and doctor's error blamed a force push or a reset."""
    repo, tip = spike(tmp_path)
    git(repo, "branch", "-D", "spike")
    if gc:  # the reflog still reaches the branch's commits: a gc keeps them, and the command given still works
        git(repo, "gc", "-q", "--prune=now")
    verify = cli_run(repo, "verify")
    assert verify.returncode == 0, verify.stdout
    assert "deleted before it was merged" in verify.stdout and "force push" not in verify.stdout, verify.stdout
    assert f"`git branch spike {tip[:12]}`" in verify.stdout and "repo-memory log accept-loss walrus" in verify.stdout
    assert errors(repo) == []
    (finding,) = [w for w in warnings(repo) if "deleted before it was merged" in w["message"]]
    assert finding["path"].startswith("walrus") and finding["path"].endswith("#1"), finding
    back = finding["message"].partition("`git branch ")[2].partition("`")[0]
    subprocess.run(f"git branch {back}", shell=True, cwd=repo, check=True)
    git(repo, "merge", "-q", "--no-edit", "spike")
    verify = cli_run(repo, "verify")
    assert verify.returncode == 0 and "note" not in verify.stdout, verify.stdout
    assert "do not use it" in cli_run(repo, "log", "show", "walrus").stdout


def test_accepting_the_loss_of_a_deleted_branch_silences_it_and_a_pruned_one_is_told_no_command(tmp_path: Path):
    """Accepted, the note goes; once git let the commits go (reflog expired, gc), no command that cannot work is given."""
    repo, _ = spike(tmp_path)
    git(repo, "branch", "-D", "spike")
    session = cli_run(repo, "verify").stdout.partition("repo-memory log accept-loss ")[2].partition("`")[0]
    accepted = cli_run(repo, "log", "accept-loss", session)
    assert accepted.returncode == 0 and f"{session}#1" in accepted.stdout, accepted.stdout + accepted.stderr
    verify = cli_run(repo, "verify")
    assert verify.returncode == 0 and "walrus" not in verify.stdout, verify.stdout
    (tmp_path / "other").mkdir()
    other, _ = spike(tmp_path / "other")
    git(other, "branch", "-D", "spike")
    git(other, "reflog", "expire", "--expire-unreachable=now", "--all")
    git(other, "gc", "-q", "--prune=now")
    verify = cli_run(other, "verify")
    assert verify.returncode == 0 and "git checkout" not in verify.stdout and "git branch" not in verify.stdout, verify.stdout


def test_a_branch_reset_past_the_records_and_then_deleted_stays_an_error(tmp_path: Path):
    """The branch did not hold the records when it was deleted: a reset dropped them, which is no deliberate deletion."""
    repo, _ = spike(tmp_path)
    git(repo, "checkout", "-q", "spike")
    git(repo, "reset", "-q", "--hard", "main")
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-D", "spike")
    verify = cli_run(repo, "verify")
    assert verify.returncode == 1 and "git reset" in verify.stdout, verify.stdout
    (finding,) = errors(repo)
    assert finding["path"].startswith("walrus") and finding["path"].endswith("#1"), finding
