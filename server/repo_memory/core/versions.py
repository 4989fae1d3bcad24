"""Versions of one record: the lines a union merge keeps when two clones each redacted the record differently.

Each clone's `log redact` rewrote the same line (same id, same sha256) with other spans replaced by `[REDACTED]`, and
git's `merge=union` keeps both lines, each still holding what the other took out. `fold` joins them into the one
record redacting what each redacts, and only that: every difference between two versions must border a `[REDACTED]`
of one side (which may stand for more of the original than the other side took out: `--all-text` against `--text`),
and the result must be a redaction of each version (its text, in order, is text both hold), so a fold never adds a
word; anything else is no versions of one record (an edit), and nothing is folded.
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


def whole(record: dict[str, Any]) -> dict[str, Any]:
    """`record` with its whole text and data (its blob with them) replaced by `[REDACTED]`: `log redact --all-text`."""
    new = {k: v for k, v in record.items() if k != "blob"}
    new["text"] = REDACTED
    if "data" in record or record.get("blob", {}).get("field") == "data":
        new["data"] = REDACTED
    return new


def fold(records: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], list[str]] | None:
    """The record redacting what each of `records` (versions of one record) redacts, and the fields where they
    differed; None when they differ by anything but `[REDACTED]` spans."""
    given = records
    if any(r.get("text") == REDACTED and r.get("data", REDACTED) == REDACTED and "blob" not in r for r in records):
        records = [whole(r) for r in records]  # one is redacted whole (its blob with it): so is the fold
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
        if any(r.get(name) != value for r in given):
            fields.append(name)
        folded[name] = value
    dropped = "blob" not in folded and any("blob" in r for r in given)  # with the text it held, redacted whole
    return folded, fields + (["blob"] if dropped else [])


_APART = object()  # two values that are no versions of one value


def joined(a: str, b: str) -> str | None:
    """The text redacting what texts `a` and `b` (versions of one text, each redacted) redact; None when they differ by
    more than [REDACTED] spans (the output blobs of a tool call two clones redacted: core/redacting.py)."""
    found = _strings(a, b)
    return found if isinstance(found, str) else None


def _join(a: Any, b: Any) -> Any:
    """The value redacting what `a` and `b` redact, or _APART."""
    if a == REDACTED or b == REDACTED:  # a value redacted whole (`--all-text` makes data one): it holds nothing
        return REDACTED
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
    on one side or borders one both sides hold (which stands, on one side, for more of the original than on the
    other: `[REDACTED]` against `token X and password [REDACTED] ok`); _APART otherwise."""
    if a == b:
        return a
    ta, tb = _tokens(a), _tokens(b)
    runs: list[tuple[bool, list[str]]] = []  # (a difference, or a marker both hold: one span; the tokens both hold)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        held = ta[i1:i2] if tag == "equal" else []
        for token in held if held else [REDACTED if REDACTED in ta[i1:i2] + tb[j1:j2] else ""]:
            span = not held or token == REDACTED
            if span and runs and runs[-1][0]:
                runs[-1][1].append(token)
            else:
                runs.append((span, [token]))
    out = [REDACTED if span else "".join(tokens) for span, tokens in runs]
    if any(span and REDACTED not in tokens for span, tokens in runs):
        return _APART  # a difference with no marker on either side, nor beside one: an edit
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
