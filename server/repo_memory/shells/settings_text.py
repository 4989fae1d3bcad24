"""The text of a JSON settings file, edited in place: only the values that change are written, each laid out as the
text around it (one key a line, or an object on one line); every other byte stays as the person wrote it, so taking
out what setup added gives back the file git holds.
"""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()


def edited(text: str, after: dict[str, Any], unit: str | int, one_line: bool = False) -> str | None:
    """`text` changed to hold `after` (None when it cannot be edited in place); `unit` indents what is laid out afresh.
    A file on one line is edited in place only with `one_line` (what is added to it stays short)."""
    if "\n" not in text.strip() and not one_line:
        return None  # a file on one line has no layout to keep: setup's hooks on it would make one unreadable line
    try:
        start = _skip(text, 0)
        before, end = _DECODER.raw_decode(text, start)
        out = text[:start] + _value(text, start, end, before, after, unit, "\n" in text[start:end]) + text[end:]
        return out if json.loads(out) == after else None
    except (ValueError, IndexError):
        return None


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a) == json.dumps(b)  # order and type alike (1 is not true)


def _value(text: str, start: int, end: int, before: Any, after: Any, unit: str | int, multiline: bool) -> str:
    """The text for `after` in place of `before`, written at text[start:end]."""
    if _same(before, after):
        return text[start:end]
    if isinstance(before, dict) and isinstance(after, dict) and before and after:
        return _object(text, start, end, after, unit)
    if isinstance(before, (dict, list)) and before:
        multiline = "\n" in text[start:end]
    return _laid_out(after, _indent_at(text, start), unit, multiline)


def _object(text: str, start: int, end: int, after: dict[str, Any], unit: str | int) -> str:
    members, close = object_members(text, start)
    keys = [key for key, *_ in members]
    kept = [key for key in keys if key in after]
    if len(set(keys)) != len(keys) or list(after) != kept + [key for key in after if key not in keys]:
        return _laid_out(after, _indent_at(text, start), unit, "\n" in text[start:end])  # reordered: laid out afresh
    multiline = "\n" in text[start:end]
    lead = text[start + 1:members[0][1]]
    between = [text[members[i][3]:members[i + 1][1]] for i in range(len(members) - 1)]
    sep = between[0] if between else "," + (lead or " ")
    base = sep[sep.rfind("\n") + 1:] if "\n" in sep else ""
    parts: list[tuple[int | None, str]] = []
    for i, (key, key_start, value_start, value_end) in enumerate(members):
        if key in after:
            before = json.loads(text[value_start:value_end])
            value = _value(text, value_start, value_end, before, after[key], unit, multiline)
            parts.append((i, text[key_start:value_start] + value))
    for key in after:
        if key not in keys:
            parts.append((None, json.dumps(key, ensure_ascii=False) + ": " + _laid_out(after[key], base, unit, multiline)))
    body = parts[0][1]
    for (was, _), (index, part) in zip(parts, parts[1:]):
        body += (between[was] if was is not None and index == was + 1 else sep) + part  # kept neighbours keep their glue
    return "{" + lead + body + text[members[-1][3]:close] + "}"


def object_members(text: str, start: int) -> tuple[list[tuple[str, int, int, int]], int]:
    """(key, where the key starts, where its value starts and ends) of each member of the object at `start`, and
    where its closing brace is."""
    members = []
    at = _skip(text, start + 1)
    while text[at] != "}":
        key_start = at
        key, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text[at] != ":" or not isinstance(key, str):
            raise ValueError(f"no member at {key_start}")
        value_start = _skip(text, at + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append((key, key_start, value_start, value_end))
        at = _skip(text, value_end)
        if text[at] == ",":
            at = _skip(text, at + 1)
    return members, at


def _skip(text: str, at: int) -> int:
    """Where the first character after the white space at `at` is."""
    return len(text) - len(text[at:].lstrip(" \t\r\n"))


def _indent_at(text: str, at: int) -> str:
    line = text[text.rfind("\n", 0, at) + 1:at]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _laid_out(value: Any, base: str, unit: str | int, multiline: bool) -> str:
    if not multiline:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + base)
