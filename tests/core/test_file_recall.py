""""What do we know about this file?": recall by a file path, and a query naming a file or a symbol, find the memories
anchored into that code (an outside probe on Django found none of the four memories anchored to the file it named)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from repo_memory.core.store import Store
from repo_memory.shells import mcp as server

from tests.conftest import git, index_snapshot, kept

STORE = ("class Store:\n    def save(self, rows, batch=100):\n        assert batch > 0\n        return len(rows)\n\n"
         "    def load(self, key):\n        return key\n\n\nclass Cache:\n    def save(self, key):\n        return key\n")
OTHER = "def other_thing():\n    return 'pkg/store.py is mentioned here only in text'\n"
# The same file name deeper in the tree, and a sibling file, as a large project has them (django/db/models/query.py
# beside django/db/models/sql/query.py).
SQL = "class Query:\n    def add_filter(self, name):\n        return name\n"


@pytest.fixture
def anchored(store: Store, repo: Path) -> dict[str, str]:
    """Memories anchored into pkg/store.py, others anchored elsewhere, a record that only mentions the path, and filler;
    returns the ids by role."""
    for rel, source in {"pkg/store.py": STORE, "pkg/other.py": OTHER, "pkg/sql/store.py": SQL}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(source, encoding="utf-8")
    git(repo, "add", "pkg")
    git(repo, "commit", "-q", "-m", "code")
    store.write_skill("batch-size-rules", "How saving validates the batch size; use when bulk saving.", "1. The batch size must be positive.",
                      anchors=["pkg/store.py::Store.save"], actor="human")
    store.write_skill("query-filters", "How filters are added to a query.", "1. Add the filter by name.",
                      anchors=["pkg/sql/store.py::Query.add_filter"], actor="human")
    store.remember("Loading by key returns the key unchanged", refs=["pkg/store.py::Store.load"], session="work")
    store.remember("A note that merely mentions pkg/store.py in its text", refs=["pkg/other.py::other_thing"], session="work")
    for k in range(10):
        store.remember(f"Unrelated note {k} about pkg/mod{k}.py and its tests", session=f"filler-{k % 3}")
    store.refresh()
    return {"skill": "skill:batch-size-rules", "record": f"{kept(store, 'work')}#1", "mention": f"{kept(store, 'work')}#2",
            "elsewhere": "skill:query-filters"}


@pytest.mark.parametrize("symbol", ["pkg/store.py", "pkg/store.py::", "./pkg/store.py", "./pkg/store.py::"])
def test_recall_by_a_file_path_returns_every_memory_anchored_anywhere_in_that_file(store: Store, anchored: dict[str, str], symbol: str):
    """A bare file answered hits: [] with no word: no anchor is a file, and the symbol was compared with whole anchors."""
    found = store.recall("", symbol=symbol)
    assert [h.id for h in found.hits] == [anchored["skill"], anchored["record"]]
    assert "pkg/store.py::Store.save" in found.hits[0].snippet and "pkg/store.py::Store.load" in found.hits[1].snippet


def test_recall_by_a_symbol_written_with_a_leading_dot_slash_finds_what_the_plain_one_finds(store: Store, anchored: dict[str, str]):
    assert [h.id for h in store.recall("", symbol="./pkg/store.py::Store.save").hits] == [anchored["skill"]]


def test_a_symbol_no_memory_cites_says_so_and_offers_the_anchors_it_may_mean(store: Store, anchored: dict[str, str]):
    """An empty list said nothing: an agent could not tell "nothing is known about it" from "written wrong"."""
    missing = store.recall("", symbol="pkg/nothing.py")
    assert missing.hits == [] and "No memory cites 'pkg/nothing.py'" in missing.note and "file path" in missing.note
    misspelt = store.recall("", symbol="Store.sav")
    assert misspelt.hits == [] and "pkg/store.py::Store.save" in misspelt.suggestions
    assert "Did you mean" in misspelt.note
    assert "No memory cites" not in store.recall("", symbol="pkg/store.py").note


@pytest.mark.parametrize("asked", ["pkg/store.py", "what do we know about pkg/store.py?", "store.py"])
def test_a_query_naming_a_file_finds_the_memories_anchored_in_it_before_one_that_mentions_it(store: Store, anchored: dict[str, str],
                                                                                           asked: str):
    """Anchors were not in the full-text index: the skill anchored to pkg/store.py::Store.save was not found at all,
    and a note that only mentions the path ranked first."""
    ids = [h.id for h in store.recall(asked, limit=20).hits]
    assert anchored["skill"] in ids and anchored["record"] in ids, ids
    assert max(ids.index(anchored["skill"]), ids.index(anchored["record"])) < ids.index(anchored["mention"]), ids


def test_a_record_found_by_the_code_it_cites_says_so(store: Store, anchored: dict[str, str]):
    """Its text holds no word of the query: without a word on why, an agent reads it as unrelated."""
    hits = {h.id: h for h in store.recall("pkg/store.py", limit=20).hits}
    assert hits[anchored["record"]].matched == "by the code it cites"
    assert hits[anchored["mention"]].matched == ""


def test_a_query_naming_a_symbol_finds_the_memories_anchored_to_it(store: Store, anchored: dict[str, str]):
    assert [h.id for h in store.recall("Store.save").hits][:1] == [anchored["skill"]]
    assert [h.id for h in store.recall("Store.load", kinds=["note"]).hits][:1] == [anchored["record"]]
    assert [h.id for h in store.recall("pkg/store.py::Store.save").hits][:1] == [anchored["skill"]]


def test_the_file_a_query_names_outranks_a_file_of_the_same_name_elsewhere(store: Store, anchored: dict[str, str]):
    ids = [h.id for h in store.recall("pkg/sql/store.py", limit=20).hits]
    assert ids[:1] == [anchored["elsewhere"]], ids


def test_anchor_words_indexed_as_memory_is_written_are_those_a_rebuild_indexes(store: Store, anchored: dict[str, str]):
    written, ranked = index_snapshot(store), [(h.id, h.score, h.matched) for h in store.recall("pkg/store.py", limit=20).hits]
    store.reindex()
    assert index_snapshot(store) == written
    assert [(h.id, h.score, h.matched) for h in store.recall("pkg/store.py", limit=20).hits] == ranked


@pytest.mark.anyio
async def test_the_recall_tool_finds_by_file_and_says_when_nothing_cites_it(store: Store, anchored: dict[str, str]):
    async def call(client: Client, **args: Any) -> dict[str, Any]:
        result = await client.call_tool("recall", args)
        assert not result.is_error and result.structured_content is not None, result.content
        return result.structured_content

    async with Client(server.build(store)) as client:
        by_file = await call(client, symbol="pkg/store.py")
        nothing = await call(client, symbol="pkg/nothing.py")
    assert [h["id"] for h in by_file["hits"]] == [anchored["skill"], anchored["record"]]
    assert nothing["hits"] == [] and "No memory cites" in nothing["note"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
