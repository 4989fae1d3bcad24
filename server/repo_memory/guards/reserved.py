"""What an agent's own file and shell tools may not touch: the places only repo-memory writes, and a person's commands.

The PreToolUse hook asks these questions before Claude Code or Codex runs an agent's Write/Edit/apply_patch or shell
command, and refuses the call when the answer is a reason:

- the experience logs and blobs (append-only evidence: records go through `remember`/`checkpoint`),
- `.agents/repo-memory.toml` (review and write limits are a person's settings),
- `<git dir>/repo-memory/` (this clone's state: index, acceptances, pending commits) and the key folder,
- `repo-memory accept/reject/feedback/log add/log redact/loop accept/loop abort/loop due --trust-specs-at/uninstall/stale --pin`
  (a person's decisions, recorded as a person's) in any command the agent's shell line unfolds into (guards/unfolding.py:
  `bash -c`, eval, find -exec, `uv run`, a git shell alias, a make recipe…), repo-memory run by Python too.

A shell command is read for the paths it names; one that names a reserved place is allowed only when every command in
it only reads (cat, grep, git log...: guards/readers.py) and no redirect, `tee`, `sort -o`, sed `w`... writes into a
reserved place (or somewhere it cannot tell: `> "$F"`, a relative file after a `cd`). This raises the bar; it does not
make a shell safe: a program can reach any path without naming it (docs/security.md says what stops that: the marks).
"""

from __future__ import annotations

import re
from pathlib import Path

from repo_memory.guards import pagers, readers
from repo_memory.guards.unfolding import GIT_VALUED, MOVES, UNREAD, Alias, Ask, Split, command_words, segments, unfolded, unwrap

EXPERIENCE_DIR = ".agents/experience"  # formats.experience.EXPERIENCE_DIR: guards sit below formats

CONFIG_FILE = ".agents/repo-memory.toml"
LOGS = f"the experience logs ({EXPERIENCE_DIR}/) are append-only evidence only repo-memory writes: record with the remember or checkpoint tool"
SETTINGS = f"{CONFIG_FILE} holds a person's settings (review, write limits): ask the user to change it"
STATE = "this clone's repo-memory state (index, acceptances, pending commits, keys) is repo-memory's own: use its tools"
PERSON = ("is a person's decision, recorded as a person's: ask the user to run it in their own terminal (for feedback, "
          "use the feedback tool)")

GIT_READERS = frozenset({"log", "show", "diff", "status", "blame", "ls-files", "ls-tree", "cat-file", "grep", "rev-parse", "shortlog"})
# Git settings that run a program (a pager, a filter, an editor…) or read more settings from a file (include.path):
# given on the command line (-c, --config-env) or through the environment, they make a reader a reader no more.
_GIT_RUNS = re.compile(r"pager|editor|fsmonitor|external|textconv|command|program|alias\.|hook|filter|askpass|helper|include",
                       re.IGNORECASE)
# A pager git runs (PAGER, GIT_PAGER, core.pager, pager.<command>) is harmless when it is a plain one (guards/pagers.py:
# cat, less or more with options that write no file and run no command); any other makes git a writer.
_PAGER_KEY = re.compile(r"core\.pager|pager\.[^=]+", re.IGNORECASE)
READ_HINT = "; to read them, use a plain reader: cat, grep, or `git --no-pager log -- …` with no pager or program setting"
# settings files not read here (XDG_CONFIG_HOME holds git's user-wide one; HOME's .gitconfig: pagers.RUNS)
_GIT_CONFIG_FILES = frozenset({"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "XDG_CONFIG_HOME"})
PERSON_COMMANDS = (("accept",), ("reject",), ("feedback",), ("uninstall",), ("log", "add"), ("log", "redact"), ("loop", "accept"),
                   ("loop", "abort"))
PERSON_OPTIONS = frozenset({"--pin", "--follow-renames"})  # of `stale`: a person's check settles stale memory
# The options taking a value of repo-memory itself and of the commands read for a person's option (`loop due`, `stale`).
VALUED = frozenset({"--root", "--event", "--agent", "--trust-specs-at", "--pin"})
_NAMES = frozenset({"repo-memory", "repo_memory"})
SHORT = frozenset({"experience/", "repo-memory.toml"})  # Places.names as typed from inside .agents
_EXPANDED = re.compile(r"[$`]")  # a word the shell makes something else of before the command sees it (`$OPT`)
_PYTHON = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)?)?$")
_HARMLESS_TARGET = re.compile(r"^(?:&-?\d*-?|/dev/null|/dev/stderr|/dev/stdout)$")
_REDIRECT = re.compile(r"(?:(?<![<>])(?:\d*|&)>>?\|?|\d*<>)\s*([^\s;|&()<>]*(?:&-?\d*-?)?)")  # `<>` opens to write too


