"""How the guard reads a line into the commands it runs (guards/unfolding.py) past the forms that hide a person's
command: a command given as an argument, a word the shell splits (a makefile make reads: test_makes.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repo_memory.guards import reserved
from repo_memory.shells.pretool import asker


@pytest.fixture
def places(tmp_path: Path) -> reserved.Places:
    root = tmp_path / "repo"
    (root / ".agents/experience").mkdir(parents=True)
    return reserved.Places(root, root / ".git", tmp_path / "keys", ask=asker(root))


@pytest.mark.parametrize("line", [
    "git rebase -x 'repo-memory accept deploy' HEAD~1",
    "git rebase --exec 'repo-memory accept deploy' HEAD~1",
    "git rebase --exec='repo-memory accept deploy' HEAD~1",
    "git rebase -i -x'repo-memory accept deploy' HEAD~1",
    "git -C . rebase --onto main -x 'make x' -x 'repo-memory reject deploy' HEAD~1",
    "git bisect run repo-memory accept deploy",
    "git bisect run sh -c 'repo-memory accept deploy'",
    "git submodule foreach 'repo-memory accept deploy'",
    "git submodule --quiet foreach --recursive repo-memory accept deploy",
    "watch -n1 repo-memory accept deploy",
    "watch -n 1 -d 'repo-memory accept deploy'",
    "watch --interval=1 --exec repo-memory accept deploy",
    "script -qc 'repo-memory accept deploy' /dev/null",
    "script -c 'repo-memory accept deploy'",
    "script --command='repo-memory accept deploy' /dev/null",
    "script /dev/null -q --command 'repo-memory accept deploy'",
    "su -c 'repo-memory accept deploy'",
    "su root -c 'repo-memory accept deploy'",
    "su - root --command='repo-memory accept deploy'",
    "sudo su -s /bin/sh -c 'repo-memory accept deploy' root",
    "GIT_SEQUENCE_EDITOR='repo-memory accept x #' git rebase -i HEAD~1",
    "git -c sequence.editor='repo-memory accept x #' rebase -i HEAD~1",
    "GIT_EDITOR='repo-memory accept x #' git commit --amend",
    "EDITOR='repo-memory accept x #' git commit",
    "git -c core.editor='repo-memory accept x #' commit",
    "git difftool -y -x 'repo-memory accept x #' HEAD~1",
    "git difftool --extcmd='repo-memory accept x #' HEAD~1",
    "git difftool -y --extcmd 'repo-memory accept x #'",
    "git -c diff.external='repo-memory accept x #' diff HEAD~1",
    "GIT_EXTERNAL_DIFF='repo-memory accept x #' git diff",
    "git -c core.fsmonitor='repo-memory accept x #' status",
    "git -c core.sshCommand='repo-memory accept x #' fetch",
    "GIT_SSH_COMMAND='repo-memory accept x #' git fetch",
    "git -c credential.helper='!repo-memory accept x #' fetch",
    "git -c credential.https://example.com.helper='!repo-memory accept x #' fetch",
    "git -c filter.x.clean='repo-memory accept x #' add .",
    "git -c filter.x.smudge='repo-memory accept x #' checkout .",
    "git -c difftool.x.cmd='repo-memory accept x #' difftool -t x",
    "git -c mergetool.x.cmd='repo-memory accept x #' mergetool -t x",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='repo-memory accept x #' git status",
    "parallel repo-memory accept ::: x",
    "parallel -j2 'repo-memory accept {}' ::: x y",
    "busybox sh -c 'repo-memory accept x'",
    "EDITOR=vim git -c alias.wipe='!repo-memory accept x' wipe",
])
def test_a_command_given_as_an_argument_to_a_command_that_runs_it_is_unfolded(places: reserved.Places, line: str):
    assert reserved.PERSON in places.command(line), line


@pytest.mark.parametrize("line", [
    "echo accept deploy | xargs repo-memory",
    "echo redact | xargs -I{} repo-memory log {} x#1 --all-text",
    "xargs repo-memory <<< 'log redact x#1 --all-text'",
    "xargs -n 2 repo-memory log <<< 'add note'",
    "echo x | xargs --replace=W repo-memory W deploy",
    "echo x | xargs -iW repo-memory W deploy",
    "xargs -a cmds.txt python3 -m repo_memory",
])
def test_words_xargs_adds_to_repo_memory_may_make_a_persons_command(places: reserved.Places, line: str):
    """xargs appends the words it reads (or puts them for its replace string): `echo accept deploy | xargs repo-memory`
    ran a person's command the guard allowed, since the words it judged named none."""
    assert reserved.PERSON in places.command(line), line


@pytest.mark.parametrize("line", [
    "git ls-files | xargs repo-memory recall",
    "echo foo | xargs repo-memory search",
    "echo x | xargs -I{} repo-memory log tail {}",
    "git ls-files -m | xargs git add",
    "find . -name '*.pyc' | xargs rm -f",
])
def test_words_xargs_adds_to_a_command_that_is_no_persons_are_allowed(places: reserved.Places, line: str):
    assert places.command(line) == ""


