"""How a shell line unfolds into the commands it runs, as the pre-tool hook reads it before it runs: one reading that
the person-command check (guards/reserved.py) and the sweep (shells/gitline.py) both take.

A line is split at its operators into simple commands, each read past assignments, compound-command keywords and
wrappers (`env -u NAME`, `sudo -u USER`, `timeout 5s`…: guards/wrappers.py). A command that runs commands of its own is
unfolded into them: the line of `bash -c '…'` (sh, zsh…) or `eval '…'`, the command of find's `-exec`/`-execdir`/`-ok`/
`-okdir`, the command a runner runs (`uv run`, `uvx`, `pipx run`, `npx`, `poetry run`…: its options are not read, so
each word past them that may be the command is taken as one; `parallel CMD ::: …`), the command a git command is
given (`rebase -x LINE`, `bisect run CMD`, `submodule foreach LINE`, `difftool -x CMD`, an editor, external diff, filter,
helper… the line sets by `-c` or a variable: _GIT_RUNS), the shell alias git runs (`git -c alias.x='!…' x`, or
one of the repository's own, when the caller can tell what an alias stands for), and the lines a `make` would hand its
shell, read from its makefiles without running make (guards/makes.py: includes, variables, the targets named; under
`make -n` only the lines make runs anyway). `$(command -v NAME)`, `$(which NAME)` and the like stand for NAME.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

from repo_memory.guards import makes, wrappers

Alias = Callable[[str], str]  # what a git alias of the repository stands for ('' for none)
# What `git ARGS` run in a folder (None: the repository's) with variables added prints ('' when it fails)
Ask = Callable[[Path | None, list[str], dict[str, str]], str]
# Wrappers whose options are not read (guards/wrappers.py reads env's, sudo's, timeout's…): past them, words with a dash
# and numbers are skipped to the command.
WRAPPERS = frozenset({"time", "busybox", "toybox"})  # xargs: guards/wrappers.py
# Words that open a compound command or negate one: what follows them is a command too ({ cmd; }, if cmd; then cmd; fi).
KEYWORDS = frozenset({"{", "}", "!", "if", "then", "elif", "else", "fi", "while", "until", "do", "done"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})  # `bash -c 'cmd'`: the string is a shell line of its own
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n", "(", ")", "|&"})
MOVES = frozenset({"cd", "pushd", "popd"})
GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source"})
FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# A runner, and the words after which it runs the command it is given ((): right after the runner's name).
RUNNERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "uv": (("run",), ("tool", "run")), "uvx": ((),), "pipx": (("run",),), "npx": ((),), "bunx": ((),),
    "pnpm": (("exec",), ("dlx",)), "yarn": (("exec",), ("dlx",)), "npm": (("exec",),), "poetry": (("run",),),
    "pdm": (("run",),), "hatch": (("run",),), "rye": (("run",),), "pipenv": (("run",),), "conda": (("run",),),
    "mamba": (("run",),), "micromamba": (("run",),), "pixi": (("run",), ("exec",))}
# The words that make a command a person's (guards/reserved.py's PERSON_COMMANDS…) after a name not known
_PERSON_WORDS = frozenset({"accept", "reject", "feedback", "uninstall", "--trust-specs-at", "--pin", "--follow-renames"})
# What a make line must hold (quotes and backslashes taken out) for one of its commands to be read into a person's
# command or a git one here (repo-memory by name or by Python, a git alias, a make it runs) or to be known only when run
_MAY_RUN = re.compile("repo.memory|python|pypy|git|make|\ue002")
# Settings and variables whose value git runs as a shell line (a credential helper's only after `!` or as a path)
_GIT_RUNS = re.compile(r"(?:sequence|core)\.editor|diff\.external|core\.(?:fsmonitor|sshcommand|askpass|pager)|pager\..+|"
                       r"credential\.(?:.+\.)?helper|filter\..+\.(?:clean|smudge|process)|(?:diff|merge)tool\..+\.cmd|"
                       r"diff\..+\.(?:command|textconv)|merge\..+\.driver|gpg\.(?:.+\.)?program", re.IGNORECASE)
_GIT_RUN_VARIABLES = ("GIT_SEQUENCE_EDITOR", "GIT_EDITOR", "VISUAL", "EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH_COMMAND",
                      "GIT_SSH", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_PAGER", "PAGER")
UNREAD = "\ue001"  # the words of a command that runs commands not known (makes.Unread): `[UNREAD]`, the reason its form
# Variables that point git to other settings than the caller's alias lookup reads
_CONFIG_VARIABLES = re.compile(r"HOME|XDG_CONFIG_HOME|GIT_CONFIG\w*|GIT_DIR|GIT_COMMON_DIR")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# A command substitution that names a program's path: it stands for the program.
_LOOKUP = re.compile(r"""\$\(\s*(?:command\s+-v|which|type\s+-[pP]|realpath|readlink\s+-f)\s+['"]?([^\s()`$;|&'"]+)['"]?\s*\)"""
                     r"""|`\s*(?:command\s+-v|which|type\s+-[pP])\s+([^\s()`$;|&]+)\s*`""")
_DEPTH = 8


class Split(str):
    """A word holding an expansion outside quotes (`$X`, `${X}`, `` `cmd` ``): the shell may split it into more words."""


_UNQUOTED = "\ue000"  # marks an expansion outside quotes through shlex, which drops the quotes


def tokens(text: str) -> list[str] | None:
    """The words and operators of a shell line (None when it cannot be read, e.g. an open quote), a word holding an
    expansion outside quotes as a Split."""
    try:
        lexer = shlex.shlex(_marked(text), posix=True, punctuation_chars=";&|()\n")
        lexer.whitespace = " \t\r"
        lexer.whitespace_split = True
        return [Split(word.replace(_UNQUOTED, "")) if _UNQUOTED in word else word for word in lexer]
    except ValueError:
        return None


def _marked(text: str) -> str:
    """`text` with each `$` or backquote outside quotes marked (_UNQUOTED before it)."""
    out, quote, escaped = [], "", False
    for char in text.replace(_UNQUOTED, ""):
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote and char == quote:
            quote = ""
        elif not quote and char in "'\"":
            quote = char
        elif not quote and char in "$`":
            out.append(_UNQUOTED)
        out.append(char)
    return "".join(out)


