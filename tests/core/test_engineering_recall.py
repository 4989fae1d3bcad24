"""Recall over an engineering memory — what a coding agent writes and asks, unlike the chat turns LoCoMo tunes on: a
pasted traceback, an issue number, a flag, a question about a record that a long skill also touches. Each case is one
an outside measurement on a real project's history (pallets/click) found ranked below a plain FTS5 baseline."""

from __future__ import annotations

from repo_memory.core.store import Store

from tests.conftest import kept

FRAME = '  File "/home/dev/proj/.venv/lib/python3.12/site-packages/click/core.py", line {n}, in {fn}\n    rv = self.{fn}(ctx)\n'


def fill(store: Store, n: int = 40) -> None:
    """Other records of the project, so that words carry the weight they would in a memory in use."""
    for k in range(n):
        store.remember(f"Bumped the pinned version of dependency {k} and ran the tests on runner {k % 5}.", session=f"filler-{k % 4}")


def test_a_pasted_traceback_finds_the_record_of_its_error_line_however_many_frames_come_first(store: Store):
    """The query kept its first 32 words (and 2,000 characters): a traceback's are file paths, line numbers and frame
    names, and the error line that tells it apart comes last, so it was never searched (0 of 10 found in the top 5)."""
    fill(store)
    store.remember("Error message `Got unexpected extra argument` is raised from parse_args when a group receives a stray positional.", session="cli")
    store.remember("Decided to keep self.invoke(ctx) in core.py main loop; callback wrapping stays.", session="cli")
    store.remember("Refactored core.py line handling in __call__ and main for the lib site-packages layout.", session="cli")
    error = f"{kept(store, 'cli')}#1"
    for frames in (4, 30):  # 30 frames: past the characters of a query that are searched
        pasted = "Traceback (most recent call last):\n" + "".join(FRAME.format(n=100 + 37 * k, fn=("main", "invoke", "make_context")[k % 3])
                                                                for k in range(frames)) + "click.exceptions.UsageError: Got unexpected extra argument"
        assert [h.id for h in store.recall(pasted, kinds=["note"]).hits][:1] == [error], frames


def test_a_node_or_java_stack_trace_is_searched_by_its_error_not_its_frames(store: Store):
    fill(store)
    store.remember("TypeError: Cannot read properties of undefined (reading 'map') came from List.jsx rendering before the fetch.", session="web")
    store.remember("Rendered the list with render() in /app/src/List.jsx; node_modules react index.js processTicksAndRejections.", session="web")
    store.remember("NullPointerException: name is null when the config has no [user] table.", session="jvm")
    store.remember("Moved com.acme.Foo.bar and com.acme.Main.main into the acme module (Foo.java, Main.java).", session="jvm")
    node = ("TypeError: Cannot read properties of undefined (reading 'map')\n    at render (/app/src/List.jsx:12:20)\n"
            "    at Object.<anonymous> (/app/node_modules/react/index.js:5:3)\n"
            "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)")
    java = "java.lang.NullPointerException: name is null\n\tat com.acme.Foo.bar(Foo.java:42)\n\tat com.acme.Main.main(Main.java:7)\n\t... 3 more"
    assert [h.id for h in store.recall(node, kinds=["note"]).hits][:1] == [f"{kept(store, 'web')}#1"]
    answer = store.recall(java, kinds=["note"])
    assert [h.id for h in answer.hits][:1] == [f"{kept(store, 'jvm')}#1"] and "stack frames" in answer.note


def test_a_negated_flag_finds_its_own_record_not_the_flag_it_negates(store: Store):
    """"no" is a stopword and "-" splits words: `--no-cache` was searched as `cache` (1 of 6 such questions found)."""
    fill(store)
    store.remember("Added the --cache option: cache downloads in the cache dir, the cache is keyed by URL.", session="cli")
    store.remember("Added the --no-cache flag to skip reading downloads from disk.", session="cli")
    assert [h.id for h in store.recall("what does --no-cache do?", kinds=["note"]).hits][:1] == [f"{kept(store, 'cli')}#2"]


