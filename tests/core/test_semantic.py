"""Hybrid recall: the bundled embedding model, vectors kept beside the index, and fusion with full-text ranking."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells import mcp as server
from repo_memory.shells.cli import cli

from tests.conftest import kept, named

pytestmark = pytest.mark.anyio
SKILLS = {
    "release-checklist": ("How we cut a release: bump the version, tag it and publish the package.", "1. Bump\n2. git tag\n3. twine upload"),
    "flaky-tests": ("Chase a test that fails only sometimes in CI.", "Rerun it 20 times with pytest --count."),
    "db-migrations": ("Apply schema migrations before the app starts.", "Run alembic upgrade head."),
}
NOTES = ["The staging database refuses writes every Friday afternoon.", "Our CDN caches images for a week.",
         "Alice owns the billing service.", "The nightly job emails a report to the finance team."]
# Questions that share no content word with the memory that answers them.
PARAPHRASES = [("how do I ship it to customers", ["skill"], "skill:release-checklist"),
               ("the storage that cannot be written to on weekends", ["note"], "notes#1")]  # notes: the session's name (named())


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def memory(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "true")
    for name, (description, body) in SKILLS.items():
        folder = repo / ".agents/skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n{body}\n", encoding="utf-8")
    store = Store(Config.load(repo))
    for note in NOTES:
        store.remember(note, session="notes")
    store.close()
    return repo


async def hits(store: Store, query: str, kinds: list[str]) -> list[str]:
    async with Client(server.build(store)) as client:
        result = await client.call_tool("recall", {"query": query, "kinds": kinds})
    assert not result.is_error, result.content
    return [h["id"] for h in (result.structured_content or {})["hits"]]


async def test_hybrid_recall_finds_what_shares_no_word_with_the_question(memory: Path, monkeypatch: pytest.MonkeyPatch):
    reindex = CliRunner().invoke(cli, ["--root", str(memory), "reindex"])
    assert reindex.exit_code == 0 and "embedded 7 texts" in reindex.output, reindex.output
    hybrid = Store(Config.load(memory))
    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "false")
    lexical = Store(Config.load(memory))
    try:
        for question, kinds, answer in PARAPHRASES:
            assert answer not in [named(h) for h in await hits(lexical, question, kinds)]
            assert named((await hits(hybrid, question, kinds))[0]) == answer, question
        # what the words find is still found first
        assert (await hits(hybrid, "schema migrations", ["skill"]))[0] == "skill:db-migrations"
    finally:
        hybrid.close()
        lexical.close()


async def test_hits_found_by_meaning_alone_are_said_to_be(memory: Path):
    """With every text embedded, a nonsense query still gets its nearest texts (the model's similarity does not tell it
    from a paraphrase, 0.85 against 0.84): `ranking` says no word of it matched, so an agent can discount them."""
    assert CliRunner().invoke(cli, ["--root", str(memory), "reindex"]).exit_code == 0
    store = Store(Config.load(memory))
    try:
        async with Client(server.build(store)) as client:
            nonsense = (await client.call_tool("recall", {"query": "zzqxv nonexistentterm"})).structured_content
            worded = (await client.call_tool("recall", {"query": "schema migrations"})).structured_content
            paraphrase = (await client.call_tool("recall", {"query": PARAPHRASES[1][0], "kinds": ["note"]})).structured_content
    finally:
        store.close()
    assert nonsense["hits"] and "by meaning alone" in nonsense["ranking"] and "may be unrelated" in nonsense["ranking"]
    assert worded["ranking"] == "hybrid (full-text + meaning)"
    assert named(paraphrase["hits"][0]["id"]) == "notes#1" and "by meaning alone" in paraphrase["ranking"]  # found, and said how
    searched = CliRunner().invoke(cli, ["--root", str(memory), "search", "zzqxv", "nonexistentterm"]).output
    assert "only the nearest in meaning" in searched  # `search` listed them at 1.000 and said nothing


async def test_recall_answers_lexically_while_no_vector_exists(memory: Path):
    store = Store(Config.load(memory))
    try:  # nothing is embedded yet (no server ran, no reindex): recall answers from the words alone
        found = await hits(store, "staging database writes", ["note"])
        assert named(found[0]) == "notes#1" and found == [h.id for h in store.recall("staging database writes", kinds=["note"]).hits]
        assert await hits(store, "how do I ship it to customers", ["skill"]) == []
        # said to the agent, which need not act: it told it to run `repo-memory reindex`, a full embedding pass that an
        # agent with a shell would start on a shared machine while the server's job was doing the same
        ranking = store.recall("staging database writes").ranking
        assert "nothing is embedded yet" in ranking and "reindex" not in ranking, ranking
    finally:
        store.close()


def test_the_model_loads_and_embeds_with_no_network(memory: Path):
    # Any attempt to open a socket fails the run: the model and its tokenizer ship inside the installed package.
    script = (
        "import sys\n"
        "def guard(event, args):\n"
        "    if event.startswith('socket.') and event != 'socket.__new__' or event == 'urllib.Request':\n"
        "        raise RuntimeError(f'network access: {event}')\n"
        "sys.addaudithook(guard)\n"
        "from repo_memory.config import Config\n"
        "from repo_memory.core.store import Store\n"
        f"store = Store(Config.load({str(memory)!r}))\n"
        "store.reindex(embedding=lambda done, total: None)\n"
        "print([h.id for h in store.recall('the storage that cannot be written to on weekends', 1, kinds=['note']).hits])\n"
        "store.close()\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "REPO_MEMORY_SEMANTIC": "true"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"['{kept(memory, 'notes')}#1']"


async def test_semantic_false_embeds_nothing_and_ranks_by_words(memory: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "false")
    reindex = CliRunner().invoke(cli, ["--root", str(memory), "reindex"])
    assert reindex.exit_code == 0 and "embedded 0 texts" in reindex.output
    assert not list((memory / ".git/repo-memory").glob("vectors*"))
    store = Store(Config.load(memory))
    try:
        store.embedding().start()
        assert await hits(store, "how do I ship it to customers", ["skill"]) == []
    finally:
        store.close()


def test_vectors_made_by_another_model_are_discarded_and_made_again(memory: Path):
    assert CliRunner().invoke(cli, ["--root", str(memory), "reindex"]).exit_code == 0
    meta = memory / ".git/repo-memory/vectors.json"
    saved: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8"))
    meta.write_text(json.dumps({**saved, "model": "some-older-model"}), encoding="utf-8")
    again = CliRunner().invoke(cli, ["--root", str(memory), "reindex"])
    assert "embedded 7 texts" in again.output
    assert json.loads(meta.read_text(encoding="utf-8"))["model"] == saved["model"]


@pytest.mark.slow
def test_a_server_embeds_in_the_background_and_its_recall_turns_hybrid(memory: Path):
    from tests.shells.stdio_server import StdioServer

    proc = StdioServer(memory, env={"REPO_MEMORY_SEMANTIC": "true"})
    try:
        proc.initialize()
        began = time.monotonic()
        assert proc.call("remember", {"text": "Deploys go out from the release branch only.", "session": "notes"})["structuredContent"]
        took = time.monotonic() - began
        assert took < 2, took  # a write never waits for the model
        found: list[str] = []
        while time.monotonic() - began < 60:
            answer = proc.call("recall", {"query": "the storage that cannot be written to on weekends", "kinds": ["note"]})
            found = [h["id"] for h in answer["structuredContent"]["hits"]]
            if found:
                break
            time.sleep(0.5)
        assert [named(f) for f in found[:1]] == ["notes#1"]
    finally:
        proc.close_input()
        proc.wait(10)
        proc.kill()


def test_records_that_say_the_same_thing_share_one_vector(memory: Path):
    store = Store(Config.load(memory))
    try:
        for session in ("ci-1", "ci-2", "ci-3"):
            store.remember("All 412 tests passed.", session=session, kind="observation")
        store.remember("The nightly job emails a report to the finance team.", session="elsewhere")  # also in notes
        store.remember("x" * 57, session="elsewhere")  # "agent: " and 57 characters: as long as a hex digest, still a text
    finally:
        store.close()
    reindex = CliRunner().invoke(cli, ["--root", str(memory), "reindex"])
    assert reindex.exit_code == 0 and "embedded 9 texts" in reindex.output, reindex.output  # 3 skills, 4 notes, 2 new texts
    meta = json.loads((Config.load(memory).state_dir / "vectors.json").read_text(encoding="utf-8"))
    assert meta["count"] == 9
    again = CliRunner().invoke(cli, ["--root", str(memory), "reindex"])
    assert "embedded 0 texts" in again.output, again.output  # keys come from the content: a rebuild embeds nothing


async def test_a_huge_query_is_cut_before_it_is_embedded_and_the_answer_says_so(memory: Path):
    # The query's embedding ran over the whole text: 10 KB took 30 s, 1 MB never answered and grew the server to 1.4 GiB.
    store = Store(Config.load(memory))
    store.reindex(embedding=lambda done, total: None)
    query = "how do we cut a release " + " ".join(f"padding{i}" for i in range(12_000))  # ~120 KB
    started = time.monotonic()
    with anyio.fail_after(60):
        async with Client(server.build(store)) as client:
            result = await client.call_tool("recall", {"query": query})
    store.close()
    assert not result.is_error, result.content
    answer = result.structured_content or {}
    assert time.monotonic() - started < 60
    assert answer["ranking"].startswith("hybrid") and "skill:release-checklist" in [h["id"] for h in answer["hits"]]
    assert len(answer["query"]) == 2000 and "first and the last 1000 characters" in answer["note"] and str(len(query)) in answer["note"]


async def test_a_question_is_embedded_as_its_words_so_case_and_punctuation_change_nothing(memory: Path):
    # The model read a capitalised name or a question mark as meaning: "Who owns BILLING?" and "who owns billing" got
    # different vectors and different rankings, and the question form pulled records that are questions themselves.
    store = Store(Config.load(memory))
    store.reindex(embedding=lambda done, total: None)
    try:
        async with Client(server.build(store)) as client:
            answers = [(await client.call_tool("recall", {"query": q, "kinds": ["note"]})).structured_content or {}
                       for q in ("Who owns BILLING?", "who owns billing", "Who... owns billing?!")]
    finally:
        store.close()
    ranked = [[(h["id"], h["score"]) for h in answer["hits"]] for answer in answers]
    assert all(answer["ranking"].startswith("hybrid") for answer in answers), answers[0]["ranking"]
    assert named(ranked[0][0][0]) == "notes#3" and ranked[0] == ranked[1] == ranked[2], ranked


async def test_a_speakers_name_in_the_question_counts_by_its_words_not_in_what_is_embedded(memory: Path):
    # A record's vector is made of "Speaker: text", so a person's name in the question drew every record that person
    # wrote, whatever it said. The name is left out of what is embedded: asked about notes (no record of Caroline's
    # among them), "who owns billing, Caroline?" ranks them exactly as "who owns billing" does. A role ("agent") is a
    # word like any other.
    store = Store(Config.load(memory))
    try:
        async with Client(server.build(store)) as client:
            said = await client.call_tool("remember", {"text": "I moved the invoices to the new ledger.", "kind": "observation",
                                                       "speaker": "Caroline", "session": "standup"})
            assert not said.is_error, said.content
            store.reindex(embedding=lambda done, total: None)
            answers = [(await client.call_tool("recall", {"query": q, "kinds": ["note"]})).structured_content or {}
                       for q in ("who owns billing", "Who owns billing, Caroline?", "Who owns Caroline's billing?", "who owns billing agent")]
    finally:
        store.close()
    ranked = [[(h["id"], h["score"]) for h in answer["hits"]] for answer in answers]
    assert all(answer["ranking"].startswith("hybrid") for answer in answers), answers[0]["ranking"]
    assert named(ranked[0][0][0]) == "notes#3" and ranked[0] == ranked[1] == ranked[2], ranked
    assert ranked[3] != ranked[0]  # not a speaker's name: embedded with the rest


async def test_a_record_alone_in_its_session_is_found_by_its_meaning(memory: Path):
    # A record's meaning counts the mean similarity of its neighbours, and the floor an unrelated text lands on
    # assumes it has some; a record alone in its session (a note remembered on its own) counted none, fell to the
    # floor and lost its meaning half: here it came after every note of a session of four for a question it alone
    # answers, by meaning (it shares no word with it), with a score of 0.
    store = Store(Config.load(memory))
    try:
        async with Client(server.build(store)) as client:
            said = await client.call_tool("remember", {"text": "We brought home a rescue puppy from the shelter.", "kind": "note", "session": "weekend"})
            assert not said.is_error, said.content
            store.reindex(embedding=lambda done, total: None)
            answer = (await client.call_tool("recall", {"query": "which pet did they adopt", "kinds": ["note"]})).structured_content or {}
    finally:
        store.close()
    assert answer["ranking"].startswith("hybrid"), answer["ranking"]
    assert named(answer["hits"][0]["id"].split("#")[0]) == "weekend" and answer["hits"][0]["score"] > 0, answer["hits"]


async def test_the_meaning_half_prefers_the_speaker_a_question_names_as_the_words_half_does(memory: Path):
    # A question's "I" is the user of a chat and "you" the assistant (index/ranking.py ROLE_OF), as a name is the
    # person's; their records were preferred only by their words, and a record that answers by meaning alone shares
    # none. The user's and the assistant's record of the same thing, each alone in its session, found by meaning
    # only: "I" puts the user's first and "you" the assistant's, whichever the model finds a little closer.
    store = Store(Config.load(memory))
    try:
        async with Client(server.build(store)) as client:
            for speaker, day, session in (("user", "Saturday", "chat-1"), ("assistant", "Sunday", "chat-2")):
                said = await client.call_tool("remember", {"text": f"We brought home a rescue puppy from the shelter on {day}.",
                                                           "kind": "observation", "speaker": speaker, "session": session})
                assert not said.is_error, said.content
            store.reindex(embedding=lambda done, total: None)
            answers = [(await client.call_tool("recall", {"query": q, "kinds": ["observation"]})).structured_content or {}
                       for q in ("Which pet did I adopt?", "Which pet did you adopt?")]
    finally:
        store.close()
    assert all(answer["ranking"].startswith("hybrid") for answer in answers), answers[0]["ranking"]
    assert [[named(h["id"].split("#")[0]) for h in answer["hits"]] for answer in answers] == [["chat-1", "chat-2"], ["chat-2", "chat-1"]], answers


async def test_a_text_said_in_many_sessions_joins_by_meaning_as_its_newest_records_within_the_filters(memory: Path):
    # Records saying the same thing share one vector; by meaning, the newest two of them that pass the filters join
    # the candidates (a line repeated in a thousand sessions costs what one does). The newest of all is a note, so a
    # search for observations must look past it, not come back with one record short.
    store = Store(Config.load(memory))
    try:
        for session in ("ci-1", "ci-2", "ci-3"):
            store.remember("All 412 tests passed.", session=session, kind="observation")
        store.remember("All 412 tests passed.", session="ci-4", kind="note")
        store.reindex(embedding=lambda done, total: None)
        async with Client(server.build(store)) as client:
            answer = (await client.call_tool("recall", {"query": "the whole suite was green", "kinds": ["observation"]})).structured_content or {}
    finally:
        store.close()
    assert answer["ranking"].startswith("hybrid"), answer["ranking"]
    assert sorted(named(h["id"].split("#")[0]) for h in answer["hits"]) == ["ci-2", "ci-3"], answer["hits"]


def test_the_embedding_job_asks_the_vector_index_about_the_skills_once_not_once_per_skill(memory: Path, monkeypatch: pytest.MonkeyPatch):
    # The job's first pass (at every start, and after any skill changes) asked which skills lack a vector once per
    # skill, each time over every skill: at 10k skills, 10k lookups of 10k keys — 7 s holding the vectors' lock, and a
    # recall 8 s after a server started at 10k skills + 100k records waited 5.6 s for it (docs/benchmarks.md).
    from repo_memory.index.vectors import VectorIndex

    for n in range(40):
        folder = memory / ".agents/skills" / f"runbook-{n}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: runbook-{n}\ndescription: Step {n} of the on-call runbook.\n---\nCheck {n}.\n", encoding="utf-8")
    store = Store(Config.load(memory))
    try:
        store.reindex(embedding=lambda done, total: None)
    finally:
        store.close()
    asked: list[int] = []
    missing = VectorIndex.missing
    monkeypatch.setattr(VectorIndex, "missing", lambda self, keys: asked.append(len(keys)) or missing(self, keys))
    store = Store(Config.load(memory))
    try:
        assert store._index.semantic.embed() == 0  # a server's first pass: everything already has a vector
    finally:
        store.close()
    assert len(asked) <= 3, asked  # the skills once, the records once per round


def test_the_embedding_job_reads_the_skills_again_when_a_skill_changed_not_when_a_record_was_written(memory: Path, monkeypatch: pytest.MonkeyPatch):
    # It re-read every skill after any write to the index, records included: at 10k skills 25 ms holding the index's
    # lock for each record a hook appended, most of the job's work for it.
    from repo_memory.index.docs import DocIndex

    store = Store(Config.load(memory))
    try:
        store.reindex(embedding=lambda done, total: None)
        reads: list[int] = []
        embeddable = DocIndex.embeddable
        monkeypatch.setattr(DocIndex, "embeddable", lambda self, without: reads.append(1) or embeddable(self, without))
        semantic = store._index.semantic
        semantic.embed()
        first = len(reads)
        store.remember("The billing export runs at 02:00 UTC.", session="notes")
        assert semantic.embed() == 1 and len(reads) == first  # the new record, and no skill read
        path = memory / ".agents/skills/flaky-tests/SKILL.md"
        path.write_text(path.read_text(encoding="utf-8").replace("--count.", "--count and keep the seed."), encoding="utf-8")
        store.refresh()
        assert semantic.embed() == 1 and len(reads) == first + 1  # the edited skill's new text
    finally:
        store.close()


def test_the_job_writes_the_vector_file_a_second_apart_at_most_and_when_it_stops_not_for_each_record(
        memory: Path, monkeypatch: pytest.MonkeyPatch):
    # Saving after each round wrote the whole file for every record a hook appended (13 MB at 14k vectors); saving every
    # 30 s lost every vector of a server killed sooner (tests/shells/test_short_sessions.py). The gap is widened here:
    # three embeddings on a loaded machine (CI's two workers) can take longer than the one second the job waits.
    from repo_memory.core import semantic

    monkeypatch.setattr(semantic, "SAVE_GAP", 60.0)
    store = Store(Config.load(memory))
    try:
        store.reindex(embedding=lambda done, total: None)
        vectors = Config.load(memory).state_dir / "vectors.usearch"
        saved = vectors.stat().st_mtime_ns
        for n in range(3):
            store.remember(f"Tool call {n} finished.", session="hooks", kind="observation")
            assert store._index.semantic.embed() == 1
        assert vectors.stat().st_mtime_ns == saved
    finally:
        store.close()
    assert vectors.stat().st_mtime_ns != saved
    assert json.loads(vectors.with_suffix(".json").read_text(encoding="utf-8"))["count"] == 10  # 3 skills, 4 notes, 3 records


def test_doctor_says_how_many_texts_have_no_vector_yet_and_what_embeds_them(memory: Path):
    """Embedding runs only while a server is alive: after a fresh clone or a week of short sessions most texts had no
    vector, recall ranked them by their words, and nothing but a recall's `ranking` field said so."""
    before = CliRunner().invoke(cli, ["--root", str(memory), "doctor"])
    line = next((x for x in before.output.splitlines() if "semantic recall:" in x), "")
    assert "0 of 7 texts have a vector" in line and "repo-memory reindex" in before.output, before.output
    assert CliRunner().invoke(cli, ["--root", str(memory), "reindex"]).exit_code == 0
    after = CliRunner().invoke(cli, ["--root", str(memory), "doctor"])
    assert "semantic recall:" not in after.output, after.output


def test_doctors_embedding_estimate_is_in_seconds_for_a_few_texts_and_in_the_right_number(repo: Path, monkeypatch: pytest.MonkeyPatch):
    """One text without a vector was "about 1 min of its time" (a floor of one minute; reindex embeds a few in under a
    second) and "the other 1 are"."""
    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "true")
    store = Store(Config.load(repo))
    store.remember("The staging database is read-only on Fridays.", session="notes")
    store.close()
    out = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
    line = next((x for x in out.splitlines() if "semantic recall:" in x), "")
    assert "0 of 1 text has a vector" in line and "the one without is ranked by its words" in line, out
    assert "under a second of its time" in line and "min" not in line, line
