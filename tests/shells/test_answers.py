"""What the model reads from recall and read: compact (no empty fields, nothing the id already says, no chain
internals of a record that verified), one spelling of a time, framed as recorded data, the same shape with `as_of`,
and every answer valid against the outputSchema the server advertises.

Claude Code and Codex hand the model the structured content as JSON when a result has one (anthropics/claude-code
#79944, #55677; openai/codex codex-rs/protocol/src/models.rs `From<&CallToolResult> for FunctionCallOutputPayload`),
so the structured content is what is measured here, and the text must be the same JSON.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client

from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine
from repo_memory.shells import mcp as server

from tests.conftest import git, write_skill_file
from tests.shells.test_mcp import LOOP_SPEC

pytestmark = pytest.mark.anyio
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")  # the one form a time takes in an answer
CHAIN = {"mac", "prev", "sha256", "seq", "session", "source", "record"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def answer(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    """The structured content of a successful call, checked against the tool's advertised outputSchema and against
    its text (what a harness without structured content shows the model)."""
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.content
    schema = {t.name: t.output_schema for t in (await client.list_tools()).tools}[tool]
    jsonschema.validate(result.structured_content, schema)
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]
    return result.structured_content or {}


def empties(value: Any, where: str = "") -> list[str]:
    """Paths of the empty values an answer carries ("", [], {}, null, false)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in ([f"{where}.{k}"] if v in ("", [], {}, None, False) else empties(v, f"{where}.{k}"))]
    if isinstance(value, list):
        return [p for n, v in enumerate(value) for p in empties(v, f"{where}[{n}]")]
    return []


def remembered(store: Store, *texts: str, session: str = "s") -> list[str]:
    return [store.remember(text, "note", [], None, session, actor="agent", tool="remember")[0]["id"] for text in texts]


async def test_a_record_hit_says_each_fact_once_and_nothing_empty(store: Store, repo: Path):
    write_skill_file(repo, "release-checklist", "How we cut a release: bump, tag, publish.", "1. Tag\n2. Publish")
    store.refresh()
    [first] = remembered(store, "make migrate-staging needs the STAGING_DATABASE_URL variable.")
    async with Client(server.build(store)) as client:
        found = await answer(client, "recall", query="migrate staging database release")
    hits = {h["id"]: h for h in found["hits"]}
    hit, skill = hits[first], hits["skill:release-checklist"]
    assert not empties(hit) and not empties(skill), (empties(hit), empties(skill))
    assert set(hit) <= {"id", "kind", "ts", "snippet", "score", "recorded", "committed", "covers", "stale", "stale_reason", "matched"}, hit
    session = first.split("#")[0]
    assert not any(session in str(v) for k, v in hit.items() if k != "id"), hit  # the id says the session
    assert ISO.match(hit["ts"]), hit["ts"]
    assert hit["recorded"] == "recorded by an agent (remember); not committed yet", hit["recorded"]
    assert skill["title"] == "How we cut a release: bump, tag, publish." and skill["status"] == "active"
    assert "not instructions" in found["note"]
    assert len(json.dumps(hit, separators=(",", ":"))) - len(hit["snippet"]) < 160, hit


async def test_a_hit_found_only_through_its_neighbours_words_says_so(store: Store):
    docker, nightly = remembered(store, "Docker build fails on arm64: the psycopg2 wheel is missing.",
                                 "The nightly e2e suite takes 41 minutes.")
    async with Client(server.build(store)) as client:
        found = await answer(client, "recall", query="docker arm64")
    hits = {h["id"]: h for h in found["hits"]}
    assert [h["id"] for h in found["hits"]] == [docker, nightly]  # the order is the ranking's, unchanged
    assert "matched" not in hits[docker], hits[docker]
    assert "beside it" in hits[nightly]["matched"], hits[nightly]


async def test_a_read_of_verified_records_carries_no_chain_internals(store: Store):
    ids = remembered(store, "first fact", "second fact")
    store.remember("a decision", "decision", [ids[0]], {"ticket": 7}, "s", actor="agent", tool="remember")
    async with Client(server.build(store)) as client:
        item = await answer(client, "read", ref=f"{ids[0].split('#')[0]}#1-3")
    assert not empties(item), empties(item)
    assert item["kind"] == "experience" and "not instructions" in item["note"], item
    assert item["recorded"] == "recorded by an agent (remember); not committed yet", item  # said once for all three
    assert [r["text"] for r in item["records"]] == ["first fact", "second fact", "a decision"]
    for view in item["records"]:
        assert not CHAIN & set(view) and view["verified"] is True and ISO.match(view["ts"]) and "recorded" not in view, view
    assert item["records"][2]["refs"] == [ids[0]] and item["records"][2]["data"] == {"ticket": 7}
    text = sum(len(r["text"]) for r in item["records"])
    assert len(json.dumps(item, separators=(",", ":"))) < text + 220 + 110 * len(item["records"]), item  # was text + 760 each


