"""What a `make` command runs, read from the makefiles without running make (a guard never runs the project's code):
the makefile make would read (`-f`, `-C`, GNUmakefile/makefile/Makefile, MAKEFILES) and what it includes by a name known
while reading (bounded), its variables of every flavour (`define`, a target's own, the command line's and the line's
environment) expanded as text in the recipe lines, inline ones too, of the targets named (the default goal when none)
and their prerequisites, explicit or by a pattern rule; both branches of a conditional. The command of a `$(shell …)`
or `!=` and a SHELL set are given as lines make runs; the output of one, and a variable left to the environment (make's
own stand for theirs), stand as UNKNOWN; other functions stand for their arguments. Under `make -n` (`-t`, `-q`) only
the lines make runs anyway (`+…`, `$(MAKE)`) are given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

MAKES = frozenset({"make", "gmake"})
NAMES = ("GNUmakefile", "makefile", "Makefile")  # the makefile make reads when none is named, the first found
UNKNOWN = "\ue002"  # what only the run knows: a `$(shell …)`'s output, a variable of the environment
_VALUED = frozenset("CfIoWE")  # make's short options whose value is the rest of the word or the next word
_OPTIONAL = frozenset("jlO")  # … or only the rest of the word (`-j8`; `-j 8` read as a number)
_DRY = frozenset("ntq")
_DRY_LONG = ("--dry-run", "--just-print", "--recon", "--touch", "--question")
_BUILTIN = {"CC": "cc", "CXX": "g++", "CPP": "cc -E", "AR": "ar", "AS": "as", "RM": "rm -f", "LD": "ld", "LEX": "lex",
            "YACC": "yacc", "FC": "f77", "PC": "pc", "M2C": "m2c", "CO": "co", "GET": "get", "MAKEINFO": "makeinfo",
            "TEX": "tex", "TEXI2DVI": "texi2dvi", "WEAVE": "weave", "CWEAVE": "cweave", "TANGLE": "tangle",
            "CTANGLE": "ctangle", "LINT": "lint", "MAKE": "make", "SHELL": "/bin/sh", ".SHELLFLAGS": "-c",
            "MAKECMDGOALS": "", "CURDIR": ".", "MAKEFLAGS": "", "MFLAGS": "", ".RECIPEPREFIX": ""}
_FUNCTIONS = frozenset("abspath addprefix addsuffix and basename call dir error eval file filter filter-out findstring "
                       "firstword flavor foreach guile if info intcmp join lastword let notdir or origin patsubst "
                       "realpath shell sort strip subst suffix value warning wildcard word wordlist words".split())
_SILENT = frozenset({"error", "warning", "info", "file", "eval"})  # their value is no text of the line
_ASSIGN = re.compile(r"(:::=|::=|:=|\?=|\+=|!=|=)")
# a directive, not a rule or an assignment of that name (`load: …`, `vpath = …`)
_DIRECTIVE = re.compile(r"(?:ifeq|ifneq|ifdef|ifndef|else|endif|vpath|unexport|undefine|load|-load)(?:$|\s+(?![:=+?!]))")
_PREFIXES = re.compile(r"^(?:(?:override|export|private)\s+)+")
_INCLUDE = re.compile(r"^(-include|sinclude|include)\s+(.*)$")
_COMMENT = re.compile(r"(?<!\\)#.*")  # `\#` is no comment
_MAKE_REF = re.compile(r"\$[({]MAKE[)}]")
_LIMIT, _DEPTH, _FILES, _SIZE, _VISITS = 100_000, 24, 64, 2_000_000, 200_000


@dataclass
class Rule:
    targets: list[str]
    prereqs: list[str]
    recipe: list[tuple[str, str]] = field(default_factory=list)  # raw line, where (file, line number)


@dataclass
class Makefile:
    folder: Path
    given: dict[str, str]  # the command line's VAR=VALUE: over the makefile's
    environment: dict[str, str]  # the line's own assignments: under the makefile's
    variables: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name -> value, recursive
    rules: dict[str, list[Rule]] = field(default_factory=dict)
    patterns: list[Rule] = field(default_factory=list)
    target_variables: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    runs: list[tuple[str, str]] = field(default_factory=list)  # `$(shell …)` and `!=` commands, SHELLs set
    expanded: dict[str, str] = field(default_factory=dict)  # of the variables, as none was set since
    first: str = ""
    where: str = ""
    files: int = 0

    def read(self, path: Path, depth: int = 0) -> None:
        """Read the makefile at `path` (silently nothing when it is none, too many or too deep)."""
        self.files += 1
        try:
            if depth <= 8 and self.files <= _FILES and path.is_file():
                self.parse(path.read_text(encoding="utf-8", errors="replace")[:_SIZE], str(path), depth)
        except OSError:
            return

    def parse(self, text: str, name: str, depth: int = 0) -> None:
        current: list[Rule] = []
        lines, number = text.split("\n"), 0
        while number < len(lines):
            start, line = number + 1, lines[number]
            number += 1
            prefix = (self._value(".RECIPEPREFIX", {}, 0) or "\t")[:1]
            if line.startswith(prefix) and current:
                while line.endswith("\\") and number < len(lines):  # a continued recipe line, as the shell reads it
                    line, number = line[:-1] + " " + lines[number].removeprefix(prefix), number + 1
                for rule in current:
                    rule.recipe.append((line[1:], f"{name}, line {start}"))
                continue
            while line.endswith("\\") and number < len(lines):
                line, number = line[:-1].rstrip() + " " + lines[number].lstrip(), number + 1
            line = _COMMENT.sub("", line).strip()
            self.where = f"{name}, line {start}"
            if not line:
                continue
            if (bare := _PREFIXES.sub("", line)).startswith("define") and bare[6:7] in ("", " ", "\t"):
                body, number = _defined(lines, number)
                head = re.match(r"(.*?)\s*(:::=|::=|:=|\?=|\+=|!=|=)?\s*$", bare[6:].strip())
                self.assign(head.group(1) if head else "", head.group(2) or "=" if head else "=", body)
                current = []
            elif _DIRECTIVE.match(line):
                current = [] if not line.startswith(("else", "endif", "if")) else current
            elif include := _INCLUDE.match(line):
                for word in self.expand(include.group(2), {}).split():
                    for found in sorted(self.folder.glob(word)) if set(word) & set("*?[") else [self.folder / word]:
                        self.read(found, depth + 1)
                current = []
            else:
                current = self._statement(bare, current)

    def _statement(self, line: str, current: list[Rule]) -> list[Rule]:
        """Read a line that is a variable's assignment or a rule; the rules its recipe lines belong to."""
        colon, assign = _top(line, ":"), _ASSIGN.search(line)
        if assign and (colon < 0 or assign.start() <= colon):
            self.assign(line[:assign.start()].strip(), assign.group(1), line[assign.end():].strip())
            return []
        if colon < 0:
            return []
        targets = self.expand(line[:colon], {}).split()
        rest = line[colon + 1:].lstrip(":")
        assign = _ASSIGN.search(rest)
        semicolon = _top(rest, ";")
        if assign and (semicolon < 0 or assign.start() < semicolon) and _top(rest[:assign.start()], ":") < 0:
            value = _PREFIXES.sub("", rest[:assign.start()]).strip()
            for target in targets:
                self.target_variables.setdefault(target, []).append((value, assign.group(1), rest[assign.end():].strip()))
            if value == "SHELL":
                self.runs.append((self.expand(rest[assign.end():].strip(), {}), self.where))
            return []
        words, inline = (rest[:semicolon], rest[semicolon + 1:]) if semicolon >= 0 else (rest, None)
        if (second := _top(words, ":")) >= 0:  # a static pattern rule: `objs: %.o: %.c`
            words = words[second + 1:]
        rule = Rule(targets, [w for w in self.expand(words, {}).split() if w != "|"])
        if inline is not None:
            rule.recipe.append((inline, self.where))
        for target in targets:
            (self.patterns.append(rule) if "%" in target else self.rules.setdefault(target, []).append(rule))
            if not self.first and not target.startswith(".") and "%" not in target:
                self.first = target
        return [rule]

    def assign(self, name: str, op: str, value: str) -> None:
        name = self.expand(_PREFIXES.sub("", name), {}).strip()
        self.expanded.clear()
        if name in self.given:
            return
        if op in (":=", "::=", ":::="):
            self.variables[name] = (self.expand(value, {}), False)
        elif op == "!=":
            self.runs.append((self.expand(value, {}), self.where))
            self.variables[name] = (UNKNOWN, False)
        elif op == "?=":
            if name not in self.variables and name not in self.environment:
                self.variables[name] = (value, True)
        elif op == "+=" and name in self.variables:
            old, recursive = self.variables[name]
            self.variables[name] = (f"{old} {value if recursive else self.expand(value, {})}", recursive)
        else:
            self.variables[name] = (value, True)
        if name == "SHELL":
            self.runs.append((self._value(name, {}, 0), self.where))
        elif name in ("MAKEFLAGS", "GNUMAKEFLAGS") and (shell := re.search(r"SHELL=(\S+)", value)):
            self.runs.append((self.expand(shell.group(1), {}), self.where))

    def expand(self, text: str, scope: dict[str, str], depth: int = 0) -> str:
        """`text` with its variables and functions expanded as text (see the module's docstring)."""
        if "$" not in text or depth > _DEPTH:
            return text if "$" not in text else UNKNOWN
        out, at, size = [], 0, 0
        while (dollar := text.find("$", at)) >= 0 and dollar + 1 < len(text):
            out.append(text[at:dollar])
            char = text[dollar + 1]
            if char in "({":
                end = _closing(text, dollar + 2, char)
                out.append(self._reference(text[dollar + 2:end], scope, depth + 1))
                at = end + 1
            else:
                out.append("$" if char == "$" else self._value(char, scope, depth + 1))
                at = dollar + 2
            size += len(out[-1]) + len(out[-2])
            if size > _LIMIT:
                return "".join(out)[:_LIMIT]
        out.append(text[at:] if at < len(text) and text[at:] != "$" else "")
        return "".join(out)

    def _reference(self, inner: str, scope: dict[str, str], depth: int) -> str:
        head = re.match(r"([a-z-]+)[ \t]", inner)
        if head and head.group(1) in _FUNCTIONS:
            return self._function(head.group(1), inner[head.end():], scope, depth)
        name = self.expand(inner, scope, depth)
        if (colon := name.find(":")) > 0 and "=" in name[colon:]:  # $(VAR:.c=.o)
            old, new = name[colon + 1:].split("=", 1)
            old, new = (old, new) if "%" in old else (f"%{old}", f"%{new}")
            words = self._value(name[:colon], scope, depth).split()
            return " ".join(new.replace("%", stem, 1) if (stem := _stem(old, w)) is not None else w for w in words)
        return self._value(name, scope, depth)

    def _function(self, name: str, args: str, scope: dict[str, str], depth: int) -> str:
        parts = _split(args)
        if name == "shell":
            self.runs.append((self.expand(args, scope, depth), self.where))
            return UNKNOWN
        if name == "call" and parts:
            bound = {str(n): self.expand(p, scope, depth) for n, p in enumerate(parts)}
            fn = bound["0"].strip()
            return self.expand(self.variables.get(fn, ("", True))[0], {**scope, **bound, "0": fn}, depth)
        if name == "value":
            return self.variables.get(self.expand(args, scope, depth).strip(), ("", True))[0]
        if name in ("origin", "flavor"):
            return "file"
        if name == "foreach" and len(parts) >= 3:
            var = self.expand(parts[0], scope, depth).strip()
            words = self.expand(parts[1], scope, depth).split()[:64]
            return " ".join(self.expand(",".join(parts[2:]), {**scope, var: word}, depth) for word in words)
        values = [self.expand(part, scope, depth) for part in parts]
        if name == "if":  # its condition is no text of the line, and its branches are both read
            return " ".join(values[1:])
        if name == "eval":
            self.parse("\n".join(values), self.where.split(",")[0])
        return "" if name in _SILENT else " ".join(values)

    def _value(self, name: str, scope: dict[str, str], depth: int) -> str:
        if name in scope:
            return scope[name]
        if name in self.given:
            return self.expand(self.given[name], scope, depth)
        if name in self.variables:
            value, recursive = self.variables[name]
            if not recursive:
                return value
            if scope:
                return self.expand(value, scope, depth)
            if name not in self.expanded:  # the same variable in a thousand lines: expanded once while none changes
                self.expanded[name] = self.expand(value, scope, depth)
            return self.expanded[name]
        if name in self.environment:
            return self.environment[name]
        if name in _BUILTIN:
            return _BUILTIN[name]
        if name[:1] in "@<^+?*|%" and name[1:] in ("", "D", "F"):
            return "FILE"
        if name.isdigit():  # an argument `$(call …)` was not given
            return ""
        return UNKNOWN if name.strip() else ""

    def lines(self, goals: list[str], dry: bool) -> list[tuple[str, str]]:
        """The recipe lines make runs for `goals` (its default goal when none) and their prerequisites, expanded, each
        with where it is written; under a dry run only those make runs anyway."""
        out: list[tuple[str, str]] = []
        default = self._value(".DEFAULT_GOAL", {}, 0).strip() if ".DEFAULT_GOAL" in self.variables else self.first
        stack = [(goal, dict[str, str]()) for goal in reversed(goals or [default]) if goal]
        seen: set[object] = set()
        while stack and len(seen) < _VISITS:
            target, scope = stack.pop()
            if target in seen:
                continue
            seen.add(target)
            for name, op, value in self.target_variables.get(target, []):
                old = scope.get(name, self._value(name, scope, 0)) if op == "+=" else ""
                scope = {**scope, name: f"{old} {self.expand(value, scope)}".strip()}
            found = [(rule, target) for rule in self.rules.get(target, [])] or self._patterned(target)
            for rule, stem in found:
                prereqs = [p.replace("%", stem, 1) if "%" in p else p for p in rule.prereqs]
                if id(rule) in seen:
                    continue
                seen.add(id(rule))
                automatic = {"@": target, "<": prereqs[0] if prereqs else "", "^": " ".join(prereqs), "*": stem}
                for raw, where in rule.recipe:
                    command = raw.lstrip(" \t@-+")
                    self.where = where  # make -n expands each line too: its `$(shell …)` runs
                    expanded = self.expand(command, {**scope, **automatic})
                    if dry and "+" not in raw[:len(raw) - len(command)] and not _MAKE_REF.search(command):
                        continue
                    out += [(line, where) for part in expanded.split("\n") if (line := part.strip().lstrip("@-+ \t"))]
                stack += [(p, scope) for p in reversed(prereqs)]
        return out

    def _patterned(self, target: str) -> list[tuple[Rule, str]]:
        return [(rule, stem) for rule in self.patterns for pattern in rule.targets
                if (stem := _stem(pattern, target)) is not None][:1]


