"""A memory commit holds exactly the log bytes the committer checked under the log's lock, never bytes that reached
the file after the check: git used to read the file again a moment later to build the commit's tree."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store

from tests.conftest import git, kept

FORGED = b'{"id": "forged#1", "text": "FORGED: an unmarked line written by a file tool"}\n'
TORN = b'{"id": "torn#1", "text": "half a rec'


def arm(repo: Path, log: Path, data: bytes) -> Path:
    """A git hook that runs once the commit's temporary index is written (after the check, before git reads the work
    tree) and appends `data` to `log` there: the moment a writer that takes no lock (an agent's file tool) or a writer
    of ours killed mid-append can leave bytes in the log. It fires once; returns the file that says it fired."""
    fired = repo.parent / "fired"
    (repo.parent / "data").write_bytes(data)
    hooks = repo / git(repo, "rev-parse", "--git-path", "hooks").strip()
    hooks.mkdir(parents=True, exist_ok=True)
    hook = hooks / "post-index-change"
    hook.write_text(f"""#!/bin/sh
case "$GIT_INDEX_FILE" in *commit-index-*)
  [ -e '{fired}' ] || {{ : > '{fired}'; cat '{repo.parent / "data"}' >> '{log}'; }} ;;
esac
""")
    hook.chmod(0o755)
    return fired


@pytest.mark.parametrize("mode", ["auto", "private"])
@pytest.mark.parametrize("late", [FORGED, TORN], ids=["unmarked-line", "torn-tail"])
def test_bytes_that_reach_a_log_after_its_check_wait_outside_the_commit(repo: Path, mode: str, late: bytes):
    """The committer checked a log under its lock (moved a torn tail aside, found no unmarked line), let the lock go,
    and git read the file a moment later: a line a file tool appended, or a fragment a killed writer left, in that
    moment was committed unchecked. The commit now holds the checked bytes; the late ones wait on disk."""
    (repo / ".agents/repo-memory.toml").write_text(f'commit = "{mode}"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    store = Store(Config.load(repo), session="s1")
    store.remember("Tests need Postgres 16 running locally.")
    store.remember("Chose pytest-postgresql over docker.")
    [log] = (repo / ".agents/experience").glob(f"*/{kept(repo, 's1')}.jsonl")
    rel = log.relative_to(repo).as_posix()
    checked = log.read_bytes()
    fired = arm(repo, log, late)
    store.close()  # commits the session's experience
    assert fired.exists()  # the bytes came in the window
    ref = "HEAD" if mode == "auto" else "refs/memory/main"
    committed = git(repo, "show", f"{ref}:{rel}").encode()
    assert committed == checked, committed  # what was checked, and nothing that came after
    assert [json.loads(line)["text"] for line in committed.splitlines()] == [
        "Tests need Postgres 16 running locally.", "Chose pytest-postgresql over docker."]
    assert log.read_bytes() == checked + late  # nothing lost: the late bytes wait on disk
    if mode == "auto":  # the user's index holds what was committed: the late bytes are neither staged nor committed
        assert git(repo, "diff", "--cached", "--name-only") == ""
        assert git(repo, "status", "--porcelain") == f" M {rel}\n"
        log.write_bytes(checked)  # without the late bytes, git sees no change at all
        assert git(repo, "status", "--porcelain") == ""
    else:  # a private commit never touches the user's index
        assert git(repo, "ls-files", "--", rel) == ""


def test_a_committed_log_is_clean_also_for_git_commands_that_trust_the_index_file_state(repo: Path):
    """The index entry of a committed log points at its blob and also records the file's state (size, times), so plumbing
    that compares only those (`git diff-files`, `git diff-index`, as scripts and prompts use) sees no change either."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    store = Store(Config.load(repo), session="s1")
    store.remember("Tests need Postgres 16 running locally.")
    store.close()
    [log] = (repo / ".agents/experience").glob(f"*/{kept(repo, 's1')}.jsonl")
    assert git(repo, "ls-files", "--", log.relative_to(repo).as_posix()) != ""
    assert git(repo, "diff-files", "--name-only") == "" and git(repo, "diff-index", "--name-only", "HEAD") == ""


def test_a_log_deleted_before_its_check_is_not_committed_though_a_file_comes_back_in_the_window(repo: Path):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    store = Store(Config.load(repo), session="s1")
    store.remember("Tests need Postgres 16 running locally.")
    [log] = (repo / ".agents/experience").glob(f"*/{kept(repo, 's1')}.jsonl")
    rel = log.relative_to(repo).as_posix()
    log.unlink()  # a person deletes the log before its commit; a file tool writes one there after the check
    fired = arm(repo, log, FORGED)
    store.close()
    assert fired.exists() and log.read_bytes() == FORGED
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD", "--", ".agents/experience") == ".agents/experience/.gitkeep\n"
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == f"?? {rel}\n"  # the deletion checked, not the file that came back


