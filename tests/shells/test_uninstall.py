"""`repo-memory setup` then `repo-memory uninstall`, run as a person runs them (processes, a HOME of their own): what is
left is what there was before setup, byte for byte, and the real harness CLIs no longer list the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git, write_skill_file

TOOLS = Path(__file__).resolve().parents[2] / ".tools" / "node_modules" / ".bin"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository repo-memory was never set up in (init's diff driver, which uninstall takes out too, would
    differ from before)."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


def env(home: Path) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME", "CLAUDE_CONFIG_DIR")}
    return {**kept, "HOME": str(home), "PATH": f"{TOOLS}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def repo_memory(repo: Path, home: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, env=env(home), capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def listed(cli: str, repo: Path, home: Path) -> str:
    """What `<cli> mcp list` (the real Claude Code or Codex) prints in `repo`; the test skips without that CLI."""
    if not (TOOLS / cli).exists():
        pytest.skip(f"the {cli} CLI is not installed (./install.sh --test installs it into .tools/ with npm)")
    done = subprocess.run([str(TOOLS / cli), "mcp", "list"], cwd=repo, env=env(home), capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)
    return done.stdout + done.stderr


def state(repo: Path, home: Path) -> dict[str, bytes | None]:
    """Every file and folder setup may touch: the working tree, this clone's exclude, config and git hooks, and HOME
    (a folder maps to None)."""
    out: dict[str, bytes | None] = {}
    for base, name in ((repo, "repo"), (home, "~")):
        for path in base.rglob("*"):
            parts = path.relative_to(base).parts
            if base == repo and parts[0] == ".git" and (len(parts) < 2 or parts[1] not in ("info", "config", "hooks")):
                continue
            out[f"{name}/{path.relative_to(base).as_posix()}"] = None if path.is_dir() else path.read_bytes()
    return out


def changed(then: dict[str, bytes | None], now: dict[str, bytes | None]) -> list[str]:
    """One line per path that is not as it was: its bytes before and after (a folder is None, a missing path "absent")."""
    return [f"{k}: {then.get(k, 'absent')!r:.300} -> {now.get(k, 'absent')!r:.300}" for k in sorted(then.keys() | now.keys())
            if then.get(k, "absent") != now.get(k, "absent")]


def claude_json(projects: dict[str, object]) -> str:
    """~/.claude.json as Claude Code writes it (JSON.stringify with two spaces)."""
    return json.dumps({"numStartups": 3, "userID": "u", "projects": projects, "firstStartTime": "2026-12-01T10:00:00.000Z"}, indent=2)


@pytest.mark.parametrize("before", ["nothing", "their own files"])
def test_uninstall_team_after_setup_claude_code_trust_leaves_the_clone_and_home_as_they_were(repo: Path, tmp_path: Path, before: str):
    """uninstall left the folder trust `--trust` stored in ~/.claude.json and the line setup added to .git/info/exclude
    (and an empty .claude/): Claude Code went on trusting the folder, a later clone's .mcp.json servers included."""
    home = tmp_path / "home"
    home.mkdir()
    if before != "nothing":
        (home / ".claude.json").write_text(claude_json({"/elsewhere": {"allowedTools": [], "hasTrustDialogAccepted": True}}), encoding="utf-8")
        (repo / ".claude").mkdir()
        (repo / ".claude/settings.local.json").write_text('{\n  "permissions": {\n    "allow": [\n      "Bash(ls)"\n    ]\n  }\n}\n',
                                                           encoding="utf-8")
    then = state(repo, home)
    out = repo_memory(repo, home, "setup", "claude-code", "--trust")
    assert "git now ignores /.claude/settings.local.json" in out and "trusted" in out, out
    assert json.loads((home / ".claude.json").read_text(encoding="utf-8"))["projects"][str(repo)] == {"hasTrustDialogAccepted": True}
    out = repo_memory(repo, home, "uninstall", "--team")
    assert "left as they are" not in out, out
    assert changed(then, state(repo, home)) == [], out
    assert "repo-memory" not in listed("claude", repo, home)


