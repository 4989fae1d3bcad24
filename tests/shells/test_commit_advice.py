"""What a person is told when memory cannot be committed as usual: a deferred commit, `commit = "stage"`, no git identity."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from repo_memory.shells.cli import cli

from tests.conftest import configured, git


def invoke(repo: Path, *args: str) -> Result:
    result = CliRunner().invoke(cli, ["--root", str(repo), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def committed(repo: Path) -> Path:
    """A repository with one commit of the person's, set up by `repo-memory init`."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("hi\n", encoding="utf-8")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "init")
    invoke(repo, "init")
    return repo


def failing_signer(repo: Path) -> None:
    """commit.gpgSign on, with a signing program that fails (no usable key)."""
    program = repo.parent / "gpg-fails"
    program.write_text("#!/bin/sh\necho 'gpg: signing failed: No secret key' >&2\nexit 2\n", encoding="utf-8")
    program.chmod(0o755)
    git(repo, "config", "commit.gpgSign", "true")
    git(repo, "config", "gpg.program", str(program))


def pending_finding(repo: Path) -> str:
    """doctor's finding (and fix) about memory written but not committed."""
    out = invoke(repo, "doctor", "--fix").output
    return next(line + "\n" + nxt for line, nxt in zip(out.splitlines(), out.splitlines()[1:]) if "not committed yet" in line)


def test_a_cli_write_whose_commit_signing_fails_says_so_on_stderr_with_the_way_out(tmp_path: Path):
    repo = committed(tmp_path / "repo")
    failing_signer(repo)
    head = git(repo, "rev-parse", "HEAD")
    made = invoke(repo, "skill", "new", "deploy", "-d", "How to deploy; use when deploying", "--body", "1. make deploy")
    assert made.stdout.startswith("Created .agents/skills/deploy/SKILL.md"), made.output
    assert "not committed yet" in made.stderr and "signing failed" in made.stderr, made.stderr
    assert "git config repo-memory.sign never" in made.stderr, made.stderr
    added = invoke(repo, "log", "add", "a decision", "-s", "ops")
    assert "not committed yet" in added.stderr and "git config repo-memory.sign never" in added.stderr, added.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    finding = pending_finding(repo)  # --fix cannot commit while signing fails: its fix does not say it does
    assert "git config repo-memory.sign never" in finding and "doctor --fix` commits them now" not in finding, finding
    git(repo, "config", "repo-memory.sign", "never")
    assert "not committed yet" not in invoke(repo, "doctor", "--fix").output  # the way out it names works
    assert git(repo, "rev-parse", "HEAD") != head


def test_a_cli_write_on_a_detached_head_says_to_check_out_a_branch(tmp_path: Path):
    repo = committed(tmp_path / "repo")
    git(repo, "checkout", "-q", "--detach")
    added = invoke(repo, "log", "add", "a note", "-s", "ops")
    assert "not committed yet" in added.stderr and "HEAD is detached" in added.stderr, added.stderr
    assert "git switch" in added.stderr, added.stderr
    finding = pending_finding(repo)
    assert "git switch" in finding and "doctor --fix` commits them now" not in finding, finding


def test_a_cli_write_that_commits_says_nothing_on_stderr(tmp_path: Path):
    repo = committed(tmp_path / "repo")
    assert invoke(repo, "log", "add", "a note", "-s", "ops").stderr == ""


def test_in_stage_mode_memory_staged_for_the_persons_commit_is_no_alarm(tmp_path: Path):
    repo = configured(tmp_path / "repo", 'commit = "stage"\n', "memory is staged here")
    invoke(repo, "init")
    git(repo, "add", ".agents", ".gitattributes")  # what init says to commit with your code
    git(repo, "commit", "-q", "-m", "repo-memory set up")
    invoke(repo, "log", "add", "a note", "-s", "ops")
    out = invoke(repo, "doctor").output
    assert "warning" not in out and "never committed" not in out and "--fix" not in out, out
    assert "staged for your next commit" in out, out


