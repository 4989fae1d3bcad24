"""Memory a team can live with in git: useful history, nothing machine-specific in shared files, a clean way out."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.errors import ConflictError, InvalidArgumentError, NotFoundError
from repo_memory.core.store import Store
from repo_memory.shells import hooks
from repo_memory.shells.cli import cli

from tests.conftest import conflicted, git, kept, write_skill_file
from tests.shells.conftest import cloned

SESSION = "5e1f0c2a-7b3d-4e8f-9a1b-2c3d4e5f6a7b"


def run(runner: CliRunner, repo: Path, *args: str) -> str:
    result = runner.invoke(cli, ["--root", str(repo), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def memory_commits(repo: Path) -> list[str]:
    return [s for s in git(repo, "log", "--format=%s").splitlines() if s.startswith("memory")]


def hook(event: str, repo: Path, **payload: object) -> dict:
    return hooks.handle(event, {"session_id": SESSION, "cwd": str(repo), "hook_event_name": event, **payload})


def with_teammate(repo: Path, tmp_path: Path) -> Path:
    """`repo` with its code and .agents/ layout committed and pushed to a bare origin, and a teammate's clone of it."""
    (repo / "app.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return cloned(repo, tmp_path)


def test_a_harness_session_lands_as_one_commit_at_its_end_not_one_per_tool_call(repo: Path):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    hook("session-start", repo, source="startup")
    for n in range(5):
        hook("post-tool", repo, tool_name="Bash", tool_input={"command": f"ls {n}"}, tool_response={"stdout": "ok", "stderr": ""})
        hook("stop", repo, stop_hook_active=False, last_assistant_message="done")  # a turn ends: no commit
    assert memory_commits(repo) == []
    hook("session-end", repo, reason="other")
    commits = memory_commits(repo)
    assert commits == [f"memory(experience): {SESSION}#1-6"], commits
    body = git(repo, "log", "-1", "--format=%B")
    assert f"Memory-Session: {SESSION}" in body
    quiet = "quiet-session"
    hooks.handle("session-start", {"session_id": quiet, "cwd": str(repo), "hook_event_name": "SessionStart"})
    hooks.handle("session-end", {"session_id": quiet, "cwd": str(repo), "hook_event_name": "SessionEnd", "reason": "other"})
    assert len(memory_commits(repo)) == 1 and not list((repo / ".agents/experience").glob(f"*/{quiet}.jsonl"))


def test_a_commit_of_several_sessions_names_each_in_its_trailers(repo: Path):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    first, second = Store(Config.load(repo), session="alpha-session"), Store(Config.load(repo), session="beta-session")
    first.write_skill("from-alpha", "Written in the alpha session.", "1. a", actor="human")
    second.write_skill("from-beta", "Written in the beta session.", "1. b", actor="human")
    second.flush()
    first.close()
    second.close()
    body = git(repo, "log", "--format=%B", "-n", "3")
    assert "Memory-Session: alpha-session" in body and "Memory-Session: beta-session" in body


def test_private_mode_keeps_memory_history_on_its_own_ref_and_never_touches_the_branch_or_index(repo: Path, runner: CliRunner):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    (repo / ".gitattributes").unlink()  # a repository repo-memory never set up before
    (repo / ".agents/repo-memory.toml").write_text('commit = "private"\n', encoding="utf-8")
    head_before, index_before = git(repo, "rev-parse", "HEAD"), (repo / ".git/index").read_bytes()
    run(runner, repo, "init")
    store = Store(Config.load(repo), session="private-session")
    store.write_skill("deploy", "Deploy with fabric.", "fab deploy", actor="human")
    store.remember("deployed with fabric")
    store.close()
    first = git(repo, "rev-parse", "refs/memory/main").strip()
    store = Store(Config.load(repo), session="private-session")
    store.write_skill("deploy", "Deploy with kubectl.", "kubectl apply", actor="human")
    store.close()
    assert git(repo, "rev-parse", "HEAD") == head_before and (repo / ".git/index").read_bytes() == index_before
    assert ".agents" not in git(repo, "status", "--porcelain") and not (repo / ".gitattributes").exists()
    assert "memory(skill): update deploy" in git(repo, "log", "--format=%s", "refs/memory/main")
    assert "deploy" in run(runner, repo, "history", "deploy")
    assert "fab deploy" in run(runner, repo, "history", "deploy", "--as-of", first)
    store = Store(Config.load(repo))
    hit = store.recall("deploy kubectl", kinds=["skill"]).hits[0]
    store.close()
    assert hit.committed  # committed means: in refs/memory/main


def test_shared_files_hold_no_path_of_this_machine(repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    run(runner, repo, "init")
    run(runner, repo, "setup", "claude-code", "--shared")
    run(runner, repo, "setup", "codex")
    run(runner, repo, "loop", "hooks", "install")
    machine = [str(Path(sys.executable).parent), str(Path(sys.executable).resolve().parent), str(tmp_path)]
    shared = [repo / ".mcp.json", repo / ".claude/settings.json", repo / ".codex/hooks.json", repo / ".gitattributes",
              repo / ".git/hooks/post-commit", repo / ".git/hooks/pre-push"]
    for path in shared:
        text = path.read_text(encoding="utf-8")
        assert not [m for m in machine if m in text], f"{path.name} holds a path of this machine"
    assert "repo-memory" in (repo / ".git/config").read_text(encoding="utf-8")  # the diff driver: per clone, by name too
    assert json.loads((repo / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["repo-memory"]["command"] == "repo-memory"


def test_init_commits_its_scaffolding_so_gitattributes_is_never_left_untracked(tmp_path: Path, runner: CliRunner):
    repo = tmp_path / "fresh"  # init never ran in it (the `repo` fixture's scaffolding, written before, is not this run's)
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    out = run(runner, repo, "init")
    assert "committed" in out and ".gitattributes" in git(repo, "show", "--name-only", "--format=", "HEAD")
    body = git(repo, "log", "-1", "--format=%B")  # it holds no session's records: no session (made up), no harness, named
    assert "Memory-Session" not in body and "Memory-Harness" not in body, body
    assert git(repo, "status", "--porcelain").strip() == ""
    (repo / ".agents/repo-memory.toml").write_text('commit = "off"\n', encoding="utf-8")
    (repo / ".gitattributes").unlink()
    assert "Commit these with your code: git add" in run(runner, repo, "init")


def test_loop_status_in_a_teammates_clone_says_how_to_accept_a_loop_and_when_other_clones_runs_show(
        repo: Path, runner: CliRunner, tmp_path: Path):
    """In a clone where the team's loop is not accepted, `loop status` said "Start one: repo-memory loop run NAME",
    a run that would end unverifiable; and it never said that a run another clone has under way shows only later."""
    (repo / ".agents/loops/fix-it.md").write_text("---\nname: fix-it\nstatus: active\ngoal: Make check pass.\nverify:\n"
                                                 "  - {level: 4, run: 'true'}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n"
                                                 "---\n", encoding="utf-8")
    teammate = with_teammate(repo, tmp_path)
    out = run(runner, teammate, "loop", "status")
    assert "repo-memory loop show fix-it" in out and "repo-memory loop accept fix-it" in out and "repo-memory loop run" not in out, out
    assert "other clones" in out and "pull" in out, out
    run(runner, repo, "loop", "accept", "fix-it", "--sha", hashlib.sha256((repo / ".agents/loops/fix-it.md").read_bytes()).hexdigest())
    assert "repo-memory loop run fix-it --agent" in run(runner, repo, "loop", "status")  # accepted here: it can run


def test_setup_in_a_teammates_clone_says_the_diff_driver_init_registers_is_missing(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                                     monkeypatch: pytest.MonkeyPatch):
    """A clone gets .gitattributes, not the diff driver `init` registers in .git/config: `git log -p` showed raw JSON
    lines there, and only doctor said so; setup, the command a teammate runs, said nothing."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    run(runner, repo, "init")
    teammate = with_teammate(repo, tmp_path)
    for harness in ("codex", "claude-code"):
        out = run(runner, teammate, "setup", harness)
        assert "diff driver" in out and "repo-memory init" in out, out
    run(runner, teammate, "init")
    assert "diff driver" not in run(runner, teammate, "setup", "codex")
    # a clone an older init set up has the diff driver, not the skills' merge driver: doctor names just that one
    git(teammate, "config", "--unset", "merge.repo-memory-skill.driver")
    found = [f for f in json.loads(run(runner, teammate, "doctor", "--json")) if f["path"] == ".git/config"]
    assert len(found) == 1 and "merge driver for skills" in found[0]["message"] and "diff driver" not in found[0]["message"], found
    # the repository init ran in, by a version before the diff cache: "a clone does not copy .git/config" was no reason there
    git(repo, "config", "--unset", "diff.repo-memory.cachetextconv")
    found = [f for f in json.loads(run(runner, repo, "doctor", "--json")) if f["path"] == ".git/config"]
    assert len(found) == 1 and "cache" in found[0]["message"] and "older init" in found[0]["message"], found


def test_git_log_p_still_works_when_repo_memory_is_not_installed(repo: Path, runner: CliRunner):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    run(runner, repo, "init")
    store = Store(Config.load(repo), session="logged")
    store.remember("a record to diff")
    store.close()
    bare_path = "/usr/bin:/bin"  # git, a shell, and no repo-memory anywhere
    proc = subprocess.run(["git", "log", "-p", "--", ".agents/experience"], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, "PATH": bare_path})
    assert proc.returncode == 0, proc.stderr
    assert "a record to diff" in proc.stdout


def test_uninstall_is_local_lists_each_change_once_and_team_removes_the_shared_files(repo: Path, runner: CliRunner, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    write_skill_file(repo, "kept", "A skill that outlives the tool.")
    hook_before = "#!/bin/sh\necho mine\n"
    (repo / ".git/hooks/post-commit").write_text(hook_before, encoding="utf-8")
    run(runner, repo, "init")
    run(runner, repo, "setup", "codex", "--trust")
    run(runner, repo, "setup", "claude-code", "--shared")
    run(runner, repo, "setup", "claude-code")  # the hooks move back to settings.local.json; settings.json is gone
    (repo / ".claude/settings.json").write_text(json.dumps({"permissions": {"allow": ["mcp__repo-memory"]}}), encoding="utf-8")
    git(repo, "add", ".mcp.json", ".codex/hooks.json", ".claude/settings.json")  # the team's now: teammates get repo-memory
    git(repo, "commit", "-q", "-m", "repo-memory for the team")
    run(runner, repo, "loop", "hooks", "install")
    team = {name: (repo / name).read_text(encoding="utf-8") for name in (".mcp.json", ".codex/hooks.json", ".claude/settings.json")}
    local_before = (repo / ".claude/settings.local.json").read_text(encoding="utf-8")

    dry = run(runner, repo, "uninstall", "--dry-run").splitlines()
    assert len(dry) == len(set(dry)), dry
    for expected in ("settings.local.json: hooks, tool permission and approval removed", "mirror .claude/skills/kept",
                     "git hook post-commit", "git hook pre-push", "diff driver", "removed the trust of repo-memory's hooks"):
        assert any(expected in line for line in dry), (expected, dry)
    assert not any(".mcp.json:" in line or "hooks.json:" in line for line in dry if not line.startswith("kept"))  # team files stay
    assert (repo / ".claude/settings.local.json").read_text(encoding="utf-8") == local_before and (repo / ".claude/skills/kept").exists()
    assert "textconv" in (repo / ".git/config").read_text(encoding="utf-8")

    out = run(runner, repo, "uninstall")
    assert ("detached" in out or "The rest is gone from this clone" in out) and "kept .mcp.json, .claude/settings.json, .codex/hooks.json" in out and "--team" in out
    assert {name: (repo / name).read_text(encoding="utf-8") for name in team} == team
    assert not (repo / ".claude/settings.local.json").exists()  # it held only ours
    assert not (repo / ".claude/skills/kept").exists()
    assert (repo / ".git/hooks/post-commit").read_text(encoding="utf-8") == hook_before and not (repo / ".git/hooks/pre-push").exists()
    assert "repo-memory" not in (repo / ".git/config").read_text(encoding="utf-8")
    assert "hooks.state" not in (tmp_path / "home/.codex/config.toml").read_text(encoding="utf-8")

    out = run(runner, repo, "uninstall", "--team", "--global")
    assert not (repo / ".mcp.json").exists() and not (repo / ".codex/hooks.json").exists() and not (repo / ".claude/settings.json").exists()
    assert "Commit the team files it changed (git add .mcp.json .claude/settings.json .codex/hooks.json && git commit)" in out, out
    assert not (tmp_path / "home/.codex").exists()  # setup made it; nothing else was in it
    assert (repo / ".agents/skills/kept/SKILL.md").is_file()


def test_a_copied_checkout_continues_a_shared_session_in_a_log_of_its_own(repo: Path, tmp_path: Path):
    """The same session id written in two clones (a copied checkout) never repeats ids once the logs meet in git."""
    import shutil

    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    first = Store(Config.load(repo), session=SESSION)
    first.remember("written before the copy")
    first.close()
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)  # .git and its repo-memory state come along
    for where, text in ((repo, "original after the copy"), (copy, "copy after the copy")):
        store = Store(Config.load(where), session=SESSION)
        store.remember(text)
        store.close()
    git(repo, "pull", "-q", "--no-rebase", "--no-edit", str(copy), "main")
    store = Store(Config.load(repo))
    store.refresh()
    sessions = {s[0] for s in store.sessions()}
    ids = [r.id for s in sessions for r in store.read(f"session:{s}").records]
    texts = {r.record["text"] for s in sessions for r in store.read(f"session:{s}").records}
    store.close()
    assert len(ids) == len(set(ids)) == 3 and texts == {"written before the copy", "original after the copy", "copy after the copy"}
    assert sessions == {SESSION, kept(copy, SESSION)}  # the copy went on in <session>.<its clone id>


def exchange(mine: Path, theirs: Path) -> None:
    """The teammate pushes, `mine` pulls (a merge) and pushes, the teammate pulls: both clones hold the same history."""
    git(theirs, "push", "-q", "origin", "main")
    git(mine, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    git(mine, "push", "-q", "origin", "main")
    git(theirs, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")


def text_of(clone: Path, ref: str) -> str:
    store = Store(Config.load(clone))
    try:
        store.refresh()
        return str(store.read(ref).records[0].record["text"])
    finally:
        store.close()


def test_a_session_name_both_clones_chose_before_syncing_keeps_every_id_on_its_own_record_after_the_merge(
        repo: Path, runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Both people ran `log add -s release-notes` (or `log import --claude-memory`, or a job with a fixed
    REPO_MEMORY_SESSION) before pulling: each was told release-notes#1, merge=union joined the two logs, and
    release-notes#1 then read back whichever record the merged file held first, in every clone; a citation of it
    silently named the teammate's record."""
    teammate = with_teammate(repo, tmp_path)
    alice = run(runner, repo, "log", "add", "-s", "release-notes", "Alice: tag releases on Tuesdays").strip()
    bob = run(runner, teammate, "log", "add", "-s", "release-notes", "Bob: freeze the branch on Fridays").strip()
    monkeypatch.setenv("REPO_MEMORY_SESSION", "nightly-ci")  # a job's fixed session name, in both clones
    for clone, who in ((repo, "Alice"), (teammate, "Bob")):
        store = Store(Config.load(clone))
        store.remember(f"{who}'s nightly run was green")
        store.close()
    monkeypatch.delenv("REPO_MEMORY_SESSION")
    exchange(repo, teammate)
    assert alice != bob
    for clone in (repo, teammate):
        assert text_of(clone, alice).startswith("Alice") and text_of(clone, bob).startswith("Bob")
    assert "Tuesdays" in run(runner, repo, "log", "tail", "release-notes")  # the name a person typed finds their log
    assert "Fridays" in run(runner, teammate, "log", "tail", "release-notes")
    store = Store(Config.load(teammate))
    store.refresh()
    nightly = [r.record["text"] for r in store.read("session:nightly-ci").records]
    assert nightly == ["Bob's nightly run was green"] and store.forked() == [] and store.verify() == []
    store.close()


def test_a_union_merged_log_with_two_chains_stays_readable_and_doctor_explains_it(repo: Path, runner: CliRunner):
    """Logs written before clone ids existed can still meet as two chains in one file; every record stays readable."""
    from repo_memory.formats.experience import canonical, seal

    def records(prev: str | None, seqs: range, who: str) -> list[dict]:
        out = []
        for seq in seqs:
            record = seal({"id": f"old#{seq}", "session": "old", "seq": seq, "ts": f"2026-11-0{seq}T10:00:00.000000Z", "kind": "note",
                           "text": f"{who} {seq}", "refs": [], "source": {"actor": "agent"}, "prev": prev})
            prev = record["sha256"]
            out.append(record)
        return out

    common = records(None, range(1, 4), "common")
    mine, theirs = records(common[-1]["sha256"], range(4, 6), "mine"), records(common[-1]["sha256"], range(4, 7), "theirs")
    log = repo / ".agents/experience/2026-11/old.jsonl"
    log.parent.mkdir(parents=True)
    log.write_bytes(b"".join(canonical(r) + b"\n" for r in [*common, *mine, *theirs]))  # what merge=union leaves
    git(repo, "add", str(log))
    git(repo, "commit", "-q", "-m", "merge")  # and the merge commits it
    store = Store(Config.load(repo))
    store.refresh()
    item = store.read("old#1-6")
    assert [v.record["text"] for v in item.records] == ["common 1", "common 2", "common 3", "mine 4", "theirs 4", "mine 5", "theirs 5", "theirs 6"]
    assert all(v.verified for v in item.records), [(v.id, v.problem) for v in item.records if not v.verified]
    ids = [v.id for v in item.records]
    assert len(ids) == len(set(ids)) and f"old#4~{theirs[0]['sha256'][:8]}" in ids
    assert store.read(f"old#4~{theirs[0]['sha256'][:8]}").records[0].record["text"] == "theirs 4"
    assert store.verify() == []
    store.remember("per old#4, ship on Tuesdays", refs=["old#4"], session="notes")
    store.close()
    out = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "two chains" in out and "old#4, old#5" in out and f"{kept(repo, 'notes')}#1" in out, out  # the ids, and who cites one
    assert "Nothing to fix" not in out and "no new forks" not in out, out  # it had claimed no fork could arise any more


def test_doctor_names_memory_that_is_not_committed_and_how_to_land_it(repo: Path, runner: CliRunner):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    write_skill_file(repo, "by-hand", "A skill a person wrote and did not commit.")
    store = Store(Config.load(repo), session="pending-session")
    store.remember("kept durably, committed at the session's end")
    store.close(commit=False)  # as a hook leaves it: pending until the session ends
    out = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "written but not committed yet" in out and "doctor --fix" in out
    assert "changed but not committed: .agents/skills/by-hand/SKILL.md" in out and "git add .agents" in out
    (repo / ".agents/README.md").write_text("our notes\n", encoding="utf-8")  # a second folder, holding the first
    out = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "git add .agents && git commit" in out and ".agents .agents/skills" not in out
    runner.invoke(cli, ["--root", str(repo), "doctor", "--fix"])
    assert "pending-session" in git(repo, "log", "-1", "--name-only", "--format=")


def test_a_hook_registered_twice_records_each_event_once(repo: Path):
    """Two registrations (say settings.json and settings.local.json) run together with the same payload."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    payload = json.dumps({"session_id": SESSION, "cwd": str(repo), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                          "tool_use_id": "toolu_01", "tool_input": {"command": "make test"}, "tool_response": {"stdout": "ok"}})
    end = json.dumps({"session_id": SESSION, "cwd": str(repo), "hook_event_name": "SessionEnd", "reason": "other"})
    for event, body in (("post-tool", payload), ("session-end", end)):
        procs = [subprocess.Popen([sys.executable, "-m", "repo_memory", "hook", event], cwd=repo, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True) for _ in range(2)]
        for proc in procs:
            proc.communicate(body, timeout=60)
    logged = [json.loads(line) for path in repo.glob(".agents/experience/*/*.jsonl") for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["kind"] for r in logged] == ["tool", "observation"], logged
    assert memory_commits(repo) == [f"memory(experience): {SESSION}#1-2"]


@pytest.mark.parametrize("server_ends_first", [True, False])
def test_a_session_written_by_hooks_and_by_the_server_lands_as_one_commit_whichever_ends_first(repo: Path, server_ends_first: bool):
    from tests.shells.stdio_server import StdioServer

    git(repo, "commit", "-q", "--allow-empty", "-m", "init")

    def hook_process(event: str, **payload: object) -> None:
        body = json.dumps({"session_id": SESSION, "cwd": str(repo), "hook_event_name": event, **payload})
        subprocess.run([sys.executable, "-m", "repo_memory", "hook", event], cwd=repo, input=body, text=True, capture_output=True,
                       timeout=60, check=True)

    server = StdioServer(repo, env={"CLAUDE_CODE_SESSION_ID": SESSION})  # Claude Code names its session to the server
    server.initialize()
    hook_process("post-tool", tool_name="Bash", tool_use_id="toolu_1", tool_input={"command": "make"}, tool_response="ok")
    assert not server.call("remember", {"text": "The build needs make 4.", "kind": "decision"}).get("isError")
    hook_process("post-tool", tool_name="Bash", tool_use_id="toolu_2", tool_input={"command": "make test"}, tool_response="ok")
    if server_ends_first:
        server.close_input()
        assert server.wait(20) == 0
    hook_process("session-end", reason="other")
    if not server_ends_first:
        server.close_input()
        assert server.wait(20) == 0
    time.sleep(1)  # a finisher or a late commit would land by now
    assert memory_commits(repo) == [f"memory(experience): {SESSION}#1-4"]
    assert git(repo, "status", "--porcelain", "--untracked-files=no", "--", ".agents/experience").strip() == ""


def test_the_users_stash_and_pull_rebase_never_take_or_trip_over_what_a_running_server_writes(repo: Path, tmp_path: Path):
    """A session log the server committed (a checkpoint, an ended session resumed) is never appended to again: had it
    been, every later record made the tracked file dirty, so the user's `git stash` took acknowledged records away (and
    the server then wrote other records under their ids) and `git pull --rebase` refused to run."""
    from tests.shells.stdio_server import StdioServer

    teammate = with_teammate(repo, tmp_path)

    server = StdioServer(repo)
    try:
        server.initialize()
        first = server.call("remember", {"text": "the cache is warmed by the deploy job"})["structuredContent"]["ids"]
        server.call("checkpoint", {"summary": "how the cache is warmed", "covers": first})
        assert git(repo, "status", "--porcelain") == ""  # the checkpoint committed the session
        server.call("remember", {"text": "redis eviction is allkeys-lru"})
        (repo / "app.py").write_text("x = 2\n", encoding="utf-8")  # the user's own work in progress
        git(repo, "stash")
        server.call("remember", {"text": "memcached was dropped in 2024"})
        git(repo, "stash", "pop")  # failed: the stashed log and the server's later line were both changes to one file
        assert (repo / "app.py").read_text(encoding="utf-8") == "x = 2\n"

        (teammate / "README").write_text("teammate's change\n", encoding="utf-8")
        git(teammate, "add", "README")
        git(teammate, "commit", "-q", "-m", "teammate")
        git(teammate, "push", "-q", "origin", "main")
        git(repo, "commit", "-q", "-am", "my change")
        server.call("remember", {"text": "the queue is drained before deploys"})
        git(repo, "pull", "-q", "--rebase", "origin", "main")  # refused: "You have unstaged changes"

        hits = server.call("recall", {"query": "cache redis memcached queue deploy", "limit": 10})["structuredContent"]["hits"]
        texts = {h["id"]: h["snippet"].replace("**", "") for h in hits}
        assert len(texts) == 5 and {"redis eviction is allkeys-lru", "memcached was dropped in 2024",
                                    "the queue is drained before deploys"} <= set(texts.values())
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()
    session = first[0].split("#")[0]
    logs = sorted((repo / ".agents/experience").rglob(f"{session}*.jsonl"), key=lambda p: int(p.stem.partition("+")[2] or 1))
    ids = [json.loads(line)["id"] for log in logs for line in log.read_text(encoding="utf-8").splitlines()]
    assert ids == [f"{session}#{n}" for n in range(1, 6)]  # no id written twice, none lost
    assert [log.name for log in logs] == [f"{session}.jsonl", f"{session}+2.jsonl"]
    assert git(repo, "status", "--porcelain") == ""  # the session's end committed the rest
    assert memory_commits(repo)[0] == f"memory(experience): {session}#3-5"  # what the commit adds, in the session's next file
    result = subprocess.run([sys.executable, "-m", "repo_memory", "verify"], cwd=repo, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_session_that_goes_on_after_a_branch_switch_never_writes_an_id_twice_and_merges_back_as_one(repo: Path):
    """The user switches to a branch that lacks the session's committed log while the session goes on, in the server
    and in a hook's own process. Had its ids started again at #1, the merge of the two branches put two different
    records under each id into one log."""
    from tests.shells.stdio_server import StdioServer

    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    git(repo, "checkout", "-q", "-b", "feature")

    def hook_process(event: str, **payload: object) -> None:
        body = json.dumps({"session_id": SESSION, "cwd": str(repo), "hook_event_name": event, **payload})
        subprocess.run([sys.executable, "-m", "repo_memory", "hook", event], cwd=repo, input=body, text=True, capture_output=True,
                       timeout=60, check=True)

    server = StdioServer(repo, env={"CLAUDE_CODE_SESSION_ID": SESSION})
    try:
        server.initialize()
        first = server.call("remember", {"text": "the feature flag lives in settings.toml"})["structuredContent"]["ids"]
        server.call("checkpoint", {"summary": "where the feature flag lives", "covers": first})
        assert git(repo, "status", "--porcelain") == ""  # committed on feature
        git(repo, "checkout", "-q", "main")  # main lacks the session's log: git removes it from the working tree
        assert not list((repo / ".agents/experience").rglob(f"{SESSION}*.jsonl"))
        written = server.call("remember", {"text": "main pins the parser to 2.1"})["structuredContent"]["ids"]
        hook_process("post-tool", tool_name="Bash", tool_use_id="toolu_1", tool_input={"command": "make"}, tool_response="ok")
        server.close_input()
        assert server.wait(30) == 0
        hook_process("session-end", reason="other")
    finally:
        if server.wait(0) is None:
            server.kill()
    assert written == [f"{SESSION}#3"]  # the session's third record, though this branch holds neither of the first two
    assert git(repo, "status", "--porcelain") == ""  # the session's end committed the rest on main
    assert memory_commits(repo)[0] == f"memory(experience): {SESSION}#3-5"
    verify = subprocess.run([sys.executable, "-m", "repo_memory", "verify"], cwd=repo, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr  # a log whose earlier part is on another branch is whole
    read = server_read(repo, f"{SESSION}#3")
    assert read["verified"], read

    git(repo, "merge", "-q", "--no-edit", "feature")
    logs = sorted((repo / ".agents/experience").rglob(f"{SESSION}*.jsonl"), key=lambda p: int(p.stem.partition("+")[2] or 1))
    ids = [json.loads(line)["id"] for log in logs for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(ids) == len(set(ids)) == 5 and ids == [f"{SESSION}#{n}" for n in range(1, 6)], ids
    verify = subprocess.run([sys.executable, "-m", "repo_memory", "verify"], cwd=repo, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def server_read(repo: Path, ref: str) -> dict:
    from tests.shells.stdio_server import StdioServer

    server = StdioServer(repo)
    try:
        server.initialize()
        result = server.call("read", {"ref": ref})
        server.close_input()
        server.wait(30)
    finally:
        if server.wait(0) is None:
            server.kill()
    assert not result.get("isError"), result
    return result["structuredContent"]["records"][0]


def test_a_checkpoint_deferred_by_a_merge_lands_once_the_merge_is_committed_and_answers_say_so(repo: Path):
    """A checkpoint during a conflicted merge is deferred; its retry flushed documents only, so the session's records
    waited for its end, and every later answer still said "a merge is in progress"."""
    from tests.shells.stdio_server import StdioServer

    (repo / "a.txt").write_text("base\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    conflicted(repo, lambda: (repo / "a.txt").write_text("topic\n", encoding="utf-8"),
               lambda: (repo / "a.txt").write_text("main\n", encoding="utf-8"))

    server = StdioServer(repo, env={"REPO_MEMORY_SESSION": SESSION})
    try:
        server.initialize()
        answer = server.call("remember", {"text": "a.txt conflicts between main and topic"})["structuredContent"]
        assert answer["commit"].startswith("deferred: a merge is in progress") and "next checkpoint" in answer["commit"], answer
        answer = server.call("checkpoint", {"summary": "the conflict", "covers": [f"{SESSION}#1"]})["structuredContent"]
        assert answer["commit"].startswith("deferred: a merge is in progress"), answer
        answer = server.call("remember", {"text": "topic's version wins"})["structuredContent"]
        assert answer["commit"].startswith("deferred: a merge is in progress"), answer
        (repo / "a.txt").write_text("topic\n", encoding="utf-8")
        git(repo, "add", "a.txt")
        git(repo, "commit", "-q", "--no-edit")
        answer = server.call("remember", {"text": "merged"})["structuredContent"]  # before the retry: no merge to name
        # no merge to name; whether it says the retry's 10 s or the checkpoint depends on whether the retry, which the
        # refresh after HEAD moved may run at once, has already begun: either way the commit lands below
        assert answer["commit"].startswith("pending: committed") and "merge" not in answer["commit"], answer
        deadline = time.monotonic() + 20  # the retry comes 5 commit windows (10 s) after the deferral
        while time.monotonic() < deadline and not memory_commits(repo):
            time.sleep(0.2)
        assert memory_commits(repo) == [f"memory(experience): {SESSION}#1-4"]
        answer = server.call("remember", {"text": "the merge took topic's a.txt"})["structuredContent"]
        assert not answer["commit"].startswith("deferred"), answer
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()


def test_doctor_never_advises_committing_memory_that_was_deleted(repo: Path, runner: CliRunner):
    """After `rm -rf .agents && repo-memory init`, doctor said to `git add .agents && git commit`: the deletion of every
    skill and log. It says they were deleted and how to bring them back."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    store = Store(Config.load(repo), session="kept")
    store.write_skill("build-notes", "How the build runs.", "Run make all.", actor="human")
    store.remember("the build needs make 4")
    store.close()
    assert git(repo, "status", "--porcelain") == ""
    import shutil

    shutil.rmtree(repo / ".agents")
    run(runner, repo, "init")
    out = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "git add .agents" not in out, out
    assert "deleted" in out and "git restore .agents" in out, out


def test_doctor_names_a_memory_file_left_in_a_merge_conflict_and_the_step_that_settles_it(repo: Path, runner: CliRunner, tmp_path: Path):
    """A skill one clone deleted and the other edited, after `git pull`: doctor called it 'deleted from the working tree'
    and advised `git restore`, which git refuses for an unmerged path; during a rebase, a skill both edited was
    'changed but not committed' with `git add … && git commit`, and its fix pointed at the schema."""
    write_skill_file(repo, "old-release", "How we released before.", "1. Tag by hand.")
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build.")
    teammate = with_teammate(repo, tmp_path)
    git(repo, "rm", "-q", "-r", ".agents/skills/old-release")
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build with make.")
    git(repo, "commit", "-q", "-am", "alice: old-release goes, deploy with make")
    git(repo, "push", "-q", "origin", "main")
    write_skill_file(teammate, "old-release", "How we released before.", "1. Tag by hand, then sign.")
    write_skill_file(teammate, "deploy", "How we deploy.", "1. Build with bazel.")
    git(teammate, "commit", "-q", "-am", "bob: sign the tags, deploy with bazel")
    old, deploy = ".agents/skills/old-release/SKILL.md", ".agents/skills/deploy/SKILL.md"
    for how, finish in (("--no-rebase", "git commit"), ("--rebase", "git rebase --continue")):
        assert subprocess.run(["git", "pull", "-q", how, "origin", "main"], cwd=teammate, capture_output=True).returncode != 0
        out = runner.invoke(cli, ["--root", str(teammate), "doctor"]).output
        assert "git restore" not in out and "&& git commit" not in out and "skill.schema.json" not in out, out
        assert f"{old}: unresolved merge conflict (deleted by " in out, out
        assert f"Keep it with `git add {old}`" in out and f"drop it with `git rm {old}`" in out, out
        assert finish in out and deploy in out, out
        git(teammate, "merge", "--abort") if how == "--no-rebase" else git(teammate, "rebase", "--abort")


def test_a_skill_left_in_a_merge_conflict_is_not_served_or_rewritten_until_it_is_resolved(repo: Path, runner: CliRunner):
    """The conflicted SKILL.md had been served as the skill, markers and all, and skill_write rewrote it."""
    from tests.shells.stdio_server import StdioServer

    write_skill_file(repo, "deploy-steps", "How we deploy.", "Run the deploy job.")
    write_skill_file(repo, "git-help", "Resolving conflicts.", "A conflict looks like this:\n\n```\n<<<<<<< HEAD\nours\n=======\n"
                     "theirs\n>>>>>>> topic\n```\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skills")
    conflicted(repo, lambda: write_skill_file(repo, "deploy-steps", "How we deploy.", "Run the deploy job, then the smoke tests."),
               lambda: write_skill_file(repo, "deploy-steps", "How we deploy.", "Run the deploy job twice."))
    server = StdioServer(repo)
    try:
        server.initialize()
        read = server.call("read", {"ref": "skill:deploy-steps"})
        assert read.get("isError") and "unresolved merge conflict" in read["content"][0]["text"], read
        assert "again with skill_write" not in read["content"][0]["text"], read  # refused until the merge is settled
        hits = server.call("recall", {"query": "deploy job"})["structuredContent"]["hits"]
        assert "skill:deploy-steps" not in [h["id"] for h in hits]
        written = server.call("skill_write", {"name": "deploy-steps", "tags": ["ops"]})
        assert written.get("isError"), written
        assert not server.call("read", {"ref": "skill:git-help"}).get("isError")  # a conflict shown in fenced code is text
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()
    assert "<<<<<<<" in (repo / ".agents/skills/deploy-steps/SKILL.md").read_text(encoding="utf-8")
    assert "ops" not in (repo / ".agents/skills/deploy-steps/SKILL.md").read_text(encoding="utf-8")
    out = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "unresolved merge conflict" in out, out


def both_drafted(repo: Path) -> Path:
    """Both clones' agents updated one draft: the merge stops with conflict markers in its SKILL.md, under `status: draft`."""
    draft = "metadata:\n  status: draft\n  origin: agent\n"
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build.", extra=draft)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory(skill): add deploy")
    conflicted(repo, lambda: write_skill_file(repo, "deploy", "How we deploy.", "1. Build.\n2. Ship with make.", extra=draft),
               lambda: write_skill_file(repo, "deploy", "How we deploy.", "1. Build.\n2. Ship with deploy.sh.", extra=draft))
    return repo / ".agents/skills/deploy/SKILL.md"


def test_accept_and_reject_of_a_skill_left_in_a_merge_conflict_say_to_settle_the_merge_first(repo: Path, runner: CliRunner):
    """`accept NAME --sha 0000000` said 'already active' with exit 0 (the sha never checked) and `reject` that it 'is
    active, not a draft': the conflicted file was parsed as active. Both now say the merge is to settle, as `read`
    does; also once the markers are gone but git still holds the file unmerged."""
    path = both_drafted(repo)
    before = path.read_bytes()
    store = Store(Config.load(repo))
    current = store.fingerprint("deploy")
    store.close()
    for args in (("accept", "deploy", "--sha", "0000000"), ("accept", "deploy", "--sha", current[:12]), ("reject", "deploy")):
        result = runner.invoke(cli, ["--root", str(repo), *args])
        assert result.exit_code == 1, (args, result.output)
        assert "unresolved merge conflict" in result.output and "finish the merge or rebase" in result.output, (args, result.output)
        assert "already active" not in result.output and "not a draft" not in result.output, (args, result.output)
    assert path.read_bytes() == before
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build.\n2. Ship with make.", extra="metadata:\n  status: draft\n")
    for args in (("accept", "deploy", "--sha", "0000000"), ("reject", "deploy")):  # resolved by hand, not `git add`ed yet
        result = runner.invoke(cli, ["--root", str(repo), *args])
        assert result.exit_code == 1 and "unmerged" in result.output and "finish the merge" in result.output, (args, result.output)
    assert path.is_file()


def test_an_agents_skill_write_during_a_merge_conflict_says_to_settle_the_merge_not_to_discard_changes(repo: Path):
    """It said the file had changes 'repo-memory did not write (a person's edit in progress?) … Commit or discard them
    first': during a merge, discarding drops a teammate's version. `read` of the same skill explained the conflict."""
    path = both_drafted(repo)
    before = path.read_bytes()
    store = Store(Config.load(repo))
    try:
        with pytest.raises(ConflictError, match="unresolved merge conflict") as refused:
            store.write_skill("deploy", None, "1. Build.\n2. Ship.", actor="agent")
        assert "Commit or discard" not in str(refused.value) and "finish the merge or rebase" in str(refused.value)
        assert path.read_bytes() == before
        write_skill_file(repo, "deploy", "How we deploy.", "1. Build.\n2. Ship with make.", extra="metadata:\n  status: draft\n")
        with pytest.raises(ConflictError, match="unmerged") as refused:  # resolved by hand, not `git add`ed yet
            store.write_skill("deploy", None, "1. Build.\n2. Ship.", actor="agent")
        assert "Commit or discard" not in str(refused.value) and "finish the merge" in str(refused.value), refused.value
    finally:
        store.close()


def test_accept_with_a_sha_checks_it_even_when_the_skill_is_already_active(repo: Path, runner: CliRunner):
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build.")  # no status: active
    result = runner.invoke(cli, ["--root", str(repo), "accept", "deploy", "--sha", "0000000"])
    assert result.exit_code == 1 and "changed since the version you reviewed" in result.output, result.output


def test_accept_and_reject_of_an_invalid_skill_say_what_is_wrong(repo: Path, runner: CliRunner):
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build.", extra="metadata:\n  tags: 3\n")  # active, and invalid
    for args in (("accept", "deploy", "--sha", "0000000"), ("reject", "deploy")):
        result = runner.invoke(cli, ["--root", str(repo), *args])
        assert result.exit_code == 1 and "is invalid" in result.output and "put it in quotes" in result.output, (args, result.output)
        assert "already active" not in result.output and "not a draft" not in result.output, (args, result.output)


def test_right_after_a_pull_read_describes_the_bytes_it_returns_not_the_index_row_of_the_old_ones(repo: Path, tmp_path: Path):
    """Until the watcher indexed what `git pull` brought (about 0.1 s), `read` served a skill's new bytes with the old
    row's status, flags and validity: a skill the teammate retired as active, conflict markers as an active skill."""
    active = "metadata:\n  status: active\n  origin: human\n"
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build.", extra=active)
    write_skill_file(repo, "old-release", "How we released before.", "1. Tag by hand.", extra=active)
    teammate = with_teammate(repo, tmp_path)
    write_skill_file(repo, "old-release", "How we released before.", "1. Tag by hand.", extra=active.replace("active", "deprecated", 1))
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build with make.", extra=active)
    git(repo, "commit", "-q", "-am", "alice: old-release retired, deploy with make")
    git(repo, "push", "-q", "origin", "main")
    write_skill_file(teammate, "deploy", "How we deploy.", "1. Build with bazel.", extra=active)
    git(teammate, "commit", "-q", "-am", "bob: deploy with bazel")
    store = Store(Config.load(teammate))  # a server's, indexed before the pull
    try:
        store.refresh()
        assert store.read("skill:old-release").status == "active" and store.read("skill:deploy").status == "active"
        assert subprocess.run(["git", "pull", "-q", "--no-rebase", "origin", "main"], cwd=teammate, capture_output=True).returncode != 0
        retired = store.read("skill:old-release")  # at once: nothing indexed the pull yet
        assert retired.status == "deprecated" and "status: deprecated" in retired.content, (retired.status, retired.content)
        with pytest.raises(NotFoundError, match="unresolved merge conflict"):
            store.read("skill:deploy")
    finally:
        store.close()


def test_deleting_the_clones_state_folder_never_makes_its_own_records_look_forged(repo: Path):
    """`.git/repo-memory` is derived state a person may delete; it also held the clone's id, so a new id (and key) made
    every record the clone had not committed yet 'written outside repo-memory': never committed, and doctor said to
    remove the lines."""
    import shutil
    import signal

    from tests.shells.stdio_server import StdioServer

    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    server = StdioServer(repo, env={"REPO_MEMORY_SESSION": "pinning"})
    server.initialize()
    first = server.call("remember", {"text": "decided to pin numpy below 2"})["structuredContent"]["ids"]
    shutil.rmtree(repo / ".git/repo-memory")
    server.kill(signal.SIGKILL)  # the harness closed hard
    server.wait(10)
    server = StdioServer(repo, env={"REPO_MEMORY_SESSION": "pinning"})
    try:
        server.initialize()
        second = server.call("remember", {"text": "numpy 1.26 it is"})["structuredContent"]["ids"]
        done = server.call("checkpoint", {"summary": "numpy pinned", "covers": [*first, *second]})["structuredContent"]
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()
    assert second == [f"{kept(repo, 'pinning')}#2"] and done["commit"] == "up to date", done  # one session, committed
    assert git(repo, "status", "--porcelain") == ""
    verify = subprocess.run([sys.executable, "-m", "repo_memory", "verify"], cwd=repo, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_teammates_records_a_pull_brings_are_trusted_while_its_merge_waits_for_a_conflict(repo: Path, tmp_path: Path):
    """`git pull` stopped by a conflict in code: verify and doctor called the teammate's records, committed on the other
    side, 'written outside repo-memory' and said to remove the lines."""
    from tests.shells.stdio_server import StdioServer

    teammate = with_teammate(repo, tmp_path)
    server = StdioServer(teammate, env={"REPO_MEMORY_SESSION": "teammate-session"})
    try:
        server.initialize()
        ids = server.call("remember", {"text": "the API rate limit is 100 per minute"})["structuredContent"]["ids"]
        server.call("checkpoint", {"summary": "rate limits", "covers": ids})
        server.close_input()
        assert server.wait(30) == 0
    finally:
        if server.wait(0) is None:
            server.kill()
    (teammate / "app.py").write_text("x = 2\n", encoding="utf-8")
    git(teammate, "commit", "-q", "-am", "theirs")
    git(teammate, "push", "-q", "origin", "main")
    (repo / "app.py").write_text("x = 3\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "mine")
    assert subprocess.run(["git", "pull", "-q", "--no-rebase", "origin", "main"], cwd=repo, capture_output=True).returncode != 0
    assert (repo / ".git/MERGE_HEAD").exists()
    verify = subprocess.run([sys.executable, "-m", "repo_memory", "verify"], cwd=repo, capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    doctor = subprocess.run([sys.executable, "-m", "repo_memory", "doctor"], cwd=repo, capture_output=True, text=True)
    assert "written outside" not in doctor.stdout + doctor.stderr, doctor.stdout
    # Git writes object ids there. Any other word named nothing to trust, yet a reflog step crashed verify (gitpython
    # cannot rev-parse `HEAD@{yesterday}`) and a ref name trusted whatever its branch holds; now they count for nothing.
    for word in ("HEAD@{yesterday}", "origin/main"):
        (repo / ".git/MERGE_HEAD").write_text(word + "\n", encoding="ascii")
        verify = subprocess.run([sys.executable, "-m", "repo_memory", "verify"], cwd=repo, capture_output=True, text=True)
        assert "Traceback" not in verify.stderr and verify.returncode == 1, (word, verify.stdout + verify.stderr)
        assert f"{kept(teammate, 'teammate-session')}#1: written outside" in verify.stdout, (word, verify.stdout)


def test_a_teammates_record_a_pull_just_brought_can_be_cited_at_once(repo: Path, tmp_path: Path):
    """For 0.2-0.4 s after `git pull`, until the watcher indexed the pulled log, remember(refs=…) and checkpoint(covers=…)
    refused the teammate's record: "does not exist", though its file was on disk."""
    teammate = with_teammate(repo, tmp_path)
    mine = Store(Config.load(repo))  # a server's, indexed before the pull
    mine.refresh()
    theirs = Store(Config.load(teammate))
    cited = theirs.remember("the secret rotation is monthly", kind="decision")[0]["id"]
    theirs.close()
    git(teammate, "push", "-q", "origin", "main")
    git(repo, "pull", "-q", "--no-rebase", "origin", "main")
    try:
        noted = mine.remember("building on the rotation decision", refs=[cited])[0]  # at once: nothing indexed the pull
        summary = mine.checkpoint("rotation settled", [cited, noted["id"]])
    finally:
        mine.close()
    assert noted["refs"] == [cited] and summary["covers"] == [cited, noted["id"]]


def test_a_checkpoint_says_up_to_date_though_another_window_on_the_checkout_has_records_pending(repo: Path):
    """Two harness windows on one checkout: the second's checkpoint committed its session and answered "pending",
    because the first window's record was."""
    from tests.shells.stdio_server import StdioServer

    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    one, two = StdioServer(repo, env={"REPO_MEMORY_SESSION": "one"}), StdioServer(repo, env={"REPO_MEMORY_SESSION": "two"})
    try:
        one.initialize()
        two.initialize()
        one.call("remember", {"text": "window one's note"})
        two.call("remember", {"text": "window two's note"})
        answer = two.call("checkpoint", {"summary": "two's work", "covers": [f"{kept(repo, 'two')}#1"]})["structuredContent"]
        assert memory_commits(repo) == [f"memory(experience): {kept(repo, 'two')}#1-2"] and answer["commit"] == "up to date", answer
        answer = one.call("remember", {"text": "window one again"})["structuredContent"]
        assert answer["commit"].startswith("pending"), answer  # one's records are pending
        for server in (one, two):
            server.close_input()
            assert server.wait(30) == 0
    finally:
        for server in (one, two):
            if server.wait(0) is None:
                server.kill()


def test_doctor_right_after_a_pull_names_the_ids_the_union_merge_gave_two_records(repo: Path, runner: CliRunner, tmp_path: Path):
    """Both clones wrote a harness's session before syncing (or an older release did) and `git pull` union-merged the
    two logs: doctor said "All good: index matches the files", judging the logs by an index that lacked what the pull
    brought, and named the forked ids only after some other command had indexed the logs."""
    teammate = with_teammate(repo, tmp_path)
    run(runner, teammate, "init")  # the diff driver: nothing else for doctor to say
    run(runner, repo, "log", "add", "-s", SESSION, "Alice: tag releases on Tuesdays")
    run(runner, teammate, "log", "add", "-s", SESSION, "Bob: freeze the branch on Fridays")
    git(repo, "push", "-q", "origin", "main")
    git(teammate, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    out = runner.invoke(cli, ["--root", str(teammate), "doctor"]).output
    assert "two chains" in out and f"{SESSION}#1" in out, out
    assert "All good" not in out, out


def test_a_record_a_person_edited_before_its_commit_holds_its_log_back_says_so_once_and_says_what_works(repo: Path):
    """A server was killed with a record pending and a person fixed a typo in it. Then every later `log add` to the
    session printed an id and exited 0 while its record was never committed, with "not committing …" on stderr two or
    three times; doctor said `doctor --fix` commits them (it did not) and to take the change out with `git diff`,
    which shows nothing of an untracked log."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    script = ("import json, sys; from repo_memory.config import Config; from repo_memory.core.store import Store; "
              "s = Store(Config.load(sys.argv[1])); print(json.dumps(s.remember('deploy uses teh blue pool', session='pend')[0])); "
              "s.close(commit=False)")  # a process that ends with its record pending, as a killed server does
    first = json.loads(subprocess.run([sys.executable, "-c", script, str(repo)], capture_output=True, text=True, check=True).stdout)
    log = next((repo / ".agents/experience").rglob(f"{first['session']}.jsonl"))
    rel = log.relative_to(repo).as_posix()
    log.write_text(log.read_text(encoding="utf-8").replace("teh", "the"), encoding="utf-8")  # the person's fix

    def cli_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True)

    added = cli_run("log", "add", "second note", "-s", "pend")
    second = added.stdout.strip()
    assert added.returncode == 0 and second == f"{first['session']}#2", added.stderr
    assert rel not in git(repo, "ls-files")
    warned = added.stderr
    assert f"{second} is written but not committed" in warned and f"line 1 ({first['id']})" in warned, warned
    assert warned.count(rel) == 1 and warned.endswith("\n"), warned  # said once, whole
    doctor = cli_run("doctor", "--fix").stdout
    assert "commits them now" not in doctor and "git diff" not in doctor, doctor
    assert f"line 1 of {rel}" in doctor and "git does not hold" in doctor and f"git add {rel}" in doctor, doctor
    git(repo, "add", rel)  # what doctor says keeps the person's edit
    git(repo, "commit", "-q", "-m", "fix a typo in a memory")
    third = cli_run("log", "add", "third note", "-s", "pend")
    assert third.returncode == 0 and "not committed" not in third.stderr, third.stderr
    assert "third note" in git(repo, "show", "HEAD"), git(repo, "log", "--stat", "-2")


def test_doctor_in_private_mode_says_the_memory_history_is_this_clones_own_and_how_a_team_shares_memory(
        repo: Path, runner: CliRunner):
    """Each clone's refs/memory/<branch> starts a history of its own: a teammate's cannot be pushed to the same ref,
    fetched over it or merged, so nothing brings their records in. doctor says so, not just "All good"."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    (repo / ".agents/repo-memory.toml").write_text('commit = "private"\n', encoding="utf-8")
    run(runner, repo, "init")
    run(runner, repo, "log", "add", "a private note about otters")
    said = json.loads(run(runner, repo, "doctor", "--json"))
    private = [f for f in said if f["path"] == "refs/memory/"]
    assert private and "this clone's own" in private[0]["message"], said
    assert 'commit = "auto"' in private[0]["fix"]
    (repo / ".agents/repo-memory.toml").write_text('commit = "auto"\n', encoding="utf-8")
    assert not [f for f in json.loads(run(runner, repo, "doctor", "--json")) if f["path"] == "refs/memory/"]


def test_a_teammates_plain_setup_leaves_the_teams_committed_hooks_and_copies_none_of_them(repo: Path, runner: CliRunner,
                                                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The team committed `setup claude-code --shared`; a teammate's plain `setup claude-code` took the hooks and the tool
    permission out of the tracked .claude/settings.json (deleting it: a `git commit -a` detached repo-memory for the
    whole team) and moved them to settings.local.json. Now the team's file is left as git holds it, and the personal
    file gets the approval only: Claude Code runs the hooks of both files, so a copy there would record every call twice."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    run(runner, repo, "init")
    run(runner, repo, "setup", "claude-code")
    personal_before = (repo / ".claude/settings.local.json").read_text(encoding="utf-8")  # this person's hooks, by path
    run(runner, repo, "setup", "claude-code", "--shared")
    teammate = with_teammate(repo, tmp_path)
    (teammate / ".claude/settings.local.json").write_text(personal_before, encoding="utf-8")  # set up before the team did
    run(runner, teammate, "init")

    out = run(runner, teammate, "setup", "claude-code")
    assert git(teammate, "status", "--porcelain", "--", ".claude/settings.json") == "", out
    assert "settings.json: left as it is" in out and "the team's" in out, out
    assert out.startswith("hooks: none written here (the team's .claude/settings.json holds them)"), out  # not a kind it wrote
    local = json.loads((teammate / ".claude/settings.local.json").read_text(encoding="utf-8"))
    assert "hooks" not in local and "permissions" not in local, local  # one file, never both
    assert local["enabledMcpjsonServers"] == ["repo-memory"]
    assert "already up to date" in run(runner, teammate, "setup", "claude-code")  # a re-run changes nothing

    out = run(runner, teammate, "setup", "claude-code", "--remove")  # the undo leaves the team's file too
    assert git(teammate, "status", "--porcelain", "--", ".claude/settings.json") == "", out


def test_two_servers_creating_one_skill_at_once_make_one_creator_and_tell_the_other_to_read_it_first(repo: Path):
    """Both answered success: one `created: true`, the other `created: false` for a skill it never read, its write over
    the first; the file (and the commit) held the second's words while the first agent held a sha and an accept line
    for content that no longer existed, and nobody was told. Or the other was told of 'a person's edit in progress' to
    commit or discard: the first write was listed for its commit only after the lock was let go."""
    from tests.shells.stdio_server import StdioServer

    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    env = {"REPO_MEMORY_COMMIT_WINDOW_SECONDS": "60"}  # one window: neither write is committed before the other lands
    servers, names, won = [StdioServer(repo, env), StdioServer(repo, env)], [f"shared-skill-{n}" for n in range(8)], {}
    try:
        for server in servers:
            server.initialize()
        for name in names:  # several races: the order in which the two land differs from one to the next
            for way, server in zip("AB", servers):
                server.send("tools/call", {"name": "skill_write", "arguments": {
                    "name": name, "description": f"Deploy the {way} way; use when deploying", "body": f"1. The {way} way",
                    "new": True}})  # the skills of all eight names say the same: not refused as near-duplicates
            answers = [server.answer(60)["result"] for server in servers]
            wins = [a["structuredContent"] for a in answers if not a.get("isError")]
            told = [a["content"][0]["text"] for a in answers if a.get("isError")]
            assert len(wins) == 1 and wins[0]["created"] is True, answers
            assert len(told) == 1 and "another session" in told[0] and "read it" in told[0], told
            won[name] = wins[0]["sha256"]
        for server in servers:
            server.close_input()
            assert server.wait(30) == 0
    finally:
        for server in servers:
            if server.wait(0) is None:
                server.kill()
    for name in names:
        held = git(repo, "show", f"HEAD:.agents/skills/{name}/SKILL.md")
        assert hashlib.sha256(held.encode()).hexdigest() == won[name]
        history = git(repo, "log", "-p", "--format=%s", "--", f".agents/skills/{name}")
        assert ("The A way" in history) != ("The B way" in history), history  # the loser's words were never written


def test_an_agents_update_of_a_version_another_session_wrote_and_no_commit_holds_waits_for_a_read(repo: Path):
    """The ordinary path stays open: a session updates what it wrote itself, or what it read, without a word."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    config = Config.load(repo, env={**os.environ, "REPO_MEMORY_COMMIT_WINDOW_SECONDS": "60"})
    first, second = Store(config, session="first-session"), Store(config, session="second-session")
    try:
        first.write_skill("deploy", "How we deploy; use when shipping.", "1. Build.", actor="agent")
        first.write_skill("deploy", None, "1. Build.\n2. Ship.", actor="agent")  # its own version: no read needed
        with pytest.raises(ConflictError, match="another session") as refused:
            second.write_skill("deploy", None, "1. Build it my way.", actor="agent")
        assert "skill:deploy" in str(refused.value) and "read it" in str(refused.value)
        assert "2. Ship." in (repo / ".agents/skills/deploy/SKILL.md").read_text(encoding="utf-8")
        second.read("skill:deploy")
        assert second.write_skill("deploy", None, "1. Build.\n2. Ship.\n3. Tag.", actor="agent").created is False
        with pytest.raises(ConflictError, match="another session"):  # and now the first has not seen the second's
            first.write_skill("deploy", None, "1. Build.", actor="agent")
        first.flush()  # a commit holding the second's version is no reading of it: git keeping it is no one seeing it
        with pytest.raises(ConflictError, match="changed since this session last read") as refused:
            first.write_skill("deploy", None, "1. Build.", actor="agent")
        assert "as commit" in str(refused.value), refused.value
        assert "3. Tag." in (repo / ".agents/skills/deploy/SKILL.md").read_text(encoding="utf-8")
        first.read("skill:deploy")
        assert first.write_skill("deploy", None, "1. Build.", actor="agent").created is False
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("served", [True, False])
def test_a_skill_this_servers_own_hook_redrafted_after_the_agents_edit_is_seen_by_its_next_update(repo: Path, served: bool):
    """The agent read skill:deploy, changed it with its Edit tool (the server's hook_post_tool made it a draft, not yet
    committed), then set its tags with skill_write: refused as "written by another session (or a person)". The hooks a
    server answers itself (`hooks: mcp`) are its own session's: the version its redraft leaves is one the session saw.
    A hook process cannot tell the server, so the refusal there names the agent's own file-tool edit too."""
    path = write_skill_file(repo, "deploy", "How we deploy; use when shipping.", "1. run deploy",
                            extra="metadata:\n  status: active\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skills")
    store = Store(Config.load(repo, env={**os.environ, "REPO_MEMORY_COMMIT_WINDOW_SECONDS": "60"}), session=SESSION)
    try:
        store.read("skill:deploy")
        call = {"session_id": SESSION, "cwd": str(repo), "tool_name": "Edit", "tool_use_id": "e1",
                "tool_input": {"file_path": str(path), "old_string": "1. run", "new_string": "1. run --prod"}}
        answer = hooks.run if served else (lambda _store, event, payload: hooks.handle(event, payload))
        answer(store, "pre-tool", {**call, "hook_event_name": "PreToolUse"})
        path.write_text(path.read_text(encoding="utf-8").replace("1. run", "1. run --prod"), encoding="utf-8")
        told = answer(store, "post-tool", {**call, "hook_event_name": "PostToolUse", "tool_response": {}})
        assert "draft" in json.dumps(told), told
        if served:
            assert store.write_skill("deploy", None, None, tags=["deploy", "prod"], actor="agent").created is False
            said = path.read_text(encoding="utf-8")
            assert "run --prod" in said and "prod" in said.split("---")[1], said
        else:
            with pytest.raises(ConflictError, match="another session") as refused:
                store.write_skill("deploy", None, None, tags=["ship"], actor="agent")
            assert "file tools" in str(refused.value), refused.value
    finally:
        store.close()


@pytest.mark.parametrize("mode", ["off", "stage"])
def test_an_invalid_skill_no_commit_holds_can_be_written_again_by_the_agent_it_is_refused_to(repo: Path, mode: str):
    """With commits off (or staged), a SKILL.md broken by hand and not committed: read said "is invalid … or write it
    again with skill_write", skill_write said "read it first": a loop. An invalid version is no other session's write
    (skill_write never writes one), so it does not stop an update; a person's edit in commit = auto is still refused."""
    (repo / ".agents").mkdir(exist_ok=True)
    (repo / ".agents/repo-memory.toml").write_text(f'commit = "{mode}"\n', encoding="utf-8")
    config = Config.load(repo)
    Store(config, session="first").write_skill("rel-check", "How to cut a release", "1. Tag.", actor="agent")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the person commits memory with code")
    path = repo / ".agents/skills/rel-check/SKILL.md"
    path.write_text(path.read_text(encoding="utf-8").replace("description: ", "description: [unclosed "), encoding="utf-8")
    store = Store(config, session="second")
    try:
        with pytest.raises(NotFoundError, match="write it again with skill_write"):
            store.read("skill:rel-check")
        with pytest.raises(InvalidArgumentError, match="description and body"):  # no field of it to change alone
            store.write_skill("rel-check", None, None, tags=["release"], actor="agent")
        assert store.write_skill("rel-check", "How to cut a release", "1. Tag.", actor="agent").created is False
        assert "[unclosed" not in path.read_text(encoding="utf-8") and store.read("skill:rel-check").status == "draft"
    finally:
        store.close()


@pytest.mark.parametrize("command", ["ls -l {p}", "stat {p} >/dev/null", "test -f {p}", "git log --oneline -- {p}", "cat {p}"])
def test_a_shell_call_that_only_names_a_skill_another_session_changed_does_not_count_as_seeing_it(repo: Path, command: str):
    """Session A read skill:deploy, session B rewrote it (commit = off: no commit holds B's version), then A's shell call
    named SKILL.md without changing it, its server answering the hooks (`hooks: mcp`). What the call did not change is
    not a version A's session saw: its next update is refused until it reads B's, as with no call in between."""
    (repo / ".agents").mkdir(exist_ok=True)
    (repo / ".agents/repo-memory.toml").write_text('commit = "off"\n', encoding="utf-8")
    path = write_skill_file(repo, "deploy", "How we deploy; use when shipping.", "1. run it",
                            extra="metadata:\n  status: active\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skills")
    config = Config.load(repo)
    first, second = Store(config, session="sA"), Store(config, session="sB")
    try:
        first.read("skill:deploy")
        second.read("skill:deploy")
        second.write_skill("deploy", None, "1. run it\n2. warm the cache (B's step)", actor="agent")
        shell = command.format(p=path.relative_to(repo).as_posix())
        call = {"session_id": "sA", "cwd": str(repo), "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": shell}}
        hooks.run(first, "pre-tool", {**call, "hook_event_name": "PreToolUse"})
        subprocess.run(["bash", "-c", shell], cwd=repo, capture_output=True, check=True)
        hooks.run(first, "post-tool", {**call, "hook_event_name": "PostToolUse", "tool_response": {"stdout": ""}})
        with pytest.raises(ConflictError, match="changed since this session last read"):
            first.write_skill("deploy", None, "1. run it with --fast (A's step)", actor="agent")
        assert "B's step" in path.read_text(encoding="utf-8")
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("mode", ["off", "stage"])
def test_a_persons_half_typed_skill_no_commit_holds_is_not_replaced_by_an_agent_that_did_not_read_it(repo: Path, mode: str):
    """The agent read skill:deploy; then a person, mid-edit, left its description's quote open and added a step (no
    commit holds it: commits off or staged). The agent's whole skill_write would replace what the person typed unseen:
    it is refused until the agent reads it; read answers that it is invalid, and then the write goes ahead."""
    (repo / ".agents").mkdir(exist_ok=True)
    (repo / ".agents/repo-memory.toml").write_text(f'commit = "{mode}"\n', encoding="utf-8")
    path = write_skill_file(repo, "deploy", "How we deploy.", "1. run it", extra="metadata:\n  status: active\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "skills")
    store = Store(Config.load(repo), session="sA")
    try:
        store.read("skill:deploy")
        text = path.read_text(encoding="utf-8").replace('"How we deploy."', '"How we deploy, with the canary', 1)
        path.write_text(text + "2. PERSON'S STEP: watch the canary\n", encoding="utf-8")
        with pytest.raises(ConflictError, match="changed since this session last read"):
            store.write_skill("deploy", "How we deploy", "1. run it\n2. the agent's step", actor="agent")
        assert "PERSON'S STEP" in path.read_text(encoding="utf-8")
        with pytest.raises(NotFoundError, match="invalid"):
            store.read("skill:deploy")
        assert store.write_skill("deploy", "How we deploy", "1. run it\n2. the agent's step", actor="agent").created is False
    finally:
        store.close()
