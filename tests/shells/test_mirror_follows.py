"""What the harnesses load by themselves follows a pull: Claude Code's copies in .claude/skills and Codex's openai.yaml."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core import following
from repo_memory.core.store import Store
from repo_memory.shells import hooks
from repo_memory.shells.cli import cli

from tests.conftest import git, write_skill_file
from tests.shells.conftest import cloned
from tests.shells.stdio_server import StdioServer

SESSION = "11111111-2222-3333-4444-555555555555"


def run(runner: CliRunner, repo: Path, *args: str) -> str:
    result = runner.invoke(cli, ["--root", str(repo), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def mirrored(repo: Path) -> dict[str, str]:
    """{name: status line} of each copy in .claude/skills."""
    base = repo / ".claude/skills"
    return {d.name: next(line.strip() for line in (d / "SKILL.md").read_text(encoding="utf-8").splitlines() if "status:" in line)
            for d in sorted(base.iterdir())} if base.is_dir() else {}


def mirrored_whole(repo: Path) -> dict[str, str] | None:
    """`mirrored`, or None while a pass is writing or removing a copy: one is written and removed file by file, so a
    look in between finds a folder without its SKILL.md (the server's watcher makes its pass when it sees the pull)."""
    try:
        return mirrored(repo)
    except FileNotFoundError:
        return None


def teammate_changes(repo: Path, runner: CliRunner, tmp_path: Path) -> Path:
    """`repo` mirrors llama and zebra (sync) and pushes them; a teammate deprecates llama by hand, deletes zebra, adds an
    active koala and a draft yak written by a version that made no openai.yaml, and pushes. Returns the teammate's clone."""
    (repo / "app.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    run(runner, repo, "skill", "new", "llama", "-d", "Llama care; use for llamas", "--body", "1. feed hay")
    run(runner, repo, "skill", "new", "zebra", "-d", "Zebra care; use for zebras", "--body", "1. brush")
    assert "mirrored llama" in run(runner, repo, "sync")
    teammate = cloned(repo, tmp_path)
    llama = teammate / ".agents/skills/llama/SKILL.md"
    llama.write_text(llama.read_text(encoding="utf-8").replace("status: active", "status: deprecated"), encoding="utf-8")
    git(teammate, "rm", "-q", "-r", ".agents/skills/zebra")
    write_skill_file(teammate, "koala", "Koala care; use for koalas.", "1. eucalyptus", extra="metadata:\n  status: active\n")
    write_skill_file(teammate, "yak", "Yak care; use for yaks.", "1. shear", extra="metadata:\n  status: draft\n")
    git(teammate, "add", "-A")
    git(teammate, "commit", "-q", "-m", "deprecate llama, drop zebra, add koala and a draft yak")
    git(teammate, "push", "-q")
    return teammate


def test_a_running_servers_refresh_after_a_pull_withdraws_retired_copies_and_adds_newly_served_ones(
        repo: Path, runner: CliRunner, tmp_path: Path):
    teammate_changes(repo, runner, tmp_path)
    server = StdioServer(repo)
    try:
        server.initialize()
        server.call("recall", {"query": "llama"})
        git(repo, "pull", "-q", "--no-rebase")
        deadline = time.monotonic() + 45  # the watcher's re-index, or at worst the supervisor's look every 30 s
        while mirrored_whole(repo) != {"koala": "status: active"} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert mirrored(repo) == {"koala": "status: active"}, server.stderr.decode()
    finally:
        server.close_input()
        server.wait(30)
    assert git(repo, "status", "--porcelain", "--", ".claude") == ""  # the copies stay ignored by git: nothing to commit


def test_the_session_start_hook_after_a_pull_brings_claude_codes_copies_and_codexs_files_in_step(
        repo: Path, runner: CliRunner, tmp_path: Path):
    teammate_changes(repo, runner, tmp_path)
    git(repo, "pull", "-q", "--no-rebase")
    before = git(repo, "rev-parse", "HEAD").strip()
    hooks.handle("session-start", {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"})
    assert mirrored(repo) == {"koala": "status: active"}
    # Codex lists every SKILL.md in .agents/skills: the deprecated one and the draft get the file keeping them out,
    # committed with them as `sync` does; nothing else is committed
    for name in ("llama", "yak"):
        assert "allow_implicit_invocation: false" in (repo / f".agents/skills/{name}/agents/openai.yaml").read_text(encoding="utf-8")
    changed = git(repo, "diff", "--name-only", before, "HEAD").split()
    assert sorted(changed) == [".agents/skills/llama/agents/openai.yaml", ".agents/skills/yak/agents/openai.yaml"]
    assert git(repo, "status", "--porcelain") == ""


def test_doctor_names_copies_no_longer_served_and_served_skills_not_copied(repo: Path, runner: CliRunner, tmp_path: Path):
    teammate_changes(repo, runner, tmp_path)
    git(repo, "pull", "-q", "--no-rebase")
    output = runner.invoke(cli, ["--root", str(repo), "doctor"], catch_exceptions=False).output
    said = {line.split(":")[1].strip(): line for line in output.splitlines() if line.startswith("warning: .claude/skills/")}
    assert "deprecated" in said[".claude/skills/llama"], output  # each says which way: a copy to withdraw, or one to make
    assert "no longer" in said[".claude/skills/zebra"], output
    assert "not copied" in said[".claude/skills/koala"], output
    assert ".claude/skills/yak" not in said, output
    run(runner, repo, "sync")
    after = runner.invoke(cli, ["--root", str(repo), "doctor"], catch_exceptions=False).output
    assert ".claude/skills/" not in after, after


def pushed(repo: Path, runner: CliRunner, tmp_path: Path) -> Path:
    """`repo` has an active deploy skill, mirrored (sync) and pushed; returns a teammate's clone of it."""
    (repo / "app.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    run(runner, repo, "skill", "new", "deploy", "-d", "How to deploy the app; use to deploy", "--body", "Run make deploy.")
    assert "mirrored deploy" in run(runner, repo, "sync")
    return cloned(repo, tmp_path)


def start(repo: Path, session: str = SESSION) -> None:
    hooks.handle("session-start", {"session_id": session, "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"})


@pytest.mark.parametrize("teammate_does", ["edits the skill", "deprecates the skill"])
def test_the_follow_after_a_pull_keeps_a_copy_a_person_edited_and_doctor_says_how_to_keep_the_edit(
        repo: Path, runner: CliRunner, tmp_path: Path, teammate_does: str):
    teammate = pushed(repo, runner, tmp_path)
    copy = repo / ".claude/skills/deploy"
    with (copy / "SKILL.md").open("a", encoding="utf-8") as f:
        f.write("MY OWN LINE\n")
    (copy / "checklist.md").write_text("my private checklist\n", encoding="utf-8")
    skill = teammate / ".agents/skills/deploy/SKILL.md"
    new = "Run make deploy, then check the dashboard." if teammate_does == "edits the skill" else "Run make deploy."
    text = skill.read_text(encoding="utf-8").replace("Run make deploy.", new)
    skill.write_text(text if teammate_does == "edits the skill" else text.replace("status: active", "status: deprecated"), encoding="utf-8")
    git(teammate, "commit", "-q", "-am", teammate_does)
    git(teammate, "push", "-q")
    git(repo, "pull", "-q", "--no-rebase")
    start(repo)  # git ignores the copies: what the follow deleted, nothing would bring back
    assert "MY OWN LINE" in (copy / "SKILL.md").read_text(encoding="utf-8")
    assert (copy / "checklist.md").read_text(encoding="utf-8") == "my private checklist\n"
    output = runner.invoke(cli, ["--root", str(repo), "doctor"], catch_exceptions=False).output
    said = [line for line in output.splitlines() if ".claude/skills/deploy" in line]
    assert said and "differ from what repo-memory wrote" in output and "move" in output and ".agents/skills/deploy" in output, output
    # an explicit sync keeps it too, and says so; once the person deletes the copy, sync makes it again (or not, if retired)
    result = runner.invoke(cli, ["--root", str(repo), "sync"], catch_exceptions=False)
    assert "MY OWN LINE" in (copy / "SKILL.md").read_text(encoding="utf-8") and "kept .claude/skills/deploy" in result.output
    shutil.rmtree(copy)
    run(runner, repo, "sync")
    assert (copy / "SKILL.md").is_file() == (teammate_does == "edits the skill")
    assert "MY OWN LINE" not in ((copy / "SKILL.md").read_text(encoding="utf-8") if copy.is_dir() else "")


def test_the_follow_after_a_pull_leaves_a_skill_whose_codex_file_a_person_is_editing(repo: Path, runner: CliRunner, tmp_path: Path):
    teammate = pushed(repo, runner, tmp_path)
    interface = ".agents/skills/deploy/agents/openai.yaml"
    (teammate / interface).parent.mkdir()
    (teammate / interface).write_text('interface:\n  display_name: "Deploy"\n', encoding="utf-8")
    git(teammate, "add", "-A")
    git(teammate, "commit", "-q", "-m", "codex interface for deploy")
    git(teammate, "push", "-q")
    git(repo, "pull", "-q", "--no-rebase")
    start(repo)
    mine = 'interface:\n  display_name: "Deploy (MY UNCOMMITTED EDIT)"\n'
    (repo / interface).write_text(mine, encoding="utf-8")
    skill = teammate / ".agents/skills/deploy/SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace("status: active", "status: draft"), encoding="utf-8")
    git(teammate, "commit", "-q", "-am", "memory(skill): deploy edited by an agent, back to draft")
    git(teammate, "push", "-q")
    git(repo, "pull", "-q", "--no-rebase")
    before = git(repo, "rev-parse", "HEAD").strip()
    start(repo, SESSION.replace("1", "9"))
    assert git(repo, "rev-parse", "HEAD").strip() == before  # nothing of the person's is committed as repo-memory's
    assert (repo / interface).read_text(encoding="utf-8") == mine
    output = runner.invoke(cli, ["--root", str(repo), "doctor"], catch_exceptions=False).output
    assert any(".agents/skills/deploy" in line and "Codex offers this skill" in line for line in output.splitlines()), output
    # an explicit sync sets it in the person's file (they asked), and leaves it to them to commit with their edit
    assert "not committed" in run(runner, repo, "sync")
    assert git(repo, "rev-parse", "HEAD").strip() == before
    assert "MY UNCOMMITTED EDIT" in (repo / interface).read_text(encoding="utf-8")


def test_a_follow_after_one_skills_change_takes_the_others_as_the_index_has_them(repo: Path, runner: CliRunner):
    """The follow reads the changed skills' files, not every SKILL.md (at 10k skills that took a second per change): a
    skill whose file changed behind the index's back is followed once the index sees it."""
    (repo / "app.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    for name in ("llama", "zebra"):
        run(runner, repo, "skill", "new", name, "-d", f"{name.title()} care; use for {name}s", "--body", "1. feed")
    run(runner, repo, "sync")
    store = Store(Config.load(repo))
    try:
        store.refresh()
        following.follow(store)
        zebra, llama = repo / ".agents/skills/zebra/SKILL.md", repo / ".agents/skills/llama/SKILL.md"
        zebra.write_text(zebra.read_text(encoding="utf-8").replace("status: active", "status: deprecated"), encoding="utf-8")
        llama.write_text(llama.read_text(encoding="utf-8").replace("1. feed", "1. feed hay"), encoding="utf-8")
        store.refresh(changed=[str(llama)])  # the watcher's event named llama alone
        following.follow(store)
        assert mirrored(repo) == {"llama": "status: active", "zebra": "status: active"}
        assert "feed hay" in (repo / ".claude/skills/llama/SKILL.md").read_text(encoding="utf-8")
        store.refresh()
        following.follow(store)
        assert mirrored(repo) == {"llama": "status: active"}
    finally:
        store.close()


@pytest.mark.parametrize("with_other", [True, False], ids=["with another skill's SKILL.md", "alone"])
def test_the_follow_after_a_pull_brings_a_changed_file_beside_skill_md_into_claude_codes_copy(
        repo: Path, runner: CliRunner, tmp_path: Path, with_other: bool):
    """The follow took a copy as unchanged when the index said its SKILL.md was, and never looked at the files beside it:
    a pulled checklist.md stayed old in the copy Claude Code loads, at every later session's start, while doctor said
    that start would bring it."""
    teammate = pushed(repo, runner, tmp_path)
    start(repo, SESSION.replace("1", "6"))
    write_skill_file(teammate, "other", "Other care; use for others.", "1. other", extra="metadata:\n  status: active\n")
    (teammate / ".agents/skills/deploy/checklist.md").write_text("- old step: restart by hand\n", encoding="utf-8")
    git(teammate, "add", "-A")
    git(teammate, "commit", "-q", "-m", "checklist and other")
    git(teammate, "push", "-q")
    git(repo, "pull", "-q", "--no-rebase")
    start(repo)
    copy = repo / ".claude/skills/deploy/checklist.md"
    assert copy.read_text(encoding="utf-8") == "- old step: restart by hand\n"
    (teammate / ".agents/skills/deploy/checklist.md").write_text("- new step: run scripts/rollout.sh --canary\n", encoding="utf-8")
    if with_other:
        with (teammate / ".agents/skills/other/SKILL.md").open("a", encoding="utf-8") as f:
            f.write("2. more\n")
    git(teammate, "commit", "-q", "-am", "new checklist")
    git(teammate, "push", "-q")
    git(repo, "pull", "-q", "--no-rebase")
    start(repo, SESSION.replace("1", "8"))
    assert copy.read_text(encoding="utf-8") == "- new step: run scripts/rollout.sh --canary\n"
    assert ("2. more" in (repo / ".claude/skills/other/SKILL.md").read_text(encoding="utf-8")) == with_other
    output = runner.invoke(cli, ["--root", str(repo), "doctor"], catch_exceptions=False).output
    assert ".claude/skills/" not in output, output
    # a copy deleted by hand comes back at the next start, as doctor's fix says
    shutil.rmtree(repo / ".claude/skills/deploy")
    start(repo, SESSION.replace("1", "7"))
    assert copy.read_text(encoding="utf-8") == "- new step: run scripts/rollout.sh --canary\n"


def test_one_sync_after_a_person_made_a_draft_active_by_hand_leaves_the_copy_in_step(repo: Path, runner: CliRunner):
    """sync copied the skill into .claude/skills, Codex's openai.yaml of the draft included, and only then took that
    file out of the skill: doctor said the copy was out of date and to run sync, which a second sync fixed."""
    run(runner, repo, "init")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    run(runner, repo, "sync")  # copies in use in this clone
    store = Store(Config.load(repo))
    try:
        store.write_skill("db-migrate", "How to run db migrations; use when schema changes.", "1. alembic upgrade head")
        store.flush("all")
    finally:
        store.close()
    skill = repo / ".agents/skills/db-migrate"
    assert (skill / "agents/openai.yaml").is_file()  # the draft is kept out of Codex's list
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    (skill / "SKILL.md").write_text(text.replace("status: draft", "status: active"), encoding="utf-8")  # as a merge's side gives it
    git(repo, "commit", "-q", "-am", "db-migrate active")
    run(runner, repo, "sync")
    assert not (skill / "agents").exists() and not (repo / ".claude/skills/db-migrate/agents").exists()
    assert not [f for f in json.loads(run(runner, repo, "doctor", "--json")) if f["path"].startswith(".claude/skills")]
