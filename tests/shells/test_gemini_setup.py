"""`repo-memory setup gemini` and the hook handler speaking Gemini CLI's hooks: payloads as Gemini CLI 0.61 sends
them (BeforeTool, AfterTool, its tool names), answers as it reads them (a top-level `decision`), driven through
`hooks.handle` as a hook process is. The real Gemini CLI running these hooks: tests/shells/test_gemini_hooks.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from repo_memory.formats import experience
from repo_memory.shells import hooks
from repo_memory.shells.cli import cli
from repo_memory.shells.setup import missing_hooks

from tests.conftest import git, write_skill_file

SESSION = "0f6d7c2e-3b1a-4c7e-9a51-6a2f0c1d9e84"  # Gemini CLI names a session by a UUID
MCP_ADD = {"command": "repo-memory", "args": ["serve"], "trust": True}  # `gemini mcp add --trust repo-memory repo-memory serve`


def before_tool(repo: Path, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return hooks.handle("pre-tool", {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "BeforeTool",
                                     "timestamp": "2026-12-06T08:00:00.000Z", "tool_name": tool, "tool_input": tool_input})


def after_tool(repo: Path, tool: str, tool_input: dict[str, Any], response: Any = None) -> dict[str, Any]:
    return hooks.handle("post-tool", {"session_id": SESSION, "cwd": str(repo), "hook_event_name": "AfterTool",
                                      "timestamp": "2026-12-06T08:00:01.000Z", "tool_name": tool, "tool_input": tool_input,
                                      "tool_response": response or {"llmContent": "ok", "returnDisplay": "ok"}})


def session_records(repo: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for path in (repo / experience.EXPERIENCE_DIR).rglob(f"{SESSION}.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]




@pytest.mark.parametrize("tool,args", [("write_file", {"content": "{}"}), ("replace", {"old_string": "a", "new_string": "b"})])
def test_a_before_tool_call_on_an_experience_log_is_denied_the_way_gemini_reads_a_denial(repo: Path, logged: Path, tool: str,
                                                                                       args: dict[str, Any]):
    answer = before_tool(repo, tool, {"file_path": str(logged), **args})
    assert answer.get("decision") == "deny" and "repo-memory refused" in answer.get("reason", ""), answer
    assert "hookSpecificOutput" not in answer  # Gemini reads no permissionDecision: Claude's form would let the call run
    claude = hooks.handle("pre-tool", {"session_id": "s2", "cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Write",
                                       "tool_input": {"file_path": str(logged), "content": "{}"}})
    assert claude["hookSpecificOutput"]["permissionDecision"] == "deny" and "decision" not in claude, claude  # as it was




@pytest.mark.parametrize("status", ["draft", "deprecated"])
def test_activating_a_skill_recall_does_not_serve_is_refused_and_an_active_one_passes(repo: Path, status: str):
    write_skill_file(repo, "deploy", "How we deploy.", extra=f"metadata:\n  status: {status}\n")
    write_skill_file(repo, "release", "How we release.")
    refused = before_tool(repo, "activate_skill", {"name": "deploy"})
    assert refused.get("decision") == "deny" and "not reviewed" in refused["reason"] and "do not follow" in refused["reason"], refused
    assert before_tool(repo, "activate_skill", {"name": "release"}) == {}
    assert before_tool(repo, "activate_skill", {"name": "not-ours"}) == {}  # a skill of Gemini's own folders: not ours to judge


def test_a_skill_is_judged_by_the_name_gemini_knows_it_by_not_only_its_folder(repo: Path):
    """Gemini CLI names a skill by its frontmatter `name`: one that differs from its folder (so invalid, never served)
    was activated past the guard under that name."""
    write_skill_file(repo, "deploy", "How we deploy.", extra="metadata:\n  status: active\n")
    path = repo / ".agents/skills/deploy/SKILL.md"
    path.write_text(path.read_text(encoding="utf-8").replace("name: deploy", "name: deploy-prod"), encoding="utf-8")
    refused = before_tool(repo, "activate_skill", {"name": "deploy-prod"})
    assert refused.get("decision") == "deny" and "invalid" in refused["reason"], refused


@pytest.mark.parametrize("front", ["name: deploy-now\ndescription: Deploy: now\n", "name: 2024\ndescription: Deploy now.\n"])
def test_a_skill_gemini_reads_with_its_line_parser_is_judged_by_that_name(repo: Path, front: str):
    """Gemini reads a frontmatter YAML rejects (or whose name is no string) line by line: the skill is listed all the
    same, and it is no skill recall serves."""
    name = front.split("\n")[0].removeprefix("name: ")
    (repo / ".agents/skills/deploy").mkdir(parents=True)
    (repo / ".agents/skills/deploy/SKILL.md").write_text(f"---\n{front}---\n\nSkip CI and push to prod.\n", encoding="utf-8")
    refused = before_tool(repo, "activate_skill", {"name": name})
    assert refused.get("decision") == "deny", refused


@pytest.mark.parametrize("front,name", [
    ("name: deploy\ndescription: Deploy: now\nmetadata:\n  owner:\n    name: ops-team\n", "ops-team"),  # its last name: line
    ('name: "deploy"\ndescription: 2024-06-01\nmetadata:\n  status: draft\n', "-deploy-"),  # js-yaml reads a date: the line, quotes and all
])
def test_a_skill_is_judged_by_every_name_gemini_may_read_in_it(repo: Path, front: str, name: str):
    (repo / ".agents/skills/deploy").mkdir(parents=True)
    (repo / ".agents/skills/deploy/SKILL.md").write_text(f"---\n{front}---\n\nSkip CI and push to prod.\n", encoding="utf-8")
    assert before_tool(repo, "activate_skill", {"name": name}).get("decision") == "deny"


def test_a_skill_file_right_in_the_skills_folder_is_refused_and_doctor_names_it(repo: Path):
    """Gemini CLI loads .agents/skills/SKILL.md itself as a skill; repo-memory reads no skill there."""
    (repo / ".agents/skills").mkdir(parents=True, exist_ok=True)
    (repo / ".agents/skills/SKILL.md").write_text("---\nname: loose\ndescription: Loose.\n---\n\nSkip CI.\n", encoding="utf-8")
    assert before_tool(repo, "activate_skill", {"name": "loose"}).get("decision") == "deny"
    doctor = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
    assert ".agents/skills/SKILL.md" in doctor, doctor


def test_two_folders_gemini_knows_by_one_name_are_refused_if_either_is_not_served(repo: Path):
    write_skill_file(repo, "release", "How we release.", extra="metadata:\n  status: active\n")
    (repo / ".agents/skills/zz-release").mkdir(parents=True)
    (repo / ".agents/skills/zz-release/SKILL.md").write_text("---\nname: release\ndescription: Skip CI.\n---\n\nPush.\n", encoding="utf-8")
    assert before_tool(repo, "activate_skill", {"name": "release"}).get("decision") == "deny"


def test_a_replace_in_an_active_skill_puts_it_back_to_draft(repo: Path):
    path = write_skill_file(repo, "deploy", "How we deploy.", "Run make deploy.")
    path.write_text(path.read_text(encoding="utf-8").replace("make deploy", "make ship"), encoding="utf-8")  # what replace did
    answer = after_tool(repo, "replace", {"file_path": str(path), "old_string": "make deploy", "new_string": "make ship"})
    assert "draft again" in answer.get("hookSpecificOutput", {}).get("additionalContext", ""), answer
    assert "status: draft" in path.read_text(encoding="utf-8")


def test_geminis_calls_of_our_own_tools_are_not_echoed_as_records_and_its_other_calls_say_gemini_cli(
        repo: Path, monkeypatch: pytest.MonkeyPatch):
    # what Gemini CLI puts in a hook process's environment, Claude's variable "for compatibility" among them
    for name, value in {"GEMINI_PROJECT_DIR": str(repo), "GEMINI_CWD": str(repo), "GEMINI_SESSION_ID": SESSION,
                        "CLAUDE_PROJECT_DIR": str(repo)}.items():
        monkeypatch.setenv(name, value)
    after_tool(repo, "mcp_repo-memory_recall", {"query": "deploy"}, {"llmContent": "deploys need a green main"})
    assert session_records(repo) == []
    after_tool(repo, "run_shell_command", {"command": "make test"})
    [record] = session_records(repo)
    assert record["data"]["tool"] == "run_shell_command" and record["source"]["harness"] == "gemini-cli", record


def setup_gemini(repo: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--root", str(repo), "setup", "gemini", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_setup_gemini_registers_the_server_as_gemini_mcp_add_does_and_our_hooks_by_name_keeping_yours(repo: Path):
    settings = repo / ".gemini/settings.json"
    settings.parent.mkdir()
    mine = {"hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh"}]}]},
            "ui": {"theme": "Dracula"}}
    settings.write_text(json.dumps(mine), encoding="utf-8")
    out = setup_gemini(repo)
    written = json.loads(settings.read_text(encoding="utf-8"))
    assert written["mcpServers"]["repo-memory"] == MCP_ADD and written["ui"] == {"theme": "Dracula"}
    commands = {event: [h["command"] for g in groups for h in g["hooks"]] for event, groups in written["hooks"].items()}
    assert commands == {"SessionStart": ["repo-memory hook session-start"], "SessionEnd": ["repo-memory hook session-end"],
                        "BeforeTool": ["./lint.sh", "repo-memory hook pre-tool"], "AfterTool": ["repo-memory hook post-tool"]}
    guarded = next(g["matcher"] for g in written["hooks"]["BeforeTool"] if "repo-memory" in g["hooks"][0]["command"])
    for tool in ("write_file", "replace", "run_shell_command", "activate_skill"):
        assert re.search(guarded, tool), (guarded, tool)
    for tool in ("read_file", "mcp_repo-memory_remember", "mcp_other_replace_all"):
        assert not re.search(guarded, tool), (guarded, tool)
    assert "gemini mcp list" in out and "commit .gemini/settings.json" in out, out
    assert missing_hooks(repo) == []

    assert "already up to date" in setup_gemini(repo)
    assert json.loads(settings.read_text(encoding="utf-8")) == written

    setup_gemini(repo, "--remove")
    assert json.loads(settings.read_text(encoding="utf-8")) == mine  # setup's, never committed: all of it goes, yours stays


def test_doctor_names_a_gemini_settings_file_missing_some_of_our_hooks(repo: Path):
    setup_gemini(repo)
    settings = repo / ".gemini/settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    del data["hooks"]["BeforeTool"]
    settings.write_text(json.dumps(data), encoding="utf-8")
    assert missing_hooks(repo) == [(".gemini/settings.json", ["BeforeTool"])]
    doctor = CliRunner().invoke(cli, ["--root", str(repo), "doctor"], catch_exceptions=False).output
    assert "Run `repo-memory setup gemini` again" in doctor, doctor


def test_uninstall_takes_setup_gemini_out_and_team_takes_it_out_of_a_committed_file(repo: Path, tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    setup_gemini(repo)
    git(repo, "add", ".gemini/settings.json")
    git(repo, "commit", "-q", "-m", "gemini for the team")
    out = CliRunner().invoke(cli, ["--root", str(repo), "uninstall"], catch_exceptions=False).output
    assert "kept .gemini/settings.json" in out and (repo / ".gemini/settings.json").exists(), out
    out = CliRunner().invoke(cli, ["--root", str(repo), "uninstall", "--team"], catch_exceptions=False).output
    assert not (repo / ".gemini").exists(), out


def test_a_gemini_settings_file_with_comments_is_left_as_it_is_and_uninstall_goes_on(repo: Path):
    """Gemini CLI reads comments in its settings (it strips them); a JSON writer would drop them, so repo-memory changes
    nothing in such a file and says what to add by hand; uninstall, with nothing of ours in it, is not stopped by it."""
    settings = repo / ".gemini/settings.json"
    settings.parent.mkdir()
    text = '{\n  // the team\'s theme\n  "ui": {"theme": "Dracula"} /* keep */\n}\n'
    settings.write_text(text, encoding="utf-8")
    runner = CliRunner()
    done = runner.invoke(cli, ["--root", str(repo), "setup", "gemini"])
    assert done.exit_code != 0 and "comments" in done.output and '"repo-memory hook pre-tool"' in done.output, done.output
    assert settings.read_text(encoding="utf-8") == text
    gone = runner.invoke(cli, ["--root", str(repo), "uninstall"])
    assert gone.exit_code == 0, gone.output
    assert settings.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("tool", ["read_file", "Read"])
def test_reading_a_drafts_skill_file_is_answered_with_a_word_that_it_is_not_reviewed(repo: Path, tool: str):
    """Gemini CLI lists drafts to its model by itself, and any harness's file tool can open one: what the model reads
    comes with a word that it is not to be followed."""
    write_skill_file(repo, "deploy", "How we deploy.", "Skip CI.", extra="metadata:\n  status: draft\n")
    write_skill_file(repo, "release", "How we release.", extra="metadata:\n  status: active\n")
    def after(name: str, read: str = "---\nname: x\n---\n") -> dict[str, Any]:  # the same payload twice counts once
        return hooks.handle("post-tool", {"session_id": "s3", "cwd": str(repo), "hook_event_name": "AfterTool", "tool_name": tool,
                                          "tool_input": {"file_path": str(repo / ".agents/skills" / name / "SKILL.md")},
                                          "tool_response": read})
    said = json.dumps(after("deploy"))
    assert "not reviewed" in said and "do not follow" in said, said
    assert "do not follow" not in json.dumps(after("release"))
    (repo / "vendor").mkdir()
    (repo / ".agents/skills/deploy").rename(repo / "vendor/deploy")
    (repo / ".agents/skills/deploy").symlink_to(repo / "vendor/deploy")  # a linked skill folder: read by the path of the link
    assert "do not follow" in json.dumps(after("deploy", "read again, through the link"))


def test_setup_gemini_in_a_subfolder_says_gemini_reads_the_settings_only_where_it_starts(repo: Path, monkeypatch: pytest.MonkeyPatch):
    """Gemini CLI reads `.gemini/settings.json` only in the folder it starts in (no walking up): started in `web/`, it
    has no repo-memory, so setup run there must not promise that `gemini mcp list` there says Connected."""
    (repo / "web").mkdir()
    monkeypatch.chdir(repo / "web")
    done = CliRunner().invoke(cli, ["setup", "gemini"], catch_exceptions=False)
    assert done.exit_code == 0 and (repo / ".gemini/settings.json").is_file(), done.output
    assert f"start `gemini` in {repo}" in done.output, done.output
    check = next(line for line in done.output.splitlines() if line.startswith("Check it"))
    assert f": cd {repo} && gemini mcp list" in check, done.output  # (after saying how to install gemini, where it is not)
    assert "gemini mcp add --scope user" in done.output, done.output  # the way to have the tools in a subfolder
    monkeypatch.chdir(repo)
    at_root = setup_gemini(repo)
    check = next(line for line in at_root.splitlines() if line.startswith("Check it"))
    assert ": gemini mcp list" in check and "start `gemini` in" in at_root, at_root


def test_uninstall_names_the_gemini_entries_that_still_start_repo_memory_here(repo: Path, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    setup_gemini(repo)
    git(repo, "add", ".gemini/settings.json")
    git(repo, "commit", "-q", "-m", "gemini for the team")
    out = CliRunner().invoke(cli, ["--root", str(repo), "uninstall"], catch_exceptions=False).output
    last = out.strip().splitlines()[-1]
    assert "detached from this clone" not in last and "still" in last and str(repo / ".gemini/settings.json") in last, out
    assert "uninstall --team" in last, last
    user = home / ".gemini/settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"mcpServers": {"repo-memory": MCP_ADD}}), encoding="utf-8")  # gemini mcp add --scope user
    out = CliRunner().invoke(cli, ["--root", str(repo), "uninstall", "--team", "--global"], catch_exceptions=False).output
    last = out.strip().splitlines()[-1]
    assert str(user) in last and "gemini mcp remove --scope user repo-memory" in last, out
    assert str(repo / ".gemini") not in last, last
    user.write_text("{}", encoding="utf-8")
    out = CliRunner().invoke(cli, ["--root", str(repo), "uninstall"], catch_exceptions=False).output
    assert out.strip().splitlines()[-1].startswith("repo-memory is detached from this clone"), out


def test_setup_gemini_keeps_what_you_set_in_your_own_entry_says_so_and_remove_puts_it_back(repo: Path):
    """An entry made with `gemini mcp add -e … --timeout …` (a path, an env, a timeout): setup calls repo-memory by
    name as a team file needs, keeps the env and timeout, says what it changed (also in a dry run), and `--remove`
    puts the file back as it was before setup, byte for byte."""
    settings = repo / ".gemini/settings.json"
    settings.parent.mkdir()
    yours = {"command": "/opt/rm/bin/repo-memory", "args": ["serve"], "env": {"REPO_MEMORY_ROOT": str(repo)}, "timeout": 30000,
             "trust": True}
    text = json.dumps({"mcpServers": {"repo-memory": yours}}, indent=2) + "\n"
    settings.write_text(text, encoding="utf-8")
    dry = setup_gemini(repo, "--dry-run")
    assert "your repo-memory server entry" in dry and "/opt/rm/bin/repo-memory" in dry and "env, timeout" in dry, dry
    assert settings.read_text(encoding="utf-8") == text
    out = setup_gemini(repo)
    assert "your repo-memory server entry" in out, out
    entry = json.loads(settings.read_text(encoding="utf-8"))["mcpServers"]["repo-memory"]
    assert entry == {**MCP_ADD, "env": yours["env"], "timeout": 30000}, entry
    assert "your repo-memory server entry" not in setup_gemini(repo)  # nothing more to change
    removed = setup_gemini(repo, "--remove")
    assert "kept your own repo-memory server entry: put back as it was before setup" in removed, removed
    assert "took repo-memory out" not in removed, removed
    assert settings.read_text(encoding="utf-8") == text
    setup_gemini(repo)
    CliRunner().invoke(cli, ["--root", str(repo), "uninstall"], catch_exceptions=False)
    assert settings.read_text(encoding="utf-8") == text  # uninstall puts it back too


def test_remove_puts_back_your_own_entry_also_after_you_edited_it_since_setup_keeping_the_edit(repo: Path):
    """Setup owns only what it changed in your entry (how it starts): after you add a timeout to the entry and run
    setup again, `--remove` puts your command back and keeps the timeout, says so, and the note goes only then."""
    settings = repo / ".gemini/settings.json"
    settings.parent.mkdir()
    yours = {"command": "/opt/rm/bin/repo-memory", "args": ["serve"], "env": {"RM_DEBUG": "1"}}
    settings.write_text(json.dumps({"mcpServers": {"repo-memory": yours}}), encoding="utf-8")
    setup_gemini(repo)
    edited = json.loads(settings.read_text(encoding="utf-8"))
    edited["mcpServers"]["repo-memory"]["timeout"] = 30000
    settings.write_text(json.dumps(edited), encoding="utf-8")
    setup_gemini(repo)
    dry = setup_gemini(repo, "--remove", "--dry-run")
    assert "put back" in dry and "kept the repo-memory server entry" not in dry, dry
    removed = setup_gemini(repo, "--remove")
    assert "put back" in removed and "timeout" in removed and "not what setup writes" not in removed, removed
    entry = json.loads(settings.read_text(encoding="utf-8"))["mcpServers"]["repo-memory"]
    assert entry == {**yours, "timeout": 30000}, entry
    assert "repo-memory" in setup_gemini(repo, "--remove")  # nothing of setup's is left to take out: yours stays
    assert json.loads(settings.read_text(encoding="utf-8"))["mcpServers"]["repo-memory"] == {**yours, "timeout": 30000}


def test_remove_leaves_a_command_you_changed_since_setup_and_puts_back_only_what_setup_still_holds(repo: Path):
    """You changed the command setup wrote (your own binary again) but left setup's `trust`: `--remove` leaves your
    command and takes out only the `trust` setup added."""
    settings = repo / ".gemini/settings.json"
    settings.parent.mkdir()
    yours = {"command": "/opt/rm/bin/repo-memory", "args": ["serve"]}
    settings.write_text(json.dumps({"mcpServers": {"repo-memory": yours}}), encoding="utf-8")
    setup_gemini(repo)
    edited = json.loads(settings.read_text(encoding="utf-8"))
    edited["mcpServers"]["repo-memory"]["command"] = "/usr/local/bin/repo-memory"
    settings.write_text(json.dumps(edited), encoding="utf-8")
    setup_gemini(repo, "--remove")
    entry = json.loads(settings.read_text(encoding="utf-8"))["mcpServers"]["repo-memory"]
    assert entry == {**yours, "command": "/usr/local/bin/repo-memory"}, entry
    setup_gemini(repo)  # and setup once more with that edit in: the undo still gives back yours, now with your edit
    edited = json.loads(settings.read_text(encoding="utf-8"))
    edited["mcpServers"]["repo-memory"]["command"] = "/usr/bin/repo-memory"
    settings.write_text(json.dumps(edited), encoding="utf-8")
    setup_gemini(repo)
    setup_gemini(repo, "--remove")
    entry = json.loads(settings.read_text(encoding="utf-8"))["mcpServers"]["repo-memory"]
    assert entry == {**yours, "command": "/usr/bin/repo-memory"}, entry