def test_uninstall_keeps_the_trust_and_the_exclude_line_the_person_had_before_setup(repo: Path, tmp_path: Path):
    """What setup found in place is the person's: uninstall takes out only what setup added."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(claude_json({str(repo): {"allowedTools": [], "hasTrustDialogAccepted": True}}), encoding="utf-8")
    with (repo / ".git/info/exclude").open("a", encoding="utf-8") as out:
        out.write("/.claude/settings.local.json\n")
    then = state(repo, home)
    repo_memory(repo, home, "setup", "claude-code", "--trust")
    repo_memory(repo, home, "uninstall", "--team")
    assert changed(then, state(repo, home)) == []


def test_uninstall_puts_back_a_trust_answer_of_no_that_setup_trust_replaced(repo: Path, tmp_path: Path):
    """The person had answered Claude Code's trust dialog no (`hasTrustDialogAccepted: false`); setup --trust set it to
    true, and uninstall took the key out, as if they had never been asked."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(claude_json({str(repo): {"allowedTools": [], "hasTrustDialogAccepted": False}}), encoding="utf-8")
    then = state(repo, home)
    repo_memory(repo, home, "setup", "claude-code", "--trust")
    assert json.loads((home / ".claude.json").read_text(encoding="utf-8"))["projects"][str(repo)]["hasTrustDialogAccepted"] is True
    out = repo_memory(repo, home, "uninstall", "--team")
    assert "took back the trust" in out, out
    assert changed(then, state(repo, home)) == [], out


def test_setup_trust_run_again_and_uninstall_twice_take_back_the_trust_once(repo: Path, tmp_path: Path):
    """A second setup finds the folder trusted (by its own first run): uninstall still takes that trust back, and the
    trust the person gives after an uninstall is theirs."""
    home = tmp_path / "home"
    home.mkdir()
    then = state(repo, home)
    repo_memory(repo, home, "setup", "claude-code", "--trust")
    repo_memory(repo, home, "setup", "claude-code", "--trust")
    dry = repo_memory(repo, home, "uninstall", "--team", "--dry-run")
    assert "took back" in dry and "dry run" in dry and (home / ".claude.json").exists(), dry
    repo_memory(repo, home, "uninstall", "--team")
    assert changed(then, state(repo, home)) == []
    (home / ".claude.json").write_text(claude_json({str(repo): {"hasTrustDialogAccepted": True}}), encoding="utf-8")  # the person's
    theirs = state(repo, home)
    repo_memory(repo, home, "uninstall", "--team")
    assert changed(theirs, state(repo, home)) == []


def test_uninstall_global_team_after_setup_codex_trust_leaves_the_clone_and_codex_config_as_they_were(repo: Path, tmp_path: Path):
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex/config.toml").write_text('model = "gpt-5"  # mine\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n', encoding="utf-8")
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    then = state(repo, home)
    repo_memory(repo, home, "setup", "codex", "--trust")
    assert "[mcp_servers.repo-memory]" in (home / ".codex/config.toml").read_text(encoding="utf-8")
    out = repo_memory(repo, home, "uninstall", "--team", "--global")
    assert changed(then, state(repo, home)) == [], out
    assert "repo-memory" not in listed("codex", repo, home)


def test_uninstall_takes_back_only_the_trust_after_claude_code_wrote_its_own_state_for_the_folder(repo: Path, tmp_path: Path):
    """Claude Code, once run, keeps its own state in ~/.claude.json, the folder's entry included: uninstall takes out
    the trust setup stored and leaves the rest, so `claude` asks again whether to trust the folder."""
    home = tmp_path / "home"
    home.mkdir()
    repo_memory(repo, home, "setup", "claude-code", "--trust")
    git(repo, "add", ".mcp.json")
    git(repo, "commit", "-q", "-m", "repo-memory for the team")
    assert "Connected" in listed("claude", repo, home)
    theirs = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    out = repo_memory(repo, home, "uninstall")
    assert "kept .mcp.json: your team's files" in out, out
    now = json.loads((home / ".claude.json").read_text(encoding="utf-8"))
    assert "hasTrustDialogAccepted" not in now.get("projects", {}).get(str(repo), {}), now
    assert {k: v for k, v in now.items() if k != "projects"} == {k: v for k, v in theirs.items() if k != "projects"}
    listing = listed("claude", repo, home)  # the team's .mcp.json stays; without the trust and approval nothing starts it
    assert "repo-memory" in listing and "Pending approval" in listing, listing
    repo_memory(repo, home, "uninstall", "--team")
    listing = listed("claude", repo, home)
    assert "repo-memory" not in listing, listing


