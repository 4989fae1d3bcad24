"""Versions of one record: the lines a union merge keeps when two clones each redacted the record differently.

Each clone's `log redact` rewrote the same line (same id, same sha256) with other spans replaced by `[REDACTED]`, and
git's `merge=union` keeps both lines, each still holding what the other took out. `fold` joins them into the one
record redacting what each redacts, and only that: every difference between two versions must be a `[REDACTED]` on
at least one side, and the result must be a redaction of each version (its text, in order, is text both hold), so a
fold never adds a word; anything else is no versions of one record (an edit), and nothing is folded.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

REDACTED = "[REDACTED]"
CONTENT = ("text", "data", "refs")  # what a redaction by strings changes; a blob that differs is not folded
# what verify says of a record with several versions (core/audit.py); doctor calls it an error (core/breaks.py)
SAID = "several lines hold this record"


def fold(records: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], list[str]] | None:
    """The record redacting what each of `records` (versions of one record) redacts, and the fields where they
    differed; None when they differ by anything but `[REDACTED]` spans."""
    first, rest = records[0], records[1:]
    if any({k: v for k, v in r.items() if k not in CONTENT} != {k: v for k, v in first.items() if k not in CONTENT}
           or r.keys() != first.keys() for r in rest):
        return None
    folded, fields = dict(first), list[str]()
    for name in CONTENT:
        if name not in first:
            continue
        value = first[name]
        for other in rest:
            value = _join(value, other[name])
            if value is _APART:
                return None
        if any(r[name] != value for r in records):
            fields.append(name)
        folded[name] = value
    return folded, fields


_APART = object()  # two values that are no versions of one value


def _join(a: Any, b: Any) -> Any:
    """The value redacting what `a` and `b` redact, or _APART."""
    if isinstance(a, str) and isinstance(b, str):
        return _strings(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():  # a redacted key: not folded (keys are few; a person redacts it again)
            return _APART
        joined = {k: _join(v, b[k]) for k, v in a.items()}
        return _APART if any(v is _APART for v in joined.values()) else joined
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        items = [_join(x, y) for x, y in zip(a, b)]
        return _APART if any(v is _APART for v in items) else items
    return a if a == b and type(a) is type(b) else _APART


def _strings(a: str, b: str) -> str | object:
    """`a` and `b` with every span where they differ replaced by one `[REDACTED]`, when each such span holds the marker
    on one side; _APART otherwise."""
    if a == b:
        return a
    ta, tb = _tokens(a), _tokens(b)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if tag == "equal":
            out += ta[i1:i2]
        elif REDACTED in ta[i1:i2] or REDACTED in tb[j1:j2]:
            out += [] if out and out[-1] == REDACTED else [REDACTED]
        else:
            return _APART
    joined = "".join(out)
    return joined if _within(joined, a) and _within(joined, b) else _APART


def _tokens(text: str) -> list[str]:
    """`text` as words (runs of non-space), spaces and `[REDACTED]`s. Aligned character by character, the characters
    two secrets share (`-code-` of two codes) matched each other and stayed in the fold; a word is kept only whole."""
    return [t for t in _WORDS.split(text) if t]


_WORDS = re.compile(r"(\[REDACTED\]|\s+)")


def _within(redacted: str, text: str) -> bool:
    """Whether `redacted` is `text` with spans replaced by `[REDACTED]`: its other characters are `text`'s, in order."""
    pattern = ".*?".join(re.escape(part) for part in redacted.split(REDACTED))
    return re.fullmatch(pattern, text, re.DOTALL) is not None