OPENING = ("Parameter types convert the command line's strings into values before a callback sees them. File opens lazily, "
           "Path checks that a path exists, IntRange clamps or fails outside its bounds, and DateTime reads the formats it "
           "is given. A type converts within the context of its command, and a conversion that fails stops the command "
           "with a usage error naming the parameter. ") * 3
PAGE = OPENING + " ".join(f"Section {n}: {line}" for n, line in enumerate([  # deeper in, a page touches every word of a question
    "The name of a type shows in the help message, and a custom ParamType sets its own name.",
    "Choice checks a value against a fixed list; show_choices decides whether the help lists them.",
    "A flag is false unless it is specified; a default is shown in the help when show_default is set.",
    "Within a group, each command's options keep their own types; the help of the group shows only its own.",
] * 6))


def test_a_long_page_of_skill_does_not_outrank_the_short_record_that_answers_exactly(store: Store):
    """Each list's best hit was weighed by the share of the question's words it held, read over 4,000 characters: a
    documentation page holds most words of any question about its area, and a skill took first place over the one
    record of exactly that fix in 30 of 243 questions on click's history."""
    fill(store)
    store.write_skill("parameter-types", "How parameter types convert values; use when adding a ParamType.", PAGE, actor="human")
    store.remember("Fixed: Fix metavar for Choice options when show_choices=False (#2365). Files: src/click/types.py, "
                   "tests/test_options.py. Touched `Choice`, `test_usage_show_choices`.", session="fix")
    store.remember("Decided to pin sphinx in docs requirements because the theme broke.", session="fix")
    asked = "show the types.ParamType.name for types.Choice options within --help message if show_choices=False is specified?"
    assert [h.id for h in store.recall(asked).hits][:2] == [f"{kept(store, 'fix')}#1", "skill:parameter-types"]
    assert store.recall("how do parameter types convert values").hits[0].id == "skill:parameter-types"  # asked for the page


def test_once_every_record_is_embedded_an_issue_number_or_a_version_still_finds_the_record_that_holds_it(repo, monkeypatch):
    """Records rank 60% on meaning, which cannot tell #876 from #884 or 8.1.0 from 8.0.1: once the embedding job had
    caught up, the exact record fell below its neighbours (issue questions first 1.00 -> 0.40 on click's history)."""
    from repo_memory.config import Config

    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "true")
    store = Store(Config.load(repo))
    try:
        fill(store)
        notes = ["Fixed: fix typo reassmebled => reassembled (#884). Files: docs/advanced.rst. Refs #884.",
                 "Decided to remove leftover print function in test used for previous debugging (#876). Refs #876.",
                 "Fixed: shell completion for nested groups. Files: src/click/shell_completion.py. Refs #880.",
                 "Decided to run the docs build on every pull request. Refs #870.",
                 "Release 8.0.1 broke the 1.8 wheels on the mirror.",
                 "Release 8.1.0 broke the option parser for flags after --."]
        for text in notes:
            store.remember(text, session="click")
        store.reindex(embedding=lambda done, total: None)
        answer = store.recall("what did we do about issue #876?", kinds=["note"])
        assert answer.ranking.startswith("hybrid") and answer.hits[0].id == f"{kept(store, 'click')}#2", answer.hits[:3]
        assert store.recall("what broke in 8.1.0?", kinds=["note"]).hits[0].id == f"{kept(store, 'click')}#6"
    finally:
        store.close()


def test_a_quoted_error_message_finds_the_record_that_holds_it_as_written_first(store: Store):
    """Asked with an error's own words, a record quoting the message ranked level with, or below, records holding its
    words apart or among their neighbours' (error fragments at rank 1: 0.72 on click's history, plain BM25 0.96): the
    same words in the same order now count for more."""
    fill(store)
    store.remember("flag, non-boolean: for secondary flag is valid not", session="alpha")  # the same words, another order
    store.remember("secondary flag is not valid for non-boolean flag", session="beta")
    hits = store.recall("got error: is not valid for non-boolean flag.", kinds=["note"]).hits
    assert [h.id for h in hits][:1] == [f"{kept(store, 'beta')}#1"], hits[:3]


