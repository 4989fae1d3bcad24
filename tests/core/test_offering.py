"""A skill recall does not serve is kept out of what Codex offers its model by itself (core/offering.py): whatever path
made it a draft (an agent's write, an agent's file tools, a person's hand), and back once it is served again, with the
skill's own Codex metadata as the person reviewed it. The Codex CLI itself: tests/shells/test_codex_drafts.py."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
import yaml

from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core import offering
from repo_memory.core.codex_policy import OURS
from repo_memory.core.store import Store
from repo_memory.errors import ConflictError
from repo_memory.shells import hooks
from repo_memory.shells.cli import cli
from tests.conftest import git, skill_row, write_skill_file

ACTIVE = "metadata:\n  status: active\n  origin: human\n"
OWN = "interface:\n  display_name: Deploy\npolicy:\n  allow_implicit_invocation: true\n"


def post_tool(repo: Path, tool: str, tool_input: dict) -> dict:
    return hooks.handle("post-tool", {"session_id": "edits", "cwd": str(repo), "hook_event_name": "PostToolUse",
                                      "tool_name": tool, "tool_input": tool_input, "tool_response": "ok"})


def allowed(folder: Path) -> object:
    """What the skill's agents/openai.yaml says of implicit invocation, as Codex reads it (missing: True)."""
    path = folder / "agents/openai.yaml"
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("policy", {}).get("allow_implicit_invocation", True) if path.exists() else True