async def test_a_record_that_fails_verification_says_so_and_carries_what_was_stored(store: Store, repo: Path):
    [fact] = remembered(store, "the original words")
    log = next((repo / ".agents" / "experience").rglob("*.jsonl"))
    log.write_text(log.read_text(encoding="utf-8").replace("the original words", "some edited words"), encoding="utf-8")
    async with Client(server.build(store)) as client:
        item = await answer(client, "read", ref=fact)
    [view] = item["records"]
    assert view["verified"] is False and view["problem"], view
    assert view["stored"]["sha256"] and view["stored"]["text"] == "some edited words", view
    assert view["recorded"].startswith("recorded by an agent") and "recorded" not in item, item  # said on the record that failed


async def test_as_of_answers_have_the_live_shape(store: Store, repo: Path):
    write_skill_file(repo, "release-checklist", "How we cut a release: bump, tag, publish.", "1. Tag\n2. Publish")
    store.refresh()
    [fact] = remembered(store, "release tags are signed")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    async with Client(server.build(store)) as client:
        live = await answer(client, "read", ref="skill:release-checklist")
        past = await answer(client, "read", ref="skill:release-checklist", as_of="HEAD")
        records = await answer(client, "read", ref=fact, as_of="HEAD")
        found = await answer(client, "recall", query="release", as_of="HEAD")
    assert past["kind"] == "skill" and past["status"] == live["status"] and past["description"] == live["description"], past
    assert past["sha256"] == live["sha256"] and past["as_of"].startswith(git(repo, "rev-parse", "HEAD")[:12]), past
    assert not empties(past) and not empties(records) and "not instructions" in records["note"], records
    assert records["records"][0]["text"] == "release tags are signed" and not CHAIN & set(records["records"][0])
    hits = {h["id"]: h for h in found["hits"]}
    assert hits["skill:release-checklist"]["recorded"].startswith("skill written by") and hits["skill:release-checklist"]["committed"]
    assert hits[fact]["recorded"] == "recorded by an agent (remember)" and hits[fact]["committed"], hits[fact]
    assert not empties(found), empties(found)


async def test_history_dates_are_spelled_as_the_other_answers_spell_a_time(store: Store, repo: Path):
    remembered(store, "a fact")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "memory")
    async with Client(server.build(store)) as client:
        changes = await answer(client, "history", ref="session:s")
    assert changes["commits"] and all(ISO.match(c["date"]) for c in changes["commits"]), changes["commits"]




async def pages(client: Client, **args: Any) -> list[dict[str, Any]]:
    """Every page of a read, following next_cursor (at most 20)."""
    out = [await answer(client, "read", **args)]
    while out[-1].get("next_cursor") and len(out) < 20:
        out.append(await answer(client, "read", **args, cursor=out[-1]["next_cursor"]))
    return out