def test_a_recall_whose_filters_leave_nothing_says_so_and_an_until_before_since_is_refused(store: Store):
    """With filters that excluded every record, recall answered that no word of the query was in any memory (and spoke
    of 'these hits' with none): an agent concluded memory knew nothing of it. An until before since was accepted."""
    from repo_memory.errors import InvalidArgumentError

    store.remember("The payments tests need the sandbox key.", session="pay")
    answer = store.recall("payments tests", since="2030-01-01")
    assert not answer.hits and "since" in answer.note and "without" in answer.note, answer
    assert "any memory" not in answer.ranking and "these hits" not in answer.ranking, answer.ranking
    try:
        store.recall("payments tests", since="2026-12-01", until="2020-01-01")
    except InvalidArgumentError as exc:
        assert "until" in str(exc) and "since" in str(exc)
    else:
        raise AssertionError("an until before since was accepted")


def test_a_snippet_highlights_whole_names_so_a_command_copied_from_it_is_right(store: Store):
    """The index's highlighting marked a name's parts: `**STAGING**_**DATABASE**_**URL**` and `__**version**__` in a
    snippet, which a model copies into a command."""
    store.remember("make migrate-staging needs the STAGING_DATABASE_URL; bump __version__ after.", session="ops")
    snippet = store.recall("staging database url migrate version", kinds=["note"]).hits[0].snippet
    assert "**STAGING_DATABASE_URL**" in snippet and "**migrate-staging**" in snippet and "**__version__**" in snippet, snippet


def test_a_long_skill_holding_the_query_in_its_last_step_outranks_a_record_holding_one_of_its_words(store: Store):
    """A skill's share of the query was read over its first 600 characters: one holding `zanzibar-token` verbatim in its
    last step held none of it there, and ranked below a record that holds only "token" (plain BM25 puts it first)."""
    steps = "\n".join(f"{n}. Step number {n}: check the usual things in the service and move on." for n in range(1, 60))
    store.write_skill("gateway-maintenance", "Routine maintenance of the API gateway.",
                      f"{steps}\n60. Finally rotate the zanzibar-token in Vault and restart the gateway pods.", actor="human")
    store.write_skill("cache-busting", "Bust the CDN cache after a frontend deploy.", "Run `make purge-cdn` with the Fastly token.",
                      actor="human")
    store.remember("API rate limit is 100 requests per minute per token.", session="api")
    for asked in ("zanzibar-token", "zanzibar token vault"):
        assert [h.id for h in store.recall(asked).hits][:1] == ["skill:gateway-maintenance"], asked


def test_a_url_or_a_ticket_given_as_a_ref_finds_its_record(store: Store):
    """`refs` take free text such as a URL or a ticket (docs/agent.md), but only code anchors were indexed: recall of
    the pull request's URL found nothing, and the ticket only a record beside it, labelled as found through it."""
    fill(store)
    store.remember("Refunds are processed asynchronously by the worker.", kind="decision", session="pay",
                   refs=["JIRA-1520", "https://github.com/acme/shop/pull/482", f"{kept(store, 'filler-1')}#2"])
    store.remember("Ticket JIRA-1234 is about soft-deleted users.", session="pay")
    for asked in ("JIRA-1520", "https://github.com/acme/shop/pull/482"):
        hits = store.recall(asked).hits
        assert [(h.id, h.matched) for h in hits][:1] == [(f"{kept(store, 'pay')}#1", "")], (asked, hits[:2])


NOTICE = "本番環境のデプロイは金曜日に行わないこと。ロールバック手順は docs/runbook.md を参照。"


def test_japanese_or_chinese_words_find_the_record_and_the_skill_that_hold_them(store: Store):
    """The index's tokenizer makes a whole run of CJK characters one word, so a record holding 金曜日 in a sentence was
    not found by 金曜日 at all. CJK text is now indexed and asked for as overlapping pairs of characters."""
    fill(store)
    store.remember(NOTICE, session="ops")
    store.remember("The orders table has grown to 40 million rows.", session="ops")
    store.write_skill("deploy-freeze", "When not to deploy.", "部署冻结期间不要发布到生产环境。", actor="human")
    for asked in ("金曜日", "デプロイ 金曜日", "ロールバック手順", "金曜日にデプロイしてもいいですか"):
        hits = store.recall(asked).hits
        assert [h.id for h in hits][:1] == [f"{kept(store, 'ops')}#1"], (asked, hits[:2])
        assert NOTICE[:20] in hits[0].snippet.replace("**", ""), hits[0].snippet  # the text as written, not its pairs
    assert [h.id for h in store.recall("冻结期间 生产环境").hits][:1] == ["skill:deploy-freeze"]


