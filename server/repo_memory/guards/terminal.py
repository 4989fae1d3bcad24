"""Text from the repository as a person's terminal shows it: what the file holds, every character of it drawn.

A terminal acts on control characters instead of drawing them: a carriage return draws what follows over the start of
the line (a loop step hidden under a harmless one, which YAML reads as a step of its own), a backspace erases, ESC opens
a sequence that recolours, moves the cursor, sets the clipboard (OSC 52) or links text to a hidden address (OSC 8);
bidi controls reorder what is drawn; U+2028 and U+2029 are line breaks to YAML that a terminal does not draw. Whatever
reaches a person from memory (a spec or skill under review, a record, a folder's name) goes through `visible`, which
writes each as an escape (`\\x0d`, `\\x1b`, `\\u202e`) that a person reads. JSON output needs none of it: JSON escapes.
"""

from __future__ import annotations

import re

from repo_memory.guards.markers import BIDI

_OTHERS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029" + "".join(sorted(BIDI))
# In text of many lines a newline and a tab are drawn as themselves, and so is the CR of a CRLF line end (the cursor
# goes to the start of a line it then leaves); in a name or a one-line listing each of them is escaped too.
_IN_LINES = re.compile(f"\r(?!\n)|[{_OTHERS}]")
_IN_A_LINE = re.compile(f"[\t\n\r{_OTHERS}]")
NAMES = {"\r": "a carriage return", "\x08": "a backspace", "\x1b": "an escape character (ESC)", "\x9b": "a CSI control",
         "\u2028": "a Unicode line separator", "\u2029": "a Unicode paragraph separator", "\x85": "a next-line control"}


def visible(text: str, lines: bool = True) -> str:
    """`text` with every character a terminal would act on instead of drawing written as its escape; `lines`: a
    newline and a tab kept as they are (text of many lines), else escaped too (a name, a line of a listing)."""
    return (_IN_LINES if lines else _IN_A_LINE).sub(_escape, text)


def hidden(text: str) -> list[tuple[int, str]]:
    """Each character `visible` escapes in text of many lines: its line (from 1) and what it is."""
    found, line, counted = [], 1, 0
    for m in _IN_LINES.finditer(text):
        line, counted = line + text.count("\n", counted, m.start()), m.start()
        found.append((line, name(m.group())))
    return found


def name(char: str) -> str:
    """What a person calls `char`, with the escape `visible` writes for it."""
    said = NAMES.get(char) or ("a bidi control" if char in BIDI else "a control character")
    return f"{said} ({_escape(char)})"


def _escape(found: re.Match[str] | str) -> str:
    code = ord(found if isinstance(found, str) else found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
