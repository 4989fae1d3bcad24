"""A stale record has a way out: it is settled by a correction citing it, by feedback that it is outdated or
misled, or by a person's `stale --pin ID`. All through the CLI, on real git repositories with real edits."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

from tests.conftest import git

SAVE = "pkg/store.py::Store.save"
CODE = "class Store:\n    def save(self, rows):\n        return list(rows)\n\n    def load(self, key):\n        return key\n"


def cli_run(repo: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(repo), *args])
    return result.exit_code, result.output


def _stale_record(store: Store, repo: Path) -> str:
    """A record citing Store.save, then a commit that changes Store.save: the record is stale."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    record = store.remember("Store.save keeps the rows in order", refs=[SAVE])[0]["id"]
    store.flush("all")
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows)"), encoding="utf-8")
    git(repo, "commit", "-qam", "save sorts the rows")
    code, out = cli_run(repo, "stale")
    assert code == 1 and record in out
    return record


def test_a_correction_citing_the_stale_record_and_the_new_code_settles_it(store: Store, repo: Path):
    """doctor said "remember a correction that cites the new code"; doing so (citing the old record too) changed
    nothing: `stale` exited 1 and doctor warned about the record for good."""
    record = _stale_record(store, repo)
    code, correction = cli_run(repo, "log", "add", "Store.save now sorts the rows", "-r", SAVE, "-r", record)
    assert code == 0, correction
    code, out = cli_run(repo, "stale")
    assert code == 0, out
    assert f"{record}  " not in out and "1 stale record(s) settled" in out
    listed = json.loads(cli_run(repo, "stale", "--json")[1])
    assert [(i["memory"], i["settled"]) for i in listed] == [(record, f"corrected by {correction.strip()}")]
    doctor = json.loads(cli_run(repo, "doctor", "--json")[1])
    assert not [f for f in doctor if f["level"] == "warning" and record in f["path"] + f["message"]]
    assert [f["level"] for f in doctor if "settled" in f["message"]] == ["info"]


def test_feedback_outdated_or_misled_settles_a_stale_record_and_helped_does_not(store: Store, repo: Path):
    record = _stale_record(store, repo)
    assert cli_run(repo, "feedback", record, "helped")[0] == 0
    assert cli_run(repo, "stale")[0] == 1, "feedback that it helped is no reason to stop checking it"
    assert cli_run(repo, "feedback", record, "outdated", "--note", "save sorts now")[0] == 0
    code, out = cli_run(repo, "stale")
    assert code == 0 and "1 stale record(s) settled" in out
    assert json.loads(cli_run(repo, "stale", "--json")[1])[0]["settled"].startswith("reported outdated in ")


def test_a_follow_up_written_against_the_same_old_code_does_not_settle_the_record(store: Store, repo: Path):
    """A record citing an earlier one about the same code, both written before the code changed, corrects nothing."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    first = store.remember("Store.save keeps the rows in order", refs=[SAVE])[0]["id"]
    second = store.remember("and it copies them", refs=[SAVE, first])[0]["id"]
    store.flush("all")
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows)"), encoding="utf-8")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{first}  " in out and f"{second}  " in out


def test_a_person_pins_a_stale_record_with_a_committed_note_that_cites_the_code_as_it_is_now(store: Store, repo: Path):
    """`stale --pin <record id>` was refused with a hint to use a skill slug ('…-1')."""
    record = _stale_record(store, repo)
    code, out = cli_run(repo, "stale", "--pin", record)
    assert code == 0, out
    assert f"pinned {SAVE} for {record}" in out and "skill name" not in out
    listed = json.loads(cli_run(repo, "stale", "--json")[1])
    assert [i["settled"].startswith("checked by a person in ") for i in listed] == [True]
    note = listed[0]["settled"].rsplit(" ", 1)[1]
    assert record in git(repo, "log", "-p", "-1", "--format=%s", "--", ".agents/experience")  # committed, as memory is
    # the person's check holds for the code as it was then: when it changes again, the note is what goes stale
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows, reverse=True)"), encoding="utf-8")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{note}  {SAVE}" in out and f"{record}  " not in out
    code, out = cli_run(repo, "stale", "--pin", f"{record.split('#')[0]}#99")
    assert code == 1 and "does not exist" in out and "skill name" not in out


def test_doctors_fix_for_a_stale_record_names_the_commands_that_settle_it(store: Store, repo: Path):
    record = _stale_record(store, repo)
    finding = next(f for f in json.loads(cli_run(repo, "doctor", "--json")[1]) if record in f["path"] + f["message"])
    assert f"repo-memory stale --pin {record}" in finding["fix"] and f"repo-memory feedback {record} outdated" in finding["fix"]
    assert f"-r {record}" in finding["fix"]  # a correction that cites it: `repo-memory log add TEXT -r ID -r PATH::SYMBOL`
