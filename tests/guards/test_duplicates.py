"""Near-duplicate detection, tuned on labelled pairs: every distinct pair stays apart, most duplicates are caught."""

from __future__ import annotations

from pathlib import Path

from repo_memory.guards import duplicates as similar

from tests.shells.stdio_server import StdioServer

DUPLICATE_NAMES = [
    ("release-checklist", "release-check-list"), ("release-checklist", "releases-checklist"), ("run-migrations", "running-migrations"),
    ("deploy-staging", "deploy-to-staging"), ("fix-flaky-tests", "fixing-flaky-tests"), ("setup-dev-env", "set-up-dev-env"),
    ("code-review", "code-reviews"), ("bump-version", "bump-versions"), ("tutor-persona", "00-tutor-persona"),
    ("music-arts", "02-music-arts"), ("write-changelog", "changelog-writing"), ("update-deps", "update-dependencies"),
    ("api-docs", "api-documentation"), ("db-backup", "database-backup"), ("agent-browser", "agent-browser-automation"),
]
DISTINCT_NAMES = [
    ("deploy-staging", "deploy-production"), ("generate2dmap", "generate2dsprite"), ("run-unit-tests", "run-e2e-tests"),
    ("frontend-design", "backend-design"), ("release-checklist", "release-notes"), ("db-migrate", "db-seed"),
    ("python-lint", "python-test"), ("deploy-1", "deploy-2"), ("docker-build", "docker-push"), ("git-rebase", "git-bisect"),
    ("create-pr", "review-pr"), ("setup-ci", "setup-cd"), ("test-api", "test-ui"), ("k8s-deploy", "k8s-debug"),
    ("fix-failing-tests", "fix-flaky-tests"), ("docs-in-sync", "docs-sync-check"), ("pdf", "docx"), ("xlsx", "pptx"),
    ("skill-creator", "skill-installer"), ("mcp-builder", "mcp-tester"), ("using-repo-memory", "writing-skills"),
    ("designing-loops", "writing-skills"),
]
DUPLICATE_DESCRIPTIONS = [
    ("Cut a release: bump the version, update the changelog, tag and push.",
     "Release procedure: update the changelog, bump the version, then tag and push."),
    ("Back up the production database to S3 before a migration.",
     "Before migrating, back up the production database to S3."),
    ("Run the database migrations and check the health endpoint afterwards.",
     "Run database migrations, then check the health endpoint."),
    ("Reproduce a flaky test by running it in a loop with a fixed random seed.",
     "Reproduce a flaky test: run it in a loop with a fixed random seed, then bisect."),
]
DISTINCT_DESCRIPTIONS = [
    ("Cut a release: bump the version, update the changelog, tag and push.",
     "Write release notes from merged pull requests since the last tag."),
    ("Back up the production database to S3 before a migration.",
     "Restore the staging database from the latest S3 backup."),
    ("Run the unit tests with coverage and fail under 90 percent.",
     "Run the end-to-end browser tests against a local server."),
    ("Deploy the web app to staging with the blue-green script.",
     "Deploy the web app to production with the blue-green script after approval."),
    ("Use when the user asks to create a PDF report from data.", "Use when the user asks to fill in a PDF form."),
]


def test_name_threshold_keeps_every_distinct_pair_apart_and_catches_most_duplicates():
    assert [p for p in DISTINCT_NAMES if similar.names_close(*p)] == []
    caught = [p for p in DUPLICATE_NAMES if similar.names_close(*p)]
    assert len(caught) >= 11, set(DUPLICATE_NAMES) - set(caught)  # the rest differ in wording; descriptions catch those


def test_description_rule_keeps_every_distinct_pair_apart_and_catches_reworded_copies():
    assert [p for p in DISTINCT_DESCRIPTIONS if similar.descriptions_close(*p)] == []
    assert all(similar.descriptions_close(*p) for p in DUPLICATE_DESCRIPTIONS)


def test_near_duplicates_name_the_existing_skill_and_why():
    existing = [("release-checklist", "Cut a release: bump the version, update the changelog, tag and push."), ("db-seed", "Seed data.")]
    assert similar.near_duplicates("releases-checklist", "Anything.", existing)[0][::2] == ("release-checklist", "a similar name")
    found = similar.near_duplicates("ship-it", "Release procedure: update the changelog, bump the version, then tag and push.", existing)
    assert found[0][0] == "release-checklist" and found[0][2] == "a similar description"
    assert similar.near_duplicates("release-checklist", "Same name is an update, not a duplicate.", existing) == []


