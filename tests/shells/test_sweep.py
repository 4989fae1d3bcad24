"""The pre-tool hook's sweep, asked about shell lines as a harness asks it: a git command that takes or throws away what
is pending finds the session's memory committed first, however the line spells it; one that would lose it is refused."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store

from tests.conftest import git
from tests.shells.test_pretool import pending_memory, refusal, stopped_rebase


def based(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")


SPELLED = {
    "an alias given with -c": "git -c alias.wipe='add -A' wipe",
    "an alias given with -cKEY=VALUE": "git -calias.ci=commit ci -qm x",
    "eval of a quoted line": "eval 'git add -A'",
    "eval of words": "eval git commit -qm x",
    "sudo -u USER": 'sudo -u "$USER" git add -A',
    "sudo": "sudo git add -A",
    "sudo with options": "sudo -E -g wheel -- git stash",
    "doas -u USER": "doas -u root git add -A",
    "timeout -s SIGNAL": "timeout -s KILL 5 git add -A",
    "python -c os.system": "python3 -c 'import os; os.system(\"git add -A\")'",
    "python -c subprocess list": "python3 -c 'import subprocess; subprocess.run([\"git\", \"commit\", \"-qm\", \"x\"])'",
    "node -e execSync": "node -e 'require(\"child_process\").execSync(\"git add -A\")'",
}


@pytest.mark.parametrize("command", SPELLED.values(), ids=SPELLED.keys())
def test_a_sweeping_git_command_however_the_line_spells_it_finds_memory_committed_first(repo: Path, command: str):
    """`eval`, `sudo`/`doas` (and their options' values), an alias given on git's own command line and a one-liner's
    os.system were not read as the git command they run: the agent's `git add -A` took the pending records."""
    based(repo)
    pending_memory(repo)
    assert not refusal(repo, command)
    assert not git(repo, "status", "--porcelain", "--", ".agents"), command
    assert "Memory-Session: s1" in git(repo, "log", "--format=%b")


NOT_SWEEPING = {
    "a one-liner printing a git command": "python3 -c 'print(\"git add -A\")'",
    "sudo as a user named git": "sudo -u git git status",
    "eval of a reader": "eval 'git log -1'",
    "an alias given but not used": "git -c alias.wipe='add -A' status",
}


@pytest.mark.parametrize("command", NOT_SWEEPING.values(), ids=NOT_SWEEPING.keys())
def test_a_line_that_runs_no_sweeping_git_command_leaves_memory_pending(repo: Path, command: str):
    based(repo)
    pending_memory(repo)
    assert not refusal(repo, command)
    assert git(repo, "status", "--porcelain", "--", ".agents"), command


@pytest.mark.parametrize("command", ["eval 'git add -A'", "sudo git add .", "git -c alias.wipe='add -A' wipe",
                                     "doas -u root git clean -fdx"])
def test_a_whole_tree_add_or_clean_behind_eval_sudo_or_a_line_alias_during_a_stopped_rebase_is_refused(repo: Path, command: str):
    stopped_rebase(repo)
    pending_memory(repo)
    assert "rebase" in refusal(repo, command), command


def src_in_a_stopped_rebase(repo: Path) -> None:
    stopped_rebase(repo)
    (repo / "src").mkdir()
    (repo / "src/x.py").write_text("x = 1\n", encoding="utf-8")
    pending_memory(repo)


IN_A_FOLDER = {
    "cd": "cd src && git add .",
    "cd; add -A .": "cd src; git add -A .",
    "pushd": "pushd src >/dev/null && git add . && popd >/dev/null",
    "git -C": "git -C src add .",
    "a glob after cd": "cd src && git add *",
    "cd in a subshell": "(cd src && git add .)",
    "cd in bash -c": "bash -c 'cd src && git add .'",
    "clean after cd": "cd src && git clean -fdxq",
}


@pytest.mark.parametrize("command", IN_A_FOLDER.values(), ids=IN_A_FOLDER.keys())
def test_an_add_or_clean_of_the_folder_a_cd_moved_to_during_a_stopped_rebase_is_not_whole_tree(repo: Path, command: str):
    """`cd src && git add .` stages src/ only, yet was refused as a whole-tree add: the hook read `.` as the root."""
    src_in_a_stopped_rebase(repo)
    assert not refusal(repo, command)
    subprocess.run(["bash", "-c", command], cwd=repo, check=True)
    assert not git(repo, "diff", "--cached", "--name-only", "--", ".agents")  # memory is neither staged
    assert git(repo, "status", "--porcelain", "--", ".agents")  # nor deleted: still pending


STILL_WHOLE = {
    "the root from src": "cd src && git add ..",
    "the root by magic": "cd src && git add :/",
    "memory itself": "cd .agents && git add .",
    "memory by -C": "git -C .agents add .",
    "back up": "cd src && cd .. && git add .",
    "back up by -C": "cd src && git -C .. add .",
    "after the subshell": "(cd src && git add x.py) && git add .",
    "after popd": "pushd src && popd && git add .",
    "a folder not known": 'cd "$DIR" && git add .',
    "no pathspec": "cd src && git add -A",
    "clean of the root": "cd src && git -C .. clean -fdx",
}


@pytest.mark.parametrize("command", STILL_WHOLE.values(), ids=STILL_WHOLE.keys())
def test_an_add_or_clean_that_still_takes_memory_after_a_cd_is_refused(repo: Path, command: str):
    src_in_a_stopped_rebase(repo)
    assert "rebase" in refusal(repo, command), command


def test_a_whole_tree_add_in_another_repository_is_that_repositorys_own(repo: Path, tmp_path: Path):
    """A cd into another repository: its index is not this session's, so nothing of this session's memory is taken."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    src_in_a_stopped_rebase(repo)
    assert not refusal(repo, f"cd {other} && git add -A . && git -C {other} clean -fdx")
    assert "rebase" in refusal(repo, f"cd {other} && git add . && cd {repo} && git add .")


def memory_in_head(repo: Path) -> bool:
    done = subprocess.run(["git", "grep", "-q", "Cache warm", "HEAD", "--", ".agents"], cwd=repo)
    return done.returncode == 0


def memory_on_disk(repo: Path) -> bool:
    return any("Cache warm" in p.read_text(encoding="utf-8") for p in (repo / ".agents").rglob("*.jsonl"))


@pytest.mark.parametrize("command", ["git reset --hard @", "git reset -q --hard 'HEAD^{commit}'", "git reset -q --hard main",
                                     "git read-tree -u --reset HEAD"])
def test_a_discard_to_head_spelled_otherwise_commits_pending_records_a_git_add_staged_first(repo: Path, command: str):
    """A person's `git add -A` staged the pending records; a reset to HEAD that the hook did not know for one (`@`, the
    branch's name) deleted them, and they were in no commit."""
    based(repo)
    pending_memory(repo)
    git(repo, "add", "-A")
    assert not refusal(repo, command)
    subprocess.run(command, shell=True, cwd=repo, check=True, capture_output=True)
    assert memory_in_head(repo), git(repo, "log", "--format=%s")


def agents_commit(repo: Path) -> None:
    (repo / "x.txt").write_text("x\n", encoding="utf-8")
    git(repo, "add", "x.txt")
    git(repo, "commit", "-q", "-m", "agent: x")


@pytest.mark.parametrize("mode", ["--hard", "--merge", "--keep"])
def test_a_reset_past_a_memory_commit_is_refused_with_the_line_that_keeps_it(repo: Path, mode: str):
    """Resetting the branch to a commit before a memory commit threw the session's records off the branch (and off
    disk). The refusal names the line that resets and puts the memory commits back, and that line runs."""
    based(repo)
    base = git(repo, "rev-parse", "HEAD").strip()
    pending_memory(repo)
    store = Store(Config.load(repo))
    store.flush("all")
    store.close()
    memory = git(repo, "rev-parse", "--short", "HEAD").strip()
    agents_commit(repo)
    why = refusal(repo, f"git reset {mode} {base[:10]}")
    assert memory in why and "cherry-pick" in why, why
    line = re.search(r"run `([^`]+)`", why)
    assert line, why
    assert not refusal(repo, line.group(1)), line.group(1)
    subprocess.run(line.group(1), shell=True, cwd=repo, check=True, capture_output=True)
    assert memory_in_head(repo) and not (repo / "x.txt").exists(), git(repo, "log", "--format=%h %s")


@pytest.mark.parametrize("staged", [True, False], ids=["staged by a git add", "untracked"])
@pytest.mark.parametrize("command", ["git reset -q --hard HEAD~1", "git reset -q --merge HEAD~1"])
def test_a_reset_to_another_commit_keeps_the_pending_records_on_disk(repo: Path, command: str, staged: bool):
    """Pending records live in files git does not track; once a `git add` staged them, a `git reset --hard` to another
    commit deleted them. The hook takes them out of the index first (the reset empties it anyway), so they stay."""
    based(repo)
    agents_commit(repo)
    pending_memory(repo)
    if staged:
        git(repo, "add", "-A")
    assert not refusal(repo, command)
    subprocess.run(command, shell=True, cwd=repo, check=True, capture_output=True)
    assert memory_on_disk(repo) and not (repo / "x.txt").exists()
    assert not memory_in_head(repo)  # no memory commit was made for the reset to throw away
