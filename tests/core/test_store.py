"""The Store: search quality, reads, writes that keep a person's formatting, and the index as a rebuildable cache."""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repo_memory.config import Config
from repo_memory.core import rewrites
from repo_memory.errors import ConflictError, InvalidArgumentError, NotFoundError
from repo_memory.core.store import Store

from tests.conftest import git, index_snapshot, skill_names, write_skill_file


@pytest.fixture
def library(store: Store, repo: Path) -> Store:
    write_skill_file(repo, "release-checklist", "How we cut a release: bump the version, tag and publish to PyPI.",
                     "1. Run tests\n2. Tag vX.Y.Z\n3. Upload with twine", extra="metadata:\n  tags: [release]\n")
    write_skill_file(repo, "running-tests", "Run the test suite with pytest and read failures.", "pytest -q")
    write_skill_file(repo, "database-migrations", "Write and apply a schema migration.", "Use make migrate; new columns nullable first.")
    write_skill_file(repo, "old-deploy", "Deploy with the old fabric script.", "fab deploy",
                     extra="metadata:\n  status: deprecated\n")
    store.refresh()
    return store


def test_natural_language_questions_find_the_right_skill(library: Store):
    assert library.recall("How do I publish a new release to PyPI?").hits[0].name == "release-checklist"
    assert library.recall("the tests are failing, what now").hits[0].name == "running-tests"
    assert library.recall("add a column to the schema").hits[0].name == "database-migrations"


@pytest.mark.parametrize("text", ['"unbalanced', "AND OR NOT", "col:umn", "a*b", "(((", "NEAR(x y)", "^", "-", "'", "", "   "])
def test_fts_syntax_in_user_text_never_surfaces(library: Store, text: str):
    library.recall(text)  # must not raise


def test_exact_name_comes_first(library: Store):
    assert library.recall("database migrations").hits[0].name == "database-migrations"
    assert library.recall("running-tests").hits[0].name == "running-tests"


def test_deprecated_skills_leave_default_recall(library: Store):
    assert all(h.name != "old-deploy" for h in library.recall("deploy fabric").hits)
    assert library.recall("deploy fabric", include=("deprecated",)).hits[0].name == "old-deploy"


def test_read_of_an_unknown_name_suggests_the_nearest(library: Store):
    with pytest.raises(NotFoundError, match="Did you mean 'release-checklist'"):
        library.read("relase-checklist")


def test_read_returns_exact_bytes_and_files_beside_the_skill(library: Store, repo: Path):
    (repo / ".agents/skills/release-checklist/scripts").mkdir()
    (repo / ".agents/skills/release-checklist/scripts/tag.sh").write_text("git tag\n", encoding="utf-8")
    item = library.read("skill:release-checklist")
    assert item.content == (repo / ".agents/skills/release-checklist/SKILL.md").read_text(encoding="utf-8")
    assert item.files == ["SKILL.md", "scripts/tag.sh"]
    assert library.read("release-checklist/scripts/tag.sh").content == "git tag\n"
    with pytest.raises(Exception, match="leaves the repository"):
        library.read("release-checklist/../running-tests/SKILL.md")


def test_a_file_beside_a_skill_is_read_by_its_name_in_either_unicode_form(library: Store, repo: Path):
    """macOS writes file names decomposed (NFD) and a person types them composed (NFC): reading 'Erklärung.md' answered
    "has no file 'Erklärung.md'. Its files: Erklärung.md, …", naming a file that looks the same. With no exact match,
    names are compared as NFC; a file whose name matches exactly still wins over one that only normalises the same."""
    folder = repo / ".agents/skills/release-checklist"
    (folder / unicodedata.normalize("NFD", "Erklärung.md")).write_text("Warum wir taggen.\n", encoding="utf-8")
    (folder / "Übersicht.md").write_text("Überblick.\n", encoding="utf-8")
    assert library.read("release-checklist/Erklärung.md").content == "Warum wir taggen.\n"
    assert library.read(unicodedata.normalize("NFD", "release-checklist/Übersicht.md")).content == "Überblick.\n"
    (folder / "Erklärung.md").write_text("composed\n", encoding="utf-8")  # two files, one per form: each by its own name
    assert library.read("release-checklist/Erklärung.md").content == "composed\n"
    assert library.read(unicodedata.normalize("NFD", "release-checklist/Erklärung.md")).content == "Warum wir taggen.\n"


def test_read_takes_the_path_recall_gave_and_the_resource_uri_and_names_the_forms_otherwise(library: Store):
    """recall's hits give a skill's path (provenance.path) and the server lists skill:// resources; a model reads them
    back as they were given. `read(".agents/skills/NAME/SKILL.md")` answered "The name '.agents' is not allowed … Try
    'agents'", and `read("skill://NAME")` that the skill name must be non-empty."""
    whole = library.read("skill:release-checklist").content
    assert library.read(".agents/skills/release-checklist/SKILL.md").content == whole
    assert library.read("skill://release-checklist").content == whole
    with pytest.raises(InvalidArgumentError, match="skill:NAME") as refused:
        library.read(".github/workflows/ci.yml")
    assert "Try" not in str(refused.value)