def operator(token: str) -> bool:
    return token in SEPARATORS or set(token) <= set(";&|()\n")


def segments(text: str) -> list[list[str]] | None:
    """The simple commands of a shell line, each as its words (None when it cannot be read, e.g. an open quote)."""
    found = tokens(text)
    if found is None:
        return None
    out: list[list[str]] = [[]]
    for token in found:
        if operator(token):
            out.append([])
        else:
            out[-1].append(token)
    return [words for words in out if words]


def unwrap(words: list[str]) -> tuple[list[str], list[str], bool]:
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


def command_words(words: list[str]) -> list[str]:
    return unwrap(words)[1]


def shell_line(rest: list[str]) -> str:
    """The line `bash -c '…'` (or sh, zsh…) or `eval '…'` runs, when `rest` is such a command ('' else)."""
    if rest[:1] == ["eval"]:  # eval joins its words and runs them as a line
        return " ".join(rest[1:])
    if not rest or rest[0].rsplit("/", 1)[-1] not in SHELLS:
        return ""
    return next((rest[n + 1] for n, w in enumerate(rest[:-1]) if w.startswith("-") and "c" in w.lstrip("-")), "")


def commands(text: str) -> Iterator[list[str]]:
    """The simple commands the shell line `text` runs, unfolded as `located` does, without folders."""
    return (words for words, _ in located(text, None))


