"""`remember` carries what an import carries: who said a record, when what it tells happened, and data kept out of
the words recall matches; the same record written either way ranks the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client

from repo_memory import layout
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells import mcp as server
from repo_memory.shells.cli import cli

from tests.conftest import git, kept, named

pytestmark = pytest.mark.anyio
# A conversation of two people over two days, as an agent recording it would see it: who said each turn, when.
TURNS = [
    ("2023-05-08T13:56:00Z", "Caroline", "Hey Mel! I went to a LGBTQ support group yesterday and it was so powerful."),
    ("2023-05-08T13:56:00Z", "Melanie", "Wow, that's cool, Caroline! What happened that was so awesome?"),
    ("2023-05-08T13:56:00Z", "Caroline", "The transgender stories were so inspiring, I felt accepted."),
    ("2023-05-08T13:56:00Z", "Melanie", "I'm off to go swimming with the kids, and last week I painted a sunrise by the lake."),
    ("2023-05-08T13:56:00Z", "Caroline", "I'm keen on counseling or working in mental health, to help people like me."),
    ("2023-05-25T19:30:00Z", "Melanie", "We went camping in the mountains last weekend, the kids loved the stars."),
    ("2023-05-25T19:30:00Z", "Caroline", "That sounds lovely! I have been reading a book my friend gave me."),
    ("2023-05-25T19:30:00Z", "Melanie", "Pottery class was yesterday, I made a bowl for my daughter."),
    ("2023-05-25T19:30:00Z", "Caroline", "I'm going to a pride parade next month with my friends."),
    ("2023-05-25T19:30:00Z", "Melanie", "Reading is so relaxing. My kids love it when I read to them at night."),
]
QUESTIONS = ["When did Caroline go to the LGBTQ support group?", "What did Melanie paint?", "When did Melanie go camping?",
             "What career path is Caroline considering?", "When did Melanie make a bowl in pottery class?",
             "What is Caroline doing next month?", "Who reads to their kids?", "D1:3", "dia"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def fresh(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    layout.init(path)
    return path


async def ranked(store: Store, questions: list[str]) -> list[list[tuple[str, float]]]:
    async with Client(server.build(store)) as client:
        answers = [await client.call_tool("recall", {"query": q, "limit": 5}) for q in questions]
    return [[(h["id"].split("#")[1], h["score"]) for h in (a.structured_content or {})["hits"]] for a in answers]


async def test_a_record_written_through_remember_ranks_as_the_same_record_imported(tmp_path: Path, runner: CliRunner):
    told, imported = fresh(tmp_path / "told"), fresh(tmp_path / "imported")
    store = Store(Config.load(told))
    async with Client(server.build(store)) as client:
        for n, (when, speaker, text) in enumerate(TURNS, start=1):
            result = await client.call_tool("remember", {"text": text, "kind": "observation", "session": "chat", "speaker": speaker,
                                                         "when": when, "data": {"dia_id": f"D1:{n}"}})
            assert not result.is_error, result.content
    lines = [json.dumps({"kind": "observation", "text": text, "ts": when, "data": {"speaker": speaker, "dia_id": f"D1:{n}"}})
             for n, (when, speaker, text) in enumerate(TURNS, start=1)]
    (tmp_path / "chat.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = runner.invoke(cli, ["--root", str(imported), "log", "import", str(tmp_path / "chat.jsonl"), "--session", "chat"])
    assert result.exit_code == 0, result.output
    importer = Store(Config.load(imported))
    try:
        by_remember, by_import = await ranked(store, QUESTIONS), await ranked(importer, QUESTIONS)
    finally:
        store.close()
        importer.close()
    assert by_remember == by_import
    assert by_remember[0][0][0] == "1"  # the person the question names, on the day "yesterday" means
    assert by_remember[-2:] == [[], []]  # bookkeeping in data (dia_id) is not a word of the record


async def test_a_quoted_utterance_names_its_speaker_and_a_label_does_not(store: Store):
    async with Client(server.build(store)) as client:
        for text in ['Caroline: "I went to the support group yesterday."', 'Error: "file not found"', 'Caroline said "hi" to Bob']:
            assert not (await client.call_tool("remember", {"text": text, "session": "s"})).is_error
        refused = await client.call_tool("remember", {"text": "x", "session": "s", "when": "the day after the launch"})
    records = [ln.record for ln in store.lines("s") if ln.record]
    assert [(r.get("data") or {}).get("speaker") for r in records] == ["Caroline", None, None]
    assert [r["text"] for r in records][0] == 'Caroline: "I went to the support group yesterday."'  # the words stay as written
    assert refused.is_error and "not a time" in str(refused.content)


async def test_an_empty_record_or_a_kind_remember_cannot_write_is_refused_saying_what_to_do(store: Store):
    """An agent's empty or blank text became an empty record, found by nothing; a wrong kind was answered with a list
    of kinds half of which remember refuses in turn."""
    async with Client(server.build(store)) as client:
        empty = [await client.call_tool("remember", {"text": text, "session": "s"}) for text in ("", "   \n")]
        blank_summary = await client.call_tool("checkpoint", {"summary": " ", "covers": ["s#1"], "session": "s"})
        wrong_kind = await client.call_tool("remember", {"text": "flaky test", "kind": "bug", "session": "s"})
        summary = await client.call_tool("remember", {"text": "what we did", "kind": "summary", "session": "s"})
        kept = await client.call_tool("remember", {"text": "", "data": {"build": 41}, "session": "s"})  # data alone is a record
    said = lambda result: " ".join(getattr(c, "text", "") for c in result.content)  # noqa: E731
    assert all(r.is_error and "empty" in said(r) for r in (*empty, blank_summary))
    assert wrong_kind.is_error and "note, action, observation, tool, decision or error" in said(wrong_kind)
    assert "outcome" not in said(wrong_kind) and "skill.used" not in said(wrong_kind)
    assert summary.is_error and "checkpoint" in said(summary)
    assert not kept.is_error
    assert [ln.record["seq"] for ln in store.lines("s") if ln.record] == [1]


async def test_a_record_asked_for_by_its_own_words_comes_before_a_skill_that_shares_a_few_of_them(store: Store, repo: Path):
    """Skills and records are ranked apart and merged on each list's best: a skill matching two common words of a
    question scored 1.0 as the record matching all of them did, and won the tie; found by an agent's session."""
    from tests.conftest import write_skill_file

    write_skill_file(repo, "release-checklist", "How we cut a release of app; use when asked to release or bump the version.",
                     "1. Run `pytest` and make sure it passes.\n2. Tag: `git tag vX.Y.Z` and `git push --tags`.\n3. Publish to the index.")
    write_skill_file(repo, "db-migrations", "How we change the database schema of app.",
                     "Edit src/app/db.py, write the migration, run it against a copy of the users table first.")
    store.refresh()
    said = ["Decided to keep SQLite for the users table instead of Postgres: deployments are single-node.",
            "pytest fails with ModuleNotFoundError: No module named 'src' unless run from the repo root.",
            "Uploading to PyPI failed with 403 because the token expired."]
    async with Client(server.build(store)) as client:
        ids = [(await client.call_tool("remember", {"text": text}) ).structured_content["ids"][0] for text in said]
        firsts = [(await client.call_tool("recall", {"query": q})).structured_content["hits"][0]["id"]
                  for q in [*said, "PyPI 403", "how do we cut a release", "change the database schema"]]
    assert firsts == [*ids, ids[2], "skill:release-checklist", "skill:db-migrations"]


