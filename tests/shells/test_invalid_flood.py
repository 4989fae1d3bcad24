"""A committed log of lines that are no record (`{}` by the million, a few KB once git packs them): each is cheap to
reject, and verify and doctor name the first of a log's and count the rest."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.formats import experience

from tests.conftest import git, initialised

FLOOD = 3_000
LOG = ".agents/experience/2026-12/2026-12-05-c0c0c0.jsonl"


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True)


def a_record(repo: Path) -> bytes:
    """The line of a valid record, as remember writes it."""
    store = Store(Config.load(repo), session="s1")
    store.remember("The deploy needs the VPN up before it starts.", kind="note")
    store.close()
    return next((repo / ".agents/experience").rglob("s1*.jsonl")).read_bytes().splitlines()[0]


def fastest(data: bytes) -> float:
    took = []
    for _ in range(5):
        start = time.perf_counter()
        experience.parse_lines(data)
        took.append(time.perf_counter() - start)
    return min(took)


def test_rejecting_a_line_that_is_no_record_costs_less_than_reading_a_record(tmp_path: Path):
    """Each `{}` line cost ~0.4 ms, the full jsonschema walk run to word its problems: 100k of them stalled the first
    search 34 s, 1M of them 291 s, and 10M timed out recall and remember. A valid record costs a compiled check; a line
    that is no record, or one that falls short of a record in one field, now costs no more."""
    record = json.loads(a_record(initialised(tmp_path)))
    near = experience.canonical({**record, "seq": "one"}) + b"\n"  # a record in every field but one
    line = experience.canonical(record) + b"\n"
    valid, empty, almost = fastest(line * 2_000), fastest(b"{}\n" * 2_000), fastest(near * 2_000)
    assert empty < valid and almost < 2 * valid, (empty, almost, valid)


def test_verify_and_doctor_name_the_first_lines_of_a_flood_and_count_the_rest(tmp_path: Path):
    """verify printed a line per invalid line and doctor two (1M lines: 2M lines of output, 1.5 GB, 584 s). Each now
    names a log's first few, each with its problem in full, then how many more there are."""
    repo = initialised(tmp_path)
    (repo / LOG).parent.mkdir(parents=True, exist_ok=True)
    (repo / LOG).write_bytes(b"{}\n" * FLOOD)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "notes")
    found = [f for f in json.loads(cli(repo, "verify", "--json").stdout) if f["where"].startswith(LOG)]
    assert 2 <= len(found) <= 6 and "'id' is a required property" in found[0]["problem"], found
    assert f"{FLOOD - len(found) + 1:,} more lines" in found[-1]["problem"], found[-1]
    assert len(cli(repo, "verify").stdout.splitlines()) <= 8
    said = [f for f in json.loads(cli(repo, "doctor", "--json").stdout) if f["path"].startswith(LOG)]
    assert 2 <= len(said) <= 6 and f"{FLOOD - len(said) + 1:,} more lines" in said[-1]["message"], said
