"""The command a wrapper runs (`env`, `sudo`, `timeout 5s`, `setsid`, `flock FILE`, `chroot DIR`…), found past the
wrapper's options as it reads them, so that the value of one (`env -u NAME`, `sudo -u USER`, `--chdir DIR`) does not pass
for the command, with env's split string (`-S 'cmd args'`, `-S"…"`, `--split-string=…`) unfolded into the words GNU env
makes of it (none at all for `-S ' '`: the command is what follows). A wrapper is known by its name in any folder
(`/usr/bin/env`).

Options are read as getopt_long reads them for these programs: short ones cluster (`-iu NAME`), a value is the rest of
the word or the next word, a long option is any unambiguous abbreviation (`--split`), and one with an optional value
(`--default-signal`) takes it only after `=`. The first word that is no option is the command, past the operands
before it (timeout's DURATION, taskset's MASK, flock's FILE, chroot's NEWROOT, a number for chrt's PRIORITY);
`flock FILE -c LINE` runs LINE with `sh -c`, as do `su -c LINE` and `script -c LINE` (the option anywhere among their
arguments) and `watch` (its words joined). `xargs` runs its command with words it reads: where that command is
repo-memory (or Python), they stand as `FED`, a word the shell names only when it runs, appended or in place of its
replace string. `time` is not read here: what follows its options is not known (`time -o FILE`).
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Options(NamedTuple):
    """How a wrapper reads its options."""

    valued: str  # short options taking a value
    longs: dict[str, bool]  # long options: whether each requires a value
    operands: int = 0  # operands before the command (timeout's DURATION)
    moves: tuple[str, ...] = ()  # options that run the command in another folder
    number: bool = False  # an operand before the command when it is a number (chrt's PRIORITY, optional for some policies)
    shell: tuple[str, ...] = ()  # after the operands, what makes the next word a line `sh -c` runs (flock FILE -c LINE)
    elsewhere: bool = False  # the command runs under another root (chroot): every relative path is another place
    line: tuple[str, ...] = ()  # options whose value is a line `sh -c` runs, read anywhere among the arguments (su -c)
    joined: bool = False  # the words after the options are joined into a line `sh -c` runs (watch)
    fed: tuple[str, ...] = ()  # options naming the replace string of words it reads and adds (xargs -I R; else appended)


def _longs(valued: str, flags: str) -> dict[str, bool]:
    return {**dict.fromkeys(flags.split(), False), **dict.fromkeys(valued.split(), True)}


_HELP = "help version"
WRAPPERS: dict[str, Options] = {
    # GNU env, and BSD env's -P ALTPATH and -L USER
    "env": Options("aCLPSu", _longs("argv0 env0-from unset chdir split-string", f"ignore-environment null default-signal "
                                    f"ignore-signal block-signal list-signal-handling debug {_HELP}"), moves=("-C", "--chdir")),
    "sudo": Options("aCcDgpRrTtUu", _longs("auth-type close-from login-class chdir group host prompt chroot role "
                                           "command-timeout type other-user user",
                                           f"askpass background bell edit preserve-env set-home login remove-timestamp "
                                           f"reset-timestamp list non-interactive preserve-groups shell stdin validate {_HELP}"),
                    moves=("-D", "--chdir")),
    "timeout": Options("ks", _longs("kill-after signal", f"foreground preserve-status verbose {_HELP}"), operands=1),
    "nice": Options("n", _longs("adjustment", _HELP)),
    "ionice": Options("cnpPu", _longs("class classdata pid pgid uid", f"ignore {_HELP}")),
    "stdbuf": Options("ioe", _longs("input output error", _HELP)),
    "nohup": Options("", _longs("", _HELP)),
    "command": Options("", {}),
    "exec": Options("a", {}),  # bash's exec -a NAME
    "doas": Options("aCu", {}),
    # util-linux's
    "setsid": Options("", _longs("", f"ctty fork wait {_HELP}")),
    "chrt": Options("DPT", _longs("sched-runtime sched-period sched-deadline", f"all-tasks batch deadline ext fifo idle max "
                                  f"other pid reset-on-fork rr verbose {_HELP}"), number=True),
    "taskset": Options("", _longs("", f"all-tasks cpu-list pid {_HELP}"), operands=1),
    "flock": Options("wE", _longs("timeout wait conflict-exit-code", f"shared exclusive nonblock nb close no-fork unlock "
                                  f"verbose {_HELP}"), operands=1, shell=("-c", "--command")),
    "unshare": Options("RwSGl", _longs("map-user map-users map-group map-groups propagation setgroups setuid setgid root wd "
                                       "monotonic boottime load-interp",  # the namespaces take a file only after `=`
                                       f"mount uts ipc net pid user cgroup time fork kill-child mount-proc map-auto "
                                       f"map-root-user map-current-user keep-caps {_HELP}"), moves=("-R", "--root", "-w", "--wd")),
    "chroot": Options("", _longs("groups userspec", f"skip-chdir {_HELP}"), operands=1, elsewhere=True),
    # procps' watch, util-linux's script and su: the command is a line of their arguments, or their -c's value
    "watch": Options("nq", _longs("interval equexit", f"beep color no-color differences errexit exec chgexit no-title "
                                  f"no-wrap no-linewrap precise {_HELP}"), joined=True),
    "script": Options("cEIOBTmo", _longs("command echo log-in log-out log-io log-timing logging-format output-limit",
                                         f"append return flush force quiet timing {_HELP}"), line=("-c", "--command")),
    "su": Options("cgGsw", _longs("command session-command group supp-group shell whitelist-environment",
                                  f"login preserve-environment pty {_HELP}"), line=("-c", "--command", "--session-command")),
    # GNU findutils' xargs (-e, -i and -l take a value only joined to them)
    "xargs": Options("adEILnPs", _longs("arg-file delimiter max-args max-procs max-chars process-slot-var",
                                        f"eof replace max-lines null interactive no-run-if-empty open-tty verbose exit "
                                        f"show-limits {_HELP}"), fed=("-I", "-i", "--replace")),
}
FED = "$(xargs)"  # the words xargs reads: any command's, as `$X` would be
_REDIRECTION = re.compile(r"\d*(?:<<<|<<-?|<>|<&|>&|>>|<|>)")
_FEEDS = ("repo-memory", "repo_memory", "python", "pypy")  # commands whose added words the person-command check reads
_SPLIT = ("-S", "--split-string")
_ESCAPES = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", '"': '"', "#": "#", "$": "$", "'": "'", "\\": "\\"}


def unwrap(program: str, args: list[str]) -> tuple[list[str], bool] | None:
    """The words of the command `program ARGS` runs, from the command on, and whether it runs it in another folder; None
    when `program` (a name or a path) is no wrapper read here."""
    program = program.rsplit("/", 1)[-1]
    options = WRAPPERS.get(program)
    if options is None:
        return None
    args, moves, n, replace = list(args), False, 0, ""
    while n < len(args):
        word, n = args[n], n + 1
        found: list[tuple[str, str]] = []
        if word == "--":
            break
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            full = _long(name, options.longs)
            if options.longs.get(full) and not eq and n < len(args):
                value, n = args[n], n + 1
            found.append(("--" + full, value))
        elif word.startswith("-") and len(word) > 1:
            if options.fed and word[1] in "eil":  # a value only joined to it (`-iR`, the replace string R)
                found.append((word[:2], word[2:]))
                word = ""
            for at, letter in enumerate(word[1:], 2):
                value = word[at:] if letter in options.valued else ""
                if letter in options.valued and not value and n < len(args):
                    value, n = args[n], n + 1
                found.append(("-" + letter, value))
                if letter in options.valued:
                    break
        elif options.line:
            continue  # getopt reads options past the operands (`su root -c LINE`)
        else:
            n -= 1
            break
        for name, value in found:
            if name in options.fed:
                replace = value or "{}"
            if name in options.line:
                return ["sh", "-c", value], moves
            moves |= name in options.moves
            if program == "env" and name in _SPLIT:  # env reads the words of the string as its own arguments, options too
                words = split_string(value)
                args, n = ([value] if words is None else words) + args[n:], 0
    n += options.operands + (options.number and args[n:n + 1] != [] and args[n].isdigit())
    if options.shell and args[n:n + 1] and args[n] in options.shell:
        return ["sh", "-c", *args[n + 1:n + 2]], moves
    if options.line:
        return [], moves  # no -c: an interactive shell, no command of the line's
    if options.joined:
        return (["sh", "-c", " ".join(args[n:])] if args[n:] else []), moves
    if options.fed and args[n:] and args[n].rsplit("/", 1)[-1].startswith(_FEEDS):
        words, skip = [], False
        for w in args[n:]:  # a redirection (`<<< 'log add x'`, `< cmds`) is the shell's, with its target
            if not skip and not _REDIRECTION.match(w):
                words.append(FED if replace and replace in w else w)
            skip = not skip and bool(_REDIRECTION.fullmatch(w))
        return (words if replace else [*words, FED]), moves
    return args[n:], moves or options.elsewhere


def _long(name: str, longs: dict[str, bool]) -> str:
    """The long option `name` stands for: itself, or the one it abbreviates ('' when none or several)."""
    if name in longs:
        return name
    found = [full for full in longs if full.startswith(name)]
    return found[0] if len(found) == 1 else ""


def split_string(text: str) -> list[str] | None:
    """The words GNU env's -S makes of `text` (env.c build_argv): split at blanks, quoted with '…' or "…", backslash
    escapes (`\\_` a blank between words, `\\c` the end), a `#` opening a word the end; `${NAME}` kept as written, its
    value not known here. None where env stops with an error (an open quote, an escape it does not know)."""
    words: list[str] = []
    word: str | None = None  # None between words
    single = double = False
    n = 0
    while n < len(text):
        char, n = text[n], n + 1
        if char == "'" and not double or char == '"' and not single:
            single, double = single != (char == "'"), double != (char == '"')
            word = word or ""
            continue
        if char in " \t\n\v\f\r" and not (single or double):
            words += [word] if word is not None else []
            word = None
            continue
        if char == "#" and word is None:
            return words
        if char == "\\" and not (single and text[n:n + 1] not in ("\\", "'")):
            char, n = text[n:n + 1], n + 1
            if char == "_" and not double:
                words += [word] if word is not None else []
                word = None
                continue
            if char == "c" and not double:
                return words + ([word] if word is not None else [])
            if char not in _ESCAPES and char != "_" or not char:
                return None
            char = " " if char == "_" else _ESCAPES[char]
        elif char == "$" and not single:
            close = text.find("}", n)
            if text[n:n + 1] != "{" or close < 0:
                return None
            char, n = text[n - 1:close + 1], close + 1
        word = (word or "") + char
    if single or double:
        return None
    return words + ([word] if word is not None else [])
