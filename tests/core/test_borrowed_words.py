"""A record is found through the records beside it in its session (their words are indexed with it, their meaning
counts with its own) because in a conversation the reply that answers holds none of the question's words: the turn
it answers does. An agent's or a person's notes, one after another in a session, are separate statements; there a
record that holds no word of the question, nor its meaning, ranked above the one that holds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store

from tests.conftest import kept

OPS = ["To regenerate the OpenAPI client: make openapi && npm run generate:client in web/.",
       "Run the e2e tests locally with pytest -m e2e --base-url http://localhost:8000 after starting the stack.",
       "Sentry traces sample rate is 0.2 in production (SENTRY_TRACES_SAMPLE_RATE) because 1.0 blew the quota in two days.",
       "All timestamps in the database are stored in UTC; the frontend converts with dayjs tz, never the API.",
       "File uploads go to the S3 bucket acme-uploads-eu in eu-central-1; presigned URLs expire after 15 minutes.",
       "CI was slow because the pip cache key included the date; it is now keyed on the hash of requirements.lock.",
       "The frontend bundle is built with webpack; tweak webpack.config.js for new loaders."]
AGENT = ["mypy strict is on only for the payments package; the other packages use the relaxed config in mypy.ini.",
         "The /api/v2/orders endpoint uses cursor pagination; offset pagination was removed because of deep-page timeouts.",
         "Our own API rate limit is 100 requests per minute per token, set by RATE_LIMIT_PER_MINUTE.",
         "docker build fails on M1 Macs for the image with grpcio; build with --platform linux/amd64.",
         "CORS errors from the preview deploys: add the *.vercel.app origin to CORS_ALLOWED_ORIGIN_REGEXES.",
         "Password reset emails were delayed 20 minutes because they shared the bulk queue; they now go to the priority queue.",
         "pytest-xdist with -n auto breaks the tests that use the shared Redis db 0; those are marked serial.",
         "Structured logging uses structlog: log.info('event_name', key=value), never f-strings in log messages."]
FOREIGN = ["The deploy rolled back because the feature flag service timed out; we added a 5 s timeout on flag lookups.",
           "JIRA-1234: the invoice PDF renderer (wkhtmltopdf) lacks CJK fonts; installed fonts-noto-cjk in the Dockerfile.",
           "Issue #482: the flaky test test_checkout_total fails when run after midnight UTC because of date rollover; "
           "freeze time with freezegun.",
           "Die Umsatzsteuer für Österreich wird in tax/rates.py mit 20 % berechnet; die Prüfung übernimmt Frau Müller "
           "aus der Buchhaltung.",
           "Le fichier de configuration des e-mails est config/mail.yml ; l'expéditeur par défaut est équipe@exemple.fr, "
           "ne pas le changer sans prévenir le support.",
           "The admin dashboard loads slowly because the revenue widget queries without a date range; it is cached for 5 "
           "minutes now."]


def notes(store: Store) -> None:
    """A person's notes in one session, an agent's in another and a third."""
    for text in OPS:
        store.remember(text, session="ops", actor="human", tool="cli")
    for text in AGENT:
        store.remember(text, session="work")
    for text in FOREIGN:
        store.remember(text, session="later")


def test_in_a_session_of_notes_a_record_holding_a_word_of_the_question_outranks_those_beside_others_that_do(store: Store):
    """"austrian VAT rate", words only: the Umsatzsteuer record holds "rates" (tax/rates.py); the records beside the two
    that hold "rate" hold none of its words and came first (the German one was 9th)."""
    notes(store)
    hits = store.recall("austrian VAT rate", limit=10).hits
    german = f"{kept(store, 'later')}#4"
    assert [h.id for h in hits].index(german) == 2, [(h.id, h.matched) for h in hits]
    assert all(h.score < hits[2].score for h in hits[3:]), [(h.id, h.score) for h in hits]


def test_in_a_conversation_the_reply_is_still_found_by_the_turn_it_answers(store: Store):
    """Two people, turn about: the answer holds none of the question's words, the question before it does."""
    turns = [("Caroline", "Hey Mel, how was the weekend at the lake with the kids?"),
             ("Melanie", "Lovely, we swam every morning and the kids built a raft."),
             ("Caroline", "Did you get any painting done over the holidays?"),
             ("Melanie", "Yes, a sunrise over the water, it took me three mornings."),
             ("Caroline", "I went to the support group again, it helped a lot."),
             ("Melanie", "I'm so glad, you deserve people who listen."),
             ("Caroline", "Thanks! Next week I'm starting the counselling course."),
             ("Melanie", "That's wonderful news, tell me how it goes.")]
    for speaker, text in turns:
        store.remember(text, session="chat", data={"speaker": speaker})
    hits = store.recall("What did Melanie paint over the holidays?", limit=5).hits
    assert f"{kept(store, 'chat')}#4" in [h.id for h in hits[:2]], [(h.id, h.matched) for h in hits]


@pytest.mark.parametrize(("question", "at"), [("default email sender address", 5), ("dashbord is slow", 6)])
def test_every_text_embedded_the_record_nearest_in_meaning_is_not_sunk_below_notes_beside_others(repo: Path, monkeypatch,
                                                                                                    question: str, at: int):
    """Hybrid: the French note on the default sender, which the model alone ranks first, came 11th below notes whose
    only tie to the question was a note beside them; "dashbord is slow" alike (5th)."""
    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "true")
    store = Store(Config.load(repo))
    try:
        notes(store)
        store.reindex(embedding=lambda done, total: None)
        answer = store.recall(question, limit=10)
        assert answer.ranking.startswith("hybrid"), answer.ranking
        assert f"{kept(store, 'later')}#{at}" in [h.id for h in answer.hits[:3]], [(h.id, h.matched) for h in answer.hits]
    finally:
        store.close()
