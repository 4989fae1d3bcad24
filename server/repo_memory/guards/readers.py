"""The programs a shell line naming a reserved place may run because they read what they are given, and the files the
few of them that can also write would write (guards/reserved.py judges those files as it judges a redirect's target).

Each writing form has its rule here, per program: `sort -o FILE`, `uniq IN OUT`, `xxd IN OUT`, `tee FILE`, `sed -i`
and a sed script's `w FILE`. A form that runs a program or reads its instructions from a file (`sort
--compress-program`, sed's `e`, `sed -f`) makes the program a reader no more: what it writes is not known.
"""

from __future__ import annotations

from typing import Callable

Options = list[tuple[str, str]]


def _parse(args: list[str], valued: str, longs: tuple[str, ...] = (), attached: str = "") -> tuple[Options, list[str]]:
    """getopt's reading of `args`: (options with their values, operands). `valued` short options take a value (the rest
    of the word or the next word), `attached` ones only the rest of the word; a long option may be any unambiguous
    prefix of one of `longs` (those ending in '=' take a value, like `--output FILE`)."""
    options: Options = []
    operands: list[str] = []
    n = 0
    while n < len(args):
        word, n = args[n], n + 1
        if word == "--":
            operands += args[n:]
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            known = [full for full in longs if full.rstrip("=").startswith(name)]
            full = known[0] if len(known) == 1 else name
            if full.endswith("=") and not eq and n < len(args):
                value, n = args[n], n + 1
            options.append((full.rstrip("="), value))
        elif word.startswith("-") and len(word) > 1:
            for at, letter in enumerate(word[1:], 2):
                if letter in valued or letter in attached:
                    value = word[at:]
                    if not value and letter in valued and n < len(args):
                        value, n = args[n], n + 1
                    options.append(("-" + letter, value))
                    break
                options.append(("-" + letter, ""))
        else:
            operands.append(word)
    return options, operands


def _sort(args: list[str]) -> list[str] | None:
    longs = ("--output=", "--compress-program=", "--key=", "--field-separator=", "--buffer-size=", "--temporary-directory=",
             "--batch-size=", "--parallel=", "--files0-from=", "--random-source=")
    options, _ = _parse(args, "kStTo", longs)
    if any(name == "--compress-program" for name, _ in options):
        return None  # runs the program it is given
    return [value for name, value in options if name in ("-o", "--output")]


def _second_operand(valued: str, longs: tuple[str, ...] = ()) -> Callable[[list[str]], list[str] | None]:
    """For a program reading `IN` and writing `OUT` when it is given both (uniq, xxd)."""
    return lambda args: _parse(args, valued, longs)[1][1:2]


def _tee(args: list[str]) -> list[str] | None:
    return _parse(args, "", ("--output-error=",))[1]


def _sed(args: list[str]) -> list[str] | None:
    longs = ("--expression=", "--file=", "--line-length=", "--in-place", "--sandbox", "--separate", "--quiet", "--silent")
    options, operands = _parse(args, "efl", longs, attached="i")
    if any(name in ("-f", "--file") for name, _ in options):
        return None  # a script in a file: not read here
    scripts = [value for name, value in options if name in ("-e", "--expression")]
    if not scripts and operands:
        scripts, operands = operands[:1], operands[1:]
    out: list[str] = []
    for script in scripts:
        files = sed_script_writes(script)
        if files is None:
            return None
        out += files
    if any(name in ("-i", "--in-place") for name, _ in options):
        out += operands or [""]  # the files it reads are the files it writes
    return out


def _past(text: str, at: int, delimiter: str, brackets: bool) -> int:
    """Where the part of a sed command opened by `text[at]` (its delimiter) ends: just past the closing delimiter, -1 when
    it does not close. In a regex (`brackets`), as in GNU sed, a `[…]` holds the delimiter and backslashes literally."""
    n = at + 1
    while n < len(text):
        char = text[n]
        if char == "\\":
            n += 2
            continue
        if char == delimiter:
            return n + 1
        if char == "[" and brackets:
            n += 1
            n += 1 if text[n:n + 1] == "^" else 0
            n += 1 if text[n:n + 1] == "]" else 0  # a `]` first is one of the set
            while n < len(text) and text[n] != "]":
                if text[n:n + 2] in ("[:", "[.", "[="):
                    close = text.find(text[n + 1] + "]", n + 2)
                    if close < 0:
                        return -1
                    n = close + 1
                n += 1
        n += 1
    return -1


def _line_end(text: str, at: int, stops: str = "\n") -> int:
    ends = [n for n in (text.find(stop, at) for stop in stops) if n >= 0]
    return min(ends, default=len(text))


def sed_script_writes(script: str) -> list[str] | None:
    """The files a sed script writes (`w FILE`, `W FILE`, `s///w FILE`), None when it runs a command (`e`, `s///e`) or
    holds anything this reading does not know."""
    out: list[str] = []
    n = 0
    while n < len(script):
        char = script[n]
        if char in " \t\n;{}!,~+$0123456789IM":  # separators, blocks, negation, line addresses (regex flags I and M)
            n += 1
        elif char in "/\\":  # an address /re/ or \cREc
            n += 1 if char == "\\" else 0
            if n >= len(script) or script[n] in "\n\\" or (n := _past(script, n, script[n], True)) < 0:
                return None
        elif char in "sy":
            if n + 1 >= len(script) or script[n + 1] in "\n\\[":
                return None
            n = _past(script, n + 1, script[n + 1], char == "s")
            n = _past(script, n - 1, script[n - 1], False) if n > 0 else -1
            if n < 0:
                return None
            while char == "s" and n < len(script) and script[n] in "gpiImM0123456789ew":
                if script[n] == "e":
                    return None
                if script[n] == "w":
                    end = _line_end(script, n)
                    out.append(script[n + 1:end].strip())
                    n = end
                    break
                n += 1
        elif char in "wW":
            end = _line_end(script, n)
            out.append(script[n + 1:end].strip())
            n = end
        elif char in "rRaic#":  # a file it reads, text it prints, a comment: to the end of the line
            n = _line_end(script, n)
            while char in "aic" and script[n - 1:n] == "\\" and n < len(script):
                n = _line_end(script, n + 1)
        elif char in "btT:v":  # a label (or a version): to the next `;` or line
            n = _line_end(script, n + 1, ";\n")
        elif char in "=dDgGhHlLnNpPqQxzF":
            n += 1
        else:
            return None  # `e COMMAND`, or what this reading does not know
    return out


# Programs that read what they are given; those with a rule can also write, and the rule says what (None: not known).
WRITES: dict[str, Callable[[list[str]], list[str] | None]] = {
    "sort": _sort,
    "uniq": _second_operand("fsw", ("--skip-fields=", "--skip-chars=", "--check-chars=")),
    "xxd": _second_operand("cglosnR"),
    "tee": _tee,
    "sed": _sed,
}
READERS = frozenset({
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "jq", "wc", "ls", "stat", "file", "du", "diff",
    "cmp", "sha256sum", "sha1sum", "md5sum", "cut", "tr", "column", "od", "hexdump", "strings", "nl",
    "realpath", "readlink", "basename", "dirname", "echo", "printf", "true", "test", "[", "cd", "pwd", "tree", "zcat", "bat",
    *WRITES,
})


def writes(program: str, args: list[str]) -> list[str] | None:
    """The files `program ARGS` (a name or a path) writes ([] for a reader that writes none), None when it is no reader
    or may write anything."""
    program = program.rsplit("/", 1)[-1]
    if program not in READERS:
        return None
    rule = WRITES.get(program)
    return rule(args) if rule else []
