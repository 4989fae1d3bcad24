"""Importing records files: records another clone exported land in this clone's own log, so a pull forks nothing;
refs and covers citing records of the same file name the records they became, and a citation of nothing is refused;
a BOM, bytes that are not UTF-8, empty texts and redacted secrets are each handled and reported."""

from __future__ import annotations

import codecs
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core import importing
from repo_memory.core.intake import undecodable
from repo_memory.core.store import Store
from repo_memory.errors import ConflictError
from repo_memory.formats.experience import Entry
from repo_memory.shells.cli import cli

from tests.conftest import git, records_of
from tests.core.test_import import GITHUB_TOKEN, import_cli, run_import, write_jsonl


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
    assert copy[2]["covers"] == [f"{copy[0]['session']}#1-2"]  # the summary cites the copies it came with
    here.close()
    assert "Imported 0 record(s)" in import_cli(mine, "-", input=exported).output
    pulled_first = cloned(repo, tmp_path / "pulled-first")  # their log is here already: the records are recognised
    assert "Imported 0 record(s)" in import_cli(pulled_first, "-", input=exported).output
    assert len(every_id(pulled_first)) == 3


def test_refs_and_covers_citing_records_of_the_same_file_name_the_records_they_became(store: Store, repo: Path, tmp_path: Path):
    """Entries of session "ops" become ops.<clone>: refs and covers still said ops#1, which names nothing."""
    path = write_jsonl(tmp_path / "notes.jsonl", [
        {"kind": "note", "text": "Migrations fail with permission denied on staging", "session": "ops"},
        {"kind": "note", "text": "Staging DB is read-only on Fridays", "session": "ops", "refs": ["ops#1", "https://x.org/a#b"]},
        {"kind": "note", "text": "unrelated", "session": "other"},
        {"kind": "summary", "text": "Friday migration failures are the read-only staging DB", "covers": ["ops#1-2", "other#1"],
         "session": "ops"}])
    run_import(store, path)
    ops, other = records_of(store, "ops"), records_of(store, "other")
    session = ops[0]["session"]
    assert session != "ops" and ops[1]["refs"] == [f"{session}#1", "https://x.org/a#b"]
    assert ops[2]["covers"] == [f"{session}#1-2", other[0]["id"]]
    assert [r.text for r in store.read(ops[2]["covers"][0]).records] == [ops[0]["text"], ops[1]["text"]]
    assert run_import(store, path).added == 0
    more = write_jsonl(tmp_path / "more.jsonl", [  # the same ids in another file name its own records, else memory's
        {"kind": "note", "text": "later", "session": "ops"},
        {"kind": "summary", "text": "cites the earlier import", "covers": [ops[1]["id"], "ops#1"], "session": "ops"}])
    run_import(store, more)
    assert records_of(store, "ops")[-1]["covers"] == [ops[1]["id"], f"{session}#4"]


def test_a_ref_or_cover_naming_no_record_of_the_file_or_of_memory_is_refused_with_its_line(repo: Path, tmp_path: Path):
    path = write_jsonl(tmp_path / "cites.jsonl", [
        {"kind": "note", "text": "fine", "session": "ops"},
        {"kind": "note", "text": "a typo'd id", "session": "notes", "refs": ["nosuch#5"]},
        {"kind": "summary", "text": "covers a record after it", "covers": ["ops#1", "ops#3"], "session": "ops"},
        {"kind": "note", "text": "the third", "session": "ops"}])
    refused = import_cli(repo, str(path))
    assert refused.exit_code == 1 and not list(repo.glob(".agents/experience/*/*.jsonl")), refused.output
    assert "cites.jsonl:2: ref nosuch#5" in refused.output and "cites.jsonl:3: cover ops#3" in refused.output
    assert "ops#3 does not exist" in refused.output  # an entry may cite only entries before it
    skipped = import_cli(repo, str(path), "--skip-invalid")
    assert skipped.exit_code == 0 and "Imported 2 record(s)" in skipped.output, skipped.output
    assert "cites.jsonl:2: ref nosuch#5" in skipped.output


