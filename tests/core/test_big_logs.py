"""A big log (a long session, an import) costs recall no more memory than a small one: a process held the whole log
and its committed copy for every hit in it, and its first look at the log held every record of it at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.core.store import Store
from repo_memory.formats import experience
from repo_memory.index import records

from tests.conftest import git, index_snapshot, sqlite_steps

MB = 1 << 20


def peak_kb(repo: Path, *args: str) -> int:
    """The peak resident memory, in KiB, of `repo-memory ARGS` run in `repo` (its rusage, read by a process that ran it)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "repo_memory", *args], cwd=repo,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def imported(repo: Path, tmp_path: Path, session: str, records: int) -> Path:
    """The log `log import` makes of `records` notes of about 500 bytes in `session`, committed."""
    lines = tmp_path / f"{session}.jsonl"
    with lines.open("w", encoding="utf-8") as out:
        for n in range(records):
            out.write(json.dumps({"kind": "observation", "session": session, "text": f"note {n} " + "lorem ipsum dolor sit amet " * 16}) + "\n")
    done = subprocess.run([sys.executable, "-m", "repo_memory", "log", "import", str(lines)], cwd=repo, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not git(repo, "status", "--porcelain", "--", ".agents")  # committed: each hit is checked against HEAD
    return next((repo / ".agents" / "experience").rglob(f"{session}.*.jsonl"))


def first_look(repo: Path, *args: str) -> int:
    """peak_kb of a process that finds no index: its first look at every log, as a clone that just pulled them."""
    for index in (repo / ".git" / "repo-memory").glob("index.sqlite*"):
        index.unlink()
    return peak_kb(repo, *args)


def test_recall_over_a_committed_log_of_many_megabytes_holds_neither_it_nor_its_records_whole(repo: Path, tmp_path: Path):
    query = ("search", "lorem", "note", "7", "-n", "5")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    imported(repo, tmp_path, "small", 200)
    small_first, small_later = first_look(repo, *query), peak_kb(repo, *query)
    size_kb = os.path.getsize(imported(repo, tmp_path, "big", 16_000)) // 1024
    assert size_kb > 10 * 1024
    first, later = first_look(repo, *query), peak_kb(repo, *query)
    # before: the first look +7x the log's size, a later search +4x (the log and its committed copy read whole); now
    # about +1.3x and +0 here, and a first look at a log of 96 MB +34 MB
    assert later - small_later < size_kb // 2, (small_later, later, size_kb)
    assert first - small_first < 2 * size_kb, (small_first, first, size_kb)


def test_records_appended_to_a_long_log_cost_the_index_as_much_as_those_appended_to_a_short_one(store: Store):
    """Telling new records' ids from those their log already has asked SQLite for the log's rows by file, then by id:
    for more than a few ids, and without statistics, it chose the index on the file, so an import into a long log,
    or a first look at one a block at a time, read every row of the log again for each 500 records (a first look at a
    log of 100k records took 1.6x as long). Counted in SQLite's virtual-machine steps, which do not depend on how busy
    the machine is."""
    source = store.source("human", "import")

    def steps(session: str) -> int:
        return sqlite_steps(store, lambda: store.log(session, [experience.Entry("observation", text=f"More {i} on the build.",
                                                                                source=source) for i in range(600)]))

    store.log("short", [experience.Entry("observation", text=f"Note {i} on the build.", source=source) for i in range(3)])
    store.log("long", [experience.Entry("observation", text=f"Note {i} on the build.", source=source) for i in range(20_000)])
    few, many = steps("short"), steps("long")
    assert many < 1.5 * few, f"{few} steps appending 600 records to a log of 3, {many} to one of 20,000"


def test_a_log_read_a_block_at_a_time_is_indexed_as_one_read_whole(store: Store, monkeypatch: pytest.MonkeyPatch):
    """Lines cut by a block's end, a line longer than a block, runs of blank lines longer than one, and neighbours on
    either side of an edge: the index holds what it holds when the whole log is one block."""
    source = store.source("human", "import")
    store.log("blocks", [experience.Entry("observation", text=f"Note {i} " + "on the build " * (400 if i == 7 else i % 5), source=source)
                         for i in range(40)])
    store.log("other", [experience.Entry("observation", text="A log of one block.", source=source)])
    log = next((store.root / ".agents" / "experience").rglob("blocks.*.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)  # blank lines, as a hand edit leaves them: read past, block by block
    log.write_bytes(b"".join([*lines[:5], b"\n" * 3000, *lines[5:], b"\n" * 2000]))
    store.reindex()
    whole = index_snapshot(store)
    monkeypatch.setattr(records, "SYNC_BLOCK", 700)  # the lines are 400-5,700 bytes long
    store.reindex()
    assert index_snapshot(store) == whole and len(whole[1]) > 2 * 41
    assert sum(f.stat().st_size for f in (store.root / ".agents" / "experience").rglob("blocks.*.jsonl")) > 20 * 700


def test_a_record_whose_seq_is_far_past_the_others_costs_a_look_at_its_log_nothing_more(store: Store):
    """The full-text rows of a log read a block at a time were written a span of 2,000 seqs at a time from the first
    seq to the last: one line saying `"seq": 100000000` (by hand, or a damaged merge) made 50,000 queries of it."""
    source = store.source("human", "import")
    store.log("far", [experience.Entry("observation", text=f"Note {i} on the build.", source=source) for i in range(3)])
    log = next((store.root / ".agents" / "experience").rglob("far.*.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)

    def steps(seq: int) -> int:
        """SQLite's steps for a look at the log with a copy of its last record, numbered `seq`, put before that record
        (its bytes moved: the log is read from its start)."""
        last = json.loads(lines[-1])
        copy = json.dumps({**last, "seq": seq, "id": f"{last['id'].rsplit('#', 1)[0]}#{seq}"}).encode() + b"\n"
        log.write_bytes(b"".join([*lines[:-1], copy, lines[-1]]))
        counted = sqlite_steps(store, store.refresh)
        assert store.read(f"{last['id'].rsplit('#', 1)[0]}#{seq}").records
        return counted

    near, far = steps(4), steps(100_000_000)
    assert far < 2 * near, f"{near} steps with a record numbered 4, {far} with one numbered 100,000,000"