def located(text: str, cwd: Path | None, alias: Alias | None = None, depth: int = 0,
            ask: Ask | None = None) -> Iterator[tuple[list[str], Path | None]]:
    """The simple commands the shell line `text` runs (see the module's docstring), each with the folder it runs in when
    the line starts in `cwd`: `cd DIR`, `pushd DIR` and `popd` followed, a subshell `( … )` keeping its own; None where
    that is not known. A command that runs others is given too, before them, except a shell's or eval's; a line that
    cannot be read (an open quote) is taken as its words split at spaces."""
    return ((words, folder) for words, folder, _ in unfolded(text, cwd, alias, depth, ask=ask))


def unfolded(text: str, cwd: Path | None, alias: Alias | None = None, depth: int = 0, via: str = "",
             ask: Ask | None = None) -> Iterator[tuple[list[str], Path | None, str]]:
    """The commands of `located`, each with the form of the line that holds it when the line does not spell it out
    ('' when it does): a make recipe line and its makefile, a git alias, find's -exec, a runner; `ask` runs git for an
    alias in settings the line's variables point git to (without it, `alias` is taken for those too)."""
    for _ in range(4):  # $(realpath $(which x)): the inner one first
        text = _LOOKUP.sub(lambda m: shlex.quote(m.group(1) or m.group(2)), text)
    here, pushed, outer, words = cwd, list[Path | None](), list[Path | None](), list[str]()
    for token in [*(tokens(text) or text.split()), ";"]:
        if not operator(token):
            words.append(token)
            continue
        assignments, rest, _ = unwrap(words)
        words = []
        line = shell_line(rest) if depth < _DEPTH and rest else ""
        if line:
            yield from unfolded(line, here, alias, depth + 1, via, ask)  # a shell of its own: its `cd` stays in it
        elif rest:
            yield rest, here, via
            if depth < _DEPTH:
                for inner, folder, holder in _runs(rest, here, alias, assignments, ask):
                    if inner == UNREAD:
                        yield [UNREAD], folder, holder
                        continue
                    yield from unfolded(inner, folder, alias, depth + 1, via or holder, ask)  # the form the line names
            here = _moved(rest, here, pushed) if rest[0] in MOVES else here
        for char in token:  # `(` opens a subshell (or `$(`), `)` goes back to the folder before it
            if char == "(":
                outer.append(here)
            elif char == ")":
                here = outer.pop() if outer else None


def _runs(rest: list[str], here: Path | None, alias: Alias | None, assignments: list[str],
          ask: Ask | None) -> Iterator[tuple[str, Path | None, str]]:
    """The lines the command `rest`, run in `here` with the variables `assignments`, runs of its own, each with the
    folder it runs in and the form that holds it (UNREAD when they are not known)."""
    program = rest[0].rsplit("/", 1)[-1]
    if program == "find":
        yield from ((shlex.join(words), None, "find's -exec runs it") for words in _find_commands(rest))
    elif program == "parallel":  # GNU parallel runs its command words, joined, with a shell for each argument
        words = rest[1:next((n for n, w in enumerate(rest) if w.startswith(":::")), len(rest))]
        yield from ((" ".join(words[n:]), here, "`parallel` runs it") for n in range(min(len(words), 16))
                    if not words[n].startswith("-"))
    elif program in RUNNERS:
        runs = f"`{program}` runs it"
        yield from ((shlex.join(words), here, runs) for words in _runner_commands(rest, RUNNERS[program]))
    elif program == "git":
        yield from ((line, here, f"`git {_git_command(rest)}` runs it{how}") for line, how in _git_given(rest, assignments))
        if (stands_for := _git_alias(rest, alias, assignments, here, ask)) == UNREAD:
            yield UNREAD, None, (f"`git {_git_command(rest)}` may be an alias that runs a person's command, in settings "
                                 "the line's variables point git to (known only when the shell runs): give their values as written")
        elif stands_for.startswith("!"):  # git runs a shell alias at the top of the worktree: a folder not known here
            yield stands_for[1:], None, f"the git alias `{_git_command(rest)}` runs it (`{stands_for}`)"
    elif program in makes.MAKES and here is not None:
        yield from _make_lines(rest, here, assignments)


