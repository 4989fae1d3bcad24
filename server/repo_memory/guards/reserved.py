"""What an agent's own file and shell tools may not touch: the places only repo-memory writes, and a person's commands.

The PreToolUse hook asks these questions before Claude Code or Codex runs an agent's Write/Edit/apply_patch or shell
command, and refuses the call when the answer is a reason:

- the experience logs and blobs (append-only evidence: records go through `remember`/`checkpoint`),
- `.agents/repo-memory.toml` (review and write limits are a person's settings),
- `<git dir>/repo-memory/` (this clone's state: index, acceptances, pending commits) and the key folder,
- `repo-memory accept/reject/feedback/log add/loop accept/loop abort/loop due --trust-specs-at/uninstall/stale --pin` run through the agent's shell (a
  person's decisions, recorded as a person's).

A shell command is read for the paths it names; one that names a reserved place is allowed only when every command in
it only reads (cat, grep, git log...: guards/readers.py) and no redirect, `tee`, `sort -o`, sed `w`... writes into a
reserved place (or somewhere it cannot tell: `> "$F"`, a relative file after a `cd`). This raises the bar; it does not
make a shell safe: a program can reach any path without naming it (docs/security.md says what stops that: the marks).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

from repo_memory.guards import pagers, readers, wrappers

EXPERIENCE_DIR = ".agents/experience"  # formats.experience.EXPERIENCE_DIR: guards sit below formats

CONFIG_FILE = ".agents/repo-memory.toml"
LOGS = f"the experience logs ({EXPERIENCE_DIR}/) are append-only evidence only repo-memory writes: record with the remember or checkpoint tool"
SETTINGS = f"{CONFIG_FILE} holds a person's settings (review, write limits): ask the user to change it"
STATE = "this clone's repo-memory state (index, acceptances, pending commits, keys) is repo-memory's own: use its tools"
PERSON = ("is a person's decision, recorded as a person's: ask the user to run it in their own terminal (for feedback, "
          "use the feedback tool)")

GIT_READERS = frozenset({"log", "show", "diff", "status", "blame", "ls-files", "ls-tree", "cat-file", "grep", "rev-parse", "shortlog"})
GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source"})
# Git settings that run a program (a pager, a filter, an editor…) or read more settings from a file (include.path):
# given on the command line (-c, --config-env) or through the environment, they make a reader a reader no more.
_GIT_RUNS = re.compile(r"pager|editor|fsmonitor|external|textconv|command|program|alias\.|hook|filter|askpass|helper|include",
                       re.IGNORECASE)
# A pager git runs (PAGER, GIT_PAGER, core.pager, pager.<command>) is harmless when it is a plain one (guards/pagers.py:
# cat, less or more with options that write no file and run no command); any other makes git a writer.
_PAGER_KEY = re.compile(r"core\.pager|pager\.[^=]+", re.IGNORECASE)
READ_HINT = "; to read them, use a plain reader: cat, grep, or `git --no-pager log -- …` with no pager or program setting"
_GIT_CONFIG_FILES = frozenset({"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"})  # settings not read here
PERSON_COMMANDS = (("accept",), ("reject",), ("feedback",), ("uninstall",), ("log", "add"), ("loop", "accept"), ("loop", "abort"))
PERSON_OPTIONS = frozenset({"--pin", "--follow-renames"})  # of `stale`: a person's check settles stale memory
# Wrappers whose options are not read (guards/wrappers.py reads env's, sudo's, timeout's…): past them, words with a dash
# and numbers are skipped to the command.
WRAPPERS = frozenset({"time", "xargs"})
# Words that open a compound command or negate one: what follows them is a command too ({ cmd; }, if cmd; then cmd; fi).
KEYWORDS = frozenset({"{", "}", "!", "if", "then", "elif", "else", "fi", "while", "until", "do", "done"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})  # `bash -c 'cmd'`: the string is a shell line of its own
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", "|&"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_HARMLESS_TARGET = re.compile(r"^(?:&-?\d*-?|/dev/null|/dev/stderr|/dev/stdout)$")
_REDIRECT = re.compile(r"(?:(?<![<>])(?:\d*|&)>>?\|?|\d*<>)\s*([^\s;|&()<>]*(?:&-?\d*-?)?)")  # `<>` opens to write too
_MOVES = frozenset({"cd", "pushd", "popd"})


class Places:
    """The reserved places of one repository, resolved once."""

    def __init__(self, root: Path, git_dir: Path, key_dir: Path, common_dir: Path | None = None):
        self.root = root.resolve()
        self.logs = (self.root / EXPERIENCE_DIR).resolve()
        self.config = (self.root / CONFIG_FILE).resolve()
        self.state = (git_dir / "repo-memory").resolve()
        self.clone = ((common_dir or git_dir) / "repo-memory").resolve()  # a linked worktree's clone-wide state
        self.keys = key_dir.expanduser().resolve()
        # What a shell command would write to name them: as typed from the root, inside .agents, or absolute.
        self.names = sorted({".git/repo-memory", f"{EXPERIENCE_DIR}", "experience/", "repo-memory.toml", str(self.state),
                             str(self.clone), str(self.keys), str(self.logs)}, key=len, reverse=True)

    def path(self, name: str, cwd: Path | None = None) -> str:
        """Why an agent's file tool may not write `name` ('' when it may)."""
        path = Path(name).expanduser()
        if not path.is_absolute():
            path = (cwd or self.root) / path
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL: nothing a tool can write either
            return ""
        for place, why in ((self.logs, LOGS), (self.config, SETTINGS), (self.state, STATE), (self.clone, STATE), (self.keys, STATE)):
            if resolved == place or place in resolved.parents:
                return why
        return ""

    def command(self, text: str, cwd: Path | None = None) -> str:
        """Why an agent's shell may not run `text` (from `cwd`, else the root) ('' when it may)."""
        segments = _segments(text)
        for words in segments or []:
            person = _person_command(words) or _inner_person_command(words)
            if person:
                return f"`repo-memory {person}` {PERSON}"
        named = [n for n in self.names if n in text]
        if not named:
            return ""
        if segments is None or not all(_reads_only(words) for words in segments) or self._writes_into(text, segments, cwd):
            place = named[0]
            why = LOGS if "experience" in place else SETTINGS if place.endswith(".toml") else STATE
            return f"the command names {place} and may change it; {why}{READ_HINT}"
        return ""

    def _writes_into(self, text: str, segments: list[list[str]], cwd: Path | None) -> bool:
        """Whether a redirect or a reader (`tee`, `sort -o`…) of `text` writes into a reserved place, or a file it cannot
        tell is not one."""
        targets = [m.group(1).strip("'\"") for m in _REDIRECT.finditer(text)]
        targets += [file for words in segments if (rest := _command_words(words))
                    for file in readers.writes(rest[0].rsplit("/", 1)[-1], rest[1:]) or []]
        unwrapped = [_unwrap(words) for words in segments]
        moved = any(moves or rest and rest[0] in _MOVES for _, rest, moves in unwrapped)
        for target in targets:
            if _HARMLESS_TARGET.match(target):
                continue
            if not target or "$" in target or "`" in target or moved and not target.startswith(("/", "~")):
                return True  # where it writes is not known before the shell runs
            if any(name in target for name in self.names) or self.path(target, cwd):
                return True
        return False


