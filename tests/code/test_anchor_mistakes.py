"""A mistaken anchor is answered with what to write instead: the nearest definitions, the several a bare name could
mean, the file nearest a misspelled path; and one piece of code is one anchor however its path was spelled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from repo_memory.core.store import Store
from repo_memory.errors import InvalidRecordError
from repo_memory.formats import skills
from repo_memory.shells import mcp as server
from repo_memory.shells.cli import cli

from tests.conftest import git, write_skill_file

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


@pytest.mark.anyio
async def test_a_misspelled_symbol_is_answered_with_the_nearest_definitions(store: Store, code: Path):
    assert (await refused(store, "pkg/store.py::Store.sav")).endswith("no definition named Store.sav. Did you mean 'Store.save'?")
    assert "Did you mean 'Store.save'" in await refused(store, "pkg/store.py::Stor.save")
    assert "'Store.load'" in await refused(store, "pkg/store.py::Cache.load")  # the same method in another class
    assert "Did you mean 'helper'" in await refused(store, "pkg/store.py::helpr")
    assert not (code / ".agents/skills/probe").exists()


@pytest.mark.anyio
async def test_a_name_several_definitions_end_with_is_called_ambiguous_and_each_is_listed(store: Store, code: Path):
    said = await refused(store, "pkg/store.py::save")
    assert "has no definition named save" not in said  # it has two
    assert "ambiguous" in said and said.count("Store.save") == 2 and said.count("Cache.save") == 1  # listed once, one in full
    assert "Did you mean 'Store.load'" in await refused(store, "pkg/store.py::load")  # only one: that one


@pytest.mark.anyio
async def test_a_misspelled_file_is_answered_with_the_nearest_file_beside_it(store: Store, code: Path):
    said = await refused(store, "pkg/stor.py::Store.save")
    assert "the file does not exist" in said and "Did you mean 'pkg/store.py'" in said


def test_an_ambiguous_name_lists_at_most_eight_of_the_definitions_it_could_mean(store: Store, code: Path):
    (code / "pkg/compiler.py").write_text("".join(f"class C{i}:\n    def as_sql(self):\n        return {i}\n\n\n" for i in range(10)),
                                          encoding="utf-8")
    with pytest.raises(InvalidRecordError) as raised:
        store.write_skill("probe", "Probe.", "1. Probe.", anchors=["pkg/compiler.py::as_sql"])
    said = str(raised.value)
    assert "10 definitions in pkg/compiler.py are named as_sql (C0.as_sql, C1.as_sql" in said and "C7.as_sql and 2 more" in said
    assert "C8.as_sql" not in said and "e.g. pkg/compiler.py::C0.as_sql" in said


def _anchors_of(repo: Path, name: str) -> list[str]:
    raw = (repo / f".agents/skills/{name}/SKILL.md").read_bytes()
    return list(skills.parse(raw, f".agents/skills/{name}/SKILL.md", ".agents/skills").anchors)


def _recalled(store: Store, **query: Any) -> list[str]:
    return sorted(h.id for h in store.recall("", **query).hits)


def test_an_anchor_spelled_with_dot_slash_or_doubled_slashes_is_kept_in_its_one_canonical_form(store: Store, code: Path):
    store.write_skill("plain-anchor", "Store save returns rows.", "1. Read it.", anchors=["pkg/store.py::Store.save"])
    store.write_skill("dotted-anchor", "What Store save hands back.", "1. Read it.", anchors=["./pkg/store.py::Store.save"])
    store.write_skill("doubled-anchor", "Store save, once more.", "1. Read it.",
                      anchors=["pkg//store.py::Store.save", "./pkg/./store.py::Store.save"])
    assert _anchors_of(code, "dotted-anchor") == _anchors_of(code, "doubled-anchor") == ["pkg/store.py::Store.save"]
    written = store.remember("Store.save must not copy the rows", refs=["./pkg/store.py::Store.save"])[0]
    assert written["refs"] == ["pkg/store.py::Store.save"] and list(written["anchors"]) == ["pkg/store.py::Store.save"]
    store.refresh()
    found = _recalled(store, symbol="pkg/store.py::Store.save")
    skills_found = [f for f in found if f.startswith("skill:")]
    assert skills_found == ["skill:dotted-anchor", "skill:doubled-anchor", "skill:plain-anchor"]
    assert len(found) == 4 and store.stale() == []


@pytest.mark.anyio
async def test_a_symbol_spelled_in_another_case_is_suggested(store: Store, code: Path):
    (code / "pkg/big.py").write_text("def f0():\n    return 0\n\n\ndef g1():\n    return 1\n", encoding="utf-8")
    assert "Did you mean 'f0'" in await refused(store, "pkg/big.py::F0")


def test_the_fix_for_an_anchor_into_a_missing_file_is_to_edit_it_not_to_pin_it(store: Store, code: Path, runner: CliRunner):
    """Pinning takes anchors as written, so it cannot help an anchor whose file is gone (deleted, not committed) or was
    never there: `stale` and doctor say to edit the anchor or restore the file."""
    for name, anchor in (("never", "pkg/gone.py::helper"), ("deleted", "pkg/store.py::helper")):
        write_skill_file(code, name, f"How {name} works.", "Read it.", extra=f"metadata:\n  anchors: [{anchor}]\n")
    git(code, "add", "-A")
    git(code, "commit", "-qm", "skills")
    store.refresh()
    assert [s.memory for s in store.stale()] == ["skill:never"]
    (code / "pkg/store.py").unlink()
    out = runner.invoke(cli, ["--root", str(code), "stale"]).output
    doctor = runner.invoke(cli, ["--root", str(code), "doctor"]).output
    for said in (out, doctor):
        assert "the file does not exist" in said and "when it still holds" not in said, said
        assert "Edit metadata.anchors in .agents/skills/never/SKILL.md" in said and ", or restore the file" in said, said