async def test_a_filter_that_leaves_nothing_to_find_says_so_and_suggests_no_skill_it_excluded(store: Store, repo: Path):
    from tests.conftest import write_skill_file

    write_skill_file(repo, "release-checklist", "How we cut a release.")
    store.refresh()
    async with Client(server.build(store)) as client:
        await client.call_tool("remember", {"text": "the release is cut on Thursdays", "session": "s"})
        nowhere = (await client.call_tool("recall", {"query": "relase", "session": "no-such-session"})).structured_content
        skills_then = (await client.call_tool("recall", {"query": "release", "kinds": ["skill"], "since": "2030-01-01"})).structured_content
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert nowhere["hits"] == [] and "suggestions" not in nowhere and "No session 'no-such-session'" in nowhere["note"]
    assert skills_then["hits"] and "skills and loops have no time" in skills_then["note"]
    recall = tools["recall"].input_schema["properties"]
    assert "commit" not in recall["since"]["description"] and "commit" in recall["as_of"]["description"]
    assert all(recall[name].get("description") for name in ("session", "cursor", "symbol", "since", "until", "as_of"))


async def test_an_argument_a_tool_does_not_take_is_refused_not_dropped(store: Store):
    """`tags` on a remember was dropped without a word while the answer said the record was written."""
    async with Client(server.build(store)) as client:
        refused = await client.call_tool("remember", {"text": "release is signed", "tags": ["release"], "session": "s"})
        kept = await client.call_tool("remember", {"text": "release is signed", "session": "s"})
    text = " ".join(getattr(c, "text", "") for c in refused.content)
    assert refused.is_error and "takes no 'tags'" in text and "speaker" in text and not kept.is_error
    assert [ln.record["seq"] for ln in store.lines("s") if ln.record] == [1]  # nothing written by the refused call


async def test_a_ref_to_a_record_or_skill_that_does_not_exist_is_refused_as_checkpoint_refuses_it(store: Store):
    async with Client(server.build(store)) as client:
        first = (await client.call_tool("remember", {"text": "the cache is warm", "session": "s"})).structured_content["ids"][0]
        typo = await client.call_tool("remember", {"text": "confirmed", "refs": ["s#9"], "session": "s"})
        no_skill = await client.call_tool("remember", {"text": "used it", "refs": ["skill:does-not-exist"], "session": "s"})
        fine = await client.call_tool("remember", {"text": "confirmed", "refs": [first, "https://ci/run/7", "JIRA-12"],
                                                   "session": "s"})
    said = lambda result: " ".join(getattr(c, "text", "") for c in result.content)  # noqa: E731
    assert typo.is_error and "s#9 does not exist" in said(typo) and first in said(typo)
    assert no_skill.is_error and "No skill 'does-not-exist'" in said(no_skill)
    assert not fine.is_error, said(fine)