def test_a_one_character_cjk_word_finds_the_record_and_the_skill_that_hold_it(store: Store):
    """A single character is a whole word in Chinese (锁 'lock', 表 'table'), but a run of two or more was indexed only
    as its pairs, so 锁 found nothing though a record said 订单表被锁了. Runs are now indexed as their single characters
    too; a query's longer runs are still asked for as pairs (precise), a lone character as itself."""
    fill(store)
    store.remember("迁移时订单表被锁了十分钟,要先在低峰期执行。", session="lock")
    store.remember(NOTICE, session="ops")
    store.write_skill("deploy-freeze", "When not to deploy.", "部署冻结期间不要发布到生产环境。", actor="human")
    for asked, found in (("锁", f"{kept(store, 'lock')}#1"), ("表", f"{kept(store, 'lock')}#1"),
                         ("金", f"{kept(store, 'ops')}#1"), ("冻", "skill:deploy-freeze"), ("被锁", f"{kept(store, 'lock')}#1")):
        hits = store.recall(asked).hits
        assert [h.id for h in hits][:1] == [found], (asked, hits[:2])
    assert not store.recall("锁金").hits  # a run of two is still one pair: no record holds 锁金


def test_a_skill_found_by_meaning_alone_says_so_as_a_record_does(repo, monkeypatch):
    """With meaning fused in, a Japanese query found no word anywhere: recall said no word of it was in any memory,
    and an unrelated skill tied the record that holds it and came first with no `matched: by meaning only`."""
    from repo_memory.config import Config
    from repo_memory.index.hits import MEANING

    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "true")
    store = Store(Config.load(repo))
    try:
        store.write_skill("nightly-export", "Operate the nightly orders export job: schedule, memory, retries.",
                          "Runs 02:30 UTC; rerun with `make export DATE=YYYY-MM-DD`.", actor="human")
        store.remember(NOTICE, session="ops")
        store.remember("The orders table has grown to 40 million rows.", session="ops")
        store.reindex(embedding=lambda done, total: None)
        answer = store.recall("デプロイ 金曜日")
        assert answer.hits[0].id == f"{kept(store, 'ops')}#1" and "no word" not in answer.ranking, answer
        skill = [h for h in answer.hits if h.id == "skill:nightly-export"]
        assert skill and skill[0].matched == MEANING, answer.hits
        assert store.recall("nightly export").hits[0].matched == ""
    finally:
        store.close()


def test_a_record_and_a_skill_holding_the_whole_query_go_in_the_order_of_how_much_of_each_is_about_it(store: Store):
    """Each list's best is weighed by the share of the query it holds, so a short skill and a short record both holding
    all of `yield_per` scored the same, and the tie went to the skill: a runbook with one step naming it came before
    the record of that change (7 of 73 questions of an engineering memory). Now the one whose words are more of the
    query comes first — the record here — and a skill whose name and description are about the question still does."""
    fill(store)
    store.write_skill("nightly-export", "Operate the nightly orders export job: schedule, memory, retries.",
                      "Runs 02:30 UTC; streams with yield_per(1000); rerun with `make export DATE=YYYY-MM-DD`.", actor="human")
    steps = "\n".join(f"{n}. Step {n}: check the generated file under versions/ and the schema it expects." for n in range(1, 8))
    store.write_skill("running-migrations", "Run database migrations with alembic: create, apply and roll back migrations.", steps,
                      actor="human")
    store.remember("Worker killed: OOMKilled (exit code 137) when the export loaded all orders; export_orders now streams with "
                   "yield_per(1000).", session="ops")
    store.remember("Also noted: the deploy script runs database migrations before switching traffic; PR #654 has the order of "
                   "the steps.", session="ops")
    assert [h.id for h in store.recall("yield_per").hits][:2] == [f"{kept(store, 'ops')}#1", "skill:nightly-export"]
    asked = "how do we run the migrations?"  # the record is denser than the skill's steps, not than its name and description
    assert [h.id for h in store.recall(asked).hits][:2] == ["skill:running-migrations", f"{kept(store, 'ops')}#2"]


