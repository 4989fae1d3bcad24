"""Recall of memories written in other languages and in the text forms their users' systems produce: decomposed
accents (macOS), compatibility forms (full-width Latin, half-width katakana, ligatures)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from repo_memory.core.store import Store

from tests.conftest import kept, write_skill_file


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def fill(store: Store) -> None:
    """Other records that share the function words and syllables a split word would be searched as."""
    for text in ("O armazém de São Paulo usa outro CEP no cadastro.", "Les tickets de support sont triés le lundi.",
                 "La réunion de planification a lieu le mardi.", "Le serveur de test me renvoie une erreur 502.",
                 "데이터 분석 보고서는 월요일에 나온다.", "データの バックアップ は 毎晩 取る。"):
        store.remember(text, session="other")


def first(store: Store, asked: str) -> str:
    hits = store.recall(asked).hits
    return hits[0].id if hits else ""


def test_a_decomposed_query_or_record_finds_its_composed_twin(store: Store, repo: Path):
    """Python's `\\w` does not match a combining mark, so a decomposed (NFD) "déménagement" was searched as de / me /
    nagement and found the records holding "de"; a decomposed Korean or Japanese record (macOS writes NFD) was
    indexed as jamo and unpaired kana, never found by the composed word. Query and index text are now composed."""
    fill(store)
    store.remember("Le déménagement du serveur est prévu jeudi.", session="fr")
    store.remember(nfd("데이터베이스 이전은 금요일에 한다."), session="ko")
    store.remember(nfd("ステージングの バグ は 土曜日に 直す。"), session="ja")
    write_skill_file(repo, "backup-check", "Before a deploy.", nfd("배포 전에 백업 파일을 확인한다."))  # saved on a Mac
    store.reindex()
    assert first(store, nfd("déménagement")) == f"{kept(store, 'fr')}#1"
    assert first(store, "데이터베이스 이전") == f"{kept(store, 'ko')}#1"
    assert first(store, nfd("데이터베이스 이전")) == f"{kept(store, 'ko')}#1"
    assert first(store, "バグ") == f"{kept(store, 'ja')}#1"
    assert first(store, "백업 파일") == "skill:backup-check"


def test_compatibility_forms_find_the_word_as_usually_written(store: Store):
    """A full-width ＡＰＩ, half-width ﾃﾞｰﾀﾍﾞｰｽ (Japanese input methods) and the ﬁ ligature (text copied from a PDF)
    are the same word to a reader, but other code points to the index: "API" did not find ＡＰＩ nor "データベース"
    ﾃﾞｰﾀﾍﾞｰｽ. Both sides are now folded to NFKC; ASCII, and so every code name, is left as it is, and a symbol NFKC
    spells with letters stays a word of its own."""
    fill(store)
    store.remember("ＡＰＩ の レート制限 は 毎分 100 件。", session="ja")
    store.remember("ﾃﾞｰﾀﾍﾞｰｽ の移行は金曜日。", session="ja")
    store.remember("The conﬁguration loader retries twice before it gives up.", session="en")
    store.remember("The API gateway drops gzip bodies.", session="en")
    store.remember("Acme™ Widgets ship with a 5㎏ limit.", session="shop")
    api = {h.id for h in store.recall("API").hits}
    assert {f"{kept(store, 'ja')}#1", f"{kept(store, 'en')}#2"} <= api, api
    assert f"{kept(store, 'en')}#2" in {h.id for h in store.recall("ＡＰＩ").hits}
    assert first(store, "データベース") == f"{kept(store, 'ja')}#2"
    assert first(store, "configuration") == f"{kept(store, 'en')}#1"
    assert first(store, "Acme") == first(store, "kg") == f"{kept(store, 'shop')}#1"  # ™ is not run into its word


UNRELATED = [  # a record, and a question about something else that shares only function words with it
    ("Ключи партнёров хранятся только в Vault.", "погода в Москве"),
    ("Die Lieferadresse wird in der Hauptstraße falsch geparst.", "Wie wird das Wetter in der Stadt für morgen?"),
    ("Le déploiement de la base est prévu pour jeudi.", "la météo de demain à Paris"),
    ("El despliegue de la base es el jueves.", "el tiempo de mañana en Madrid"),
    ("O armazém de São Paulo usa outro CEP no cadastro.", "que tempo faz no Rio de Janeiro"),
    ("Il backup del database parte alle due di notte.", "il meteo di domani a Roma"),
    ("البحث في قاعدة البيانات بطيء.", "الطقس في القاهرة"),
    ("החיפוש של המשתמשים איטי מאוד.", "מזג האוויר של מחר"),
]


def test_function_words_of_other_languages_are_not_words_a_question_is_found_by(store: Store):
    """Only English stopwords were left out of a query: Russian "в", German "der"/"für", Portuguese "que"/"no" counted
    as words, so a question about the weather found every note holding "в" (and hybrid recall presented them as word
    matches, without the caution that they may be unrelated), and a record holding them often outranked the answer.
    The articles, prepositions, conjunctions and pronouns of the major languages written with spaces are now
    stopwords too."""
    from repo_memory.index.query import parse

    for text, _ in UNRELATED:
        store.remember(text, session="notes")
    for _, asked in UNRELATED:
        assert not store.recall(asked).hits, asked
    assert parse("Откуда ошибка округления в платежах?").terms == ("ошибка", "округления", "платежах")
    assert parse("Wo wird die Lieferadresse für den Versand geprüft?").terms == ("lieferadresse", "versand", "geprüft")
    assert parse("Qual é o prazo de entrega no Rio?").terms == ("prazo", "entrega", "rio")
    assert parse("de").terms == ("de",)  # a question of nothing else keeps its words


def test_a_cjk_record_shows_the_passage_that_matched_with_its_words_marked(store: Store):
    """Excerpts are cut by a scratch full-text table, which was given the text as written: a CJK run is one token there,
    so the pairs a query asks for matched nothing, and a long Chinese record showed its opening with nothing marked
    (German of the same shape showed its matching passage). Nor were folded forms (ＡＰＩ for "API") marked. The
    scratch table now holds the text as the index does, and the excerpt is cut from the text as written."""
    fill(store)
    chatter = "今天的例会讨论了很多与本次问题无关的事情，比如团建和午饭安排。" * 12
    store.remember(chatter + "最后决定：订单表的批量更新必须加索引，否则高峰期会锁表。", session="zh")
    store.remember("ＡＰＩ の レート制限 は 毎分 100 件。", session="ja")
    store.remember(nfd("Le déménagement du serveur est prévu jeudi."), session="fr")
    store.remember("ﾃﾞｰﾀﾍﾞｰｽ の移行は金曜日", session="ja")
    found = store.recall("加索引").hits[0].snippet
    assert "**加索引**" in found and "批量更新必须" in found and found.startswith("…"), found
    assert "**锁**" in store.recall("锁").hits[0].snippet
    assert store.recall("API レート").hits[0].snippet == "**ＡＰＩ** の **レート**制限 は 毎分 100 件。"
    assert store.recall("データベース").hits[0].snippet == "**ﾃﾞｰﾀﾍﾞｰｽ** の移行は金曜日"  # to its last character
    assert store.recall("déménagement").hits[0].snippet == nfd("Le **déménagement** du serveur est prévu jeudi.")


def test_a_word_written_with_e_for_yo_or_ss_for_eszett_finds_the_other_spelling(store: Store):
    """Russian is mostly typed with е for ё (партнеров for партнёров), and Swiss German writes ss for ß (Hauptstrasse):
    readers take them for the same word, the index did not. Both spellings are now folded to е and ss on both
    sides; the excerpt still shows the word as it was written."""
    fill(store)
    store.remember("Ключи партнёров хранятся только в Vault.", session="ru")
    store.remember("Счета клиентов выгружаются в пятницу, отчет уходит в понедельник.", session="ru")
    store.remember("Die Lieferadresse in der Hauptstraße wird falsch geparst.", session="de")
    store.remember("Die Bahnhofstrasse ist wegen Bauarbeiten gesperrt.", session="de")
    assert first(store, "партнеров") == f"{kept(store, 'ru')}#1"
    assert first(store, "отчёт") == f"{kept(store, 'ru')}#2"
    assert first(store, "Hauptstrasse") == f"{kept(store, 'de')}#1"
    assert first(store, "Bahnhofstraße") == f"{kept(store, 'de')}#2"
    assert "**партнёров**" in store.recall("партнеров").hits[0].snippet
    assert "**Hauptstraße**" in store.recall("HAUPTSTRASSE").hits[0].snippet


def test_a_long_skill_holding_a_folded_word_in_its_last_step_is_read_whole(store: Store):
    """A best skill is read whole for the share of the query it holds only where each query word's opening is in its
    text; the words were folded (ёжик as ежик) and the text was not, so a long skill holding the query in its last
    step (its folded words, indexed after its body and the words of its camelCase names, past what is read) was read
    over its opening only, and ranked below a record holding one of the query's words."""
    steps = "\n".join(f"{n}. Call flushPendingWrites, then resetConnectionPool on the service." for n in range(1, 250))
    store.write_skill("gateway-maintenance", "Routine maintenance of the API gateway.",
                      f"{steps}\n250. Finally rotate the ёжик-token in Vault and restart the gateway pods.", actor="human")
    store.write_skill("cache-busting", "Bust the CDN cache after a frontend deploy.", "Run `make purge-cdn` with the Fastly token.",
                      actor="human")
    store.remember("API rate limit is 100 requests per minute per token.", session="api")
    for asked in ("ёжик-token", "ежик-token"):
        assert [h.id for h in store.recall(asked).hits][:1] == ["skill:gateway-maintenance"], asked
