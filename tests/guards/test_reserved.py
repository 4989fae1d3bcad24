"""The shell lines an agent may run on the places only repo-memory writes (guards/reserved.py): reading them is fine,
wherever the output goes; writing into them, by a command, a redirect or a tee, is refused."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from repo_memory.guards import reserved

LOG = ".agents/experience/2026-01/s1.jsonl"


@pytest.fixture
def places(tmp_path: Path) -> reserved.Places:
    root = tmp_path / "repo"
    (root / ".agents/experience/2026-01").mkdir(parents=True)
    (root / LOG).write_text("{}\n", encoding="utf-8")
    return reserved.Places(root, root / ".git", tmp_path / "keys")


@pytest.mark.parametrize("line", [
    "git -C {root} log --oneline -- .agents/experience",
    "git -c core.quotepath=off log -- .agents/experience",
    "git --git-dir={root}/.git log --oneline -- .agents/experience",
    "git --git-dir {root}/.git --work-tree {root} log -- .agents/experience",
    "git --no-pager -C . show HEAD -- .agents/experience",
    "ls {root}/.agents/experience/ > /tmp/list.txt",
    "cat {root}/" + LOG + " >/tmp/out.jsonl 2>&1",
    "grep -rn note {root}/.agents/experience | tee /tmp/notes.txt",
    "grep -rn note .agents/experience 2>&1 | tee -a /tmp/notes.txt | head -3",
    "sort -o /tmp/sorted -k2,2 -t, {root}/" + LOG,
    "uniq -c -f 1 " + LOG + " /tmp/counted",
    "xxd " + LOG + " | head",
    "sed -n '1,5p;$p' " + LOG,
    "sed -n -e '/[/]note/Ip' -e '/a/,/b/{{s|a|b|gp}}' " + LOG + " > /tmp/x",
    "sed -n 'w /dev/stdout' " + LOG,
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.quotepath GIT_CONFIG_VALUE_0=off git log -- .agents/experience",
    "Q=off git --config-env=core.quotepath=Q log -- .agents/experience",
    "env -S 'cat " + LOG + "'",
    "env -u HOME -S'grep -c x' " + LOG,
    "env -C {root} git log -- .agents/experience",
    "sudo -u root cat " + LOG,
])
def test_a_line_that_only_reads_the_logs_may_run_wherever_its_output_goes(places: reserved.Places, line: str):
    assert places.command(line.format(root=places.root)) == ""


@pytest.mark.parametrize("line", [
    "echo x >> " + LOG,
    "ls > .agents/experience/list.txt",
    "cat /tmp/x > {root}/" + LOG,
    "echo x | tee -a " + LOG,
    "echo x | tee /tmp/a {root}/" + LOG,
    "echo x | tee --append=x " + LOG,
    "cd .agents/experience && ls > list.txt",
    "grep x .agents/experience -r > \"$OUT\"",
    "sed -i s/a/b/ " + LOG,
    "git -C {root} checkout -- .agents/experience/2026-01",
    "git -c core.quotepath=off checkout -- .agents/experience",
    "git --git-dir={root}/.git --work-tree={root} restore .agents/experience",
    "git -c core.pager='tee -a .agents/experience/x' log",
    "git log --output=.agents/experience/x",
    "cat > .agents/repo-memory.toml <<'EOF'\nreview = \"optional\"\nEOF",
    "echo '{{}}' 1<>" + LOG,
    "cat <>" + LOG,
    "sort -o " + LOG + " /tmp/in",
    "sort -uo" + LOG + " /tmp/in",
    "sort --out=" + LOG + " /tmp/in",
    "sort --compress-program=/tmp/run -S 1 " + LOG,
    "uniq /tmp/in " + LOG,
    "uniq -f 1 /tmp/in " + LOG,
    "xxd -r -p /tmp/hex " + LOG,
    "sed -n 'w " + LOG + "' /tmp/in",
    "sed -n '/[/]x/W " + LOG + "' /tmp/in",
    "sed 's/a/b/w " + LOG + "' /tmp/in",
    "sed -n 's/x/touch y/e' " + LOG,
    "sed -n '1e touch y' " + LOG,
    "sed -ni p " + LOG,
    "sed -f /tmp/script " + LOG,
    "EVIL='sed -i s/a/b/ " + LOG + "' git --config-env=core.fsmonitor=EVIL status -- .agents/experience",
    "git --config-env core.fsmonitor=EVIL status -- .agents/experience",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='sed -i s/a/b/ x' git status -- .agents/experience",
    "env GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='sed -i s/a/b/ x'\" git status -- .agents/experience",
    "GIT_CONFIG_GLOBAL=/tmp/evil git status -- .agents/experience",
    "git -c include.path=/tmp/evil status -- .agents/experience",
    "GIT_EXTERNAL_DIFF=/tmp/run git diff -- .agents/experience",
    "env -S 'sed -i s/a/b/ " + LOG + "'",
    "env -S'sed\\_-i\\_s/a/b/' " + LOG,
    "env -S \"GIT_PAGER='tee -a x' git log -- .agents/experience\"",
    "env -C .agents/experience/2026-01 sed -i s/a/b/ s1.jsonl",
    "/usr/bin/env -C .agents/experience/2026-01 sed -i s/a/b/ s1.jsonl",
    "unshare -w .agents/experience/2026-01 sed -i s/a/b/ s1.jsonl",
])
def test_a_line_that_writes_the_logs_is_refused(places: reserved.Places, line: str):
    assert "may change it" in places.command(line.format(root=places.root))


def test_a_redirect_through_a_link_into_the_logs_is_a_write(places: reserved.Places, tmp_path: Path):
    link = tmp_path / "innocent.txt"
    link.symlink_to(places.root / LOG)
    assert "may change it" in places.command(f"cat {places.root}/{LOG} >> {link}")


@pytest.mark.parametrize("line", [
    "PAGER='tee -a " + LOG + "' git log -1 -- .agents/experience",
    "env PAGER='sh -c x' git log -- .agents/experience",
    "git -c core.pager='tee -a x' log -- .agents/experience",
    "git -c pager.log='tee -a x' log -- .agents/experience",
    "GIT_PAGER='less -o x' git log -- .agents/experience",
    "LESSOPEN='|tee -a x %s' git log -- .agents/experience",
    "LESS=-ox git log -- .agents/experience",
    # less's options that write a file or run a command, in any spelling less takes
    "GIT_PAGER='less -R -o x' git log -- .agents/experience",
    "GIT_PAGER='less --log-file=x' git log -- .agents/experience",
    "GIT_PAGER='less --LOG-FILE x' git log -- .agents/experience",
    "GIT_PAGER='less --Log x' git log -- .agents/experience",
    "GIT_PAGER='less -R--log-file=x' git log -- .agents/experience",
    "LESS='-x4 -ox' git log -- .agents/experience",
    "LESS='--lesskey-src x' git log -- .agents/experience",
    "git -c core.pager='less --lesskey-content=x' log -- .agents/experience",
    "LESS='--cmd=!id' git log -- .agents/experience",
    "LESS=-R+!id git log -- .agents/experience",
    "GIT_PAGER='less -b-O x' git log -- .agents/experience",
    "GIT_PAGER='less -P -x -ox' git log -- .agents/experience",
    "LESSKEYIN=/tmp/keys git log -- .agents/experience",
    "LESSGLOBALTAGS=/tmp/run GIT_PAGER='less -tmain' git log -- .agents/experience",
    # the shell git runs its pager with reads a command or an expansion in it
    "GIT_PAGER='less -R;id' git log -- .agents/experience",
    "GIT_PAGER='less -R$(id)' git log -- .agents/experience",
    # ...or expands a glob (`-?` is `-O` beside a file named so), a brace or a tilde in it
    "GIT_PAGER='less -? -P.agents/repo-memory.toml' git log",
    "GIT_PAGER='less -[O] -Px' git log -- .agents/experience",
    "GIT_PAGER='less -* -Px' git log -- .agents/experience",
    "git -c core.pager='less -{O,R} -Px' log -- .agents/experience",
    "GIT_PAGER='less -P~/x' git log -- .agents/experience",
    # a control character in a search pattern is a key less obeys (backspace ends the search, `!` runs a command)
    "GIT_PAGER='less -p\b!id' git log -- .agents/experience",
    "LESS='-p\b!id' git log -- .agents/experience",
    # less writes its search history where these say
    "LESSHISTFILE=.agents/experience/x GIT_PAGER='less -pfoo' git log -- .agents/experience",
    "XDG_DATA_HOME=.agents/experience git log -- .agents/experience",
    "XDG_STATE_HOME=.agents/experience git log -- .agents/experience",
    "HOME=.agents/experience git log -- .agents/experience",
])
def test_a_pager_that_is_no_plain_pager_makes_git_a_writer_and_the_refusal_says_how_to_read(places: reserved.Places, line: str):
    why = places.command(line)
    assert "may change it" in why and "git --no-pager" in why, why


@pytest.mark.parametrize("line", [
    "GIT_PAGER=cat git log -- .agents/experience",
    "PAGER='less -R' git log -- .agents/experience",
    "git -c core.pager=cat log -- .agents/experience",
    "git -c core.pager='more -d' log -- .agents/experience",
    "LESS=-FRX git log -- .agents/experience",
    "PAGER='tee -a x' git --no-pager log -- .agents/experience",
    "GIT_PAGER='less --no-init' git log -- .agents/experience",
    "LESS=--RAW-CONTROL-CHARS git log -- .agents/experience",
    "GIT_PAGER='less --quit-if-one-screen' git log -- .agents/experience",
    "LESS=FRX git log -- .agents/experience",
    "LESS='-R --use-color -Dd+r --Quit-at-eof' git log -- .agents/experience",
    "git -c core.pager='less -+S --shift=.5 -x4,8 --tabs 4 -P prompt --pattern foo' log -- .agents/experience",
    "GIT_PAGER='more --silent' git log -- .agents/experience",
    "GIT_PAGER='less -pfoo --pattern=bar' git log -- .agents/experience",
    "GIT_PAGER='less -P\"?f%f:stdin.\"' git log -- .agents/experience",
    "LESSHISTFILE=- git --no-pager log -- .agents/experience",
])
def test_a_plain_pager_or_none_leaves_git_a_reader(places: reserved.Places, line: str):
    assert places.command(line) == ""


@pytest.mark.parametrize("line", [
    "env -S 'repo-memory accept deploy'",
    "env --split-string='repo-memory reject deploy'",
    "env --split 'repo-memory feedback skill:deploy helped'",
    "env -S\"repo-memory stale --pin X\"",
    "env -S'-u HOME repo-memory accept deploy'",
    "env -S 'repo-memory\\_accept deploy'",
    "env -S 'bash -c \"repo-memory accept deploy\"'",
    "env -u HOME repo-memory accept deploy",
    "env -iu HOME repo-memory accept deploy",
    "env --unset HOME repo-memory accept deploy",
    "env -C /tmp repo-memory accept deploy",
    "env --chdir /tmp repo-memory accept deploy",
    "env -P /usr/bin repo-memory accept deploy",
    "env --default-signal repo-memory accept deploy",
    "sudo -u root repo-memory accept deploy",
    "timeout 5s repo-memory accept deploy",
    "timeout -s KILL 5 repo-memory accept deploy",
    "stdbuf -o L repo-memory accept deploy",
    "exec -a name repo-memory accept deploy",
    # an env -S string that splits into no words leaves the command after it
    "env -S ' ' repo-memory accept deploy",
    "env -S '#' repo-memory accept deploy",
    "env -S'\\c' repo-memory stale --pin X",
    "env --split-string= repo-memory accept deploy",
    # a wrapper named by its path, and wrappers that run the command they are given
    "/usr/bin/env repo-memory accept deploy",
    "/usr/bin/env -u HOME /usr/bin/timeout 5 repo-memory accept deploy",
    "/usr/bin/time -p repo-memory accept deploy",
    "setsid repo-memory accept deploy",
    "setsid -f -w repo-memory accept deploy",
    "chrt 5 repo-memory accept deploy",
    "chrt -b -T 10 0 repo-memory accept deploy",
    "taskset 0x1 repo-memory accept deploy",
    "taskset -c 0,1 repo-memory accept deploy",
    "flock /tmp/lock repo-memory accept deploy",
    "flock -w 5 /tmp/lock repo-memory accept deploy",
    "flock /tmp/lock -c 'repo-memory accept deploy'",
    "unshare -r repo-memory accept deploy",
    "unshare --mount=/tmp/ns -S 0 repo-memory accept deploy",
    "chroot / repo-memory accept deploy",
    "chroot --userspec=1:1 / repo-memory accept deploy",
    "doas -u root repo-memory accept deploy",
])
def test_a_persons_command_behind_a_wrapper_and_its_options_is_refused(places: reserved.Places, line: str):
    assert reserved.PERSON in places.command(line)


TRUST = "loop due --run --event ci-failure --trust-specs-at HEAD --agent x"


@pytest.mark.parametrize("line", [
    # the interpreter's own options before -m, a script named repo-memory, an inline script importing the package
    f"python -I -m repo_memory {TRUST}",
    f"python3.11 -u -X dev -W ignore -E -s -B -O -m repo_memory {TRUST}",
    f"/usr/bin/python3 -Wignore -Xutf8 -IsB -m repo_memory {TRUST}",
    f"/work/.venv/bin/python -mrepo_memory {TRUST}",
    f"python -m repo_memory.entry {TRUST}",
    f"python -c 'from repo_memory.shells.cli import cli; cli()' {TRUST}",
    f"python $(command -v repo-memory) {TRUST}",
    f"python `which repo-memory` {TRUST}",
    f"python3 -I /work/main/.venv/bin/repo-memory {TRUST}",
    # find's -exec, -execdir, -ok and -okdir run a command of their own
    f"find . -maxdepth 0 -exec repo-memory {TRUST} \\;",
    "find . -name x -execdir repo-memory accept deploy {} +",
    "find . -ok grep -q x {} ';' -ok repo-memory accept deploy ';'",
    # eval, runners that run the command they are given
    "eval 'repo-memory accept deploy'",
    "eval repo-memory \"accept\" deploy",
    f"uv run repo-memory {TRUST}",
    f"uv run --with pyyaml --python 3.11 repo-memory {TRUST}",
    f"uv run python -I -m repo_memory {TRUST}",
    "uv tool run repo-memory accept deploy",
    "uvx repo-memory accept deploy",
    "uvx --from repo-memory repo-memory accept deploy",
    "pipx run repo-memory accept deploy",
    "pipx run --spec ./x repo-memory accept deploy",
    "poetry run repo-memory accept deploy",
    "npx repo-memory accept deploy",
    "pnpm exec repo-memory accept deploy",
    "hatch run repo-memory accept deploy",
    # a shell alias git runs, given on git's own line
    f"git -c alias.t='!repo-memory {TRUST}' t",
    "git -c alias.x='!sh -c \"repo-memory accept deploy\"' x",
    "git -calias.x='!f() { repo-memory accept deploy; }; f' x",
])
def test_every_way_a_line_unfolds_into_commands_reaches_the_person_command_check(places: reserved.Places, line: str):
    assert reserved.PERSON in places.command(line)


def test_a_shell_alias_of_the_repository_that_runs_a_persons_command_is_refused(places: reserved.Places):
    aliases = {"ci-fix": f"!repo-memory {TRUST}", "co": "checkout", "a": "!git ci-fix"}
    assert reserved.PERSON in places.command("git ci-fix", alias=lambda name: aliases.get(name, ""))
    assert reserved.PERSON in places.command("git -C . a", alias=lambda name: aliases.get(name, ""))
    assert places.command("git co main", alias=lambda name: aliases.get(name, "")) == ""


@pytest.mark.parametrize("line", [
    "python -I -m pytest -q",
    "python -m repo_memory search deploy",
    f"python -c 'print(1)' {TRUST}",
    "uv run pytest -k accept",
    "uvx ruff check",
    "find . -name '*.py' -exec grep -n accept {} +",
    "git -c alias.x='!echo accept' x",
    "eval 'repo-memory stale --json'",
    "make test",
])
def test_what_unfolds_into_no_persons_command_runs(places: reserved.Places, line: str):
    assert places.command(line) == ""


def test_a_make_target_whose_recipe_runs_a_persons_command_is_refused(places: reserved.Places):
    (places.root / "Makefile").write_text(f"test:\n\tpytest -q\n\nfix:\n\t@repo-memory {TRUST}\n", encoding="utf-8")
    (places.root / "other.mk").write_text("all:\n\t-repo-memory accept deploy\n", encoding="utf-8")
    assert reserved.PERSON in places.command("make fix", places.root)
    assert reserved.PERSON in places.command("make -f other.mk", places.root)
    assert reserved.PERSON in places.command(f"make -C {places.root} fix", places.root / ".agents")
    assert places.command("make -f missing.mk", places.root) == ""


@pytest.mark.parametrize("line", [
    'repo-memory --root "$PWD" loop due',
    'repo-memory --root "$PWD" stale',
    'repo-memory --root="$PWD" stale --json',
    'repo-memory --root "$PWD" loop due --run --agent "$AGENT" --event ci-failure',
    'python -m repo_memory --root "$REPO" stale',
])
def test_the_value_of_a_repo_memory_option_is_no_persons_option(places: reserved.Places, line: str):
    assert places.command(line) == ""


@pytest.mark.parametrize("line", [
    'repo-memory --root "$PWD" stale $OPT',
    'repo-memory --root "$PWD" stale --pin "$NAME"',
    'repo-memory --root "$PWD" loop due --trust-specs-at "$SHA"',
    'repo-memory loop due --agent "$AGENT" $MORE',
])
def test_an_option_the_shell_names_past_the_values_of_repo_memorys_options_is_a_persons(places: reserved.Places, line: str):
    assert reserved.PERSON in places.command(line)


def test_the_options_the_guard_knows_take_a_value_are_repo_memorys_own():
    from repo_memory.shells.cli import cli

    loop, stale = cli.loaded()["loop"], cli.loaded()["stale"]
    assert isinstance(loop, click.Group)
    valued = {name for command in (cli, loop.commands["due"], stale) for param in command.params
              if isinstance(param, click.Option) and not param.is_flag and not param.count for name in param.opts}
    assert valued == reserved.VALUED


@pytest.mark.parametrize("line", ["make -n release", "make --dry-run", "make --just-print release", "make --recon",
                                  "make -kn release", "make -C . -n release", "make -j4 -n release"])
def test_a_dry_run_of_make_runs_no_recipe_and_is_allowed(places: reserved.Places, line: str):
    (places.root / "Makefile").write_text("test:\n\tpytest -q\nrelease:\n\trepo-memory accept deploy\n", encoding="utf-8")
    assert places.command(line, places.root) == ""


def test_a_dry_run_of_make_still_refuses_the_recipe_lines_make_runs_anyway(places: reserved.Places):
    (places.root / "Makefile").write_text("release:\n\t+repo-memory accept deploy\n", encoding="utf-8")
    assert reserved.PERSON in places.command("make -n release", places.root)


def test_a_refusal_of_a_make_target_names_its_folder_and_recipe_line_and_says_what_to_do(places: reserved.Places):
    (places.root / "Makefile").write_text("test:\n\tpytest -q\nrelease:\n\t@repo-memory accept deploy\n", encoding="utf-8")
    why = places.command("make release", places.root)
    assert reserved.PERSON in why
    assert f"make in {places.root}" in why and "`repo-memory accept deploy`" in why
    assert "run the commands of the target directly" in why and "make -n" in why


@pytest.mark.parametrize(("line", "named"), [
    ("git -c alias.t='!repo-memory accept deploy' t", "the git alias `t`"),
    ("find . -exec repo-memory accept deploy \\;", "find's -exec"),
    ("uv run repo-memory accept deploy", "`uv`"),
    ("bash -c 'git -c alias.t=\"!repo-memory accept deploy\" t'", "the git alias `t`"),
])
def test_a_refusal_of_a_command_a_line_unfolds_into_says_which_form_holds_it(places: reserved.Places, line: str, named: str):
    why = places.command(line)
    assert reserved.PERSON in why and named in why, why
