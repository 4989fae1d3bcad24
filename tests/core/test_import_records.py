"""Importing records files: records another clone exported land in this clone's own log, so a pull forks nothing;
refs and covers citing records of the same file name the records they became, and a citation of nothing is refused;
a BOM, bytes that are not UTF-8, empty texts and redacted secrets are each handled and reported."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from repo_memory.config import Config
from repo_memory.core.store import Store

from tests.conftest import git, records_of
from tests.core.test_import import import_cli


def every_id(repo: Path) -> Counter[str]:
    """How many records of all the logs in `repo`'s checkout carry each id."""
    return Counter(json.loads(line)["id"] for log in repo.glob(".agents/experience/*/*.jsonl")
                   for line in log.read_text(encoding="utf-8").splitlines())


def cloned(origin: Path, into: Path) -> Path:
    git(origin.parent, "clone", "-q", str(origin), str(into))
    return into


def test_records_another_clone_exported_go_to_this_clones_own_log_so_a_pull_forks_nothing(repo: Path, tmp_path: Path):
    """README's `log tail --json SESSION | log import -  # from another clone` wrote the other clone's log name
    (team-x.<that clone>) with new hashes here; after a pull git union-merged the two into one log of two chains."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    mine = cloned(repo, tmp_path / "mine")
    theirs = Store(Config.load(repo))
    for text in ("team fact one", "team fact two"):
        theirs.remember(text, session="team-x", actor="human", tool="cli")
    summary = theirs.checkpoint("two team facts", [f"{records_of(theirs, 'team-x')[0]['session']}#1-2"], session="team-x")
    theirs.flush("all")
    exported = "".join(line.raw.decode() + "\n" for line in theirs.lines("team-x"))
    theirs.close()
    done = import_cli(mine, "-", input=exported)
    assert done.exit_code == 0 and "Imported 3 record(s)" in done.output, done.output
    git(mine, "pull", "-q", "--no-rebase", "--no-edit")
    ids = every_id(mine)
    assert len(ids) == 6 and set(ids.values()) == {1}, ids  # their log and this clone's copy, no id twice
    here = Store(Config.load(mine))
    copy = records_of(here, "team-x")  # the name a person typed reads this clone's own log
    assert copy[0]["session"] != summary["session"] and copy[0]["session"].startswith("team-x.")
    assert [r["text"] for r in copy] == ["team fact one", "team fact two", "two team facts"]
    here.close()
    assert "Imported 0 record(s)" in import_cli(mine, "-", input=exported).output
    pulled_first = cloned(repo, tmp_path / "pulled-first")  # their log is here already: the records are recognised
    assert "Imported 0 record(s)" in import_cli(pulled_first, "-", input=exported).output
    assert len(every_id(pulled_first)) == 3