def test_uninstall_takes_out_the_exclude_lines_of_the_skill_copies_setup_made(repo: Path, tmp_path: Path):
    """setup copies each accepted skill into .claude/skills and makes git ignore each copy (a line in .git/info/exclude);
    uninstall deleted the copies and left the lines."""
    home = tmp_path / "home"
    home.mkdir()
    write_skill_file(repo, "release-checklist", "How to cut a release.")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a skill")
    then = state(repo, home)
    out = repo_memory(repo, home, "setup", "claude-code")
    assert "1 written" in out and "/.claude/skills/release-checklist/" in (repo / ".git/info/exclude").read_text(encoding="utf-8"), out
    out = repo_memory(repo, home, "uninstall", "--team")
    assert changed(then, state(repo, home)) == [], out


def test_uninstall_takes_out_the_exclude_line_of_a_copy_sync_removed_before(repo: Path, tmp_path: Path):
    """A skill setup copied was deleted later, and `sync` took its copy away but left its line in .git/info/exclude;
    uninstall took out only the lines of the copies it deleted itself, so that one stayed."""
    home = tmp_path / "home"
    home.mkdir()
    write_skill_file(repo, "deploy-app", "How to deploy the app.")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a skill")
    then = state(repo, home)
    repo_memory(repo, home, "setup", "claude-code")
    assert "/.claude/skills/deploy-app/" in (repo / ".git/info/exclude").read_text(encoding="utf-8")
    git(repo, "rm", "-rq", ".agents/skills/deploy-app")
    git(repo, "commit", "-q", "-m", "no more deploy-app")
    out = repo_memory(repo, home, "sync")
    assert "1 removed" in out and "/.claude/skills/deploy-app/" not in (repo / ".git/info/exclude").read_text(encoding="utf-8"), out
    out = repo_memory(repo, home, "uninstall", "--team")
    assert [line for line in changed(then, state(repo, home)) if not line.startswith("repo/.agents")] == [], out


def test_uninstall_takes_out_the_exclude_lines_an_older_sync_left_for_copies_already_gone(repo: Path, tmp_path: Path):
    """A clone where an older version's `sync` removed a copy and kept its line: uninstall takes that line out too."""
    home = tmp_path / "home"
    home.mkdir()
    then = state(repo, home)
    repo_memory(repo, home, "setup", "claude-code")
    with (repo / ".git/info/exclude").open("a", encoding="utf-8") as out:
        out.write("/.claude/skills/deploy-app/\n")  # as an older sync left it
    out = repo_memory(repo, home, "uninstall", "--team")
    assert changed(then, state(repo, home)) == [], out


def test_uninstall_global_after_setup_codex_in_a_home_without_codex_leaves_no_codex_folder(repo: Path, tmp_path: Path):
    """setup made ~/.codex/config.toml; uninstall --global took everything out of it and left the empty file (and
    ~/.codex) behind."""
    home = tmp_path / "home"
    home.mkdir()
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    then = state(repo, home)
    repo_memory(repo, home, "setup", "codex", "--trust")
    assert (home / ".codex/config.toml").is_file()
    out = repo_memory(repo, home, "uninstall", "--team", "--global")
    assert "removed the file, nothing else was in it" in out, out
    assert changed(then, state(repo, home)) == [], out
    assert "Commit" not in out, out  # nothing git holds was changed: .codex/hooks.json was setup's, never committed


