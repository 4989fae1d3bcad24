"""Whether a pager git runs (PAGER, GIT_PAGER, core.pager, pager.<cmd>) is a plain one, and the flags LESS gives less
plain ones: `cat`, `less` or `more` with options only, none of which writes a file or runs a command.

less's options are read as less reads them (option.c and opttbl.c of less 710, whose options older versions hold a
part of): short ones cluster, with or without a dash in LESS (`-RFX`, `FRX`); a string option takes the rest of its
word as far as its characters go (`-x4,8`, `-oFILE`), or the next word when none is left (`-o FILE`); a long option is
any unambiguous abbreviation of its name, a first capital standing for either case (`--LOG-FILE`, `--log`), its value
after `=` or in the next word. Refused in any spelling: a log file (-o, -O, --log-file, --LOG-FILE), key bindings that
can set LESSOPEN (-k, --lesskey-file, --lesskey-src, --lesskey-content), commands (--cmd, `+cmd`), an option less does
not know, and the variables that make less run or read such things (LESSOPEN, LESSCLOSE, LESSKEY…, LESSGLOBALTAGS) or
write its search history somewhere (LESSHISTFILE, XDG_STATE_HOME, XDG_DATA_HOME, HOME). A pager command the shell would
expand (a glob: `-?` is `-O` beside a file named so; a brace, a tilde) is no plain one, nor one holding a control
character: less takes an option's value (`-p PATTERN`) as keys typed, and a backspace then `!cmd` runs a command.
"""

from __future__ import annotations

import re
import shlex

PAGERS = frozenset({"cat", "less", "more"})
# An input filter, a tags program, a key file; where less writes its history (less 590 reads XDG_DATA_HOME, 643 on
# XDG_STATE_HOME, both HOME/.lesshst last)
RUNS = re.compile(r"LESSOPEN|LESSCLOSE|LESSGLOBALTAGS|LESSKEY\w*|LESSHISTFILE|XDG_STATE_HOME|XDG_DATA_HOME|HOME")
_GIT_BOOLEANS = frozenset({"false", "true", "no", "yes", "off", "on", "0", "1"})  # pager.<cmd>=false: no pager
# The shell git runs a pager with reads these as a command or an expansion; LESS (read by less, not a shell) holds no
# `$` (the end of a string option) nor a backslash either, so a value's end is where this reading puts it.
_SHELL = frozenset("$`\\;&|<>()\n\r")
_EXPANDS = frozenset("?*[{~")  # unquoted, the shell makes other words of them: a file's name, `-{O,R}` two options
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # a tab is a blank; the others are keys to less
_WRITES_SHORT = "oOk"
_WRITES_LONG = ("log-file", "lesskey-file", "lesskey-src", "lesskey-content", "cmd")  # LOG-FILE: log-file in capitals
# What an option's value may hold: "#" a number ("#-" a negative one too), "" anything to the end, "s" anything to a
# space, else less's `validchars` ("d," digits and commas, ".d" one dot and digits, "-.d" a minus, a dot, digits).
_TRIPLES = "acegimnqruw"  # options of three states: the capital letter is the third (-R, -I, -M…)
_SHORT: dict[str, str | None] = {
    **dict.fromkeys(_TRIPLES + _TRIPLES.upper() + "BdFfJKLsSVX~?"), "b": "#", "h": "#", "y": "#", "z": "#-", "D": "s",
    "j": "-.d", "p": "", "P": "", "t": "", "T": "", "x": "d,", '"': "s", "#": ".d",
}
_FLAGS = """search-skip-screen auto-buffers clear-screen dumb quit-at-eof force quit-if-one-screen hilite-search ignore-case
status-column quit-on-intr no-lessopen long-prompt line-numbers quiet silent raw-control-chars squeeze-blank-lines
chop-long-lines underline-special version hilite-unread no-init tilde help no-keypad old-bot follow-name use-backslash
no-histdups mouse rmouse save-marks incsearch use-color file-size status-line no-paste form-feed past-eof no-edit-warn
no-warn-edit no-number-headers no-search-headers no-search-header-lines no-search-header-columns redraw-on-quit
exit-follow-on-close no-vbell wordwrap show-preproc-errors proc-backspace proc-tab proc-return hilite-target""".split()
_LONG: dict[str, str | None] = {
    **dict.fromkeys(_FLAGS), "buffers": "#", "max-back-scroll": "#", "max-forw-scroll": "#", "window": "#-",
    "wheel-lines": "#", "line-num-width": "#", "status-col-width": "#", "modelines": "#", "color": "s",
    "jump-target": "-.d", "pattern": "", "prompt": "", "tag": "", "tag-file": "", "tabs": "d,", "quotes": "s",
    "shift": ".d", "rscroll": "s", "emouse": "s", "header": "d,", "search-options": "s", "intr": "s", "match-shift": ".d",
    "autosave": "s", "end-prompt": "s", "tty": "",
}


class _NotPlain(Exception):
    """An option that writes a file, runs a command, or is not known."""


