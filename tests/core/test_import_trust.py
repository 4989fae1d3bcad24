"""What an import takes on trust: an exported record's content must match its sha256, code it cites is pinned as
`log add -r` pins it, and a record imported from a clone and then pulled from it is recalled once."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

from tests.conftest import git, records_of
from tests.core.test_import import import_cli, write_jsonl
from tests.core.test_import_records import cloned


def committed_repo(repo: Path) -> Path:
    (repo / "store.py").write_text("def load():\n    return 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def exported(store: Store, session: str) -> list[str]:
    """The lines of `session`'s log as `log tail --json` prints them."""
    return [line.raw.decode() for line in store.lines(session) if line.record]


def test_an_exported_record_edited_after_export_is_refused_naming_its_line(repo: Path, tmp_path: Path):
    """The edited text was imported still naming the original id and hash under data.source_id, and verify passed; in
    the clone holding the original, the edited line was counted "already there"."""
    committed_repo(repo)
    other = cloned(repo, tmp_path / "other")
    theirs = Store(Config.load(repo))
    theirs.remember("run the full test suite before release", session="ops", actor="human", tool="cli")
    theirs.flush("all")
    forged = exported(theirs, "ops")[0].replace("run the full test suite", "skip the tests")
    theirs.close()
    path = tmp_path / "forged.jsonl"
    path.write_text(forged + "\n", encoding="utf-8")
    for into in (other, repo):  # a clone without the original, and the clone holding it
        refused = import_cli(into, str(path))
        assert refused.exit_code == 1 and "forged.jsonl:1: its content does not match its sha256" in refused.output, refused.output
        skipped = import_cli(into, str(path), "--skip-invalid")
        assert skipped.exit_code == 0 and "Imported 0 record(s)" in skipped.output and "0 were already there" in skipped.output
        assert "forged.jsonl:1: its content does not match its sha256" in skipped.output, skipped.output
    here = Store(Config.load(other))
    assert not any("skip the tests" in (r.get("text") or "") for s in here.sessions() for r in records_of(here, s[0]))
    here.close()
    # an entry's data claims no record's identity: it comes in as a new record, keyed by its own content
    entry = {"kind": "note", "text": "skip the tests before release", "session": "ops",
             "data": {"source_id": f"{json.loads(forged)['id']}@{json.loads(forged)['sha256'][:12]}"}}
    done = import_cli(repo, str(write_jsonl(tmp_path / "entry.jsonl", [entry])))
    assert done.exit_code == 0 and "1 new, 0 already there" in done.output, done.output
    mine = Store(Config.load(repo))
    copy = next(r for s in mine.sessions() for r in records_of(mine, s[0]) if r["text"].startswith("skip"))
    assert copy["data"]["source_id"] != entry["data"]["source_id"], copy
    mine.close()


def test_a_record_imported_from_a_clone_and_then_pulled_from_it_is_recalled_once(repo: Path, tmp_path: Path):
    """Clone B imported A's export, then pulled A's log: recall gave both copies, and doctor said all good."""
    committed_repo(repo)
    b = cloned(repo, tmp_path / "b")
    a = Store(Config.load(repo))
    original = a.remember("the deploy needs VAULT_ADDR set", session="ops", actor="human", tool="cli")[0]
    a.flush("all")
    export = "\n".join(exported(a, "ops")) + "\n"
    a.close()
    assert import_cli(b, "-", input=export).exit_code == 0
    git(b, "pull", "-q", "--no-rebase", "--no-edit")
    here = Store(Config.load(b))
    here.refresh()
    hits = [h.id for h in here.recall("deploy VAULT_ADDR").hits]
    assert hits == [original["id"]], hits  # the original, written where it happened; the copy adds nothing
    copy = records_of(here, "ops")[0]  # the copy is still read by its id
    assert copy["id"] != original["id"] and here.read(copy["id"]).records[0].verified
    here.close()


def test_two_imported_entries_alike_but_for_their_session_are_both_recalled(repo: Path, tmp_path: Path):
    """Two entries of the same kind, text and time in two sessions were both imported, but recall showed one: a copy
    was told by kind, time and text alone. Only a record whose source_id names another held here is a copy."""
    committed_repo(repo)
    same = {"kind": "decision", "text": "Upgraded the service to Python 3.12", "ts": "2026-11-02T10:00:00Z"}
    notes = write_jsonl(tmp_path / "notes.jsonl", [{**same, "session": "svc-billing"}, {**same, "session": "svc-search"}])
    assert import_cli(repo, str(notes)).exit_code == 0
    here = Store(Config.load(repo))
    written = sorted(r["id"] for s in ("svc-billing", "svc-search") for r in records_of(here, s))
    assert len(written) == 2, written
    assert sorted(h.id for h in here.recall("upgraded python 3.12").hits) == written
    here.close()
    searched = CliRunner().invoke(cli, ["--root", str(repo), "search", "upgraded python 3.12"]).output
    assert all(rid in searched for rid in written), searched