def _make_lines(rest: list[str], here: Path, assignments: list[str]) -> Iterator[tuple[str, Path | None, str]]:
    """The lines make would hand its shell, read from its makefiles (guards/makes.py); UNREAD for one whose command is
    named by what only the run knows (a `$(shell …)`'s output, a variable of the environment) where that may be a
    person's command: all of the command, or followed by a person's subcommand."""
    todo = "run the commands of the target directly, or `make -n` to see them"
    lines, folder = makes.runs(rest, here, assignments)
    for line, where in lines:
        if not _MAY_RUN.search(re.sub(r"[\\'\"]", "", line)):  # a compile line of thousands: no shell reading needed
            continue
        shown = line.replace(makes.UNKNOWN, "…")
        for words in (segments(line) or []) if makes.UNKNOWN in line else []:
            named = command_words(words)
            if named and makes.UNKNOWN in named[0].rsplit("/", 1)[-1] and _unknown_persons(named):
                yield UNREAD, folder, (f"the guard cannot tell what `{shlex.join(rest)}` runs: the line `{shown}` ({where}) "
                                       "runs a command named by what only the run knows (a `$(shell …)`'s output, a "
                                       f"variable of the environment); {todo}")
        yield line.replace(makes.UNKNOWN, ""), folder, f"make in {folder} runs the recipe line `{shown}` ({where}): {todo}"


def _unknown_persons(named: list[str]) -> bool:
    """Whether the command `named`, its name not known before it runs, may be a person's: the name is all of it, or a
    person's subcommand follows."""
    rest = [word for word in named[1:] if word.replace(makes.UNKNOWN, "")]
    pairs = set(zip(rest, rest[1:]))
    return not rest or bool(_PERSON_WORDS & set(rest)) or bool({("log", "add"), ("loop", "accept"), ("loop", "abort")} & pairs)


def _runner_commands(rest: list[str], verbs: tuple[tuple[str, ...], ...]) -> list[list[str]]:
    """What the runner `rest` may run past one of its `verbs`: each word there with no dash opens a command, its options
    not being read (`uv run --with x pytest` would be taken for `x pytest` and `pytest`)."""
    out: list[list[str]] = []
    for verb in verbs:
        found = [n + len(verb) for n in range(1, len(rest)) if tuple(rest[n:n + len(verb)]) == verb]
        at = 1 if not verb else found[0] if found else len(rest)
        out += [rest[n:] for n in range(at, min(len(rest), at + 16)) if not rest[n].startswith("-")]
    return out


def _find_commands(rest: list[str]) -> list[list[str]]:
    """The commands find's `-exec CMD … ;` (`-execdir`, `-ok`, `-okdir`; or up to `+`) run."""
    out: list[list[str]] = []
    words: list[str] | None = None
    for word in rest[1:]:
        if word in FIND_RUNS:
            words = []
            out.append(words)
        elif words is not None and words and word in (";", "+"):
            words = None
        elif words is not None:
            words.append(word)
    return [words for words in out if words]


def git_options(words: list[str] | tuple[str, ...]) -> list[tuple[str, str]]:
    """git's own options before its command, each with its value (`-C DIR` -> ("-C", "DIR"); `-cK=V` -> ("-c", "K=V"))."""
    out, rest = [], list(words[1:])
    while rest and rest[0].startswith("-"):
        word = rest.pop(0)
        if word in GIT_VALUED and rest:
            out.append((word, rest.pop(0)))
        elif word.startswith("-c") and word != "-c" or word.startswith("-C") and word != "-C":
            out.append((word[:2], word[2:]))
        else:
            out.append(tuple(word.split("=", 1)) if "=" in word else (word, ""))  # type: ignore[arg-type]
    return out


