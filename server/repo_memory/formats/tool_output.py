"""The content of a tool call: the strings it was given and returned, without the harness's field names and flags.

A Claude Code Bash response is `{"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"}`, a Read's
`{"type": "text", "file": {"filePath", "content", "numLines", …}}`: indexed as JSON, every call was found by `image`,
`output`, `expected` or `text`. What a call is about is in its string leaves; keys, booleans and numbers are the shape.
"""

from __future__ import annotations

import json
import re
from typing import Any

from repo_memory.formats import nesting

OPENING = 2000  # characters of a call's output text its record keeps (`output_text`); the whole is kept elsewhere
TAGS = frozenset({"type", "kind"})  # keys whose string names the shape of a value (`"type": "text"`), not its content
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)(?:"(\s*:)?|\\?$)', re.DOTALL)  # a JSON string, and the colon that makes it a key


def content(value: Any) -> str:
    """The string leaves of `value`, one a line, in order; a str is its own content."""
    return "\n".join(leaves(value))


def leaves(value: Any, key: str = "") -> list[str]:
    """The strings in `value`, but for those of TAGS keys and empty ones."""
    if isinstance(value, str):
        return [] if key in TAGS or not value else [value]
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in leaves(v, str(k))]
    if isinstance(value, list):
        return [leaf for v in value for leaf in leaves(v)]
    return []  # booleans, numbers and null are a response's flags and counts


def said(stored: str, opening: str) -> str:
    """The text of a call's stored response whose record's `output_text` is `opening`: the content of the JSON dump of
    a structured response, or the stored text itself (a text response, even one that only looks like JSON)."""
    text = dumped(stored)
    return text if text.startswith(opening) else stored


def recut(data: dict[str, Any], before: bytes, after: bytes) -> dict[str, Any]:
    """A tool record's `output_text` and `output_chars` as its hook takes them from the whole output, once the stored
    response `before` (whose text `output_text` opens) is `after`; {} when `output_text` opens no text of `before`."""
    opening, was = data.get("output_text"), before.decode("utf-8", errors="replace")
    if not isinstance(opening, str):
        return {}
    structured = dumped(was).startswith(opening)  # `after` is read as `before` was
    if not structured and not was.startswith(opening):
        return {}
    now = after.decode("utf-8", errors="replace")
    text = dumped(now) if structured else now
    return {"output_text": text[:OPENING], "output_chars": len(text)}


def dumped(text: str) -> str:
    """The content of a text that is a JSON dump of a structured response, as hooks recorded one before they kept its
    content (`output_excerpt`): whole, or cut at 2,000 characters mid-value. Any other text is its own content."""
    if not text.startswith(("{", "[")):
        return text
    try:
        return content(nesting.loads(text))
    except ValueError:
        pass
    out: list[str] = []
    tagged = False  # the string before was a key of TAGS
    for found in _STRING.finditer(text):
        raw, is_key = found.group(1), found.group(2) is not None
        if is_key:
            tagged = raw in TAGS
            continue
        try:
            value = json.loads(f'"{raw}"')
        except ValueError:
            value = raw  # cut inside an escape: its characters as they stand
        if value and not tagged:
            out.append(value)
        tagged = False
    return "\n".join(out)