def test_paging_recall_past_an_imported_copy_shows_every_record_once(repo: Path, tmp_path: Path):
    """A copy was left out only when its original ranked within the page's depth: the first page showed the copy, a
    deeper page dropped it, so its ranks shifted: the next page skipped a record and the original came back as well."""
    committed_repo(repo)
    b = cloned(repo, tmp_path / "b")
    a = Store(Config.load(repo))
    for text in ("lunch was fine", "the deploy needs VAULT_ADDR set", "the weather was fine"):
        a.remember(text, session="ops", actor="human", tool="cli")
    a.flush("all")
    original = records_of(a, "ops")[1]
    line = exported(a, "ops")[1]
    a.close()
    # entries beside the copy lend it their words, so it outranks its original
    louder = [json.dumps({"kind": "note", "text": t, "session": "ops"}) for t in ("deploy deploy VAULT_ADDR VAULT_ADDR", "deploy VAULT_ADDR")]
    assert import_cli(b, "-", input="\n".join([line, *louder]) + "\n").exit_code == 0
    git(b, "pull", "-q", "--no-rebase", "--no-edit")
    here = Store(Config.load(b))
    here.refresh()
    copy = next(r["id"] for r in records_of(here, "ops") if r["text"] == original["text"])
    every = [h.id for h in here.recall("deploy VAULT_ADDR", limit=10).hits]
    assert original["id"] in every and copy not in every, every
    paged, cursor = [], None
    for _ in range(len(every) + 2):
        page = here.recall("deploy VAULT_ADDR", limit=1, cursor=cursor)
        paged += [h.id for h in page.hits]
        if not (cursor := page.next_cursor):
            break
    assert paged == every, (paged, every)
    # within its own session the copy has no original beside it: it is what that session recalls
    assert copy in [h.id for h in here.recall("deploy VAULT_ADDR", session="ops").hits]
    here.close()


def test_imported_code_refs_are_pinned_as_log_add_pins_them_and_a_bad_one_is_refused(repo: Path, tmp_path: Path):
    """An imported record citing code got no `anchors`: its baseline was per clone, so after the code changed the
    importing clone called it stale and a fresh clone of the same commit did not; `lib/nope.py::x` went in silently."""
    committed_repo(repo)
    path = write_jsonl(tmp_path / "in.jsonl", [{"kind": "note", "text": "load returns one", "session": "imp", "refs": ["./store.py::load"]}])
    done = import_cli(repo, str(path))
    assert done.exit_code == 0, done.output
    store = Store(Config.load(repo))
    added = store.remember("load returns one (log add)", refs=["store.py::load"], actor="human", tool="cli")[0]
    imported = records_of(store, "imp")[0]
    assert imported["refs"] == ["store.py::load"] and imported["anchors"] == added["anchors"] == {"store.py::load": added["anchors"]["store.py::load"]}
    store.close()
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"kind": "note", "text": "fine", "session": "imp2"},
                                              {"kind": "note", "text": "cites nothing", "session": "imp2", "refs": ["lib/nope.py::x"]}])
    refused = import_cli(repo, str(bad))
    assert refused.exit_code == 1 and "bad.jsonl:2: ref lib/nope.py::x:" in refused.output, refused.output
    skipped = import_cli(repo, str(bad), "--skip-invalid")
    assert skipped.exit_code == 0 and "Imported 1 record(s)" in skipped.output and "bad.jsonl:2" in skipped.output, skipped.output


def test_an_exported_record_keeps_the_hashes_pinned_where_it_was_written(repo: Path, tmp_path: Path):
    """The anchors of an exported record are what its writer's code was: re-pinning them here would hide a change."""
    committed_repo(repo)
    other = cloned(repo, tmp_path / "other")
    a = Store(Config.load(repo))
    written = a.remember("load returns one", session="ops", refs=["store.py::load"], actor="human", tool="cli")[0]
    a.flush("all")
    export = "\n".join(exported(a, "ops")) + "\n"
    a.close()
    (other / "store.py").write_text("def load():\n    return 2\n", encoding="utf-8")
    git(other, "commit", "-q", "-am", "load returns 2")
    assert import_cli(other, "-", input=export).exit_code == 0
    here = Store(Config.load(other))
    copy = records_of(here, "ops")[0]
    assert copy["anchors"] == written["anchors"], json.dumps(copy)
    assert [s.memory for s in here.stale()] == [copy["id"]]  # the code changed since it was written, in any clone
    here.close()