def given_alias(words: list[str] | tuple[str, ...], command: str) -> str:
    """What `command` stands for by an alias the line itself gives (`git -c alias.wipe='add -A' wipe`), '' when none."""
    given = [value.split("=", 1)[1] for option, value in git_options(words) if option == "-c" and "=" in value
             and value.split("=", 1)[0].lower() == f"alias.{command}".lower()]
    return given[-1] if given else ""  # the last one given counts


def _git_given(rest: list[str], assignments: list[str]) -> list[tuple[str, str]]:
    """The lines a git command runs that the line gives, each with the setting that gives it: `rebase -x/--exec LINE`,
    `bisect run CMD ARGS`, `submodule foreach CMD` (its words joined, as git's shell runs them), `difftool -x/--extcmd
    CMD`, and a setting or variable whose value git runs (`-c core.editor=…`, `GIT_SEQUENCE_EDITOR=…`: _GIT_RUNS)."""
    command = _git_command(rest)
    args = rest[rest.index(command) + 1:] if command else []
    out = [(line, "") for line in _git_argument_lines(command, args)]
    variables = {name: value for name, _, value in (a.partition("=") for a in assignments)}
    settings = [value.partition("=")[::2] for option, value in git_options(rest) if option == "-c" and "=" in value]
    settings += [(key, variables.get(name, "")) for option, value in git_options(rest) if option == "--config-env"
                 for key, _, name in [value.partition("=")]]
    settings += [(variables[f"GIT_CONFIG_KEY_{n}"], variables.get(f"GIT_CONFIG_VALUE_{n}", "")) for n in range(64)
                 if f"GIT_CONFIG_KEY_{n}" in variables]
    for key, value in [*settings, *((name, variables[name]) for name in _GIT_RUN_VARIABLES if name in variables)]:
        if value and (key in _GIT_RUN_VARIABLES or _GIT_RUNS.fullmatch(key)):
            helper = re.fullmatch(r"credential\..*helper", key, re.IGNORECASE) and not value.startswith(("!", "/"))
            out.append((f"git credential-{value}" if helper else value.removeprefix("!"), f" (`{key}={value}`)"))
    return out


def _git_argument_lines(command: str, args: list[str]) -> list[str]:
    """The lines a git command runs that its arguments give."""
    if command in ("rebase", "difftool"):
        options = ("--exec", "-x") if command == "rebase" else ("--extcmd", "-x")
        pairs = zip(["", *args], args)
        return [word[len(option):].removeprefix("=") if word.startswith(option) else word
                for before, word in pairs for option in options
                if before == option or word.startswith(option) and word != option and (option != "-x" or len(word) > 2)]
    if command == "bisect" and args[:1] == ["run"]:
        return [shlex.join(args[1:])] if args[1:] else []
    if command == "submodule" and "foreach" in args:
        words = args[args.index("foreach") + 1:]
        while words and words[0].startswith("-"):  # --recursive, -q
            words = words[1:]
        return [" ".join(words)] if words else []
    return []


def _git_command(rest: list[str]) -> str:
    """The command of `git …`, past git's own options ('' when none)."""
    words = iter(rest[1:])
    for word in words:
        if word in GIT_VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return ""


def _git_alias(rest: list[str], alias: Alias | None, assignments: list[str], here: Path | None, ask: Ask | None) -> str:
    """What the command of `git …` stands for: an alias the line gives, else one of the settings git reads ('' when
    none; UNREAD when the line's variables point git to settings not known)."""
    command = _git_command(rest)
    if not command or (given := given_alias(rest, command)):
        return given if command else ""
    pointing = [a for a in assignments if _CONFIG_VARIABLES.fullmatch(a.partition("=")[0])]
    if not pointing or ask is None:
        return alias(command) if alias else ""
    if any(re.search(r"[$`]", a) for a in pointing):
        return "" if command in ask(None, ["--list-cmds=builtins"], {}).split() else UNREAD
    env = {name: value for name, _, value in (a.partition("=") for a in assignments)}
    at = rest.index(command)  # git's own options (-C DIR) before it
    return ask(here, [*rest[1:at], "config", "--get", f"alias.{command}"], env).strip()


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