@pytest.mark.parametrize("before", ["an empty config.toml", "an empty ~/.codex"])
def test_uninstall_global_keeps_the_empty_config_toml_and_codex_folder_the_person_had(repo: Path, tmp_path: Path, before: str):
    """uninstall --global deleted the person's own empty config.toml (and then ~/.codex), saying nothing else was in it:
    only a file (and a folder) setup made goes."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    if before == "an empty config.toml":
        (home / ".codex/config.toml").write_bytes(b"")
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    then = state(repo, home)
    repo_memory(repo, home, "setup", "codex", "--trust")
    out = repo_memory(repo, home, "uninstall", "--team", "--global")
    assert ("removed the file" in out) == (before == "an empty ~/.codex"), out  # the file is setup's there, the folder not
    assert ("kept the file, empty now: setup did not make it" in out) == (before == "an empty config.toml"), out
    assert changed(then, state(repo, home)) == [], out


@pytest.mark.parametrize("before", ["no .mcp.json", "a committed .mcp.json of the team's own"])
def test_plain_uninstall_takes_repo_memory_out_of_team_files_nobody_committed_with_it(repo: Path, tmp_path: Path, before: str):
    """Plain uninstall kept the .mcp.json and .codex/hooks.json setup had just written ("your team's files, teammates keep
    repo-memory") though no teammate had them: git held no copy with repo-memory in it."""
    home = tmp_path / "home"
    home.mkdir()
    if before != "no .mcp.json":
        (repo / ".mcp.json").write_text('{\n  "mcpServers": {\n    "docs": {"command": "docs-mcp"}\n  }\n}\n', encoding="utf-8")
        git(repo, "add", ".mcp.json")
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    then = state(repo, home)
    repo_memory(repo, home, "setup", "claude-code", "--trust")
    repo_memory(repo, home, "setup", "codex")
    out = repo_memory(repo, home, "uninstall", "--global")
    assert "kept" not in out and "took repo-memory out of .mcp.json, .codex/hooks.json too" in out and "Commit" not in out, out
    assert changed(then, state(repo, home)) == [], out


def test_plain_uninstall_takes_out_what_an_older_setup_wrote_by_path_into_an_uncommitted_team_file(repo: Path, tmp_path: Path):
    """An older setup wrote this install's path into .mcp.json and .codex/hooks.json: exactly what setup wrote, so it
    goes, as setup's by name does."""
    home = tmp_path / "home"
    home.mkdir()
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    then = state(repo, home)
    path = str(Path(sys.executable).parent / "repo-memory")  # what the repo-memory run below finds as its own
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"repo-memory": {"type": "stdio", "command": path, "args": ["serve"]}}}),
                                    encoding="utf-8")
    (repo / ".codex").mkdir()
    (repo / ".codex/hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"matcher": "", "hooks": [
        {"type": "command", "command": f"{path} hook stop", "timeout": 60}]}]}}), encoding="utf-8")
    out = repo_memory(repo, home, "uninstall")
    assert "kept" not in out and "took repo-memory out of .mcp.json, .codex/hooks.json too" in out, out
    assert changed(then, state(repo, home)) == [], out


@pytest.mark.parametrize("written", ['{"numStartups": 3, "projects": {"/elsewhere": {"hasTrustDialogAccepted": true}}}\n',
                                     '{"numStartups":3,"userID":"u"}'])
def test_setup_trust_keeps_a_claude_json_written_on_one_line_on_one_line_and_uninstall_gives_it_back(repo: Path, tmp_path: Path,
                                                                                                    written: str):
    """setup --trust laid a ~/.claude.json written on one line out afresh (one key a line), and uninstall left it so."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(written, encoding="utf-8")
    then = state(repo, home)
    repo_memory(repo, home, "setup", "claude-code", "--trust")
    text = (home / ".claude.json").read_text(encoding="utf-8")
    assert "\n" not in text.strip() and json.loads(text)["projects"][str(repo)] == {"hasTrustDialogAccepted": True}, text
    out = repo_memory(repo, home, "uninstall", "--team")
    assert changed(then, state(repo, home)) == [], out


HAND_WRITTEN = {  # team files a person wrote and has not committed; setup never ran
    "alone": {".mcp.json": '{"mcpServers": {"repo-memory": {"command": "uvx", "args": ["repo-memory==1.2", "serve"]}}}\n'},
    "beside other servers": {".mcp.json": '{\n  "mcpServers": {\n    "repo-memory": {"command": "uvx", "args": ["repo-memory", "serve"]},\n'
                                          '    "db": {"command": "dbsrv"}\n  }\n}\n'},
    "hooks of their own": {".claude/settings.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": '
                                                    '"uvx repo-memory hook stop"}]}]}}\n',
                           ".codex/hooks.json": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": '
                                                '"/opt/repo-memory/bin/repo-memory hook stop", "timeout": 30}]}]}}\n'}}


@pytest.mark.parametrize("case", sorted(HAND_WRITTEN))
def test_plain_uninstall_keeps_the_repo_memory_entries_a_person_wrote_in_team_files_nobody_committed(repo: Path, tmp_path: Path,
                                                                                                      case: str):
    """A plain uninstall counted every team file git does not hold as setup's: it deleted a .mcp.json the person wrote
    (their own `uvx` entry for repo-memory), or took that entry out beside their other servers, saying "setup wrote
    it", and git had no copy to give back; `setup … --remove` did so too. Only what setup writes, exactly, is setup's."""
    home = tmp_path / "home"
    home.mkdir()
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    for name, text in HAND_WRITTEN[case].items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    then = state(repo, home)
    removed = repo_memory(repo, home, "setup", "claude-code", "--remove") + repo_memory(repo, home, "setup", "codex", "--remove")
    assert changed(then, state(repo, home)) == [], removed  # `setup … --remove` took them out
    assert all(f"{repo / name}: kept" in removed for name in HAND_WRITTEN[case]) and "--remove --team` takes it out" in removed, removed
    dry = repo_memory(repo, home, "uninstall", "--dry-run")
    out = repo_memory(repo, home, "uninstall")
    assert changed(then, state(repo, home)) == [], out
    for said in (dry, out):
        assert "took repo-memory out" not in said and "would take" not in said and "setup wrote it" not in said, said
        assert all(f"{repo / name}: kept" in said for name in HAND_WRITTEN[case]), said
        assert "not what setup writes" in said and "uninstall --team" in said, said


