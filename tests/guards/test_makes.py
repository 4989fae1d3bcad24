"""What a `make` line runs, read from the makefiles without running make (guards/makes.py): includes, variables, inline
recipes, `$(shell …)`, prerequisites, only for the targets named; the guard never runs a line of the project's."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_memory.guards import makes, reserved
from repo_memory.shells.pretool import asker


@pytest.fixture
def places(tmp_path: Path) -> reserved.Places:
    root = tmp_path / "repo"
    (root / ".agents/experience").mkdir(parents=True)
    return reserved.Places(root, root / ".git", tmp_path / "keys", ask=asker(root))


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


MAKEFILES = {
    "inline": {"Makefile": "x: ; repo-memory accept deploy\n"},
    "include": {"Makefile": "include rules.mk\n", "rules.mk": "x:\n\trepo-memory accept deploy\n"},
    "sinclude glob": {"Makefile": "-include mk/*.mk\n", "mk/a.mk": "x:\n\trepo-memory accept deploy\n"},
    "variable": {"Makefile": "RM = repo-memory\nx:\n\t$(RM) accept deploy\n"},
    "split variable": {"Makefile": "A = repo\nB := $(A)-memory\nx: y\ny:\n\t@$(B) $(or $(V),accept) deploy\n"},
    "appended": {"Makefile": "C = repo-memory\nC += accept\nx:\n\t$(C) deploy\n"},
    "define": {"Makefile": "define DEPLOY\necho one\nrepo-memory accept deploy\nendef\nx:\n\t$(DEPLOY)\n"},
    "call": {"Makefile": "run = $(1) accept $(2)\nx:\n\t$(call run,repo-memory,deploy)\n"},
    "continued": {"Makefile": "x:\n\techo a && \\\n\trepo-memory accept deploy\n"},
    "parse time": {"Makefile": "X := $(shell repo-memory accept deploy)\nx:\n\ttrue\n"},
    "shell assignment": {"Makefile": "X != repo-memory accept deploy\nx:\n\ttrue\n"},
    "recursive": {"Makefile": "x:\n\t$(MAKE) -C sub y\n", "sub/Makefile": "y:\n\trepo-memory accept deploy\n"},
    "pattern": {"Makefile": "x: a.out\n%.out:\n\trepo-memory accept $@\n"},
    "target variable": {"Makefile": "x: CMD = repo-memory accept\nx:\n\t$(CMD) deploy\n"},
    "shell set": {"Makefile": "SHELL := repo-memory accept deploy\nx:\n\ttrue\n"},
    "default goal": {"Makefile": ".PHONY: all\nall:\n\trepo-memory accept deploy\nx:\n\ttrue\n"},
}


@pytest.mark.parametrize("name", list(MAKEFILES))
def test_make_is_read_past_includes_variables_and_inline_recipes(places: reserved.Places, name: str):
    _write(places.root, MAKEFILES[name])
    line = "make" if name == "default goal" else "make x"
    why = places.command(line, places.root)
    assert reserved.PERSON in why and f"make in {places.root} runs " in why, why
    assert reserved.PERSON in places.command(f"cd {places.root} && {line} -s", places.root / ".agents")


# Makefiles that set SHELL so that a make asked with SHELL on its command line would run the recipe for real
OVERRIDES = ["$(eval override SHELL := /bin/sh)\n", "all: SHELL := /bin/sh\n", "MAKEFLAGS += SHELL=/bin/sh\n",
             "override \\\nSHELL := /bin/sh\n", "override SHELL = /bin/sh\n", "load ./ext.so\n"]


@pytest.mark.parametrize("head", OVERRIDES)
def test_the_guard_runs_no_line_of_the_makefile_however_it_sets_its_shell(places: reserved.Places, head: str):
    ran = places.root / "ran"
    _write(places.root, {"Makefile": f"{head}X := $(shell touch {ran}-parse)\nall:\n\ttouch {ran}\n"
                                     f"release:\n\trepo-memory accept deploy > {ran}-person\n"})
    assert places.command("make", places.root) == ""
    assert reserved.PERSON in places.command("make release", places.root)
    assert not list(places.root.glob("ran*"))


@pytest.mark.parametrize("text", ["test:\n\tpython3 -c 'print(1)'\nload-fixtures:\n\tpython3 manage.py loaddata x.json\n",
                                  "test:\n\techo ok\nload:\n\t./scripts/load.sh\n"])
def test_a_target_named_load_is_no_reason_to_refuse(places: reserved.Places, text: str):
    _write(places.root, {"Makefile": text})
    assert places.command("make test", places.root) == ""
    assert places.command("make load", places.root) == ""


def test_a_target_that_runs_no_persons_command_is_allowed_beside_one_that_does(places: reserved.Places):
    _write(places.root, {"Makefile": "test:\n\tpython3 -c 'print(1)'\nrelease:\n\trepo-memory accept deploy\n"})
    assert places.command("make test", places.root) == ""
    assert places.command("make -n test", places.root) == ""
    assert reserved.PERSON in places.command("make release", places.root)
    assert reserved.PERSON in places.command("make test release", places.root)


@pytest.mark.parametrize("text", ["CMD := $(shell cat .cmd)\ntest:\n\techo testing; $(CMD)\n",
                                  "test:\n\t$(DEPLOY_TOOL) accept deploy\n"])
def test_a_command_named_by_what_only_the_run_knows_is_refused_where_it_may_be_a_persons(places: reserved.Places, text: str):
    _write(places.root, {"Makefile": text, ".cmd": "repo-memory accept deploy"})
    why = places.command("make test", places.root)
    assert "cannot tell" in why and "run the commands of the target directly" in why, why


@pytest.mark.parametrize("text", ["PY := $(shell command -v python3)\ntest:\n\t$(PY) -m pytest -q\n",
                                  "test:\n\t$(PYTHON) -m pytest -q\n\t$(CC) -o x x.c\n\t@$(Q)echo ok\n",
                                  "GOBIN := $(shell go env GOPATH)/bin\ntest:\n\t$(GOBIN)/golangci-lint run\n"])
def test_an_ordinary_build_with_commands_from_the_environment_is_allowed(places: reserved.Places, text: str):
    _write(places.root, {"Makefile": text})
    assert places.command("make test", places.root) == ""


def test_a_variable_given_on_the_line_stands_for_its_value(places: reserved.Places):
    _write(places.root, {"Makefile": "TOOL = echo\ntest:\n\t$(TOOL) accept deploy\n"})
    assert places.command("make test", places.root) == ""
    assert reserved.PERSON in places.command("make test TOOL=repo-memory", places.root)


def test_a_large_makefile_is_read_without_running_make(places: reserved.Places):
    steps = " ".join(f"step{n}" for n in range(5000))
    rules = "".join(f"step{n}:\n\t$(CC) -c src/f{n}.c -o f{n}.o\n" for n in range(5000))
    _write(places.root, {"Makefile": f"all: {steps}\n{rules}release: {steps}\n\trepo-memory accept deploy\n"})
    assert places.command("make -j8 all", places.root) == ""
    assert reserved.PERSON in places.command("make release", places.root)


def test_the_lines_are_read_from_the_makefile_make_would_read(places: reserved.Places):
    _write(places.root, {"GNUmakefile": "x:\n\ttrue\n", "Makefile": "x:\n\trepo-memory accept deploy\n",
                         "sub/makefile": "x:\n\trepo-memory accept deploy\n"})
    assert places.command("make x", places.root) == ""
    assert reserved.PERSON in places.command("make -f Makefile x", places.root)
    assert reserved.PERSON in places.command("make -C sub x", places.root)
    lines, folder = makes.runs(["make", "-C", "sub", "x"], places.root, [])
    assert folder == places.root / "sub" and [line for line, _ in lines] == ["repo-memory accept deploy"]


@pytest.mark.parametrize("line", ["make -j 8", "make -l 2.5 -j4", "make load", "make -k -j 8 load"])
def test_a_jobs_count_is_no_goal_and_a_target_named_like_a_directive_is_read(places: reserved.Places, line: str):
    _write(places.root, {"Makefile": "load:\n\trepo-memory accept deploy\nvpath:\n\ttrue\n"})
    assert reserved.PERSON in places.command(line, places.root), line


def test_under_make_e_the_environment_overrides_the_makefile(places: reserved.Places):
    _write(places.root, {"Makefile": "TOOL = echo\ntest:\n\t$(TOOL) accept deploy\n"})
    assert places.command("TOOL=repo-memory make test", places.root) == ""
    assert reserved.PERSON in places.command("TOOL=repo-memory make -e test", places.root)
    assert reserved.PERSON in places.command("TOOL=repo-memory make --environment-overrides test", places.root)


def test_an_argument_a_call_was_not_given_is_empty_and_a_condition_no_command(places: reserved.Places):
    _write(places.root, {"Makefile": "define fix\n# a comment\ntouch $(1).raw\nendef\nx:\n\t@$(if $(2),$(call fix,$@))\n"})
    assert places.command("make x", places.root) == ""


@pytest.mark.parametrize("line", ["make $T", "make \"$(printf release)\"", "make `echo release`", "make rel*"])
def test_a_goal_the_shell_expands_stands_for_every_target(places: reserved.Places, line: str):
    _write(places.root, {"Makefile": "test:\n\ttrue\nrelease:\n\trepo-memory accept deploy\n"})
    assert reserved.PERSON in places.command(line, places.root), line