def runs(rest: list[str], here: Path, assignments: list[str]) -> tuple[list[tuple[str, str]], Path]:
    """The command lines `make ARGS` (`rest`, the variables `assignments` set for it) run in `here` hands its shell (and
    the commands its `$(shell …)` runs, a SHELL it sets), each with where it is written, and the folder they run in."""
    folder, files, goals, given, evals, dry = here, list[str](), list[str](), dict[str, str](), list[str](), False
    args, overrides = iter(rest[1:]), False
    for word in args:
        if re.fullmatch(r"-[jl]|--jobs|--load-average|--max-load", word) and re.fullmatch(r"[\d.]+", next_ := next(args, "")):
            continue  # `-j 8`: the count is no goal
        if re.fullmatch(r"-[jl]|--jobs|--load-average|--max-load", word):
            word = next_  # the word past an option with no count
        short = re.match(r"-([^-CfIoWEjlO]*)", word)  # the letters before one taking a value
        overrides = overrides or word.startswith("--env") or bool(short and "e" in short.group(1))
        if word.startswith("--"):
            option, _, value = word.partition("=")
            known = next((full for full in ("--file", "--makefile", "--directory", "--eval") if full.startswith(option)
                          and len(option) > 3), "")
            if known and not value:
                value = next(args, "")
            dry = dry or len(option) > 3 and any(full.startswith(option) for full in _DRY_LONG)
        elif word.startswith("-") and len(word) > 1:
            known, value = "", ""
            for n, char in enumerate(word[1:], 1):
                if char in _VALUED:
                    known, value = f"-{char}", word[n + 1:] or next(args, "")
                    break
                if char in _OPTIONAL:
                    break
                dry = dry or char in _DRY
        elif "=" in word and re.match(r"[^=\s]+=", word):
            name, _, value = word.partition("=")
            given[name.rstrip(":")] = value
            continue
        else:
            goals.append(word)
            continue
        if known in ("-f", "--file", "--makefile"):
            files.append(value)
        elif known in ("-C", "--directory"):
            folder = folder / Path(value).expanduser()
        elif known in ("-E", "--eval"):
            evals.append(value)
    environment = {name: value for name, _, value in (a.partition("=") for a in assignments)}
    makefile = Makefile(folder, {**environment, **given} if overrides else given, environment)
    for text in evals:
        makefile.parse(text, "--eval")
    for name in environment.get("MAKEFILES", "").split():
        makefile.read(folder / name)
    default = next((folder / name for name in NAMES if (folder / name).is_file()), folder / NAMES[0])
    for path in [folder / Path(name).expanduser() for name in files] or [default]:
        makefile.read(path)
    if any(set(goal) & set("$`*?[{~") for goal in goals):  # a goal the shell makes: any target may be it
        goals = [*makefile.rules, *(p.replace("%", "x") for rule in makefile.patterns for p in rule.targets)]
    lines = makefile.lines(goals, dry)
    shells = [(line, where) for line, where in makefile.runs if line.strip() not in ("", "/bin/sh")]
    return [*dict.fromkeys([*shells, *lines])], folder