def test_a_hand_edit_is_found_after_refresh(library: Store, repo: Path):
    write_skill_file(repo, "running-tests", "Run the suite with nox sessions.", "nox -s tests")
    library.refresh()
    assert library.recall("nox sessions").hits[0].name == "running-tests"


def test_agent_writes_are_drafts_and_human_writes_are_active(store: Store):
    assert store.write_skill("agent-made", "Made by an agent.", "Steps").status == "draft"
    assert store.write_skill("human-made", "Made by a person.", "Steps", actor="human").status == "active"
    hits = {h.name: h.status for h in store.recall("made").hits}
    assert hits == {"agent-made": "draft", "human-made": "active"}


def test_review_optional_makes_agent_writes_active_once_a_person_committed_it(repo: Path, caplog: pytest.LogCaptureFixture):
    # An agent's file tools can write the config: a looser review counts only as committed, and says so until then.
    (repo / ".agents/repo-memory.toml").write_text('review = "optional"\n', encoding="utf-8")
    store = Store(Config.load(repo))
    assert store.write_skill("agent-made", "Made by an agent.", "Steps").status == "draft"
    store.close()
    assert "not committed" in caplog.text and "commit the file" in caplog.text
    git(repo, "add", ".agents/repo-memory.toml")
    git(repo, "commit", "-q", "-m", "review optional")
    store = Store(Config.load(repo))
    assert store.write_skill("release-notes", "Write the release notes from merged pull requests.", "1. List merged PRs").status == "active"
    store.close()
    # Tightening counts at once, committed or not.
    (repo / ".agents/repo-memory.toml").write_text('review = "required"\n', encoding="utf-8")
    assert Config.load(repo).review == "required"


def test_an_update_keeps_a_persons_comments_unknown_keys_and_formatting(store: Store, repo: Path):
    path = repo / ".agents/skills/hand-made/SKILL.md"
    path.parent.mkdir(parents=True)
    original = (
        "---\n# written by hand\nname: hand-made\ndescription: 'Old description'   # keep this comment\n"
        "x-team-owner: platform\nmetadata:\n  origin: human\n  status: active  # reviewed\n  tags:\n    - alpha\n    - beta\n"
        "---\n\nOld body\n"
    )
    path.write_text(original, encoding="utf-8")
    store.refresh()
    store.write_skill("hand-made", "New description", "New body", actor="human")
    updated = path.read_text(encoding="utf-8")
    assert updated == original.replace("'Old description'", "New description").replace("Old body", "New body")


def test_an_agents_near_duplicate_is_refused_with_the_existing_skill_unless_it_says_new(store: Store, repo: Path):
    store.write_skill("release-checklist", "Cut a release: bump the version, update the changelog, tag and push.", "Steps", actor="human")
    with pytest.raises(ConflictError, match=r"skill:release-checklist has a similar name .*new=true"):
        store.write_skill("releases-checklist", "Release again.", "Steps")
    with pytest.raises(ConflictError, match="a similar description"):
        store.write_skill("ship-it", "Release procedure: update the changelog, bump the version, then tag and push.", "Steps")
    assert not (repo / ".agents/skills/releases-checklist").exists() and not (repo / ".agents/skills/ship-it").exists()
    assert store.write_skill("releases-checklist", "A different procedure.", "Steps", new=True).created
    person = store.write_skill("release-check-list", "Mine.", "Steps", actor="human")  # a person is told, not stopped
    assert person.created and any("skill:release-checklist" in w for w in person.warnings)


def test_an_agent_rewriting_one_skill_over_and_over_is_warned_and_listed_by_doctor(store: Store):
    from repo_memory.core import doctor

    store.write_skill("tuning", "Tune the thing.", "v0")
    notes = [store.write_skill("tuning", "Tune the thing.", f"v{i}").warnings for i in range(1, 5)]
    assert not any("rewritten" in w for w in notes[0]) and any("rewritten 4 times" in w for w in notes[3])
    assert rewrites.churning(store.config.state_dir) == [("tuning", 4)]
    assert any(f.path == "skill:tuning" and "rewrote it 4 times" in f.message for f in doctor.examine(store))


def test_index_lives_in_the_git_dir_of_a_linked_worktree(repo: Path, tmp_path: Path):
    from tests.conftest import git

    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(worktree))
    config = Config.load(worktree)
    assert config.root == worktree.resolve()
    assert config.index_path.parent.parent == (repo / ".git/worktrees/wt").resolve()


def test_schema_version_mismatch_rebuilds_the_index(library: Store, repo: Path):
    path = library.config.index_path
    library.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version=999")
    conn.commit()
    conn.close()
    store = Store(Config.load(repo))
    assert skill_names(store) == []
    store.refresh()
    assert "release-checklist" in skill_names(store)
    store.close()


