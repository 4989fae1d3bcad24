"""JSON (and TOML) from the repository read with its nesting bounded: an upstream chooses a log line's bytes, and a line
of 100,000 nested `[` made json.loads raise RecursionError, which no reader caught, so every command reading the logs died.

`loads` reads JSON as json.loads does and refuses JSON nested deeper than DEPTH levels with a ValueError, as json.loads
refuses any text that is no JSON: a caller's `except ValueError` takes it for the invalid input it is. The bound also
keeps every walk of a value read (scrub, redaction, secret scans, the index) far from Python's recursion limit, so
writers check `deeper` too: what repo-memory writes, it reads back.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

__all__ = ["DEPTH", "TooDeep", "deeper", "loads", "toml"]

DEPTH = 100  # far deeper than a record or a harness's line nests (a tool call's input: a handful of levels)
SAID = f"nested deeper than {DEPTH} levels, more than repo-memory reads"


class TooDeep(ValueError):
    """JSON or TOML nested deeper than DEPTH levels."""


def loads(text: str | bytes, **options: Any) -> Any:
    """json.loads of `text` (with json.loads's `options`); TooDeep, a ValueError, when it nests deeper than DEPTH levels."""
    try:
        value = json.loads(text, **options)
    except RecursionError:  # the parser's own bound: far deeper than DEPTH
        raise TooDeep(SAID) from None
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if raw.count(b"[") + raw.count(b"{") > DEPTH and _nests(raw) > DEPTH:  # fewer brackets than levels: no count needed
        raise TooDeep(SAID)
    return value


def toml(text: str) -> dict[str, Any]:
    """tomllib.loads of `text`; TooDeep, a ValueError as tomllib's own errors are, when it nests deeper than DEPTH
    levels (tomllib recurses: `a = [[[…]]]` 100,000 deep raised RecursionError)."""
    import tomllib  # ~35 ms to import; most repositories have no TOML file to read

    try:
        value = tomllib.loads(text)
    except RecursionError:
        raise TooDeep(SAID) from None
    if deeper(value):
        raise TooDeep(SAID)
    return value


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # a JSON string: its brackets are text
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _nests(raw: bytes) -> int:
    """How deep the JSON text `raw`, which json.loads took, nests: its brackets outside strings counted, at C speed
    (a walk of the value it makes took half as long again as json.loads on a log of tool records)."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def deeper(value: Any, limit: int = DEPTH) -> bool:
    """Whether `value` (of dicts, lists and tuples) nests deeper than `limit` levels; walked level by level, so a
    value of any depth is judged without recursion."""
    level = [value]
    for _ in range(limit):
        level = [c for v in level if isinstance(v, (dict, list, tuple)) for c in (v.values() if isinstance(v, dict) else v)]
        if not level:
            return False
    return any(isinstance(v, (dict, list, tuple)) for v in level)
