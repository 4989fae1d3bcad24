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


def _counting_git(tmp_path: Path, monkeypatch) -> Path:
    """A `git` first on PATH that notes each run, then runs the real one."""
    real = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True, check=True).stdout.strip()
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "git").write_text(f'#!/bin/sh\necho "$*" >> {folder}/runs\nexec {real} "$@"\n', encoding="utf-8")
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return folder / "runs"


def test_doctor_asks_git_about_stale_anchors_in_one_pass_however_many(repo: Path, tmp_path: Path, monkeypatch):
    """doctor started two git processes per stale anchor (`diff --quiet`, `log -1`): 18 s at 2,000 after a move."""
    (repo / "pkg").mkdir()
    for i in range(30):
        (repo / f"pkg/m{i}.py").write_text("def f0():\n    return 0\n\n\ndef f1():\n    return 1\n", encoding="utf-8")
    cited = [f"pkg/m{i}.py::f{j}" for i in range(30) for j in range(2)]
    write_skill_file(repo, "few", "Two functions.", "Read them.", extra=f"metadata:\n  anchors: {cited[:2]}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code and a skill")
    git(repo, "mv", "pkg", "lib")
    git(repo, "commit", "-qm", "move pkg to lib")
    runs = _counting_git(tmp_path, monkeypatch)

    def doctor() -> tuple[str, list[str]]:
        CliRunner().invoke(cli, ["--root", str(repo), "doctor"])  # the first look after a change indexes it
        runs.write_text("", encoding="utf-8")
        output = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
        return output, runs.read_text(encoding="utf-8").splitlines()

    few, few_runs = doctor()
    assert few.count("move pkg to lib") == 1 and "2 anchors of 1 memory" in few, few  # one finding per cause
    write_skill_file(repo, "many", "Sixty functions.", "Read them.", extra=f"metadata:\n  anchors: {cited}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a skill citing sixty functions")
    many, many_runs = doctor()
    assert many.count("move pkg to lib") == 1 and "62 anchors of 2 memories" in many, many
    assert len(many_runs) == len(few_runs), many_runs


def test_code_changes_names_the_last_commit_of_each_file_however_far_back(store: Store, repo: Path):
    (repo / "old.py").write_text("def f():\n    return 0\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the old file")
    for i in range(55):  # more than the first look through history covers
        (repo / "busy.py").write_text(f"N = {i}\n", encoding="utf-8")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"busy {i}")
    (repo / "edited.py").write_text("X = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "edited")
    (repo / "edited.py").write_text("X = 2\n", encoding="utf-8")
    changes = store.code_changes(["old.py", "busy.py", "edited.py", "never.py", "*.py"])
    assert {path: change.split(" ", 4)[-1] if "last" in change else change for path, change in changes.items()} == {
        "old.py": "the old file", "busy.py": "busy 54", "edited.py": "uncommitted changes in edited.py"}


def test_the_parse_cache_keeps_hashes_not_trees_stays_bounded_and_forgets_deleted_files(repo: Path):
    """The server kept every cited file's syntax tree for good (about 30x the source: 180 -> 580 MB at 800 files),
    deleted files too."""
    from repo_memory.code.anchors import Code

    for i in range(12):
        (repo / f"m{i}.py").write_text("".join(f"@cached\ndef f{j}():\n    return {j}\n\n" for j in range(20)), encoding="utf-8")
    code = Code(repo, max_files=8)
    with code.batch():
        for i in range(12):
            assert code.resolve(f"m{i}.py::f1").hash and code.resolve(f"m{i}.py::f7").hash
    files, trees = code.held()
    assert files == 8 and trees <= 1
    (repo / "m11.py").unlink()
    assert code.resolve("m11.py::f1").problem == "the file does not exist"
    assert code.held()[0] == 7
    assert code.resolve("m3.py::f7").hash == code.resolve("m4.py::f7").hash  # one evicted: parsed again, the same answer


def test_a_new_process_trusts_the_index_for_cited_files_unchanged_since(store: Store, repo: Path):
    """Each new process (a server starting, `repo-memory stale`, doctor) parsed every cited file again before its first
    answer: 2.1-2.8 s at 800 files."""
    from repo_memory.code.anchors import Code
    from repo_memory.code.staleness import Staleness
    from repo_memory.index.db import Database

    for i in range(5):
        (repo / f"m{i}.py").write_text(f"def f():\n    return {i}\n", encoding="utf-8")
    store.write_skill("five", "Five functions.", "Read them.", anchors=[f"m{i}.py::f" for i in range(5)], actor="human")
    store.refresh()
    (repo / "m4.py").write_text("def f():\n    return 44\n", encoding="utf-8")
    assert [s.anchor for s in store.stale()] == ["m4.py::f"]
    db = Database(store.config.index_path)
    try:
        code = Code(repo)
        fresh = Staleness(db, code, store.config.state_dir)  # what a new process starts with
        fresh.check()
        assert code.held()[0] == 0, "files that did not change since the index saw them were parsed again"
        (repo / "m0.py").write_text("def f():\n    return 100\n", encoding="utf-8")
        assert [s.anchor for s in fresh.stale(check=True)] == ["m0.py::f", "m4.py::f"] and code.held()[0] == 1
    finally:
        db.close()


def test_a_file_moved_away_is_named_with_where_it_went(store: Store, repo: Path):
    (repo / "tests").mkdir()
    (repo / "tests/test_a.py").write_text("def test_a():\n    assert True\n", encoding="utf-8")
    (repo / "gone.py").write_text("X = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code")
    git(repo, "mv", "tests", "testsuite")
    git(repo, "rm", "-q", "gone.py")
    git(repo, "commit", "-qm", "move tests to testsuite")
    changes = store.code_changes(["tests/test_a.py", "gone.py"])
    assert changes["tests/test_a.py"].startswith("moved to testsuite/test_a.py in ") and changes["tests/test_a.py"].endswith(" move tests to testsuite")
    assert changes["gone.py"].startswith("last changed in ") and changes["gone.py"].endswith(" move tests to testsuite")
