"""Near-duplicate detection, tuned on labelled pairs: every distinct pair stays apart, most duplicates are caught."""

from __future__ import annotations

from repo_memory.guards import duplicates as similar

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
