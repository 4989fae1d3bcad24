"""The pre-tool hook's sweep, asked about shell lines as a harness asks it: a git command that takes or throws away what
is pending finds the session's memory committed first, however the line spells it; one that would lose it is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

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
