"""The content of a tool call: the strings it was given and returned, without the harness's field names and flags.

A Claude Code Bash response is `{"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"}`, a Read's
`{"type": "text", "file": {"filePath", "content", "numLines", …}}`: indexed as JSON, every call was found by `image`,
`output`, `expected` or `text`. What a call is about is in its string leaves; keys, booleans and numbers are the shape.
"""

from __future__ import annotations

import json
import re
from typing import Any

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


def dumped(text: str) -> str:
    """The content of a text that is a JSON dump of a structured response, as hooks recorded one before they kept its
    content (`output_excerpt`): whole, or cut at 2,000 characters mid-value. Any other text is its own content."""
    if not text.startswith(("{", "[")):
        return text
    try:
        return content(json.loads(text))
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