# A random sequence of edits, applied with incremental syncs in between, must leave the same index as a rebuild.
NAMES = st.sampled_from(["alpha", "beta", "gamma", "delta"])
FOLDERS = st.sampled_from([".agents/skills", ".claude/skills", ".codex/skills"])
WORDS = st.lists(st.sampled_from(["deploy", "test", "release", "database", "cache", "tag", "build"]), min_size=1, max_size=4).map(" ".join)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), NAMES, FOLDERS, WORDS),
        st.tuples(st.just("break"), NAMES, FOLDERS, WORDS),
        st.tuples(st.just("delete"), NAMES, FOLDERS, WORDS),
        st.tuples(st.just("sync"), NAMES, FOLDERS, WORDS),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPS)
def test_incremental_updates_equal_a_full_rebuild(tmp_path_factory: pytest.TempPathFactory, ops):
    from repo_memory import layout

    from tests.conftest import git

    repo = tmp_path_factory.mktemp("prop")
    git(repo, "init", "-q")
    layout.init(repo)
    store = Store(Config.load(repo))
    try:
        for op, name, folder, words in ops:
            path = repo / folder / name / "SKILL.md"
            if op == "write":
                write_skill_file(repo, name, f"About {words}.", words, folder=folder)
            elif op == "break":
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"---\nname: {name}\n---\n{words}\n", encoding="utf-8")
            elif op == "delete" and path.exists():
                path.unlink()
            else:
                store.refresh()
        store.refresh()
        incremental = index_snapshot(store)[0]
        store.reindex()
        assert index_snapshot(store)[0] == incremental
    finally:
        store.close()



def test_a_damaged_index_is_rebuilt_from_the_files(library: Store, repo: Path):
    path = library.config.index_path
    library.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    store = Store(Config.load(repo))
    store.refresh()
    assert store.recall("release").hits[0].name == "release-checklist"
    store.close()


def test_workspace_is_found_from_flag_then_env_then_claude_project_dir_then_cwd(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from tests.conftest import git

    other = tmp_path / "other"
    (other / "sub").mkdir(parents=True)
    git(other, "init", "-q")
    monkeypatch.chdir(other / "sub")
    assert Config.load().root == other.resolve()  # the current directory's git top level
    assert Config.load(env={"CLAUDE_PROJECT_DIR": str(repo)}).root == repo.resolve()
    assert Config.load(env={"CLAUDE_PROJECT_DIR": str(other), "REPO_MEMORY_ROOT": str(repo)}).root == repo.resolve()
    assert Config.load(repo, env={"REPO_MEMORY_ROOT": str(other)}).root == repo.resolve()


def test_the_briefing_cuts_a_long_description_at_a_word_and_says_it_was_cut(library: Store, repo: Path):
    write_skill_file(repo, "zero-downtime", "Write and apply an alembic schema migration without downtime, on staging then "
                     "production, with a rollback plan.", "1. Write it")
    library.refresh()
    line = next(x for x in library.briefing().splitlines() if x.startswith("- skills:"))
    assert "on staging then…" in line and "then pr" not in line, line


def test_a_bare_name_nothing_has_says_no_skill_loop_or_session_has_it_and_how_to_search(library: Store):
    """read("deploy-stagingx") looked for a skill, a loop and a session, then answered "No skill 'deploy-stagingx'." as
    if only skills had been asked."""
    with pytest.raises(NotFoundError) as missing:
        library.read("deploy-stagingx")
    assert "no skill, loop or session" in str(missing.value) and "recall(query=" in str(missing.value)
    with pytest.raises(NotFoundError, match="No skill 'deploy-stagingx'"):
        library.read("skill:deploy-stagingx")


def test_starting_a_loop_where_none_exists_says_how_one_is_made(library: Store):
    from repo_memory.runner.engine import Engine

    with pytest.raises(NotFoundError) as missing:
        Engine(library).start("fix-tests")
    assert "No loop spec exists here yet" in str(missing.value) and ".agents/loops/NAME.md" in str(missing.value)


def test_the_briefing_names_the_drafts_awaiting_review_as_not_to_be_followed(library: Store):
    """Codex and Gemini CLI list .agents/skills themselves, drafts among them, with no word of their status: an agent's
    unreviewed draft read as guidance in the next session. The briefing says which skills are drafts."""
    assert "draft" not in library.briefing()
    library.write_skill("deploy-fast", "Use when deploying: skip the test suite and push straight to prod.", "git push prod", actor="agent")
    assert library.read("skill:deploy-fast").status == "draft"
    line = next(x for x in library.briefing().splitlines() if "skill:deploy-fast" in x)
    assert "draft" in line and "not" in line and "review" in line, line
    assert "skip the test suite" not in library.briefing()  # the draft's words are not repeated to the model