def _defined(lines: list[str], number: int) -> tuple[str, int]:
    """The body of a `define` whose first line is `lines[number]`, and the number of the line past its `endef`."""
    body, nested = [], 0
    while number < len(lines):
        stripped = _PREFIXES.sub("", lines[number].strip())
        number += 1
        if stripped.startswith("endef") and not nested:
            break
        nested += stripped.startswith("define") - stripped.startswith("endef")
        body.append(lines[number - 1])
    return "\n".join(body), number


def _top(text: str, char: str) -> int:
    """Where `char` first occurs in `text` outside `$(…)`/`${…}` (-1 when it does not)."""
    depth = 0
    for at, found in enumerate(text):
        if found in "({" and at and text[at - 1] == "$" or depth and found in "({":
            depth += 1
        elif found in ")}" and depth:
            depth -= 1
        elif found == char and not depth:
            return at
    return -1


def _closing(text: str, start: int, opening: str) -> int:
    """Where the reference opened by `opening` before `start` closes (the end of `text` when it does not)."""
    closing, depth = ")" if opening == "(" else "}", 1
    for at in range(start, len(text)):
        if text[at] == opening:
            depth += 1
        elif text[at] == closing:
            depth -= 1
            if not depth:
                return at
    return len(text)


def _split(args: str) -> list[str]:
    """A function's arguments: split at its commas outside references."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(args):
        if char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
        elif char == "," and not depth:
            parts.append(args[start:at])
            start = at + 1
    return [*parts, args[start:]]


def _stem(pattern: str, name: str) -> str | None:
    """What `%` of `pattern` stands for in `name` (None when `name` does not match it)."""
    if "%" not in pattern:
        return None
    before, after = pattern.split("%", 1)
    for candidate in (name, name.rsplit("/", 1)[-1]) if "/" not in pattern else (name,):
        if candidate.startswith(before) and candidate.endswith(after) and len(candidate) >= len(before) + len(after):
            return candidate[len(before):len(candidate) - len(after)]
    return None
