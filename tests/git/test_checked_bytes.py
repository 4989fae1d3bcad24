"""A memory commit holds exactly the log bytes the committer checked under the log's lock, never bytes that reached
the file after the check: git used to read the file again a moment later to build the commit's tree."""

from __future__ import annotations

import json
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
