"""The first pass of a full-text query is bounded in a large index (index/fts.py Frequencies)."""

from __future__ import annotations

import pytest

from repo_memory.core.store import Store
from repo_memory.formats import experience
from repo_memory.index import fts


def test_a_common_word_no_longer_makes_every_record_a_candidate(store: Store, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(fts, "BUDGET", 300)  # the same rule as at 5,000, on an index a test can build quickly
    source = store.source("human", "import")
    for batch in range(4):
        store.log(f"deploys-{batch}", [experience.Entry("observation", text=f"The deploy of build {batch * 200 + i} went fine.", source=source)
                                       for i in range(200)])
    store.log("incident", [experience.Entry("observation", text="The deploy stalled: the quokka cache was cold.", source=source)])
    database = store._db  # the index's own connection: what the first pass would match, not how it is reached
    frequencies = fts.Frequencies("records", "porter unicode61 remove_diacritics 2")
    with database.lock:
        first = frequencies.first_pass(database.conn, ["deploy", "quokka", "cache"])
        small = frequencies.first_pass(database.conn, ["quokka", "cache"])
    assert first == ['("quokka" OR "cache") AND ("deploy" OR "quokka" OR "cache")']  # 'deploy' is on 801 records: scored, not matched
    assert small == []  # rare words alone: the whole query, as in a small index
    hits = store.recall("deploy quokka cache").hits
    assert hits[0].id == "incident#1"
    assert [h.id for h in store.recall("deploy went fine").hits]  # every word common: rows that hold them all