def test_setup_remove_in_user_scope_leaves_nothing_of_setup_in_a_file_git_sees_again(repo: Path, tmp_path: Path):
    """`--scope user --remove` said "hooks, tool permission and approval removed" and took out the exclude line, but left
    the approval (`enabledMcpjsonServers`) the project setup wrote: `git status` showed the personal settings file."""
    home = tmp_path / "home"
    home.mkdir()
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    repo_memory(repo, home, "setup", "claude-code")
    git(repo, "add", ".mcp.json")
    git(repo, "commit", "-q", "-m", "repo-memory for the team")
    repo_memory(repo, home, "setup", "claude-code", "--scope", "user")
    out = repo_memory(repo, home, "setup", "claude-code", "--scope", "user", "--remove")
    assert "hooks, tool permission and approval removed" in out, out
    assert not (repo / ".claude/settings.local.json").exists(), out
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == "", out
    assert "settings.local.json" not in (repo / ".git/info/exclude").read_text(encoding="utf-8"), out


def test_setup_in_user_scope_promises_what_claude_mcp_list_shows_and_trust_makes_it_connected(repo: Path, tmp_path: Path):
    """`setup claude-code --scope user` once promised 'Pending approval' (only a project's .mcp.json server waits for
    that), then '✔ Connected'; Claude Code 2.1.337 checks a user-scope server in `claude mcp list` only in a folder the
    person trusts, and listed it as "Not checked (folder not trusted; run `claude` here)". Setup's check line says what the
    real listing shows, its note says how to trust the folder, and with --trust the listing says Connected."""
    home = tmp_path / "home"
    home.mkdir()
    out = repo_memory(repo, home, "setup", "claude-code", "--scope", "user")
    check = out.strip().splitlines()[-1]
    assert "Pending approval" not in out and check.startswith("Check it"), out
    listing = listed("claude", repo, home)
    assert "repo-memory" in listing, listing
    if "Not checked (folder not trusted" in listing:  # Claude Code 2.1.337 and later
        # the note names setup as it was run: a plain `setup claude-code --trust` would add a project server as well
        assert "Not checked" in check and "`repo-memory setup claude-code --scope user --trust`" in out, out
    else:
        assert "✔ Connected" in listing, listing
    out = repo_memory(repo, home, "setup", "claude-code", "--scope", "user", "--trust")
    assert "Not checked" not in out and "✔ Connected" in out.strip().splitlines()[-1], out
    assert "✔ Connected" in (listing := listed("claude", repo, home)), listing