# The same kind of pairs in scripts whose words are not ASCII: a reworded copy of the same procedure, and a different
# procedure that names the same tools (CI, pytest, docker compose) or the same things (S3, a database).
DUPLICATE_DESCRIPTIONS_ABROAD = {
    "zh": [("发布流程：每次发布前使用：运行测试、打标签、上传到PyPI",
            "发布的流程：每次发布之前使用：运行测试、打标签、然后上传到PyPI"),
           ("迁移前把生产数据库备份到S3。", "在迁移之前，把生产数据库备份到S3。")],
    "ja": [("リリース手順：毎回のリリース前に使う：テストを実行し、タグを付け、PyPIにアップロードする",
            "リリースの手順：リリースの前に毎回使う：テストを実行して、タグを付けて、PyPIにアップロード"),
           ("マイグレーションの前に本番データベースをS3にバックアップする。",
            "本番データベースをS3にバックアップする（マイグレーションの前に）。")],
    "ko": [("릴리스 절차: 매번 릴리스 전에 사용: 테스트 실행, 태그, PyPI 업로드",
            "릴리스 절차입니다: 릴리스 전에 매번 사용: 테스트를 실행하고 태그를 달고 PyPI에 업로드")],
    "ru": [("Как мы выпускаем релиз; использовать перед каждым релизом: запустить тесты, поставить тег, загрузить на PyPI",
            "Как выпустить релиз; использовать перед каждым релизом: запустить тесты, поставить тег и загрузить на PyPI"),
           ("Сделать резервную копию продовой базы данных в S3 перед миграцией.",
            "Перед миграцией сделать резервную копию продовой базы данных в S3.")],
}
DISTINCT_DESCRIPTIONS_ABROAD = {
    "zh": [("在 CI 上用 pytest 和 docker compose 运行全部测试；提交合并请求前使用",
            "在 docker compose 里用 pytest 复现并调试 CI 上失败的单个测试；CI 变红时使用"),
           ("迁移前把生产数据库备份到S3。", "从S3的最新备份恢复预发布环境的数据库。")],
    "ja": [("CI で pytest と docker compose を使って全テストを実行する。マージリクエストの前に使う",
            "CI で失敗したテストを docker compose 内の pytest で再現してデバッグする。CI が赤いときに使う"),
           ("マイグレーションの前に本番データベースをS3にバックアップする。",
            "S3の最新バックアップからステージングのデータベースを復元する。")],
    "ko": [("CI에서 pytest와 docker compose로 전체 테스트를 실행한다. 머지 요청 전에 사용",
            "CI에서 실패한 테스트를 docker compose 안의 pytest로 재현하고 디버그한다. CI가 빨간색일 때 사용")],
    "ru": [("Запуск всех тестов в CI через pytest и docker compose; использовать перед merge request",
            "Воспроизвести и отладить упавший в CI тест через pytest в docker compose; когда CI красный"),
           ("Сделать резервную копию продовой базы данных в S3 перед миграцией.",
            "Восстановить базу данных стейджинга из последней резервной копии в S3.")],
}


def test_description_rule_compares_the_words_of_every_script_not_only_the_ascii_ones():
    for language, pairs in DISTINCT_DESCRIPTIONS_ABROAD.items():
        assert [p for p in pairs if similar.descriptions_close(*p)] == [], language
    for language, pairs in DUPLICATE_DESCRIPTIONS_ABROAD.items():
        assert [p for p in pairs if not similar.descriptions_close(*p)] == [], language
    # two procedures in two languages that name the same tools are not one procedure
    chinese, russian = DISTINCT_DESCRIPTIONS_ABROAD["zh"][0][0], DISTINCT_DESCRIPTIONS_ABROAD["ru"][0][1]
    assert not similar.descriptions_close(chinese, russian)


FRUIT = ["kiwi", "mango", "plum", "fig", "lime", "pear", "date", "guava", "lychee", "quince", "papaya", "olive"]


def test_skill_write_refuses_a_reworded_copy_and_accepts_another_procedure_in_zh_ja_ko_ru(repo: Path):
    """Over a stdio server, as an agent writes: per language a skill, a reworded copy of it (refused, naming the
    first), and a different procedure on the same tools (accepted). Only ASCII words were compared: the copy was
    accepted and the different procedure refused, the agent told to overwrite a skill of another language."""
    calls, refused_as = [], []
    for language in ("zh", "ja", "ko", "ru"):
        first, copy = DUPLICATE_DESCRIPTIONS_ABROAD[language][0]
        different = DISTINCT_DESCRIPTIONS_ABROAD[language][0][1]
        names = [f"{language}-{FRUIT[len(calls) + n]}" for n in range(3)]
        calls += [("skill_write", {"name": name, "description": description, "body": "1. Steps.\n"})
                  for name, description in zip(names, (first, copy, different))]
        refused_as += [None, names[0], None]  # the skill each write is refused as a copy of, if it is
    server = StdioServer(repo)
    answers, code = server.session(*calls)
    assert code == 0, server.stderr.decode(errors="replace")[-2000:]
    for first, (_, arguments), answer in zip(refused_as, calls, answers):
        said = answer["content"][0]["text"]
        if first:
            assert answer.get("isError") and f"skill:{first} has a similar description" in said, (arguments, said)
        else:
            assert not answer.get("isError"), (arguments, said)
