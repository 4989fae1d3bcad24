"""The first pass of a full-text query is bounded in a large index (index/fts.py Frequencies)."""

from __future__ import annotations

import pytest

from repo_memory.core.store import Store
from repo_memory.formats import experience
from repo_memory.index import fts

from tests.conftest import named


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
    # 'deploy' is on 801 records: the rows with a rarer word are matched, those with 'deploy' too and those without
    assert first == [('("quokka" OR "cache") AND ("deploy")', '("quokka" OR "cache") NOT ("deploy")')]
    assert small == []  # rare words alone: the whole query, as in a small index
    hits = store.recall("deploy quokka cache").hits
    assert named(hits[0].id) == "incident#1"
    assert [h.id for h in store.recall("deploy went fine").hits]  # every word common: rows that hold them all


def test_a_bounded_first_pass_scores_its_rows_as_the_whole_query_does(store: Store, monkeypatch: pytest.MonkeyPatch):
    """Matching only rows with a rare word must not change how those rows score: the rare word counts once, as in the
    whole query. (Written as "(rare) AND (every word)", it counted twice, so the other words weighed half as much as they
    should; at 100k records that cost about 2 points of turn any@5, bench/scale.py.)"""
    source = store.source("human", "import")
    for batch in range(6):  # 'deploy' on 400 of 1,200 rows: over the budget, and still worth something in BM25
        store.log(f"builds-{batch}", [experience.Entry("observation", text=f"Build {batch * 200 + i} {'deploy went' if batch < 2 else 'passed'} fine.",
                                                       source=source) for i in range(200)])
    for n, text in enumerate(("Quokka!", "Deploy quokka.")):
        store.log(f"quokka-{n}", [experience.Entry("observation", text=text, source=source)])

    def ranked(budget: int) -> list[list[tuple[str, float]]]:  # filtered by kind (a join) and not (the index alone)
        monkeypatch.setattr(fts, "BUDGET", budget)
        return [[(h.id, h.score) for h in store.recall("deploy quokka", kinds=kinds).hits[:2]] for kinds in (["observation"], None)]

    whole = ranked(10**9)
    assert [[named(i) for i, _ in hits] for hits in whole] == [["quokka-1#1", "quokka-0#1"]] * 2  # the row that holds both words first
    assert ranked(300) == whole  # 'deploy' is on 400 rows: the first pass matches the rows with 'quokka', scored as above


def test_a_record_is_not_found_for_words_deep_inside_a_long_neighbour(store: Store):
    """A record is indexed with its neighbours' words (a short reply is found by what it answers), but only with the
    opening of each: a long neighbour — a tool's output, an assistant's essay — flooded every record around it with
    its words, and on turns interleaved with long ones full-text recall fell below plain BM25 (docs/benchmarks.md)."""
    source = store.source("human", "import")
    output = " ".join(f"line {n} of the build log passed." for n in range(200)) + " The zebra migration finished last."
    store.log("build", [experience.Entry("observation", text=text, source=source)
                        for text in ("Starting the nightly build now.", output, "Done, all green.")])
    store.log("notes", [experience.Entry("observation", text="Zebra migration: the herd moved north in May.", source=source)])
    found = [h.id for h in store.recall("zebra migration").hits]
    assert {named(f) for f in found} == {"build#2", "notes#1"}, found  # the output and the note, not the two records beside the output
    assert [named(h.id) for h in store.recall("nightly build").hits][0] == "build#1"
    assert "build#3" in [named(h.id) for h in store.recall("starting the nightly build").hits]  # a neighbour's opening still counts
