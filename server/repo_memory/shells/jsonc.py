"""JSON with comments, read as Gemini CLI reads its trustedFolders.json (strip-json-comments 3, then JSON.parse), and
a flat object of strings in it edited in place, so that the person's comments and layout stay.

strip-json-comments blanks each comment's characters to spaces (keeping its white space, JavaScript's `\\s`), so a
position in the stripped text is the same position in the text: the stripped one is parsed, the text edited.
"""

from __future__ import annotations

import json
import re
from typing import Any

from repo_memory.formats import nesting
from repo_memory.shells import settings_text

_SINGLE, _MULTI = "//", "/*"
_INK = re.compile("[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")  # not JavaScript's \s


def strip(text: str) -> str:
    """`text` with its `//` and `/* */` comments blanked, exactly as strip-json-comments 3 does it (whitespace: true)."""
    out, offset, in_string, comment, i = [], 0, False, "", 0
    while i < len(text):
        pair = text[i:i + 2]
        if not comment and text[i] == '"' and not _escaped(text, i):
            in_string = not in_string
        if in_string:
            pass
        elif not comment and pair == _SINGLE:
            out.append(text[offset:i])
            offset, comment, i = i, _SINGLE, i + 1
        elif comment == _SINGLE and pair == "\r\n":
            i += 1
            out.append(_INK.sub(" ", text[offset:i]))
            offset, comment = i, ""
        elif comment == _SINGLE and text[i] == "\n":
            out.append(_INK.sub(" ", text[offset:i]))
            offset, comment = i, ""
        elif not comment and pair == _MULTI:
            out.append(text[offset:i])
            offset, comment, i = i, _MULTI, i + 1
        elif comment == _MULTI and pair == "*/":
            i += 1
            out.append(_INK.sub(" ", text[offset:i + 1]))
            offset, comment = i + 1, ""
        i += 1
    return "".join(out) + (_INK.sub(" ", text[offset:]) if comment else text[offset:])


def _escaped(text: str, quote: int) -> bool:
    backslashes = len(text[:quote]) - len(text[:quote].rstrip("\\"))
    return backslashes % 2 == 1


def load(text: str) -> Any:
    """What JSON.parse makes of `text` once stripped: ValueError where it throws (NaN and Infinity are no JSON to it)."""
    def no_constant(name: str) -> Any:
        raise ValueError(f"Unexpected token {name[0]}")

    return nesting.loads(strip(text), parse_constant=no_constant)


def with_member(text: str, key: str, value: str | None) -> str | None:
    """`text`, an object of strings, with `key` set to `value` (taken out for None), edited in place so its comments
    stay; None when that cannot be done (what Gemini CLI would read then is not what was asked)."""
    try:
        data, edited = load(text), _edit(text, key, value)
        wanted = {k: v for k, v in {**data, key: value}.items() if v is not None}
        return edited if load(edited) == wanted and list(load(edited)) == list(wanted) else None
    except (ValueError, IndexError):
        return None


def _edit(text: str, key: str, value: str | None) -> str:
    bare = strip(text)
    start = len(bare) - len(bare.lstrip(" \t\r\n"))
    members, close = _members(bare, start)
    found = [m for m in members if m[0] == key]
    new = f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False)}"
    if found and value is not None:  # the last one counts, as in JSON.parse
        _, _, value_start, value_end = found[-1]
        return text[:value_start] + json.dumps(value, ensure_ascii=False) + text[value_end:]
    if found:
        return _without(text, members, members.index(found[-1]))
    if value is None:
        return text
    if not members:
        gap = text[start + 1:close]
        return text[:start + 1] + ("\r\n  " if "\r\n" in gap else "\n  " if "\n" in gap else " ") + new + text[start + 1:]
    _, last_key, _, last_end = members[-1]
    line = text[text.rfind("\n", 0, last_key) + 1:]
    indent = line[:len(line) - len(line.lstrip(" \t"))]
    rest = text[last_end:close]
    if "\n" not in rest:
        return text[:last_end] + ", " + new + text[last_end:]
    at = last_end + rest.rfind("\n")  # on a line of its own below the last member's, whose comment stays on its line
    if text[at - 1] == "\r":
        at -= 1
    return text[:last_end] + "," + text[last_end:at] + text[at:text.index("\n", at) + 1] + indent + new + text[at:]


def _without(text: str, members: list[tuple[str, int, int, int]], i: int) -> str:
    """`text` without member `i` and one comma by it; with its line, when nothing else is on that line."""
    _, key_start, _, value_end = members[i]
    bare = strip(text)
    line_start = text.rfind("\n", 0, key_start) + 1
    own_line = line_start > 0 and not text[line_start:key_start].strip()
    if i + 1 < len(members):  # its own comma follows it
        end = bare.index(",", value_end) + 1
        end += len(text[end:]) - len(text[end:].lstrip(" \t"))
        if own_line and text[end:end + 1] == "\n":
            return text[:line_start] + text[end + 1:]
        return text[:key_start] + text[end:]
    line_end = text.find("\n", value_end)
    if own_line and not text[value_end:len(text) if line_end < 0 else line_end].strip():
        begin = line_start - 1 - (text[line_start - 2:line_start] == "\r\n")  # from the end of the line before
    else:
        begin = len(text[:key_start].rstrip(" \t"))  # with the spaces before it
    if not i:
        return text[:begin] + text[value_end:]
    comma = bare.rindex(",", 0, key_start)  # after the member before it
    return text[:comma] + text[comma + 1:begin] + text[value_end:]


def _members(bare: str, start: int) -> tuple[list[tuple[str, int, int, int]], int]:
    """The members of the object at `start` in the stripped text, and where its closing brace is (as .claude settings
    files are read: shells/settings_text.py)."""
    if bare[start] != "{":
        raise ValueError("not an object")
    return settings_text.object_members(bare, start)