def test_a_bom_is_skipped_and_bytes_that_are_not_utf8_are_counted_in_the_report(repo: Path, tmp_path: Path):
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b'\xef\xbb\xbf{"kind": "note", "text": "saved by Notepad with a BOM", "session": "bom"}\n')
    done = import_cli(repo, str(bom))
    assert done.exit_code == 0 and "Imported 1 record(s)" in done.output, done.output
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(b'{"kind": "note", "text": "fine"}\n{"kind": "note", "text": "caf\xe9 au lait, r\xe9sum\xe9"}\n')
    done = import_cli(repo, str(latin))
    assert done.exit_code == 0 and "Imported 2 record(s)" in done.output, done.output
    assert "1 line(s) held 3 byte(s) that are not UTF-8" in done.output and "latin1.jsonl:2" in done.output
    latin.write_bytes(latin.read_bytes() + b'{"kind": "note", "text": "na\xefve"}\n')
    report = json.loads(import_cli(repo, str(latin), "--json").output)
    assert report["added"] == 1 and report["not_utf8"] == {"lines": 2, "bytes": 4, "where": [f"{latin}:2", f"{latin}:3"]}


@pytest.mark.parametrize("encoding, bom", [
    ("utf-16-le", codecs.BOM_UTF16_LE),  # PowerShell 5's `>` and Out-File: UTF-16 LE with a BOM, CRLF line ends
    ("utf-16-be", codecs.BOM_UTF16_BE),
    ("utf-32-le", codecs.BOM_UTF32_LE),
    ("utf-16-le", b""),  # no mark: the NULs between the ASCII characters JSON starts with tell the width
    ("utf-32-be", b""),
])
def test_a_file_in_utf16_or_utf32_is_read_as_such(repo: Path, tmp_path: Path, encoding: str, bom: bytes):
    """A records file saved as UTF-16 (PowerShell 5's `>` writes it) was refused with "not a JSON object" on every
    line and no word of its encoding; it is read in its encoding, from a file and from stdin alike."""
    texts = ["Migration auf Freitag verschoben", "数据库迁移推迟到周五 🚀"]
    def saved(session: str) -> bytes:
        lines = [json.dumps({"kind": "note", "text": t, "session": session}, ensure_ascii=False) + "\r\n" for t in texts]
        return bom + "".join(lines).encode(encoding)

    path = tmp_path / "wide.jsonl"
    path.write_bytes(saved("from-file"))
    done = import_cli(repo, str(path))
    assert done.exit_code == 0 and "Imported 2 record(s)" in done.output and "not UTF-8" not in done.output, done.output
    piped = CliRunner().invoke(cli, ["--root", str(repo), "log", "import", "-"], input=saved("from-stdin"))
    assert piped.exit_code == 0 and "Imported 2 record(s)" in piped.output, piped.output
    held = [json.loads(line)["text"] for log in sorted(repo.glob(".agents/experience/*/*.jsonl"))
            for line in log.read_text(encoding="utf-8").splitlines()]
    assert held == texts + texts


def test_an_empty_text_is_refused_as_remember_refuses_it(repo: Path, tmp_path: Path):
    """An entry of "text": "" was imported, and timeline showed its bookkeeping ({"source_id": …}) as its text."""
    path = write_jsonl(tmp_path / "e.jsonl", [{"kind": "note", "text": "fine"}, {"kind": "note", "text": "  ", "session": "e"}])
    refused = import_cli(repo, str(path))
    assert refused.exit_code == 1 and "e.jsonl:2: text is empty" in refused.output, refused.output


def test_the_report_says_how_many_records_had_a_secret_redacted_and_shows_the_last_progress_line_once(repo: Path, tmp_path: Path):
    lines = [{"kind": "note", "text": f"token {GITHUB_TOKEN}", "session": "s"},
             {"kind": "observation", "text": "BIG " + "lorem ipsum " * 400_000, "session": "s"}]
    result = CliRunner().invoke(cli, ["--root", str(repo), "log", "import", str(write_jsonl(tmp_path / "big.jsonl", lines))])
    assert result.exit_code == 0, result.output
    assert "1 record(s) had a secret redacted" in result.stdout
    assert result.stderr.count("Importing: 4.8/4.8 MB") == 1, result.stderr
    again = write_jsonl(tmp_path / "more.jsonl", [{"kind": "note", "text": f"again {GITHUB_TOKEN}"}, {"kind": "note", "text": "no"}])
    assert json.loads(import_cli(repo, str(again), "--json").output)["redacted"] == 1