def test_data_is_kept_out_of_the_words_except_what_the_schema_marks_searchable(store: Store):
    store.remember("Ran the flaky test 20 times", kind="tool", session="s", data={"ticket": "JIRA-5521", "output_excerpt": "19 passed, 1 failed"})
    store.remember(None, kind="note", session="t", data={"ticket": "JIRA-7730"})  # no text: its data is what it says
    assert [named(h.id) for h in store.recall("JIRA-5521").hits] == ["t#1"]  # by its word JIRA, not s#1 by its ticket
    assert [named(h.id) for h in store.recall("19 passed 1 failed").hits] == ["s#1"]
    assert [named(h.id) for h in store.recall("JIRA-7730").hits] == ["t#1"]
    record: dict[str, Any] = store.read(f"{kept(store, 's')}#1").records[0].record
    assert record["data"]["ticket"] == "JIRA-5521"  # kept, and read returns it


async def other_notes(client: Client) -> None:
    """Twelve records of another session, so the words of a test's question are rare ones (BM25 gives words on half
    the records no weight)."""
    for n in range(12):
        text = f"Note {n} on the release, the tests, the cache and the deploys."
        assert not (await client.call_tool("remember", {"text": text, "session": "other"})).is_error


async def test_a_question_in_the_users_words_prefers_what_the_user_said_and_you_what_the_assistant_said(store: Store):
    # The same words said by both sides of a chat, the assistant first (records that rank the same come in the order
    # written). A question put to a chat's memory is the user's: "I" and "my" are the user, "you" the assistant.
    said = "Toby is the beagle puppy adopted from the shelter in May."
    async with Client(server.build(store)) as client:
        await other_notes(client)
        for session, speakers in (("chat", ("assistant", "user")), ("log", ("agent", "human"))):
            for speaker in speakers:
                assert not (await client.call_tool("remember", {"text": said, "session": session, "speaker": speaker})).is_error
        answers = {(q, s): (await client.call_tool("recall", {"query": q, "session": s})).structured_content or {}
                   for q in ("Which puppy did I adopt?", "Which puppy did you recommend?", "Which puppy was adopted?",
                             "Can you remind me which puppy I adopted?", "Could you tell me which puppy you recommended?")
                   for s in ("chat", "log")}
    ranked = {key: [(named(h["id"]), h["score"]) for h in answer["hits"]] for key, answer in answers.items()}
    assert ranked[("Which puppy did I adopt?", "chat")] == [("chat#2", 1.0), ("chat#1", pytest.approx(1 / 1.5, abs=1e-3))]
    assert ranked[("Which puppy did you recommend?", "chat")] == [("chat#1", 1.0), ("chat#2", pytest.approx(1 / 1.5, abs=1e-3))]
    assert ranked[("Which puppy was adopted?", "chat")] == [("chat#1", 1.0), ("chat#2", 1.0)]  # no person: as written
    # A request's "can you" and "remind me" are how the question is put, not whom it is about.
    assert [i for i, _ in ranked[("Can you remind me which puppy I adopted?", "chat")]] == ["chat#2", "chat#1"]
    assert [i for i, _ in ranked[("Could you tell me which puppy you recommended?", "chat")]] == ["chat#1", "chat#2"]
    assert ranked[("Could you tell me which puppy you recommended?", "chat")][1][1] < 1.0
    # An agent's log (human and agent, as hooks and transcript imports record them): the agent writes the queries
    # there, and its "I" is not the human's, so pronouns prefer no one.
    for q in ("Which puppy did I adopt?", "Which puppy did you recommend?"):
        assert ranked[(q, "log")] == [("log#1", 1.0), ("log#2", 1.0)]


async def test_a_speaker_recorded_by_full_name_is_preferred_when_the_question_names_them_by_either_name(store: Store):
    said = "The watercolour of the lake at sunrise is finished."
    async with Client(server.build(store)) as client:
        await other_notes(client)
        for speaker in ("Melanie Jones", "Caroline Smith"):
            assert not (await client.call_tool("remember", {"text": said, "session": "chat", "speaker": speaker})).is_error
        answers = [(await client.call_tool("recall", {"query": q, "session": "chat"})).structured_content or {}
                   for q in ("What did Caroline paint at the lake?", "What did Ms Smith paint at the lake?", "What was painted at the lake?")]
    ranked = [[(named(h["id"]), h["score"]) for h in answer["hits"]] for answer in answers]
    assert ranked[0] == ranked[1]
    assert [i for i, _ in ranked[0]] == ["chat#2", "chat#1"]
    assert ranked[0][1][1] < 1 / 1.5 + 1e-3  # the named speaker's factor, beside what the name's word adds in BM25
    assert ranked[2] == [("chat#1", 1.0), ("chat#2", 1.0)]
