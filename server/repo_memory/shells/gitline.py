"""The git commands an agent's shell line runs, as the pre-tool hook reads them before it runs: past wrappers and inner
lines (`sudo -u X`, `timeout 5`, `bash -c '…'`, `eval '…'`, `find -exec`, `uv run`…: guards/unfolding.py), through git aliases (the repository's,
and one the line gives itself: `git -c alias.wipe='add -A' wipe`), each with the folder it runs in (`cd`, `pushd`, `git
-C DIR` followed), and the git command lines an inline script (`python3 -c '…os.system("git add -A")'`) runs."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from repo_memory.git import running
from repo_memory.guards import reserved, unfolding
from repo_memory.guards.unfolding import given_alias

Alias = unfolding.Alias
# Git commands no alias can stand for (git runs its own command), with those whose aliases are never looked up here.
UNALIASED = frozenset({"commit", "add", "stash", "clean", "checkout", "restore", "switch", "reset", "read-tree", "push", "pull",
                       "fetch", "branch", "tag", "config", "cherry-pick"}) | reserved.GIT_READERS | running.MOVERS
# An inline script's interpreter and the options that give it its script: `python3 -c CODE`, `node -e CODE`…
_INLINE = ((re.compile(r"^python(?:\d+(?:\.\d+)?)?$"), ("-c",)), (re.compile(r"^(?:node|nodejs|bun|deno)$"), ("-e", "--eval", "-p")),
           (re.compile(r"^(?:perl|ruby)$"), ("-e", "-E")))
# What in a script's text runs a program: only a script that has one of these can run a git command line it names.
_RUNS = re.compile(r"\b(?:system|popen|subprocess|exec\w*|spawn\w*|check_call|check_output|run|call)\b|`|\bqx")
_LITERAL = re.compile(r"""(['"])((?:\\.|(?!\1).)*)\1""")
_LIST = re.compile(r"""\[\s*(?:(['"])(?:\\.|(?!\1).)*\1\s*,?\s*)+\]""")


@dataclass(frozen=True)
class GitCall:
    """One git command of a shell line: its words from `git` on, and the folder it runs in (None: not known)."""

    words: tuple[str, ...]
    folder: Path | None


def git_calls(text: str, alias: Alias, cwd: Path | None = None, scripts: bool = False, depth: int = 0) -> Iterator[GitCall]:
    """The git commands the shell line `text` (run in `cwd`) runs: `git ci` may be `git commit`, `!git add -A && git
    commit` a line of its own; with `scripts`, also those an inline script names in a string it may run."""
    for words, here in unfolding.located(text, cwd, alias, depth):  # a shell alias's commands among them
        if scripts and depth < 8:
            for line in inline_lines(words):
                yield from git_calls(line, alias, here, scripts, depth + 1)
        if os.path.basename(words[0]).split("-")[0] != "git":
            continue
        command = running.subcommand(words)
        plain = os.path.basename(words[0]) == "git" and command in words and command not in UNALIASED
        stands_for = (given_alias(words, command) or alias(command)) if plain and depth < 8 else ""
        folder = _folder(words, here)
        if stands_for.startswith("!"):  # its commands came from `located`, a folder not known here
            continue
        if stands_for:
            at = words.index(command)
            line = shlex.join([*words[:at], *shlex.split(stands_for), *words[at + 1:]])
            yield from git_calls(line, alias, here, scripts, depth + 1)
        else:
            yield GitCall(tuple(words), folder)


def _folder(words: list[str], here: Path | None) -> Path | None:
    """The folder a git command works in: where its shell stands, moved by each `-C DIR` (None when not known)."""
    for option, value in unfolding.git_options(words):
        if option == "-C" and here is not None:
            here = None if "$" in value or "`" in value else Path(os.path.normpath(here / Path(value).expanduser()))
    return here


def inline_lines(words: list[str]) -> list[str]:
    """The shell lines an interpreter's inline script (`python3 -c CODE`) may run: its strings naming git (a list of them,
    `['git', 'add', '-A']`, as one line), when the script has a way to run a program (os.system, subprocess…)."""
    program = os.path.basename(words[0]) if words else ""
    flags = next((flags for pattern, flags in _INLINE if pattern.match(program)), ())
    code = next((words[n + 1] for n, w in enumerate(words[:-1]) if w in flags), "")
    if "git" not in code or not _RUNS.search(code):
        return []
    lines = [" ".join(m.group(2) for m in _LITERAL.finditer(listed.group(0))) for listed in _LIST.finditer(code)]
    lines += [m.group(2) for m in _LITERAL.finditer(code)]
    return [line for line in lines if re.search(r"(?:^|[\s;&|(])git\s", line)]
