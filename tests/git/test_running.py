"""Which running git processes hold a memory commit up (git/running.py): a person's commit, merge, … in this worktree
(its editor or hooks still open), and nothing else: not read-only commands, not another worktree, not a git command
that runs repo-memory as its post-commit hook."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from repo_memory.git import running
from repo_memory.git.repo import Git, discover
from tests.conftest import git


@contextlib.contextmanager
def open_commit(where: Path, *args: str, cwd: Path | None = None) -> Iterator[subprocess.Popen[str]]:
    """`git ARGS` (a commit) run from `cwd`, held in its editor until the generator resumes; then it must succeed."""
    go, started = where.parent / f"go-{where.name}", where.parent / f"started-{where.name}"
    go.unlink(missing_ok=True)
    started.unlink(missing_ok=True)
    editor = where.parent / "editor"
    editor.write_text(f"#!/bin/sh\ntouch '{started}'\nfor _ in $(seq 3000); do [ -e '{go}' ] && break; sleep 0.02; done\n"
                      "echo 'feat: a person wrote this' > \"$1\"\n", encoding="utf-8")
    editor.chmod(0o755)
    (where / "app.py").write_text(f"changed by `git {' '.join(args)}`\n", encoding="utf-8")
    git(where, "add", "app.py")
    person = subprocess.Popen(["git", *args], cwd=cwd or where, env={**os.environ, "GIT_EDITOR": str(editor)}, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not started.exists() and person.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert started.exists(), person.communicate()[0]
    try:
        yield person
    finally:
        go.touch()
        said, _ = person.communicate(timeout=30)
        assert person.returncode == 0, said


def held_up(where: Path) -> str:
    root, git_dir, _ = discover(where)
    return Git(root, git_dir).operation_in_progress()


@pytest.fixture
def committed(repo: Path) -> Path:
    (repo / "app.py").write_text("base\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def test_a_git_commit_in_its_editor_holds_up_its_worktree_however_it_was_started(committed: Path, tmp_path: Path):
    for args, cwd in ((["commit"], committed), (["-C", str(committed), "commit", "-v"], tmp_path)):
        with open_commit(committed, *args, cwd=cwd) as person:
            assert held_up(committed) == f"`git commit` (process {person.pid})"
            assert held_up(committed / ".agents") == held_up(committed)
    assert held_up(committed) == ""


def test_a_commit_in_another_worktree_holds_nothing_up_here(committed: Path):
    linked = committed.parent / "linked"
    git(committed, "worktree", "add", "-q", "-b", "linked", str(linked))
    with open_commit(linked, "commit"):
        assert held_up(linked).startswith("`git commit`")
        assert held_up(committed) == ""


def test_an_alias_of_git_commit_holds_up_the_worktree(committed: Path):
    git(committed, "config", "alias.ci", "commit --verbose")
    with open_commit(committed, "ci") as person:
        assert held_up(committed) == f"`git ci` (process {person.pid})"


def test_read_only_git_commands_hold_nothing_up(committed: Path):
    reader = subprocess.Popen(["git", "cat-file", "--batch-check"], cwd=committed, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert reader.stdin is not None and reader.stdout is not None
        reader.stdin.write(b"HEAD\n")
        reader.stdin.flush()
        assert b" commit " in reader.stdout.readline()  # it runs, in the worktree's top
        assert held_up(committed) == ""
    finally:
        reader.communicate(b"", timeout=10)


def test_a_git_commit_running_repo_memory_as_its_post_commit_hook_holds_nothing_up(committed: Path):
    said = committed.parent / "post-commit-said"
    hook = committed / ".git" / "hooks" / "post-commit"
    hook.write_text(f"#!/bin/sh\n'{sys.executable}' -c 'from repo_memory.git.running import under_way; from pathlib import Path; "
                    f"print(repr(under_way(Path(\".\"), lambda name: \"\")))' > '{said}'\n", encoding="utf-8")
    hook.chmod(0o755)
    (committed / "app.py").write_text("changed\n", encoding="utf-8")
    git(committed, "commit", "-q", "-am", "feat: change")
    assert said.read_text(encoding="utf-8").strip() == "''"  # its branch moved already, and it waits for the hook


@pytest.mark.parametrize(("argv", "command"), [
    (["git", "commit"], "commit"), (["/usr/bin/git", "-C", "sub dir", "-c", "a.b=c", "--no-pager", "merge", "x"], "merge"),
    (["git", "--git-dir", "/r/.git", "--work-tree=/r", "cherry-pick", "-e", "abc"], "cherry-pick"),
    (["/usr/lib/git-core/git-rebase", "-i"], "rebase"), (["git", "--version"], ""), (["git"], ""),
])
def test_the_command_of_a_git_command_line(argv: list[str], command: str):
    assert running.subcommand(argv) == command


PROBE = ("import sys\nfrom pathlib import Path\nfrom repo_memory.git.running import under_way\n"
         "Path(sys.argv[1]).write_text(repr(under_way(Path.cwd(), lambda name: '')), encoding='utf-8')\n")
# How a hook may run what it runs: a shell with an option in its shebang, a Python script, a program the hook `exec`s
# whose command line no longer names the hook but in an option (the pre-commit framework's `python -mpre_commit
# hook-impl --hook-type=post-commit …`)
HOOKS = {
    "sh -e": "#!/bin/sh -e\n'{python}' '{probe}' '{said}'\n",
    "python": "#!{python} -u\n" + PROBE.replace("sys.argv[1]", "'{said}'"),
    "exec": "#!/usr/bin/env bash\nexec '{python}' '{probe}' '{said}' hook-impl --config=.pre-commit-config.yaml "
            "--hook-type={name} --hook-dir \"$(dirname \"$0\")\" -- \"$@\"\n",
}


def probing(repo: Path, name: str, kind: str) -> Path:
    """The hook `name`, written the way `kind` says, saying what `under_way` answers in it; the file it says it in."""
    probe, said = repo.parent / "probe.py", repo.parent / f"{name}-said"
    probe.write_text(PROBE, encoding="utf-8")
    said.unlink(missing_ok=True)
    hook = repo / ".git" / "hooks" / name
    hook.write_text(HOOKS[kind].format(python=sys.executable, probe=probe, said=said, name=name), encoding="utf-8")
    hook.chmod(0o755)
    return said


def person_commits(repo: Path, name: str) -> None:
    """What makes git run the hook `name`: a commit, an amend (post-rewrite), a merge of another branch (post-merge)."""
    if name == "post-merge":
        git(repo, "checkout", "-q", "-b", "topic")
        (repo / "other.py").write_text("theirs\n", encoding="utf-8")
        git(repo, "add", "other.py")
        git(repo, "commit", "-q", "-m", "feat: other")
        git(repo, "checkout", "-q", "main")
        git(repo, "merge", "-q", "--no-ff", "--no-edit", "topic")
        return
    (repo / "app.py").write_text(f"changed for {name}\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "feat: change")
    if name == "post-rewrite":
        git(repo, "commit", "-q", "--amend", "-m", "feat: a change, amended")


@pytest.mark.parametrize("kind", HOOKS)
@pytest.mark.parametrize("name", ["post-commit", "post-merge", "post-rewrite"])
def test_a_hook_git_runs_once_the_branch_moved_holds_nothing_up_however_it_is_written(committed: Path, name: str, kind: str):
    said = probing(committed, name, kind)
    person_commits(committed, name)
    assert said.read_text(encoding="utf-8") == "''"  # its branch moved already, and it waits for the hook


@pytest.mark.parametrize("kind", HOOKS)
@pytest.mark.parametrize("name", ["pre-commit", "prepare-commit-msg", "commit-msg", "reference-transaction"])
def test_a_hook_git_runs_before_the_branch_moves_holds_the_memory_commit_up(committed: Path, name: str, kind: str):
    said = probing(committed, name, kind)  # a memory commit now would make the person's commit fail (HEAD moved)
    person_commits(committed, name)
    assert said.read_text(encoding="utf-8").startswith("'`git commit` (process "), said.read_text(encoding="utf-8")


def memory_repo(tmp_path: Path) -> Path:
    """A repository set up by `repo-memory init`, the person's commits made on it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "app.py").write_text("base\n", encoding="utf-8")
    subprocess.run(["repo-memory", "init"], cwd=repo, capture_output=True, check=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    return repo


@pytest.mark.skipif(not shutil.which("pre-commit"), reason="the pre-commit framework is not installed")
def test_a_memory_write_in_a_pre_commit_framework_post_commit_hook_is_committed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    repo = memory_repo(tmp_path)
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n- repo: local\n  hooks:\n  - id: memory\n    name: memory\n"
        "    entry: repo-memory log add \"noted by a post-commit hook\" -s hook\n    language: system\n"
        "    stages: [post-commit]\n    always_run: true\n    pass_filenames: false\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pre-commit set up")
    subprocess.run(["pre-commit", "install", "--hook-type", "post-commit"], cwd=repo, capture_output=True, check=True)
    (repo / "app.py").write_text("a person's change\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "feat: a person's change")
    assert git(repo, "status", "--porcelain") == ""  # the record the hook wrote is committed, not left untracked
    assert "noted by a post-commit hook" in git(repo, "log", "-p", "-1")


def test_a_memory_write_in_a_pre_commit_hook_waits_for_the_next_repo_memory_command_without_hanging(tmp_path: Path):
    repo = memory_repo(tmp_path)
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh -e\nrepo-memory log add 'noted by a pre-commit hook' -s hook\n", encoding="utf-8")
    hook.chmod(0o755)
    (repo / "app.py").write_text("a person's change\n", encoding="utf-8")
    head = git(repo, "rev-parse", "HEAD")
    person = subprocess.run(["git", "commit", "-q", "-am", "feat: a person's change"], cwd=repo, capture_output=True,
                            text=True, timeout=60)  # the write does not wait for the commit that waits for it
    assert person.returncode == 0, person.stderr
    assert git(repo, "rev-parse", "HEAD~1") == head  # the person's commit went in, on the branch as it was
    said = person.stderr  # what it says is what happens: this process ends, and nothing lands by itself
    assert "not committed yet" in said and "the next repo-memory command" in said and "lands when" not in said, said
    assert "lands once" not in said, said
    assert git(repo, "status", "--porcelain") != ""
    hook.unlink()
    subprocess.run(["repo-memory", "search", "anything"], cwd=repo, capture_output=True, check=True)
    assert git(repo, "status", "--porcelain") == ""


def test_a_skill_written_while_a_persons_commit_is_open_says_the_next_repo_memory_command_commits_it(tmp_path: Path):
    repo = memory_repo(tmp_path)
    with open_commit(repo, "commit"):
        made = subprocess.run(["repo-memory", "skill", "new", "deploy", "-d", "How to deploy", "--body", "1. make deploy"],
                              cwd=repo, capture_output=True, text=True, check=True)
    assert "not committed yet" in made.stderr and "the next repo-memory command" in made.stderr, made.stderr
    assert "lands when" not in made.stderr and "lands once" not in made.stderr, made.stderr  # this process ends first