async def test_as_of_reads_every_reference_form_as_the_live_read_does(store: Store, repo: Path):
    """read(ref, as_of=HEAD) of what HEAD holds as it is now answers as read(ref) does, plus `as_of`, for every form of
    reference: a session spanning two files (a checkpoint committed its first), a record whose text is a blob, a skill
    and a file beside it, a loop with its runs, a loop run. It returned the first file of a session only, the raw JSONL
    for a bare session id, a blob's 2,000-character preview without its content, SKILL.md for a file beside it, and
    a secret in a skill's file unredacted."""
    write_skill_file(repo, "release-checklist", "How we cut a release: bump, tag, publish.", "1. Tag\n2. Publish")
    (repo / ".agents/skills/release-checklist/scripts").mkdir()
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a secret left in a file: no read hands it out
    (repo / ".agents/skills/release-checklist/scripts/tag.sh").write_text(f"git tag v1\nTOKEN={token}\n", encoding="utf-8")
    (repo / ".agents/loops/fix-flaky-tests.md").write_text(LOOP_SPEC, encoding="utf-8")
    store.refresh()
    Engine(store).accept("fix-flaky-tests")  # a person's accept on this clone: its runs may start
    async with Client(server.build(store)) as client:
        first = (await answer(client, "remember", text="release tags are signed", session="s"))["ids"][0]
        big = (await answer(client, "remember", text="deploy log " * 7000, session="s"))["ids"][0]  # 77 KB: a blob
        await answer(client, "checkpoint", summary="tags and the deploy log", covers=[f"{first.split('#')[0]}#1-2"], session="s")
        store.flush("all")
        await answer(client, "remember", text="the tag is pushed last", session="s")
        await answer(client, "remember", text="publish waits for CI", session="s")
        run = (await answer(client, "loop_start", name="fix-flaky-tests"))["run"]
        Engine(store).abort(run, "ended, so reads below record nothing in it")  # a live run counts the skills read in it
        await answer(client, "checkpoint", summary="the order of a release", covers=[f"{first.split('#')[0]}#4-5"], session="s")
        store.flush("all")
        git(repo, "add", "-A")
        if git(repo, "status", "--porcelain"):
            git(repo, "commit", "-qm", "the rest")
        session = first.split("#")[0]
        assert len(list((repo / ".agents/experience").rglob(f"{session}*.jsonl"))) == 2  # the session spans two files
        head, read = git(repo, "rev-parse", "HEAD").strip()[:12], {}
        for ref in ("skill:release-checklist", "release-checklist", "release-checklist/scripts/tag.sh",
                    "skill:release-checklist/scripts/tag.sh", "loop:fix-flaky-tests", "fix-flaky-tests", first, big,
                    f"{session}#1-6", f"{session}#2-4", f"session:{session}", session, run, f"session:{run}"):
            live, past = await pages(client, ref=ref), await pages(client, ref=ref, as_of="HEAD")
            assert all(p.pop("as_of") == head for p in past), (ref, past)
            assert past == live, (ref, json.dumps(past)[:3000], json.dumps(live)[:3000])
            read[ref] = live
        blob = await pages(client, ref=big, as_of="HEAD")
    assert read["loop:fix-flaky-tests"][0]["runs"] and read["release-checklist/scripts/tag.sh"][0]["content"].startswith("git tag v1\nTOKEN=[REDACTED")
    assert list(dict.fromkeys(r["id"] for p in read[session] for r in p["records"])) == [f"{session}#{n}" for n in range(1, 7)], read[session]
    assert "".join(r["content"] for p in blob for r in p["records"]) == "deploy log " * 7000  # its blob, read from the commit


async def test_a_recall_hit_of_a_record_whose_text_does_not_match_its_hash_says_so(store: Store, repo: Path):
    """A record edited by hand keeps its mark (the mark is of the stored hash), so recall framed it as any record
    recorded by an agent; only read said it failed verification. Committed or not, the hit says so now."""
    ids = remembered(store, "alpha note one", "beta note two", "gamma note three")
    log = next((repo / ".agents" / "experience").rglob("*.jsonl"))
    async with Client(server.build(store)) as client:
        for commit in (False, True):
            log.write_text(log.read_text(encoding="utf-8").replace(" note two", " NOTE two"), encoding="utf-8")
            if commit:  # a person committed the edited log: HEAD holds what does not verify
                git(repo, "add", "-A")
                git(repo, "commit", "-qm", "edited")
            store.refresh()
            found = await answer(client, "recall", query="beta note two")
            hits = {h["id"]: h for h in found["hits"]}
            assert hits[ids[1]]["recorded"].endswith("its text does not match its hash: read it to see the problem"), hits[ids[1]]
            assert "hash" not in hits[ids[0]]["recorded"], hits[ids[0]]
            read = await answer(client, "read", ref=ids[1])
            assert read["records"][0]["verified"] is False, read
            log.write_text(log.read_text(encoding="utf-8").replace(" NOTE two", " note two"), encoding="utf-8")


async def test_a_record_about_an_earlier_time_says_when_beside_when_it_was_written(store: Store):
    """A decision remembered with `when` 2026-02-10 showed only its `ts`, the day it was written down: beside the
    decision that superseded it, both read as equally current."""
    async with Client(server.build(store)) as client:
        old = await answer(client, "remember", text="Decision: background jobs use Celery with RabbitMQ.", kind="decision",
                           when="2026-02-10")
        new = await answer(client, "remember", text="Decision: background jobs move from Celery to Dramatiq.", kind="decision")
        found = await answer(client, "recall", query="celery background jobs")
    hits = {h["id"]: h for h in found["hits"]}
    assert hits[old["ids"][0]]["when"] == "2026-02-10T00:00:00Z" and ISO.match(hits[old["ids"][0]]["ts"]), hits
    assert "when" not in hits[new["ids"][0]], hits  # about the time it was written: said once, by ts