def test_memory_written_while_commit_is_off_is_the_persons_to_commit_not_a_lost_note(tmp_path: Path):
    """A log written while `commit = "off"` was reported, once commits were back on, as "never committed (the note
    that they await a commit was lost)", and while commits were off doctor said nothing of it at all."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".agents").mkdir()
    (repo / ".agents/repo-memory.toml").write_text('commit = "off"\n', encoding="utf-8")
    invoke(repo, "init")
    git(repo, "add", ".agents", ".gitattributes")
    git(repo, "commit", "-q", "-m", "repo-memory set up, commits off")
    invoke(repo, "log", "add", "a note", "-s", "ops")
    for commit in ("off", "auto"):  # while off, and once a person turned commits back on
        (repo / ".agents/repo-memory.toml").write_text(f'commit = "{commit}"\n', encoding="utf-8")
        git(repo, "commit", "-q", "--allow-empty", "-am", f"commit = {commit}")
        out = invoke(repo, "doctor").output
        assert "warning" not in out and "lost" not in out, (commit, out)
        assert 'written while commit = "off"' in out and "yours to commit" in out and "ops." in out, (commit, out)


@pytest.fixture
def nobody(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A fresh machine or CI container: no user.name or user.email anywhere."""
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "empty-gitconfig").write_text("", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "empty-gitconfig"))


def test_without_a_git_identity_memory_still_commits_and_init_and_doctor_say_as_whom(tmp_path: Path, nobody: None):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    setup = invoke(repo, "init")
    assert git(repo, "log", "--format=%an <%ae>").strip() == "repo-memory <repo-memory@localhost>"  # loops in CI go on
    assert "git config --global user.name" in setup.output, setup.output
    assert setup.output.count("repo-memory@localhost") == 1, setup.output
    out = invoke(repo, "doctor").output
    assert "repo-memory@localhost" in out and "git config --global user.email" in out and "author" in out, out
    git(repo, "config", "user.name", "Pat")
    git(repo, "config", "user.email", "pat@example.com")
    assert "repo-memory@localhost" not in invoke(repo, "doctor").output


def test_a_skill_written_while_commit_was_off_and_committed_since_is_warned_of_like_any_other_when_changed_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The note of what was written while `commit = "off"` was never pruned: once the person committed those files and
    commits were back on, a later hand edit of such a skill was info ("yours to commit … Nothing to fix"), while the
    same edit of any other skill was the warning "changed but not committed". The note keeps only what is still
    uncommitted from the off period."""
    repo = committed(tmp_path / "repo")
    monkeypatch.setenv("REPO_MEMORY_COMMIT", "off")
    invoke(repo, "skill", "new", "deploy-one", "--description", "How to deploy the first service", "--body", "1. go")
    invoke(repo, "skill", "new", "deploy-kept", "--description", "How to deploy the kept service", "--body", "1. go")
    git(repo, "add", ".agents/skills/deploy-one")
    git(repo, "commit", "-q", "-m", "the person commits one with their code")
    monkeypatch.delenv("REPO_MEMORY_COMMIT")
    invoke(repo, "skill", "new", "deploy-two", "--description", "How to deploy the second service", "--body", "1. go")
    for name in ("deploy-one", "deploy-two"):
        with open(repo / f".agents/skills/{name}/SKILL.md", "a", encoding="utf-8") as f:
            f.write("3. hand edit\n")
    out = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
    warned = next(line for line in out.splitlines() if "changed but not committed" in line)
    assert "deploy-one" in warned and "deploy-two" in warned, out
    yours = next(line for line in out.splitlines() if 'written while commit = "off"' in line)
    assert "deploy-kept" in yours and "deploy-one" not in yours, out  # still uncommitted from the off period


def test_the_review_advice_for_a_new_uncommitted_skill_shows_it_though_git_hides_untracked_files(tmp_path: Path):
    """With status.showUntrackedFiles=no (big repositories, dotfiles) doctor said "review them with `git status
    .agents/skills`", which then printed nothing: the advice now asks git for every untracked file."""
    repo = committed(tmp_path / "repo")
    git(repo, "config", "status.showUntrackedFiles", "no")
    skill = repo / ".agents/skills/hand-made/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text('---\nname: hand-made\ndescription: "Written by hand; use when testing"\n---\nbody\n', encoding="utf-8")
    out = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
    warned = next(line for line in out.splitlines()[1 + next(n for n, line in enumerate(out.splitlines())
                                                               if "changed but not committed" in line):] if "git status" in line)
    command = warned.partition("`git status")[2].partition("`")[0]
    assert ".agents/skills/hand-made/SKILL.md" in git(repo, "status", "--short", *command.split()), warned
