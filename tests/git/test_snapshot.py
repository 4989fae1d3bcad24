"""The tree a loop's check saw (git/snapshot.py), built from a copy of the person's index: a file edited in the same
second it was committed, to the same size, is in it as it is on disk."""

from __future__ import annotations

import time
from pathlib import Path

from repo_memory.git import snapshot
from repo_memory.git.repo import Git

from tests.conftest import git


def test_a_file_edited_to_the_same_size_within_the_second_it_was_committed_is_in_the_worktrees_tree(tmp_path: Path):
    """`loop run` ended succeeded on an agent's uncommitted fix, the person discarded the fix, and the pre-push check
    said "checked at …, nothing changed since" and let the push through: the run's tree was HEAD's. The index was copied
    with a new file time, so git took the entry of a file changed within the second it was staged (same size, same
    seconds) as clean: git re-reads such a racily clean entry only while the index is no newer than the file."""
    work, scratch = tmp_path / "work", tmp_path / "scratch"
    scratch.mkdir()
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    while time.time() % 1 > 0.2:  # the commit and the edit within one second
        time.sleep(0.01)
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    git(work, "add", "calc.py")
    git(work, "commit", "-q", "-m", "calc")
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")  # the agent's fix, same size
    time.sleep(1.1)  # the check runs a second later
    head = git(work, "rev-parse", "HEAD^{tree}").strip()
    tree = snapshot.of_worktree(Git(work, work / ".git"), scratch, ".agents/experience")
    assert tree and tree != head
    assert git(work, "rev-parse", f"{tree}:calc.py").strip() == git(work, "hash-object", "calc.py").strip()