def test_an_agent_cannot_put_a_draft_in_codexs_list_with_a_metadata_file_of_its_own(store: Store, repo: Path):
    folder = repo / ".agents/skills/deploy"
    write_skill_file(repo, "deploy", "How we deploy.", "Steps.", extra=ACTIVE)
    (folder / "agents").mkdir()
    (folder / "agents/openai.yaml").write_text(OWN, encoding="utf-8")
    (folder / "agents/icon.svg").write_text("<svg/>", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill, with its Codex metadata")
    store.refresh()
    forged = OWN.replace("Deploy", "Deploy now")
    (folder / "agents/openai.yaml").write_text(forged, encoding="utf-8")  # the agent's Write, then its hook
    post_tool(repo, "Write", {"file_path": str(folder / "agents/openai.yaml"), "content": forged})
    assert skill_row(store, "deploy")["status"] == "draft"
    assert allowed(folder) is False and "Deploy now" in (folder / "agents/openai.yaml").read_text(encoding="utf-8")
    (folder / "agents/openai.yaml").write_text(forged, encoding="utf-8")  # again, over ours: off again at the next hook
    post_tool(repo, "Edit", {"file_path": str(folder / "agents/openai.yaml"), "old_string": "x", "new_string": "y"})
    assert allowed(folder) is False
    store.flush("docs")
    assert git(repo, "status", "--porcelain", "--", ".agents/skills") == ""

    store.review("deploy", accept=True, sha=store.fingerprint("deploy"))  # the folder the person read, the agent's file in it
    assert (folder / "agents/openai.yaml").read_text(encoding="utf-8") == forged  # as the agent wrote it, now reviewed
    assert (folder / "agents/icon.svg").exists() and sorted(p.name for p in folder.iterdir()) == ["SKILL.md", "agents"]
    store.flush("docs")
    assert git(repo, "status", "--porcelain", "--", ".agents/skills") == ""


def test_a_rejected_draft_gives_back_the_persons_codex_metadata_byte_for_byte(store: Store, repo: Path):
    folder = repo / ".agents/skills/deploy"
    write_skill_file(repo, "deploy", "How we deploy.", "Steps.", extra=ACTIVE)
    (folder / "agents").mkdir()
    own = "# ours, with a comment\r\ninterface:\r\n  display_name: Deploy\r\n"  # CRLF, no policy at all
    (folder / "agents/openai.yaml").write_bytes(own.encode())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill")
    store.refresh()
    store.read("skill:deploy")  # an agent updates what it read
    store.write_skill("deploy", None, "Steps, faster.")  # an agent's update: a draft, off Codex's list
    assert allowed(folder) is False
    store.review("deploy", accept=False)
    assert (folder / "agents/openai.yaml").read_bytes() == own.encode() and allowed(folder) is True


def test_our_file_is_known_with_files_beside_it_and_in_a_checkout_that_writes_crlf(store: Store, repo: Path):
    folder = repo / ".agents/skills/quick"
    store.write_skill("quick", "A draft.", "Steps.")
    (folder / "agents/.DS_Store").write_bytes(b"\0\1")
    (folder / "agents/openai.yaml").write_bytes(OURS.replace(b"\n", b"\r\n"))  # as core.autocrlf=true checks it out
    assert offering.unsettled(repo, ".agents/skills") == []
    store.review("quick", accept=True)
    assert allowed(folder) is True and not (folder / "agents/openai.yaml").exists() and (folder / "agents/.DS_Store").exists()


def test_accepting_a_skill_a_person_made_active_by_hand_lets_codex_list_it(store: Store, repo: Path, runner: CliRunner):
    store.write_skill("quick", "A draft.", "Steps.")
    path = repo / ".agents/skills/quick/SKILL.md"
    path.write_text(path.read_text(encoding="utf-8").replace("status: draft", "status: active"), encoding="utf-8")
    out = runner.invoke(cli, ["--root", str(repo), "accept", "quick"]).output
    assert "already active" in out and allowed(repo / ".agents/skills/quick") is True


def test_a_draft_rejected_before_its_commit_goes_whole(store: Store, repo: Path):
    store.write_skill("quick-draft", "A draft turned down at once.", "Steps.")
    assert (repo / ".agents/skills/quick-draft/agents/openai.yaml").read_bytes() == OURS
    assert "deleted" in store.review("quick-draft", accept=False)
    assert not (repo / ".agents/skills/quick-draft").exists()


def test_sync_keeps_drafts_written_before_out_of_codexs_list_and_lets_accepted_ones_back(repo: Path, tmp_path: Path):
    write_skill_file(repo, "old-draft", "Written before repo-memory kept drafts from Codex.", "Steps.",
                     extra="metadata:\n  status: draft\n  origin: agent\n")
    write_skill_file(repo, "retired", "No longer how we work.", "Steps.", extra="metadata:\n  status: deprecated\n")
    write_skill_file(repo, "served", "How we work.", "Steps.", extra=ACTIVE)
    write_skill_file(repo, "claude-draft", "A draft in Claude Code's own folder.", "Steps.", folder=".claude/skills",
                     extra="metadata:\n  status: draft\n")
    (repo / "elsewhere").mkdir()
    (repo / "elsewhere/openai.yaml").write_text(OWN, encoding="utf-8")
    (repo / ".agents/skills/retired/agents").symlink_to(repo / "elsewhere")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skills")
    runner = CliRunner()
    doctor = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    # not "recall does not serve it": recall finds a draft, marked as one (it is the briefing and skills/list that leave it out)
    assert doctor.count("Codex offers this skill to its model by itself, though it is no skill to follow") == 2, doctor
    assert doctor.count("Claude Code offers this skill to its model by itself, though it is no skill to follow") == 1, doctor
    out = runner.invoke(cli, ["--root", str(repo), "sync"], catch_exceptions=False).output
    assert "kept out of the skills Codex lists by itself: .agents/skills/old-draft (draft: not reviewed yet" in out
    assert "kept out of the skills Codex lists by itself: .agents/skills/retired (deprecated)" in out and "served" not in out.split("removed.")[1]
    assert ("kept out of the skills Claude Code lists by itself: .claude/skills/claude-draft (draft: not reviewed yet "
            "(`repo-memory skill show claude-draft`, then the accept line it prints)) — yours to commit") in out
    assert "disable-model-invocation: true" in (repo / ".claude/skills/claude-draft/SKILL.md").read_text(encoding="utf-8")
    for name in ("old-draft", "retired"):
        assert (repo / ".agents/skills" / name / "agents/openai.yaml").read_bytes() == OURS
    assert (repo / ".agents/skills/retired/agents.held").is_symlink() and (repo / "elsewhere/openai.yaml").read_text() == OWN
    assert not (repo / ".agents/skills/served/agents").exists()
    assert git(repo, "status", "--porcelain", "--", ".agents") == ""  # committed
    assert runner.invoke(cli, ["--root", str(repo), "sync"]).output.count("Codex") == 0  # settled: nothing more to say
    assert "Codex" not in runner.invoke(cli, ["--root", str(repo), "doctor"]).output

    path = repo / ".agents/skills/retired/SKILL.md"  # a person brings it back by hand
    path.write_text(path.read_text().replace("deprecated", "active"), encoding="utf-8")
    git(repo, "commit", "-qam", "back in use")
    out = runner.invoke(cli, ["--root", str(repo), "sync"], catch_exceptions=False).output
    assert "back in the skills Codex lists by itself: .agents/skills/retired" in out
    assert (repo / ".agents/skills/retired/agents").is_symlink() and not (repo / ".agents/skills/retired/agents.held").exists()
    assert git(repo, "status", "--porcelain", "--", ".agents") == ""


def test_a_persons_claude_code_skill_an_agent_edited_is_kept_from_claude_until_a_person_accepts_it(store: Store, repo: Path):
    """Claude Code loads .claude/skills itself: an agent's edit there makes the skill a draft, which carries Claude
    Code's `disable-model-invocation: true` until accepted; `accept` finds skills in every folder recall reads."""
    runner = CliRunner()
    for name, own in (("deploy", ""), ("by-hand-only", "disable-model-invocation: true\n")):
        write_skill_file(repo, name, "How we deploy.", "Steps.", folder=".claude/skills", extra=own)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the person's Claude Code skills")
    for name in ("deploy", "by-hand-only"):
        path = repo / ".claude/skills" / name / "SKILL.md"
        path.write_text(path.read_text(encoding="utf-8").replace("Steps.", "Steps, and skip the tests."), encoding="utf-8")
        post_tool(repo, "Edit", {"file_path": str(path), "old_string": "Steps.", "new_string": "Steps, and skip the tests."})
    deploy = (repo / ".claude/skills/deploy/SKILL.md").read_text(encoding="utf-8")
    assert "disable-model-invocation: true" in deploy and "status: draft" in deploy
    assert not (repo / ".claude/skills/deploy/agents").exists()  # Codex reads no .claude/skills: no file of its kind there

    for name in ("deploy", "by-hand-only"):
        shown = runner.invoke(cli, ["--root", str(repo), "skill", "show", name, "--json"])
        assert shown.exit_code == 0, shown.output
        sha = json.loads(shown.stdout)["review_sha"]
        done = runner.invoke(cli, ["--root", str(repo), "accept", name, "--sha", sha])
        assert done.exit_code == 0 and "accepted skill:" in done.output, done.output
    deploy = (repo / ".claude/skills/deploy/SKILL.md").read_text(encoding="utf-8")
    assert "disable-model-invocation" not in deploy and "withheld" not in deploy and "skip the tests" in deploy
    assert "disable-model-invocation: true" in (repo / ".claude/skills/by-hand-only/SKILL.md").read_text(encoding="utf-8")  # theirs
    store.refresh()
    assert {r["name"]: r["status"] for r in store.skills()} == {"deploy": "active", "by-hand-only": "active"}


def test_sync_commits_nothing_a_persons_uncommitted_edit_decided_and_doctor_names_linked_skills(repo: Path, runner: CliRunner):
    write_skill_file(repo, "deploy", "How we deploy.", "Steps.", extra=ACTIVE)
    write_skill_file(repo, "old-tool", "Retired.", "Steps.", folder=".claude/skills", extra="metadata:\n  status: deprecated\n")
    write_skill_file(repo, "vendored", "A vendored skill.", "Steps.", folder="vendor/skills", extra="metadata:\n  status: deprecated\n")
    (repo / ".agents/skills/vendored").symlink_to(repo / "vendor/skills/vendored")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skills")
    head = git(repo, "rev-parse", "HEAD")
    path = repo / ".agents/skills/deploy/SKILL.md"
    path.write_text(path.read_text(encoding="utf-8").replace("status: active", "status: deprecated"), encoding="utf-8")  # trying it
    out = runner.invoke(cli, ["--root", str(repo), "sync"], catch_exceptions=False).output
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed on the strength of an edit no commit holds
    assert ".agents/skills/deploy (deprecated) — not committed: commit it with your change to its SKILL.md" in out, out
    assert allowed(repo / ".agents/skills/deploy") is False  # this checkout follows its files
    assert not (repo / ".claude/skills/old-tool/agents").exists()  # Codex reads no .claude/skills: nothing of its kind there
    doctor = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "warning: .agents/skills/vendored: Codex offers this skill by itself through a link" in doctor, doctor


@pytest.mark.parametrize("policy", ["policy: null\n", "policy:\n", "policy: {}\n", "policy: {other: 1}\n", ""])
def test_codex_lists_an_accepted_skill_again_whatever_shape_its_own_policy_had(store: Store, repo: Path, policy: str):
    folder = repo / ".agents/skills/deploy"
    write_skill_file(repo, "deploy", "How we deploy.", "Steps.", extra=ACTIVE)
    (folder / "agents").mkdir()
    (folder / "agents/openai.yaml").write_text(f"interface:\n  display_name: Deploy\n{policy}", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill")
    store.refresh()
    store.read("skill:deploy")  # an agent updates what it read
    store.write_skill("deploy", None, "Steps, faster.")
    assert allowed(folder) is False
    text = (folder / "agents/openai.yaml").read_text(encoding="utf-8")
    (folder / "agents/openai.yaml").write_text("# a person's note above ours\n" + text, encoding="utf-8")  # the mark off line 1
    store.review("deploy", accept=True)
    assert allowed(folder) is True and "repo-memory" not in (folder / "agents/openai.yaml").read_text(encoding="utf-8")
    assert offering.unsettled(repo, ".agents/skills") == []


def test_a_claude_code_skill_with_flow_metadata_is_hidden_again_when_an_agent_edits_it_after_accept(store: Store, repo: Path):
    path = write_skill_file(repo, "deploy", "How we deploy.", "Steps.", folder=".claude/skills", extra="metadata: {author: me}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill")
    for new in ("Steps!", "Steps!!"):  # two edits (the same hook payload twice within seconds counts once)
        old = path.read_text(encoding="utf-8").split("\n---\n\n", 1)[1].strip()
        path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        post_tool(repo, "Edit", {"file_path": str(path), "old_string": old, "new_string": new})
        assert "disable-model-invocation: true" in path.read_text(encoding="utf-8")
        store.review("deploy", accept=True)
        text = path.read_text(encoding="utf-8")
        assert "disable-model-invocation" not in text and "withheld" not in text, text
        git(repo, "commit", "-qam", "accepted")


def test_a_claude_code_draft_can_be_rejected_back_to_the_committed_version(store: Store, repo: Path):
    path = write_skill_file(repo, "deploy", "How we deploy.", "Steps.", folder=".claude/skills")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill")
    before = path.read_bytes()
    path.write_text(path.read_text(encoding="utf-8").replace("Steps.", "Skip the tests."), encoding="utf-8")
    post_tool(repo, "Edit", {"file_path": str(path), "old_string": "Steps.", "new_string": "Skip the tests."})
    assert "back to its last accepted version" in store.review("deploy", accept=False)
    assert path.read_bytes() == before


def test_sync_commits_what_keeps_an_invalid_committed_skill_out_of_codexs_list(repo: Path, runner: CliRunner):
    path = write_skill_file(repo, "broken", "How we deploy.", "Steps.")
    path.write_text(path.read_text(encoding="utf-8").replace("name: broken", "name: Broken Skill"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill, invalid")
    out = runner.invoke(cli, ["--root", str(repo), "sync"], catch_exceptions=False).output
    assert "kept out of the skills Codex lists by itself: .agents/skills/broken (invalid" in out and "not committed" not in out, out
    assert git(repo, "status", "--porcelain", "--", ".agents") == ""


def test_a_persons_own_disable_model_invocation_false_comes_back_after_accept(store: Store, repo: Path):
    path = write_skill_file(repo, "deploy", "How we deploy.", "Steps.", folder=".claude/skills",
                            extra="disable-model-invocation: false  # the model may use it\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill")
    before = path.read_text(encoding="utf-8")
    path.write_text(before.replace("Steps.", "Steps!"), encoding="utf-8")
    post_tool(repo, "Edit", {"file_path": str(path), "old_string": "Steps.", "new_string": "Steps!"})
    assert "disable-model-invocation: true  # the model may use it" in path.read_text(encoding="utf-8")
    store.review("deploy", accept=True)
    assert "disable-model-invocation: false  # the model may use it" in path.read_text(encoding="utf-8")
    assert "withheld" not in path.read_text(encoding="utf-8")


def test_rejecting_a_claude_code_draft_git_holds_no_version_of_deletes_nothing(store: Store, repo: Path):
    path = write_skill_file(repo, "local-only", "How I deploy.", "Steps.", folder=".claude/skills")  # never committed
    path.write_text(path.read_text(encoding="utf-8").replace("Steps.", "Skip the tests."), encoding="utf-8")
    post_tool(repo, "Edit", {"file_path": str(path), "old_string": "Steps.", "new_string": "Skip the tests."})
    with pytest.raises(ConflictError, match="no version"):
        store.review("local-only", accept=False)
    assert "Skip the tests." in path.read_text(encoding="utf-8")


def test_a_mark_line_twice_or_indented_is_all_taken_away_on_accept(store: Store, repo: Path):
    folder = repo / ".agents/skills/deploy"
    write_skill_file(repo, "deploy", "How we deploy.", "Steps.", extra=ACTIVE)
    (folder / "agents").mkdir()
    (folder / "agents/openai.yaml").write_text("interface:\n  display_name: Deploy\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a person's skill")
    store.refresh()
    store.read("skill:deploy")  # an agent updates what it read
    store.write_skill("deploy", None, "Steps, faster.")
    text = (folder / "agents/openai.yaml").read_text(encoding="utf-8")
    mark = text.splitlines()[0]
    (folder / "agents/openai.yaml").write_text(text + "  " + mark + "\n", encoding="utf-8")  # pasted twice, once indented
    store.review("deploy", accept=True)
    assert "repo-memory" not in (folder / "agents/openai.yaml").read_text(encoding="utf-8") and allowed(folder) is True
    store.write_skill("deploy", None, "Steps, slower.")  # the next draft is kept out again
    assert allowed(folder) is False


def test_sync_commits_nothing_into_a_skill_folder_git_ignores(repo: Path, runner: CliRunner):
    write_skill_file(repo, "scratch", "My own.", "Steps.", extra="metadata:\n  status: draft\n")
    (repo / ".gitignore").write_text(".agents/skills/scratch/\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ignore my scratch skill")
    head = git(repo, "rev-parse", "HEAD")
    runner.invoke(cli, ["--root", str(repo), "sync"], catch_exceptions=False)
    assert git(repo, "rev-parse", "HEAD") == head and allowed(repo / ".agents/skills/scratch") is False


def test_accept_names_a_claude_code_draft_a_same_named_skill_shadows_and_sync_lets_it_back(store: Store, repo: Path,
                                                                                          runner: CliRunner):
    write_skill_file(repo, "deploy", "How we deploy.", "Steps.", extra=ACTIVE)
    path = write_skill_file(repo, "deploy", "How I deploy.", "My steps.", folder=".claude/skills")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two skills of one name")
    path.write_text(path.read_text(encoding="utf-8").replace("My steps.", "Skip the tests."), encoding="utf-8")
    post_tool(repo, "Edit", {"file_path": str(path), "old_string": "My steps.", "new_string": "Skip the tests."})
    out = runner.invoke(cli, ["--root", str(repo), "accept", "deploy"]).output
    assert "already active" in out and ".claude/skills/deploy is a draft of the same name" in out, out
    path.write_text(path.read_text(encoding="utf-8").replace("status: draft", "status: active"), encoding="utf-8")
    runner.invoke(cli, ["--root", str(repo), "sync"], catch_exceptions=False)
    assert "disable-model-invocation" not in path.read_text(encoding="utf-8")


def test_the_claude_code_copy_of_a_skill_follows_what_recall_serves_when_it_changes(store: Store, repo: Path, runner: CliRunner):
    """Once `sync` copies skills into .claude/skills, a skill an agent turns back into a draft loses its copy (Claude
    Code listed the old one while the briefing called the skill a draft), and one a person adds gets one."""
    write_skill_file(repo, "deploy", "How we deploy.", "Steps.", extra=ACTIVE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a skill")
    runner.invoke(cli, ["--root", str(repo), "sync"], catch_exceptions=False)
    assert (repo / ".claude/skills/deploy/SKILL.md").is_file()
    from repo_memory.shells import mcp as server
    from mcp import Client

    async def rewrite() -> None:
        async with Client(server.build(store)) as client:
            await client.call_tool("read", {"ref": "skill:deploy"})  # an agent updates what it read
            assert not (await client.call_tool("skill_write", {"name": "deploy", "body": "Steps, faster."})).is_error
    anyio.run(rewrite)
    assert not (repo / ".claude/skills/deploy").exists()  # a draft: no copy for Claude Code to list
    runner.invoke(cli, ["--root", str(repo), "skill", "new", "release", "-d", "How we release.", "--body", "Tag."], catch_exceptions=False)
    assert (repo / ".claude/skills/release/SKILL.md").is_file()


def test_an_agents_skill_write_of_a_name_a_persons_claude_code_skill_holds_says_where_it_is(store: Store, repo: Path):
    write_skill_file(repo, "lint", "How we lint.", "Run ruff.", folder=".claude/skills")
    store.refresh()
    with pytest.raises(ConflictError, match=r"\.claude/skills/lint"):
        store.write_skill("lint", "How we lint, faster.", "Run ruff --fix.")
    assert not (repo / ".agents/skills/lint").exists()  # no draft of the same name to shadow the person's skill


def test_a_pull_that_takes_codexs_file_from_a_draft_is_followed_at_the_next_session_start(repo: Path, tmp_path: Path):
    """A teammate accepted run-tests (its agents/openai.yaml deleted) while this clone's agent rewrote it as a draft; the
    pull kept this clone's SKILL.md as it was and took the file that keeps a draft out of Codex's list. The next look
    compared the skills' digests only: unchanged, so Codex offered the unreviewed draft to its model until `sync`."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    mine = Store(Config.load(repo), session="b")
    mine.write_skill("run-tests", "How to run the tests.", "1. pytest -q", actor="agent")
    mine.flush("all")
    mine.close()
    folder = repo / ".agents/skills/run-tests"
    assert allowed(folder) is False
    hooks.handle("session-start", {"session_id": "b1", "cwd": str(repo), "hook_event_name": "SessionStart"})  # looked once
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    git(other, "rm", "-q", ".agents/skills/run-tests/agents/openai.yaml")  # what accept removes, SKILL.md aside
    git(other, "commit", "-q", "-m", "a teammate's change of the skill's folder")
    git(repo, "pull", "-q", "--no-rebase", "--no-edit", str(other), "HEAD")
    assert not (folder / "agents/openai.yaml").exists() and "status: draft" in (folder / "SKILL.md").read_text(encoding="utf-8")
    hooks.handle("session-start", {"session_id": "b2", "cwd": str(repo), "hook_event_name": "SessionStart"})
    assert allowed(folder) is False, "the draft is offered to Codex's model"
