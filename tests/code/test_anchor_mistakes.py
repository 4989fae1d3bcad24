"""A mistaken anchor is answered with what to write instead: the nearest definitions, the several a bare name could
mean, the file nearest a misspelled path; and one piece of code is one anchor however its path was spelled."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from repo_memory.core.store import Store
from repo_memory.errors import InvalidRecordError
from repo_memory.shells import mcp as server

from tests.conftest import git

STORE_PY = ("class Store:\n    def save(self, rows):\n        return rows\n\n    def load(self):\n        return []\n\n\n"
            "class Cache:\n    def save(self, rows):\n        return None\n\n\ndef helper():\n    return 1\n")


@pytest.fixture
def code(repo: Path) -> Path:
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(STORE_PY, encoding="utf-8")
    git(repo, "add", "pkg/store.py")
    git(repo, "commit", "-qm", "add the store")
    return repo


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def refused(store: Store, anchor: str) -> str:
    """What skill_write answers an agent that cites `anchor`."""
    async with Client(server.build(store)) as client:
        result = await client.call_tool("skill_write", {"name": "probe", "description": "Probe.", "body": "1. Probe.",
                                                        "anchors": [anchor], "new": True})
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.anyio
async def test_the_refusal_names_the_argument_once_in_plain_grammar(store: Store, code: Path):
    said = await refused(store, "pkg/store.py::Store.sav")
    assert "anchors is" not in said and "field 'anchors'" not in said
    assert "'anchors' is invalid: pkg/store.py::Store.sav: symbol not found: pkg/store.py has no definition named Store.sav" in said


def test_a_problem_whose_message_names_its_field_is_not_labelled_with_it_again(store: Store):
    with pytest.raises(InvalidRecordError) as raised:
        store.remember("   ")
    assert str(raised.value).startswith("record is invalid: text is empty")