def plain(command: str) -> bool:
    """Whether the pager `command` is a plain one (PAGERS, options only), or none ('', git's `false` for pager.<cmd>)."""
    if command.strip().lower() in _GIT_BOOLEANS:
        return True
    if set(command) & _SHELL or _CONTROL.search(command) or _expands(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if not words:
        return True
    program = words[0].rsplit("/", 1)[-1]
    if program == "cat":
        return all(word.startswith("-") for word in words[1:])
    return program in PAGERS and _arguments(words[1:])


def plain_flags(flags: str) -> bool:
    """Whether LESS=`flags` gives less only options that write no file and run no command."""
    try:
        return not set(flags) & _SHELL and not _CONTROL.search(flags) and _options(flags) is not None
    except _NotPlain:
        return False


def _expands(command: str) -> bool:
    """Whether the shell expands a character of `command` outside quotes (it holds no backslash nor `$`: _SHELL)."""
    quote = ""
    for char in command:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in _EXPANDS:
            return True
    return False


def _arguments(words: list[str]) -> bool:
    """Whether less's command line `words` holds only harmless options (main.c: `--` ends them; a file is no plain
    paging of git's output, but `-`, the input git gives it)."""
    pending = False
    for n, word in enumerate(words):
        if word == "--":
            return all(rest == "-" for rest in words[n + 1:])
        if pending:
            pending = False  # the value of the option before: read as a whole, not as options
        elif word[:1] in ("-", "+") and len(word) > 1:
            try:
                pending = _options(word)
            except _NotPlain:
                return False
        elif word != "-":
            return False
    return True


def _options(text: str) -> bool:
    """Read `text`, one word of less's options or all of LESS, as less's scan_option does: whether it ends with an option
    wanting its value from the next word. Raises _NotPlain on an option that writes, runs a command, or is not known."""
    n = 0
    while n < len(text):
        char, n = text[n], n + 1
        kind: str | None
        if char in " \t":
            continue
        if char == "-":
            long = text[n:n + 1] == "-"
            n += long
            n += text[n:n + 1] == "+"  # -+X, --+NAME: X back to its default
            if not long:
                continue
            name = re.match(r"[A-Za-z-]*", text[n:])
            assert name is not None
            kind, n = _long(name.group()), n + name.end()
            after = text[n:n + 1]
            if after not in ("", " ", "="):
                raise _NotPlain(text)  # less stops there, unsure of what it meant: refused
            if after == "=" and kind is None:
                raise _NotPlain(text)
            n += after == "="
        elif char == "+" or char in _WRITES_SHORT:
            raise _NotPlain(text)  # an initial command (`+!cmd`, `+s FILE`), a log or key file
        elif char.isdigit() and char.isascii():
            kind, n = "#-", n - 1  # -<number>: -z<number>, as more takes it
        elif char in _SHORT:
            kind = _SHORT[char]
        else:
            raise _NotPlain(text)
        if kind is None:
            continue
        if n >= len(text):
            return True  # its value is the next word
        n = _number_end(text, n, kind == "#-") if kind.startswith("#") else _string_end(text, n, kind)
    return False


def _long(name: str) -> str | None:
    """The kind of value the long option less takes `name` for wants (None: none), as findopt_name matches it: the name
    or an abbreviation, its first letter as given, the rest lower case, or all in any case after a first capital."""
    if not name or any(full.startswith(name.lower()) for full in _WRITES_LONG):
        raise _NotPlain(name)

    def matches(full: str) -> bool:
        folded = full[0] + full[1:].lower()
        return folded.startswith(name) or not name[0].islower() and folded.startswith(name.lower())

    found = [full for full in _LONG if matches(full)]
    exact = [full for full in found if len(full) == len(name)]
    if len(exact or found) != 1:
        raise _NotPlain(name)  # unknown or ambiguous: less stops with an error, an older less may read it otherwise
    return _LONG[(exact or found)[0]]


def _number_end(text: str, n: int, negative: bool) -> int:
    """Where less's getnumc stops reading a number at `text[n]` (at `n` itself when there is none: an error, and less
    reads on from there)."""
    at = n
    while text[at:at + 1] == " ":
        at += 1
    at += negative and text[at:at + 1] == "-"
    digits = re.match(r"[0-9]+", text[at:])
    return at + digits.end() if digits else n


def _string_end(text: str, n: int, valid: str) -> int:
    """Where less's optstring stops reading a string option's value at `text[n]`, past the spaces before it."""
    while text[n:n + 1] == " ":
        n += 1
    if valid == "":
        return len(text)
    if valid == "s":
        return len(text) if text.find(" ", n) < 0 else text.find(" ", n)
    v = 0  # how far into `valid` the value is (optstring's validchars pointer)
    while n < len(text):
        char = text[n]
        if char == "-" and valid[v:v + 1] == "-":
            v += 1
        elif char == ".":
            v += valid[v:v + 1] == "-"
            if valid[v:v + 1] != ".":
                break
            v += 1
        elif char == "," and valid[v + 1:v + 2] == ",":
            pass
        elif char in "0123456789":
            while valid[v:v + 1] in ("-", "."):
                v += 1
            if valid[v:v + 1] != "d":
                break
        else:
            break
        n += 1
    return n
