"""Staleness with git and a running server: a memory's first-seen baseline comes from the code it arrived with, the
parse cache stays small, and doctor asks git about stale anchors in one pass."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.shells.cli import cli
from repo_memory.shells.watch import Watcher

from tests.conftest import GIT_ENV, git, skill_row, write_skill_file

OLD = "class Calc:\n    def alpha(self, x):\n        return x + 1\n"


def test_a_skill_pulled_with_the_code_it_cites_is_not_stale_when_a_server_indexed_it_mid_checkout(store: Store, repo: Path):
    """git writes .agents/ before src/ (index order); a server's watcher indexed the new SKILL.md while git was still
    writing the code, and took the old code as the hand-written anchor's first-seen baseline: stale for good."""
    (repo / "src").mkdir()
    (repo / "src/calc.py").write_text(OLD, encoding="utf-8")
    (repo / "data").mkdir()
    (repo / "data/version.txt").write_text("1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "calc")
    git(repo, "checkout", "-qb", "teach")
    (repo / "src/calc.py").write_text(OLD.replace("x + 1", "x + 2"), encoding="utf-8")
    (repo / "data/version.txt").write_text("2\n", encoding="utf-8")
    write_skill_file(repo, "teach-notes", "What alpha does now.", "Alpha adds two.", extra="metadata:\n  anchors: [src/calc.py::Calc.alpha]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "alpha adds two, and a skill about it")
    git(repo, "checkout", "-q", "main")
    store.refresh()
    # git hands data/version.txt to a smudge filter that waits for us: the merge holds there, the skill already
    # written and src/calc.py not yet
    fifo = repo.parent / "hold"
    os.mkfifo(fifo)
    git(repo, "config", "filter.hold.smudge", f"sh -c 'read _ < {fifo}; cat'")
    (repo / ".git/info/attributes").write_text("data/* filter=hold\n", encoding="utf-8")
    watcher = Watcher(store)
    indexed = threading.Event()
    watcher.listeners.append(lambda: indexed.set() if skill_row(store, "teach-notes") else None)
    watcher.start()
    merge = subprocess.Popen(["git", "merge", "-q", "--ff-only", "teach"], cwd=repo, env={**os.environ, **GIT_ENV})
    try:
        assert indexed.wait(10), "the server did not index the skill while git was writing the code"
        assert merge.poll() is None, "git finished before the server looked: the test proves nothing"
    finally:
        with open(fifo, "w", encoding="utf-8") as release:
            release.write("go\n")
        assert merge.wait(10) == 0
        watcher.stop()
    assert (repo / "src/calc.py").read_text(encoding="utf-8").count("x + 2") == 1
    assert [s.reason for s in store.stale()] == []
    result = CliRunner().invoke(cli, ["--root", str(repo), "stale"])  # another process reads the baselines the server kept
    assert result.exit_code == 0, result.output