def _tokens(text: str) -> list[str] | None:
    """The words and operators of a shell line (None when it cannot be read, e.g. an open quote)."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()\n")
        lexer.whitespace = " \t\r"
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return None


def _operator(token: str) -> bool:
    return token in SEPARATORS or set(token) <= set(";&|()\n")


def _segments(text: str) -> list[list[str]] | None:
    """The simple commands of a shell line, each as its words (None when it cannot be read, e.g. an open quote)."""
    tokens = _tokens(text)
    if tokens is None:
        return None
    out: list[list[str]] = [[]]
    for token in tokens:
        if _operator(token):
            out.append([])
        else:
            out[-1].append(token)
    return [words for words in out if words]


def _unwrap(words: list[str]) -> tuple[list[str], list[str], bool]:
    """`words` as the variables assigned for the command, its words past them and past wrappers (`env -u NAME`, `sudo`,
    `timeout 5s`…, env's -S string unfolded), and whether a wrapper runs it in another folder (`env -C DIR`)."""
    assignments: list[str] = []
    rest, moves = list(words), False
    while rest:
        head, unwrapped = rest[0], wrappers.unwrap(rest[0], rest[1:])
        if unwrapped is not None:
            rest, moves = unwrapped[0], moves or unwrapped[1]
        elif _ASSIGNMENT.match(head):
            assignments, rest = [*assignments, head], rest[1:]
        elif head.rsplit("/", 1)[-1] in WRAPPERS or head in KEYWORDS or head.startswith("-") and len(rest) > 1 or head.isdigit():
            rest = rest[1:]
        else:
            break
    return assignments, rest, moves


def _command_words(words: list[str]) -> list[str]:
    return _unwrap(words)[1]


def _person_command(words: list[str]) -> str:
    rest = _command_words(words)
    if not rest:
        return ""
    program = rest[0].rsplit("/", 1)[-1]
    if _PYTHON.match(program) and rest[1:2] == ["-m"] and rest[2:3] in (["repo_memory"], ["repo_memory.__main__"]):
        rest, program = rest[2:], "repo-memory"
    if program not in ("repo-memory", "repo_memory"):
        return ""
    args, skip = [], False
    for word in rest[1:]:
        if skip or word.startswith("-"):
            skip = word == "--root"  # the one global option that takes a value
            continue
        args.append(word)
    for command in PERSON_COMMANDS:
        if tuple(args[: len(command)]) == command:
            return " ".join(command)
    if args[:2] == ["loop", "due"] and any(w.partition("=")[0] == "--trust-specs-at" for w in rest[1:]):
        return "loop due --trust-specs-at"  # which committed specs run unaccepted: a person's setting of a CI job
    if args[:1] == ["stale"]:  # reading is the agent's too; pinning and following renames are a person's checks
        done = [w.partition("=")[0] for w in rest[1:] if w.partition("=")[0] in PERSON_OPTIONS]
        return f"stale {done[0]}" if done else ""
    return ""


def _shell_line(rest: list[str]) -> str:
    """The line `bash -c '…'` (or sh, zsh…) or `eval '…'` runs, when `rest` is such a command ('' else)."""
    if rest[:1] == ["eval"]:  # eval joins its words and runs them as a line
        return " ".join(rest[1:])
    if not rest or rest[0].rsplit("/", 1)[-1] not in SHELLS:
        return ""
    return next((rest[n + 1] for n, w in enumerate(rest[:-1]) if w.startswith("-") and "c" in w.lstrip("-")), "")


def _inner_person_command(words: list[str]) -> str:
    """The person's command a `bash -c '…'` (or sh, zsh…) line runs, if any."""
    for inner in _segments(_shell_line(_command_words(words))) or []:
        if person := _person_command(inner) or _inner_person_command(inner):
            return person
    return ""


def commands(text: str) -> Iterator[list[str]]:
    """The simple commands the shell line `text` runs, each as its words past assignments and wrappers, those of a line
    `bash -c '…'` (sh, zsh…) or `eval '…'` runs among them; a line that cannot be read (an open quote) as its words split
    at spaces."""
    return (words for words, _ in located(text, None))


def located(text: str, cwd: Path | None, depth: int = 0) -> Iterator[tuple[list[str], Path | None]]:
    """The simple commands of `text` (as `commands`), each with the folder it runs in when the line starts in `cwd`:
    `cd DIR`, `pushd DIR` and `popd` followed, a subshell `( … )` keeping its own; None where that is not known."""
    here, pushed, outer, words = cwd, list[Path | None](), list[Path | None](), list[str]()
    for token in [*(_tokens(text) or text.split()), ";"]:
        if not _operator(token):
            words.append(token)
            continue
        rest, words = _command_words(words), []
        line = _shell_line(rest) if depth < 8 and rest else ""
        if line:
            yield from located(line, here, depth + 1)  # a shell of its own: its `cd` stays in it
        elif rest:
            yield rest, here
            here = _moved(rest, here, pushed) if rest[0] in _MOVES else here
        for char in token:  # `(` opens a subshell (or `$(`), `)` goes back to the folder before it
            if char == "(":
                outer.append(here)
            elif char == ")":
                here = outer.pop() if outer else None


def _moved(rest: list[str], here: Path | None, pushed: list[Path | None]) -> Path | None:
    """The folder `cd`/`pushd`/`popd` (`rest`) moves the shell to from `here` (None when not known: `cd`, `cd -`, `$DIR`)."""
    if rest[0] == "popd":
        return pushed.pop() if pushed else None
    named, words = [], iter(rest[1:])
    for word in words:
        if re.match(r"\d*[<>]", word):  # a redirect, its target glued on (`>/dev/null`) or the next word
            if re.fullmatch(r"\d*[<>]+&?", word):
                next(words, None)
        elif word == "-" or not word.startswith("-"):
            named.append(word)
    if rest[0] == "pushd":
        pushed.append(here)
    if here is None or len(named) != 1 or named[0] == "-" or "$" in named[0] or "`" in named[0]:
        return None
    return Path(os.path.normpath(here / Path(named[0]).expanduser()))


def _reads_only(words: list[str]) -> bool:
    assignments, rest, _ = _unwrap(words)
    program = rest[0].rsplit("/", 1)[-1] if rest else ""
    paged = program != "git" or not any(w in ("--no-pager", "-P") for w in _git_options(rest[1:]))
    if any(_setting_runs(w, paged) for w in assignments):
        return False
    if not rest:
        return True
    if program == "git":
        return _git_reads_only(rest[1:], paged)
    if program == "find":
        return not any(w in ("-delete", "-exec", "-execdir", "-ok", "-fprint", "-fprintf", "-fls") for w in rest)
    return readers.writes(program, rest[1:]) is not None  # what a reader writes, _writes_into judges


def _setting_runs(assignment: str, paged: bool) -> bool:
    """Whether a variable set for a command makes it run a program: a pager, or flags for less (LESS), that are no plain
    ones, or a variable less runs or reads a program by (LESSOPEN…), unless nothing is paged (`git --no-pager`); or a git
    setting (_git_setting_runs)."""
    name, _, value = assignment.partition("=")
    if name in ("PAGER", "GIT_PAGER", "LESS"):
        return paged and not (pagers.plain_flags(value) if name == "LESS" else pagers.plain(value))
    if pagers.RUNS.fullmatch(name):
        return paged and bool(value)
    return _git_setting_runs(assignment)


def _git_setting_runs(assignment: str) -> bool:
    """Whether a variable set for a command makes git run a program: a setting given as GIT_CONFIG_KEY_n or in
    GIT_CONFIG_PARAMETERS that runs one, a settings file (GIT_CONFIG_GLOBAL…), or git's own GIT_PAGER, GIT_EXTERNAL_DIFF…"""
    name, _, value = assignment.partition("=")
    if name in _GIT_CONFIG_FILES:
        return True
    if name.startswith("GIT_CONFIG_KEY_") or name == "GIT_CONFIG_PARAMETERS":
        return bool(_GIT_RUNS.search(value))
    return name.startswith("GIT_") and bool(_GIT_RUNS.search(name))


def _git_options(args: list[str]) -> list[str]:
    """git's own options at the start of `git ARGS`, before its subcommand."""
    for n, word in enumerate(args):
        if not word.startswith("-") and (not n or args[n - 1] not in GIT_VALUED):
            return args[:n]
    return args


def _git_option_runs(setting: str, env: bool, paged: bool) -> bool:
    """Whether git's `-c KEY=VALUE` (`--config-env KEY=VAR` when `env`: a value not known here) runs a program."""
    key, _, value = setting.partition("=")
    if _PAGER_KEY.fullmatch(key):
        return paged and (env or not pagers.plain(value))
    return bool(_GIT_RUNS.search(key))


def _git_reads_only(args: list[str], paged: bool = True) -> bool:
    """Whether `git ARGS` only reads: its subcommand, past git's own options (`-C DIR`, `-c KEY=VALUE`, `--no-pager`),
    is a reader, no setting given (`-c KEY=…`, `--config-env KEY=VAR`) runs a program, and no `--output=FILE` writes."""
    skip = False
    for n, word in enumerate(args):
        if skip:
            skip = False
            if args[n - 1] in ("-c", "--config-env") and _git_option_runs(word, args[n - 1] != "-c", paged):
                return False
        elif word in GIT_VALUED:
            skip = True
        elif word.startswith(("-c", "--config-env=")):  # -cKEY=VALUE, --config-env=KEY=VAR
            if _git_option_runs(word.removeprefix("--config-env=").removeprefix("-c"), word.startswith("--"), paged):
                return False
        elif not word.startswith("-"):
            return word in GIT_READERS and not any(w.startswith("--output") for w in args[n + 1:])
    return True
