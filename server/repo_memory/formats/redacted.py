"""Strings a person gives `repo-memory log redact --text` replaced by `[REDACTED]` in a record's values and its blobs:
whole wherever they are, as text or as JSON spells them, and in part where a record keeps a cut copy of a longer text.

A tool record keeps the opening of its call's output (`output_text`) and of its input (its text; `data.input` past
2,000 characters), a preview keeps the opening of a text kept in a blob, and a loop's excerpt the end of a command's
output after a `…`. A secret a cut went through left only its first (or last) characters in the copy, which no match
of the whole secret finds: a copy's cut end holding a part of a string given, of PART_CHARS or more, is redacted too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

REDACTED = "[REDACTED]"
CUT = "…"  # what a writer puts where it cut a copy: a preview's end, a bounded input's end, a loop excerpt's start
PART_CHARS = 4  # the fewest characters of a string given taken for its part at a cut: fewer say next to nothing of it
# data keys holding the opening of a longer text (shells/tool_records.py; `output_excerpt`, older hooks' JSON of the
# response) or, after CUT, its end (runner/verify.py's excerpt)
CUT_FIELDS = ("output_text", "output_excerpt", "input", "excerpt")


def forms(strings: Sequence[str]) -> list[str]:
    """Each string as it reads in text, and as it reads inside a JSON string (quotes, backslashes, controls escaped)."""
    return list(dict.fromkeys(f for s in strings for f in (json.dumps(s, ensure_ascii=False)[1:-1], json.dumps(s)[1:-1], s)))


def holds(text: str, strings: Sequence[str]) -> bool:
    """Whether `text` holds a string given whole, in any of its forms."""
    return any(f in text for f in forms(strings))


def replace_raw(data: bytes, strings: Sequence[str]) -> tuple[bytes, int]:
    """`data` (a stored response: JSON or text, as it was given) with every string given replaced, as text or as JSON
    spells it, by [REDACTED]; and how many were."""
    text, count = data.decode("utf-8", errors="surrogateescape"), 0
    for form in forms(strings):  # escaped forms first: one holding a backslash is no substring of the plain one
        count, text = count + text.count(form), text.replace(form, REDACTED)
    return text.encode("utf-8", errors="surrogateescape"), count


def replace(value: Any, strings: Sequence[str]) -> tuple[Any, int]:
    """`value` with every string given replaced by [REDACTED] in its strings (dict keys too), and how many were."""
    if isinstance(value, str):
        count = 0
        for form in forms(strings):  # a bounded input is JSON text: a secret's quotes and backslashes are escaped there
            count, value = count + value.count(form), value.replace(form, REDACTED)
        return value, count
    if isinstance(value, dict):
        pairs = [(replace(k, strings), replace(v, strings)) for k, v in value.items()]
        return {k: v for (k, _), (v, _) in pairs}, sum(a + b for (_, a), (_, b) in pairs)
    if isinstance(value, list):
        items = [replace(v, strings) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


def cut_copies(record: dict[str, Any], strings: Sequence[str]) -> tuple[dict[str, Any], int]:
    """`record` with the part of a string given that a cut left at the end of a copy it keeps (its text, CUT_FIELDS of
    its data) replaced by [REDACTED], and how many were."""
    new, count = dict(record), 0
    if isinstance(record.get("text"), str):
        new["text"], count = ends(record["text"], strings)
    data = record.get("data")
    if isinstance(data, dict) and any(isinstance(data.get(k), str) for k in CUT_FIELDS):
        new["data"] = dict(data)
        for key in (k for k in CUT_FIELDS if isinstance(data.get(k), str)):
            new["data"][key], n = ends(data[key], strings)
            count += n
    return new, count


def ends(text: str, strings: Sequence[str]) -> tuple[str, int]:
    """`text` with the part of a string given a cut left at its end (an opening, before a CUT there or none) and, when
    it starts with CUT, at its start (a closing) replaced by [REDACTED]; and how many were (0 to 2)."""
    given = forms(strings)
    body, mark = (text[: -len(CUT)], CUT) if text.endswith(CUT) else (text, "")
    opening = max((_part(body, f) for f in given), default=0)
    text, count = (body[:-opening] + REDACTED + mark, 1) if opening else (text, 0)
    if text.startswith(CUT):
        flipped = text[len(CUT):][::-1]  # a closing at the start is an opening of the reversed text
        closing = max((_part(flipped, f[::-1]) for f in given), default=0)
        if closing:
            text, count = CUT + REDACTED + text[len(CUT) + closing:], count + 1
    return text, count


def _part(text: str, form: str) -> int:
    """The length of the longest opening of `form`, shorter than it and PART_CHARS or longer, `text` ends with; 0 if none."""
    for n in range(min(len(form) - 1, len(text)), PART_CHARS - 1, -1):
        if text.endswith(form[:n]):
            return n
    return 0