class Places:
    """The reserved places of one repository, resolved once."""

    def __init__(self, root: Path, git_dir: Path, key_dir: Path, common_dir: Path | None = None, ask: Ask | None = None):
        self.root = root.resolve()
        self.ask = ask  # runs git for the settings a line's git reads (its pager, an alias): not asked without it
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
        folded = _folded(resolved)
        for place, why in ((self.logs, LOGS), (self.config, SETTINGS), (self.state, STATE), (self.clone, STATE), (self.keys, STATE)):
            if folded == _folded(place) or _folded(place) in map(_folded, resolved.parents):
                return why
        return ""

    def command(self, text: str, cwd: Path | None = None, alias: Alias | None = None) -> str:
        """Why an agent's shell may not run `text` (from `cwd`, else the root) ('' when it may); `alias` tells what a git
        alias of the repository stands for."""
        for words, _, via in unfolded(text, cwd or self.root, alias, ask=self.ask):  # every command the line unfolds into
            if words == [UNREAD]:  # a make whose commands are not known: one of them may be a person's
                return via
            if person := _person_command(words):
                return f"`repo-memory {person}` {PERSON}" + (f"; {via}" if via else "")
        named = _named(self.names, text)
        if not named:
            return ""
        parts = segments(text)
        if parts is None or not self._reads_only(parts, cwd) or self._writes_into(text, parts, cwd):
            place = named[0]
            why = LOGS if "experience" in place else SETTINGS if place.endswith(".toml") else STATE
            return f"the command names {place} and may change it; {why}{READ_HINT}"
        return ""

    def _reads_only(self, parts: list[list[str]], cwd: Path | None) -> bool:
        """Whether every command of `parts` only reads, a git one by the pager the settings it reads give (in `cwd`, else
        the root; not known past a `cd`)."""
        folder: Path | None = cwd or self.root
        for words in parts:
            assignments, rest, moves = unwrap(words)
            git = rest[0].rsplit("/", 1)[-1] == "git" if rest else False
            if not _reads_only(words) or git and self.ask and not _configured_pager_plain(self.ask, rest, assignments, folder):
                return False
            folder = None if moves or rest[:1] and rest[0] in MOVES else folder
        return True

    def _writes_into(self, text: str, segments: list[list[str]], cwd: Path | None) -> bool:
        """Whether a redirect or a reader (`tee`, `sort -o`…) of `text` writes into a reserved place, or a file it cannot
        tell is not one."""
        targets = [m.group(1).strip("'\"") for m in _REDIRECT.finditer(text)]
        targets += [file for words in segments if (rest := command_words(words))
                    for file in readers.writes(rest[0].rsplit("/", 1)[-1], rest[1:]) or []]
        unwrapped = [unwrap(words) for words in segments]
        moved = any(moves or rest and rest[0] in MOVES for _, rest, moves in unwrapped)
        for target in targets:
            if _HARMLESS_TARGET.match(target):
                continue
            if not target or "$" in target or "`" in target or moved and not target.startswith(("/", "~")):
                return True  # where it writes is not known before the shell runs
            if _named(self.names, target) or self.path(target, cwd):
                return True
        return False


def _named(names: list[str], text: str) -> list[str]:
    """Those of `names` that `text` names, in any case (_folded); the short forms typed from inside .agents
    (`experience/`, `repo-memory.toml`) only where no folder of the project's own comes before them: not in
    `src/experience/card.tsx`, a portfolio's section, but in `../experience/s.jsonl` and `-o.agents/experience/…`."""
    folded = text.casefold()
    return [n for n in names if any(n not in SHORT or _ours(folded, m.start())
                                    for m in re.finditer(re.escape(n.casefold()), folded))]


def _ours(text: str, at: int) -> bool:
    """Whether the short name at `at` of `text` starts its path or follows `.`, `..` or `.agents` in it."""
    if not at or text[at - 1] != "/":
        return True
    component = re.split(r"[/\s'\"=<>|;&(){}]", text[:at - 1])[-1]
    return component in (".", "..") or component.endswith(".agents")  # `-P.agents/…`: an option's value glued on


