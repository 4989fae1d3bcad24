"""Importing into a session another process keeps appending to (a running `repo-memory serve`, a `log add` loop): the
import gives its records ids before writing them, and when the other writer took some meanwhile, the records not
written yet take the next ones instead, with what cites them; the import finishes in one run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import repo_memory
from repo_memory.core import importing
from repo_memory.core.store import Store
from repo_memory.formats import refs as grammar
from repo_memory.shells.cli import cli

from tests.core.test_import import write_jsonl
from tests.core.test_import_records import every_id

WRITER = """
import pathlib, sys
from repo_memory.config import Config
from repo_memory.core.store import Store
store = Store(Config.load(pathlib.Path(sys.argv[1])))
asked, n = sys.argv[2] == "asked", 0
while not (pathlib.Path(sys.argv[1]).parent / "stop").exists():
    if asked and not sys.stdin.readline():
        break
    n += 1
    print(store.remember(f"written meanwhile {n}", session="ops", actor="human", tool="cli")[0]["id"], flush=True)
store.flush("all")
store.close()
"""


@pytest.fixture
def writer(repo: Path, request: pytest.FixtureRequest) -> Iterator[subprocess.Popen[str]]:
    """Another process appending to `ops` through its own Store: when asked (a line on its stdin), or in a loop until a
    file `stop` is beside the repository; it prints each record's id."""
    env = {**os.environ, "PYTHONPATH": str(Path(repo_memory.__file__).parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(repo), request.param], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    yield proc
    (repo.parent / "stop").touch()
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0


class Raced:
    """The Store, with the writer appending to `ops` (and done) before each of the import's first `times` writes."""

    def __init__(self, store: Store, writer: subprocess.Popen[str], times: int):
        self._store, self._writer, self.times = store, writer, times

    def batched(self) -> AbstractContextManager[None]:
        if self.times:
            self.times -= 1
            assert self._writer.stdin is not None and self._writer.stdout is not None
            self._writer.stdin.write("write\n")
            self._writer.stdin.flush()
            assert "#" in self._writer.stdout.readline()
        return self._store.batched()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def chained(path: Path, count: int) -> Path:
    """`count` entries of `ops`, each citing the one before it; every 100th has an entry of `other` citing it, and the
    1200th is a summary covering entries 480 to 520 (a range across a batch of 500)."""
    lines: list[dict[str, Any]] = []
    for n in range(1, count + 1):
        lines.append({"kind": "note", "text": f"entry {n}", "session": "ops", "refs": [f"ops#{n - 1}"] if n > 1 else []})
        if n % 100 == 0:
            lines.append({"kind": "note", "text": f"aside on {n}", "session": "other", "refs": [f"ops#{n}"]})
    lines.append({"kind": "summary", "text": "entries 480 to 520", "session": "ops", "covers": ["ops#480-520"]})
    return write_jsonl(path, lines)


def assert_cited_right(repo: Path, count: int) -> None:
    """No id twice, and every ref and cover of an imported record names the record the file meant."""
    assert set(every_id(repo).values()) == {1}
    records = [json.loads(line) for log in repo.glob(".agents/experience/*/*.jsonl") for line in log.read_text(encoding="utf-8").splitlines()]
    text = {r["id"]: r["text"] for r in records}
    entries = [r for r in records if r["text"].startswith("entry ")]
    assert len(entries) == count
    for r in entries:
        n = int(r["text"].split()[1])
        assert [text[ref] for ref in r["refs"]] == ([f"entry {n - 1}"] if n > 1 else []), r
    asides = [r for r in records if r["text"].startswith("aside on ")]
    assert len(asides) == count // 100 and all(text[r["refs"][0]] == f"entry {r['text'].split()[2]}" for r in asides)
    summary = next(r for r in records if r["kind"] == "summary")
    covered = [f"{ref.session}#{seq}" for ref in map(grammar.record, summary["covers"]) for seq in range(ref.start, ref.end + 1)]
    assert [text[c] for c in covered] == [f"entry {n}" for n in range(480, 521)], summary["covers"]


@pytest.mark.parametrize("writer", ["asked"], indirect=True)
def test_an_import_racing_another_writer_of_its_session_takes_the_ids_after_the_writers_and_finishes(
        store: Store, repo: Path, tmp_path: Path, writer: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch):
    """Since the ids were given before writing, each batch after another writer's append stopped with ConflictError, and
    a re-run at the next: a session a running server kept writing to was never imported."""
    monkeypatch.setattr(importing, "BATCH", 500)
    store.remember("before the import", session="ops", actor="human", tool="cli")
    found = importing.sources([chained(tmp_path / "chain.jsonl", 1300)])
    raced = Raced(store, writer, times=3)  # before each write: ops, ops, then the rest of ops and other
    report = importing.Importer(raced, None).run(found, checked=True)  # type: ignore[arg-type]
    store.flush("all")
    assert raced.times == 0 and report.added == 1300 + 13 + 1
    assert_cited_right(repo, 1300)
    ops = [ln.record["text"] for ln in store.lines("ops") if ln.record]
    assert [t for t in ops if t.startswith("written meanwhile")] == [f"written meanwhile {n}" for n in (1, 2, 3)]
    again = importing.Importer(store, None).run(found, checked=True)
    assert again.added == 0 and again.present == 1314
    verified = CliRunner().invoke(cli, ["--root", str(repo), "verify"])
    assert verified.exit_code == 0, verified.output


@pytest.mark.parametrize("writer", ["loop"], indirect=True)
def test_log_import_finishes_in_one_run_while_another_process_appends_to_its_session_in_a_loop(
        repo: Path, tmp_path: Path, writer: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(importing, "BATCH", 200)
    assert writer.stdout is not None and "#" in writer.stdout.readline()  # it writes: the import races it throughout
    done = CliRunner().invoke(cli, ["--root", str(repo), "log", "import", str(chained(tmp_path / "chain.jsonl", 1300))])
    (repo.parent / "stop").touch()
    assert done.exit_code == 0 and "Imported 1314 record(s)" in done.output, done.output
    assert writer.wait(timeout=60) == 0
    assert_cited_right(repo, 1300)
    again = CliRunner().invoke(cli, ["--root", str(repo), "log", "import", str(tmp_path / "chain.jsonl"), "--json"])
    assert json.loads(again.output)["added"] == 0
    verified = CliRunner().invoke(cli, ["--root", str(repo), "verify"])
    assert verified.exit_code == 0, verified.output


def test_the_report_of_one_record_added_to_a_session_names_its_one_id(store: Store, repo: Path, tmp_path: Path):
    """It said `ops.<clone>#2-2: 1 new`."""
    store.remember("before the import", session="ops", actor="human", tool="cli")
    done = CliRunner().invoke(cli, ["--root", str(repo), "log", "import", str(write_jsonl(tmp_path / "one.jsonl", [
        {"kind": "note", "text": "the one", "session": "ops"}]))])
    assert done.exit_code == 0 and f"{store.following('ops').rpartition('#')[0]}#2: 1 new," in done.output, done.output