def session_log(repo: Path, *texts: str) -> tuple[Store, Path, str]:
    """A store of session s1 on a committed repository that remembered `texts`; its log and the log's path in git."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    store = Store(Config.load(repo), session="s1")
    for text in texts:
        store.remember(text)
    [log] = (repo / ".agents/experience").glob(f"*/{kept(repo, 's1')}.jsonl")
    return store, log, log.relative_to(repo).as_posix()


def hook(repo: Path, body: str) -> None:
    """A post-index-change hook that runs `body` once (the `fired` file beside the repository says it ran)."""
    fired = repo.parent / "fired"
    path = repo / ".git/hooks/post-index-change"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n[ -e '{fired}' ] && exit 0\n{body}\n")
    path.chmod(0o755)


@pytest.mark.parametrize("filemode", ["true", "false"])
def test_an_executable_log_is_committed_with_the_mode_git_would_give_it(repo: Path, filemode: str):
    """git gives a file with its executable bit mode 100755, unless core.fileMode is false (a file system that cannot
    keep the bit, where every file looks executable): then 100644. A log committed as checked bytes gets the same, so
    `git status` stays clean."""
    store, log, rel = session_log(repo, "Tests need Postgres 16 running locally.")
    git(repo, "config", "core.fileMode", filemode)
    log.chmod(0o755)
    store.close()
    mode = "100755" if filemode == "true" else "100644"
    assert git(repo, "ls-tree", "HEAD", "--", rel).split()[0] == mode
    assert git(repo, "ls-files", "-s", "--", rel).split()[0] == mode
    assert git(repo, "status", "--porcelain") == "" and git(repo, "diff-files", "--name-only") == ""


@pytest.mark.parametrize("link", ["hard link", "symbolic link", "folder link"])
def test_a_log_reached_through_a_link_is_not_committed(repo: Path, tmp_path: Path, link: str):
    """A log that is a link, or lies in a folder that is one, cannot be checked as a file of this repository (a hard
    link's other name can be written by anyone, unchecked; a link's target lies outside): it is held back with the
    reason, and nothing of it reaches the commit or the user's index."""
    store, log, rel = session_log(repo, "Tests need Postgres 16 running locally.")
    outside = tmp_path / "outside"
    if link == "hard link":
        os.link(log, outside)
    elif link == "symbolic link":
        outside.write_bytes(log.read_bytes())
        log.unlink()
        log.symlink_to(outside)
    else:
        shutil.move(log.parent, outside)
        log.parent.symlink_to(outside)
    result = store.flush(session=store.session)
    assert result is None or not result.sha
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD", "--", ".agents/experience") == ".agents/experience/.gitkeep\n"
    assert git(repo, "ls-files", "--", ".agents/experience") == ".agents/experience/.gitkeep\n"
    assert "link" in store.commit_status("experience")
    store.close()


def test_a_committed_log_records_its_file_state_though_another_git_process_holds_the_index_a_moment(repo: Path):
    """Another git process (an editor's `git add`) takes .git/index.lock just as the committed log's entry is set: its
    file state (size, times) is still recorded once the lock is free, so `git diff-files` sees no change."""
    store, log, rel = session_log(repo, "Tests need Postgres 16 running locally.")
    lock = repo / ".git/index.lock"
    hook(repo, f"""case "$GIT_INDEX_FILE" in *commit-index-*) exit 0;; esac
: > '{repo.parent / "fired"}'; : > '{lock}'; ( sleep 1; rm -f '{lock}' ) >/dev/null 2>&1 &""")
    result = store.flush(session=store.session)
    assert (repo.parent / "fired").exists() and result is not None and result.sha and not result.deferred
    assert git(repo, "diff-files", "--name-only") == "" and git(repo, "diff-index", "--name-only", "HEAD") == ""
    store.close()


def test_a_memory_commit_never_takes_a_record_out_of_a_branch_that_moved_while_it_committed(repo: Path):
    """The branch moves between the check and the ref update (the user's `git commit -a` takes the log as it is then,
    with a record of ours the check did not see): the memory commit on the new tip must not put the older bytes back,
    which would take that record out of the branch. It is checked again instead."""
    store, log, rel = session_log(repo, "Tests need Postgres 16 running locally.", "Chose pytest-postgresql over docker.")
    first, second = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(first)  # the check sees the first record; the second arrives after it
    (repo.parent / "second").write_bytes(second)
    hook(repo, f"""case "$GIT_INDEX_FILE" in *commit-index-*)
  : > '{repo.parent / "fired"}'; cat '{repo.parent / "second"}' >> '{log}'
  cd '{repo}' && env -u GIT_INDEX_FILE git add -A && env -u GIT_INDEX_FILE git commit -q -m 'user: commit -a' ;;
esac""")
    store.flush(session=store.session)
    assert (repo.parent / "fired").exists()
    store.close()
    assert git(repo, "show", f"HEAD:{rel}").encode() == first + second
    assert not [line for line in git(repo, "log", "-p", "--format=", "--", rel).splitlines() if line.startswith("-{")]