def _folded(path: Path) -> str:
    """`path` as a case-insensitive file system (macOS's, Windows') names it: `.Agents/Experience` is the logs there.
    Compared so everywhere: on Linux such a folder is another one, which no agent has a reason to write either."""
    return str(path).casefold()


def _person_command(rest: list[str]) -> str:
    """The person's command `rest` (a command past its wrappers) runs ('' when none): `repo-memory ARGS`, or repo-memory
    run by Python (`python -I -m repo_memory`, `python path/to/repo-memory`, `python -c '…repo_memory…'`)."""
    program = rest[0].rsplit("/", 1)[-1] if rest else ""
    rest = _interpreted(rest) if _PYTHON.match(program) else rest
    if not rest or rest[0].rsplit("/", 1)[-1] not in _NAMES:
        return ""
    args, options, value = list[str](), list[str](), False
    for word in rest[1:]:  # a value of an option is neither a command nor an option, whatever the shell makes of it
        if isinstance(word, Split) and not args:  # `--root $X`, X="$PWD accept": the command the shell splits out
            return f"… {word} (an unquoted expansion the shell may split into a command: quote it, \"{word}\")"
        if not value and (word.startswith("-") or _EXPANDED.search(word)):
            options.append(word.partition("=")[0])  # an expanded word may be an option (`$OPT`)
        if not value and not word.startswith("-"):
            args.append(word)
        value = not value and word in VALUED
    named = [word for word in args[:2 if args[:1] in (["log"], ["loop"]) else 1] if _EXPANDED.search(word)]
    if named:  # `log $SUB`: the command, or the second word of one (log add, loop accept)
        return f"{' '.join(args[:2])} (a command the shell names only when it runs)"
    for command in PERSON_COMMANDS:
        if tuple(args[: len(command)]) == command:
            return " ".join(command)
    if args[:2] == ["loop", "due"] and any(w == "--trust-specs-at" or _EXPANDED.search(w) for w in options):
        return "loop due --trust-specs-at"  # which committed specs run unaccepted: a person's setting of a CI job
    if args[:1] == ["stale"]:  # reading is the agent's too; pinning and following renames are a person's checks
        done = [w for w in options if w in PERSON_OPTIONS or _EXPANDED.search(w)]
        return f"stale {done[0]}" if done else ""
    return ""


def _interpreted(rest: list[str]) -> list[str]:
    """`repo-memory ARGS` when the Python command `rest` runs repo-memory, read past the interpreter's options (`-I`,
    `-X dev`, `-Wignore`…): its module (`-m repo_memory…`), a script named repo-memory, or `-c CODE` naming repo_memory."""
    n = 1
    while n < len(rest):
        word, n = rest[n], n + 1
        if word == "--check-hash-based-pycs":
            n += 1
        elif word == "-" or not word.startswith("-"):  # the script, its arguments after it
            return ["repo-memory", *rest[n:]] if word.rsplit("/", 1)[-1] in _NAMES else []
        elif not word.startswith("--"):
            for at, letter in enumerate(word[1:], 2):
                if letter in "mcWX":
                    value = word[at:] or (rest[n] if n < len(rest) else "")
                    n += not word[at:]
                    if letter == "m" and (value == "repo_memory" or value.startswith("repo_memory.")) or \
                            letter == "c" and "repo_memory" in value:
                        return ["repo-memory", *rest[n:]]
                    if letter in "mc":
                        return []
                    break
    return []


def _reads_only(words: list[str]) -> bool:
    assignments, rest, _ = unwrap(words)
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


def _configured_pager_plain(ask: Ask, rest: list[str], assignments: list[str], folder: Path | None) -> bool:
    """Whether the pager `git ARGS` (`rest`) runs by the settings it reads, the repository's and the user's too, is a
    plain one (or none): pager.<command>, else core.pager, asked of git with the line's options and variables in
    `folder` (not known: None, a variable's value the shell expands)."""
    options = _git_options(rest[1:])
    if any(w in ("--no-pager", "-P") for w in options):
        return True
    if folder is None or any(_EXPANDED.search(assignment) for assignment in assignments):
        return False
    command = rest[1 + len(options)] if len(rest) > 1 + len(options) else ""
    env = {name: value for name, _, value in (a.partition("=") for a in assignments)}
    given, core = (ask(folder, [*options, "config", "--get", key], env).strip()
                   for key in (f"pager.{command}", "core.pager"))
    if given and given.lower() not in ("true", "yes", "on", "1"):
        return pagers.plain(given)  # false: no pager; a command: that pager, whatever core.pager says
    return pagers.plain(core)  # none set: PAGER, else git's own default, as before


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