@pytest.mark.parametrize("harness,name", [("claude-code", ".mcp.json"), ("codex", ".codex/hooks.json")])
def test_setup_remove_keeps_a_committed_team_file_as_uninstall_does_and_takes_it_out_with_team(repo: Path, tmp_path: Path,
                                                                                             harness: str, name: str):
    """`setup … --remove` deleted the team's committed .mcp.json (or .codex/hooks.json) while `uninstall` kept it: the
    two undo paths now agree, and --team takes it out for everyone."""
    home = tmp_path / "home"
    home.mkdir()
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    repo_memory(repo, home, "setup", harness)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", "repo-memory for the team")
    committed = (repo / name).read_bytes()
    out = repo_memory(repo, home, "setup", harness, "--remove")
    assert (repo / name).read_bytes() == committed and git(repo, "status", "--porcelain", "--untracked-files=all") == "", out
    assert (f"kept {name}: your team's files (teammates keep repo-memory); `repo-memory setup {harness} --remove --team` "
            "removes it there") in out, out
    out = repo_memory(repo, home, "setup", harness, "--remove", "--team")
    assert not (repo / name).exists(), out
    assert f"Commit the team files it changed (git add {name} && git commit) to detach repo-memory for everyone." in out, out


def test_uninstall_dry_run_says_of_the_exclude_line_setup_added_only_what_uninstall_does(repo: Path, tmp_path: Path):
    """The dry run said it removed the line setup added, then that it left that line "as it is" (no mark said setup
    added it: it read the line it had not removed), and that what is left in the personal file is the person's, when
    uninstall removes that file (it holds only setup's)."""
    home = tmp_path / "home"
    home.mkdir()
    repo_memory(repo, home, "setup", "claude-code")
    for said in (repo_memory(repo, home, "uninstall", "--dry-run"), repo_memory(repo, home, "uninstall")):
        assert "removed the line /.claude/settings.local.json that setup added" in said and "left as it is" not in said, said
        assert "what is left in that file is yours" not in said, said


@pytest.mark.parametrize("scope", ["project", "user"])
def test_setup_remove_keeps_the_approval_of_the_team_server_the_person_gave_themselves(repo: Path, tmp_path: Path, scope: str):
    """The person approved the team's .mcp.json server in Claude Code (`enabledMcpjsonServers` in their
    settings.local.json) before setup: `setup claude-code --remove` took their approval out with setup's entries, in
    either scope (a user-scope setup writes no approval at all). Only an approval setup wrote (its note says so) goes."""
    home = tmp_path / "home"
    home.mkdir()
    (repo / ".mcp.json").write_text('{\n  "mcpServers": {\n    "repo-memory": {\n      "type": "stdio",\n      "command": '
                                    '"repo-memory",\n      "args": [\n        "serve"\n      ]\n    }\n  }\n}\n', encoding="utf-8")
    git(repo, "add", ".mcp.json")
    git(repo, "commit", "-q", "-m", "team: repo-memory")
    (repo / ".claude").mkdir()
    theirs = '{\n  "enabledMcpjsonServers": [\n    "repo-memory"\n  ],\n  "permissions": {"allow": ["Bash(ls)"]}\n}\n'
    (repo / ".claude/settings.local.json").write_text(theirs, encoding="utf-8")
    then = state(repo, home)
    scoped = ("--scope", "user") if scope == "user" else ()
    repo_memory(repo, home, "setup", "claude-code", *scoped)
    out = repo_memory(repo, home, "setup", "claude-code", *scoped, "--remove")
    assert (repo / ".claude/settings.local.json").read_text(encoding="utf-8") == theirs, out
    assert "approval removed" not in out, out
    if scope == "project":  # a user-scope setup also changes Claude Code's own files in HOME (`claude mcp add`)
        assert changed(then, state(repo, home)) == [], out


def test_uninstall_says_which_skills_stay_kept_out_of_what_codex_and_claude_code_offer(repo: Path, tmp_path: Path):
    """A draft keeps its agents/openai.yaml (or disable-model-invocation) after uninstall: without repo-memory nobody
    takes it away on accept, so uninstall names the skills and how to let the harnesses list them again."""
    home = tmp_path / "home"
    home.mkdir()
    write_skill_file(repo, "deploy", "How we deploy.", extra="metadata:\n  status: draft\n")
    write_skill_file(repo, "notes", "My notes.", folder=".claude/skills", extra="metadata:\n  status: draft\n")
    repo_memory(repo, home, "sync")
    out = repo_memory(repo, home, "uninstall")
    assert ".agents/skills/deploy" in out and ".claude/skills/notes" in out and "repo-memory accept" in out, out