def test_a_skill_named_for_the_question_keeps_a_tie_with_a_record_of_fewer_words(store: Store):
    """The tie-break put a three-word record ("Deployed to staging.") above the skill written for the very question
    (skill:deploy-staging for "how to deploy to staging"): a record that short is always denser than a sentence of
    description. A skill whose name is all words of the question is what the question asks for."""
    fill(store)
    store.write_skill("deploy-staging", "How to deploy to staging, step by step.", "1. make deploy ENV=staging\n2. watch the dashboard",
                      actor="human")
    store.write_skill("rotate-api-keys", "Rotating the API keys of the payment provider without downtime.",
                      "1. create the new key\n2. deploy it\n3. revoke the old one", actor="human")
    store.remember("Deployed to staging.", session="ops")
    store.remember("Rotated API keys.", session="ops")
    assert [h.id for h in store.recall("how to deploy to staging").hits][:2] == ["skill:deploy-staging", f"{kept(store, 'ops')}#1"]
    assert [h.id for h in store.recall("rotate API keys").hits][:2] == ["skill:rotate-api-keys", f"{kept(store, 'ops')}#2"]


def test_a_version_asked_with_or_without_its_v_finds_the_record_pinning_it_not_a_numbered_list(store: Store):
    """"2.3.1" was searched as the words 2, 3 and 1, which a skill's steps numbered "1. 2. 3." hold, while the record
    pinning `v2.3.1` holds the token v2: the skill came first and the record scored 0."""
    fill(store)
    store.remember("Pin requests-oauthlib to v2.3.1; v2.4.0 changed the token refresh callback signature.", session="deps")
    store.remember("Released 1.4.2 to PyPI after the wheel fix.", session="deps")
    store.remember("Sentry traces sample rate is 0.2 in production because 1.0 blew the quota in two days.", session="ops")
    store.write_skill("db-migrations", "How to run database migrations here; use when changing the schema",
                      "1. Write the alembic revision.\n2. Run `make db-upgrade`.\n3. Commit the revision file.\n", actor="human")
    pin, release = f"{kept(store, 'deps')}#1", f"{kept(store, 'deps')}#2"
    for asked in ("2.3.1", "v2.3.1", "why is requests-oauthlib on 2.3.1?"):
        hits = [h.id for h in store.recall(asked).hits]
        assert hits[:1] == [pin] and "skill:db-migrations" not in hits, (asked, hits)
    assert [h.id for h in store.recall("what went out in v1.4.2").hits][:1] == [release]
    assert store.recall("version 1.0").hits[0].id == f"{kept(store, 'ops')}#1"  # not a filler record holding a 1


def test_use_or_using_in_a_question_does_not_match_every_skill_described_use_when(store: Store):
    """Skill descriptions follow the convention "…; use when …" (the README's example): "use" and "using" (stemmed to
    the same word) matched every skill, and "are we still using rabbitmq" put an unrelated skill first."""
    store.remember("Decision: background jobs moved to Dramatiq with Redis; RabbitMQ is being decommissioned.", session="ops")
    store.remember("Password reset emails go to the priority queue, not the bulk queue.", session="ops")
    for name, description in (("release-checklist", "How we cut a release here; use when asked to release"),
                              ("code-review", "Review checklist; use this skill when reviewing a pull request")):
        store.write_skill(name, description, "Steps.", actor="human")
    for asked in ("are we still using rabbitmq", "what do we use for background jobs"):
        hits = [h.id for h in store.recall(asked).hits]
        assert hits[:1] == [f"{kept(store, 'ops')}#1"] and not any(h.startswith("skill:") for h in hits), (asked, hits)
