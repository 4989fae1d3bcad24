"""Names put into a shell command repo-memory prints for a person to paste: each stays one word and runs nothing.

A file, folder, branch or session name is the repository's, so an upstream chooses it: `x$(touch PWNED)` dropped
unquoted into a printed `git checkout HEAD -- x$(touch PWNED)` runs the upstream's command when the line is pasted,
and a name holding a newline splits it into two commands. Every name such a command holds goes through `quoted`:
a printable one in POSIX quotes (shlex.quote: unchanged when it needs none), one holding a control or other
unprintable character in ANSI-C quotes (`$'a\\nb'`, its bytes escaped), so the command stays one line on the screen
and no terminal control reaches it. bash, zsh, ksh and POSIX 2024 sh read `$'…'`; a shell that does not (dash) reads a
`$` and a quoted word: a name that matches no file, never a command.
"""

from __future__ import annotations

import shlex

__all__ = ["quoted"]

_NAMED = {"\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v", "\f": "\\f", "\r": "\\r", "\\": "\\\\",
          "'": "\\'"}


def quoted(*names: str) -> str:
    """`names` as words of a shell command a person pastes, one space between them."""
    return " ".join(shlex.quote(name) if name.isprintable() else f"$'{''.join(map(_escaped, name))}'" for name in names)


def _escaped(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    if char.isprintable():
        return char
    try:  # bytes, not \u: bash turns \u into a character only in a UTF-8 locale; a name's undecodable byte comes back
        raw = char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate no file name decodes to
        raw = char.encode("utf-8", "surrogatepass")
    return "".join(f"\\x{byte:02x}" for byte in raw)
