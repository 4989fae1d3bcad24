"""What a `make` command runs, asked of make itself: make reads the makefiles (includes, variables, inline recipes,
`$(shell …)`, the makefiles it remakes) as it would, with its SHELL set from the command line to a recorder that notes
each line make hands it and runs none. A recipe line, a `$(shell …)` and a `$(MAKE)` line all reach the recorder; under
`make -n` only those make runs anyway do. What make does without a shell is not seen: a makefile that sets SHELL with
`override`, loads code (`load`, `$(guile …)`) or a line giving make `--eval` is not asked: its commands are not known.
An include named by a variable (`include $(DEPS)`) is not read for those before make reads it.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

MAKES = frozenset({"make", "gmake"})
NAMES = ("GNUmakefile", "makefile", "Makefile")  # the makefile make reads when none is named, the first found
# make's options that take a value, as the next word or the rest of the word
_VALUED = frozenset("CfIoWjlO")
# What makes make run code of the makefile's own while it reads it, whatever SHELL the command line gives
_OWN_CODE = re.compile(r"^[ \t]*override\b[^\n]*\bSHELL\b|^[ \t]*-?load\b|\$[({]guile\b", re.MULTILINE)
_INCLUDE = re.compile(r"^[ \t]*(?:-include|sinclude|include)[ \t]+([^\n#]*)", re.MULTILINE)
_ENVIRONMENT = ("MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKELEVEL", "MAKEFILES")  # of a make the hook runs under
_RECORDER = '#!/bin/sh\nfor line; do :; done\nprintf \'%s\\0\' "$line" >> "$0.log"\n'
TIMEOUT = 10.0


class Unread(Exception):
    """make cannot be asked what it runs without running code of the makefile's own; the message says why."""


_asked: dict[tuple[object, ...], tuple[list[str], Path]] = {}  # one hook reads a line several times: make asked once


def runs(rest: list[str], here: Path, assignments: list[str]) -> tuple[list[str], Path]:
    """The command lines `make ARGS` (`rest`, the variables `assignments` set for it) run in `here` hands its shell, and
    the folder they run in; raises Unread when make cannot be asked."""
    folder, files = _read_options(rest, here)
    _check_own_code(rest, folder, files, assignments)
    stamps = [(path.stat().st_mtime_ns, path.stat().st_size) for name in [*files, *NAMES]
              if (path := folder / Path(name).expanduser()).is_file()]  # a makefile written since: asked again
    key = (tuple(rest), here, tuple(assignments), tuple(stamps))
    if key not in _asked:
        _asked[key] = _ask(rest, here, folder, assignments)
    return _asked[key]


def _ask(rest: list[str], here: Path, folder: Path, assignments: list[str]) -> tuple[list[str], Path]:
    """What `runs` returns, asked of make."""
    program = shutil.which(rest[0].rsplit("/", 1)[-1])
    if program is None:  # no make here to run: none runs the line's either
        return [], folder
    env = {name: value for name, value in os.environ.items() if name not in _ENVIRONMENT}
    env.update({name: value for name, _, value in (assignment.partition("=") for assignment in assignments)})
    touch = any(_short(word, "t") or word == "--touch" for word in rest[1:])
    with tempfile.TemporaryDirectory(prefix="repo-memory-make-") as scratch:
        recorder = Path(scratch) / "record"
        recorder.write_text(_RECORDER, encoding="utf-8")
        recorder.chmod(stat.S_IRWXU)
        try:  # -n beside -t: make touches no file of its own, and still hands its shell what -t runs (`+…`)
            subprocess.run([program, *rest[1:], *(["-n"] if touch else []), f"SHELL={recorder}"], cwd=here, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=TIMEOUT, check=False)
        except subprocess.TimeoutExpired as err:
            raise Unread(f"make did not say within {TIMEOUT:.0f} s what it runs") from err
        except OSError:
            return [], folder
        log = Path(f"{recorder}.log")
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return [line for line in text.split("\0") if line.strip()], folder


def _read_options(rest: list[str], here: Path) -> tuple[Path, list[str]]:
    """The folder `make ARGS` run in `here` works in (`-C DIR`…) and the makefiles it is given (`-f FILE`…)."""
    files, folder, args = list[str](), here, iter(rest[1:])
    for word in args:
        if word in ("-f", "--file", "--makefile", "-C", "--directory"):
            value = next(args, "")
        elif word.startswith(("-f", "-C")) and not word.startswith("--"):
            value = word[2:]
        elif word.startswith(("--file=", "--makefile=", "--directory=")):
            value = word.split("=", 1)[1]
        else:
            continue
        if word.startswith(("-f", "--file", "--makefile")):
            files.append(value)
        else:
            folder = folder / Path(value).expanduser()
    return folder, files


def _check_own_code(rest: list[str], folder: Path, files: list[str], assignments: list[str]) -> None:
    """Raise Unread when make, asked, would run code of the makefile's own: `--eval` on the line, or a makefile it reads
    (named, the default, MAKEFILES, and what they include by name) that sets SHELL with override or loads code."""
    if any(word.startswith("--ev") or _short(word, "E") for word in rest[1:]):
        raise Unread("the line gives make `--eval`")
    given = [value for name, _, value in (a.partition("=") for a in assignments) if name == "MAKEFILES"]
    default = next((name for name in NAMES if (folder / name).is_file()), "")
    queue = [*(files or [default]), *" ".join(given).split()]
    seen: set[Path] = set()
    while queue:
        path = folder / Path(queue.pop()).expanduser()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = path.read_text(encoding="utf-8", errors="replace")[:2_000_000]
        if found := _OWN_CODE.search(text):
            raise Unread(f"{path} runs code of its own while make reads it (`{found.group().strip()}`)")
        queue += [name for names in _INCLUDE.findall(text) for name in _globbed(folder, names.split())]


def _globbed(folder: Path, names: list[str]) -> Iterator[str]:
    """The files include's words name: a glob matched in `folder`; a name holding a variable is not known before make
    reads it."""
    for name in names:
        if "$" in name:
            continue
        if set(name) & set("*?["):
            yield from (str(found) for found in sorted(folder.glob(name)))
        else:
            yield name


def _short(word: str, letter: str) -> bool:
    """Whether make's option word `word` holds the short option `letter` (`-kt`), before any option taking a value."""
    if not word.startswith("-") or word.startswith("--"):
        return False
    for char in word[1:]:
        if char == letter:
            return True
        if char in _VALUED:
            return False
    return False