class CountedWrites:
    """The Store, counting the appends an import makes (each is a write, an index update and a pending line)."""

    def __init__(self, store: Store):
        self._store, self.writes = store, 0

    def log(self, session: str, entries: Sequence[Entry], *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        self.writes += 1
        return self._store.log(session, entries, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_records_citing_records_held_before_them_are_written_a_batch_per_session(store: Store, tmp_path: Path):
    """Each entry citing the one before it (ops#N-1) flushed every held record: one append per record, 16x slower."""
    lines: list[dict[str, Any]] = [{"kind": "note", "text": "start", "session": "ops"}]
    for n in range(2, 301):
        lines.append({"kind": "note", "text": f"step {n}", "session": "ops", "refs": [f"ops#{n - 1}"]})
        lines.append({"kind": "note", "text": f"aside {n}", "session": "other", "refs": [f"ops#{n}", f"other#{n - 2}"] if n > 2 else []})
    path = write_jsonl(tmp_path / "chain.jsonl", lines)
    counted = CountedWrites(store)
    found = importing.sources([path])
    assert importing.check(found, store) == []
    report = importing.Importer(counted, None).run(found, checked=True)  # type: ignore[arg-type]
    store.flush("all")
    assert report.added == 599 and counted.writes == 2
    assert {(s.session, s.first, s.last) for s in report.sessions} == {
        (r[0]["session"], r[0]["id"], r[-1]["id"]) for r in (records_of(store, "ops"), records_of(store, "other"))}
    ops, other = records_of(store, "ops"), records_of(store, "other")
    assert all(r["refs"] == [f"{ops[0]['session']}#{r['seq'] - 1}"] for r in ops[1:])
    assert other[5]["refs"] == [ops[6]["id"], other[4]["id"]] and other[5]["text"] == "aside 7"
    again = importing.Importer(CountedWrites(store), None).run(found, checked=True)
    assert again.added == 0 and again.present == 599


def test_an_exported_record_citing_records_not_in_the_file_keeps_its_refs_and_the_report_counts_them(repo: Path, tmp_path: Path):
    """`log tail --json -n 1 SESSION | log import -` in a clone that cannot pull: the record cites its session's earlier
    record, which is not in the export; the import was refused, and --skip-invalid dropped the record."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    mine = cloned(repo, tmp_path / "mine")
    theirs = Store(Config.load(repo))
    first = theirs.remember("Staging DB is read-only on Fridays", session="ops", actor="human", tool="cli")[0]
    theirs.remember("Moved the migration to Thursday", refs=[first["id"]], session="ops", actor="human", tool="cli")
    theirs.flush("all")
    exported = theirs.lines("ops")[-1].raw.decode() + "\n"
    theirs.close()
    done = import_cli(mine, "-", input=exported)
    assert done.exit_code == 0 and "Imported 1 record(s)" in done.output, done.output
    assert "1 ref(s) or cover(s) name no record here" in done.output
    here = Store(Config.load(mine))
    assert records_of(here, "ops")[-1]["refs"] == [first["id"]]  # as it was: it names their record once pulled
    here.close()
    again = json.loads(import_cli(mine, "-", "--json", input=exported).output)
    assert again["present"] == 1 and again["unresolved"] == 0  # counted for the records added
    entry = write_jsonl(tmp_path / "e.jsonl", [{"kind": "note", "text": "an entry citing nothing", "refs": [f"{first['session']}#9"]}])
    refused = import_cli(mine, str(entry))
    assert refused.exit_code == 1 and "e.jsonl:1: ref " in refused.output, refused.output


class CountedSlices(bytes):
    """Bytes counting the slices taken of them."""

    slices = 0

    def __getitem__(self, key: Any) -> Any:
        CountedSlices.slices += isinstance(key, slice)
        return super().__getitem__(key)


def test_counting_the_bytes_that_are_not_utf8_reads_a_line_once():
    """It decoded the rest of the line again after each bad byte: a 1 MB Latin-1 line took 6.7 s."""
    line = CountedSlices(("café " * 2000).encode("latin-1"))
    assert undecodable(line) == 2000 and CountedSlices.slices <= 1
    for raw in (b"", b"ok", b"\xff", b"a\xe9b\xc3", "é€😀".encode() + b"\xed\xa0\x80" + b"\xf0\x9f" + b"x\x80\x80"):
        assert undecodable(raw) == len(raw) - len(raw.decode("utf-8", "ignore").encode("utf-8")), raw


def test_an_append_told_the_id_its_first_record_takes_writes_nothing_when_another_writer_took_it(store: Store):
    """The import cites the ids its records will take before writing them: another writer in between must not make
    those citations name other records."""
    following = store.following("ops")
    store.remember("another writer's note", session="ops", actor="human", tool="cli")
    taken = f"{following.rpartition('#')[0]}#2"  # it said "ops#1 was to be the id ..., but ops got to #1 meanwhile"
    with pytest.raises(ConflictError, match=f"another writer appended to .*: its next record is {taken}. Nothing was written"):
        store.log("ops", [Entry("note", text="cites the id it was to take")], first=following)
    assert [r["text"] for r in records_of(store, "ops")] == ["another writer's note"]
    following = store.following("ops")
    assert store.log("ops", [Entry("note", text="cites the id it takes")], first=following)[0]["id"] == following