@pytest.mark.parametrize("line", [
    "git rebase -x 'pytest -q' HEAD~3",
    "git rebase --onto main HEAD~1",
    "git bisect run pytest -q tests/test_x.py",
    "git bisect good",
    "git submodule foreach git status",
    "watch -n1 git status",
    "script -qc 'pytest -q' /dev/null",
    "su -c 'id' root",
    "script typescript",
    "GIT_EDITOR=true git commit --amend",
    "git -c core.editor=vim -c diff.external=difft difftool -x 'meld' HEAD~1",
    "git -c credential.helper=store fetch",
    "parallel gzip ::: a b",
    "busybox ls",
])
def test_a_command_given_as_an_argument_that_runs_no_persons_command_is_allowed(places: reserved.Places, line: str):
    assert places.command(line) == ""


@pytest.mark.parametrize("line", [
    'X="$PWD accept"; repo-memory --root $X deploy',
    "repo-memory --root=$X deploy",
    "repo-memory --root ${ROOT} deploy",
    "python -m repo_memory --root $REPO stale",
    "repo-memory --root `pwd` deploy",
    "bash -c 'repo-memory --root $X deploy'",
    'repo-memory log "$SUB" x',
    "repo-memory loop $SUB deploy",
])
def test_a_word_the_shell_may_split_or_name_into_a_persons_command_is_refused(places: reserved.Places, line: str):
    assert reserved.PERSON in places.command(line), line


@pytest.mark.parametrize("line", [
    'repo-memory --root "$PWD" loop due',
    'repo-memory --root "$PWD" stale',
    'repo-memory --root="$PWD" stale --json',
    "repo-memory search $QUERY",
    'python -m repo_memory --root "$REPO" stale',
    "repo-memory --root '$X' stale",
    "bash -c 'repo-memory --root \"$X\" stale'",
])
def test_a_quoted_value_or_a_word_past_the_command_is_no_persons_command(places: reserved.Places, line: str):
    assert places.command(line) == ""


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.mark.parametrize(("key", "value"), [("core.pager", "tee -a .agents/experience/x.jsonl"),
                                            ("pager.log", "sh -c 'cat > .agents/experience/x.jsonl'")])
def test_a_pager_the_repository_configures_makes_git_a_writer(places: reserved.Places, key: str, value: str):
    _git(places.root, "init", "-q")
    assert places.command("git log -- .agents/experience") == ""
    _git(places.root, "config", key, value)  # by an earlier command that named no reserved place
    why = places.command("git log -- .agents/experience")
    assert "may change it" in why and "git --no-pager" in why, why
    assert places.command("git --no-pager log -- .agents/experience") == ""
    assert "may change it" in places.command(f"cd /tmp && git -C {places.root} log -- {places.root}/.agents/experience")


def test_a_plain_pager_the_repository_configures_leaves_git_a_reader(places: reserved.Places):
    _git(places.root, "init", "-q")
    _git(places.root, "config", "core.pager", "less -R")
    _git(places.root, "config", "pager.show", "false")
    assert places.command("git log -- .agents/experience") == ""
    assert places.command("git show HEAD -- .agents/experience") == ""


def test_a_pager_configured_where_a_variable_of_the_line_points_git_makes_it_a_writer(places: reserved.Places, tmp_path: Path):
    _git(places.root, "init", "-q")
    other = tmp_path / "other"
    _git(tmp_path, "init", "-q", str(other))
    _git(other, "config", "core.pager", "tee -a x")
    (tmp_path / "xdg/git").mkdir(parents=True)
    (tmp_path / "xdg/git/config").write_text("[core]\n\tpager = tee -a x\n", encoding="utf-8")
    for line in [f"GIT_DIR={other}/.git git log -- .agents/experience",
                 f"XDG_CONFIG_HOME={tmp_path}/xdg git log -- .agents/experience",
                 f"env XDG_CONFIG_HOME={tmp_path}/xdg git --no-pager log -- .agents/experience",
                 "HOME=/tmp git log -- .agents/experience"]:
        assert "may change it" in places.command(line), line


def test_a_shell_alias_from_settings_a_variable_of_the_line_points_git_to_is_unfolded(
        places: reserved.Places, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _git(places.root, "init", "-q")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")  # the tests' own: git would read it instead of HOME's and XDG_CONFIG_HOME's
    (tmp_path / "home").mkdir()
    (tmp_path / "home/.gitconfig").write_text("[alias]\n\twipe = !repo-memory accept deploy\n", encoding="utf-8")
    (tmp_path / "xdg/git").mkdir(parents=True)
    (tmp_path / "xdg/git/config").write_text("[alias]\n\twipe = !repo-memory accept deploy\n", encoding="utf-8")
    for line in [f"HOME={tmp_path}/home git wipe", f"env XDG_CONFIG_HOME={tmp_path}/xdg git wipe",
                 f"GIT_CONFIG_GLOBAL={tmp_path}/home/.gitconfig git -C {places.root} wipe",
                 "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.wipe GIT_CONFIG_VALUE_0='!repo-memory accept deploy' git wipe"]:
        assert reserved.PERSON in places.command(line, places.root), line
    assert "may be an alias that runs a person's command" in places.command("X=/tmp; HOME=$X git wipe", places.root)
    assert places.command(f"HOME={tmp_path}/home git status", places.root) == ""
    assert places.command("HOME=$X git log -1", places.root) == ""
