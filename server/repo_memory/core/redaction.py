"""Secrets in captured content (tool output a hook or a loop recorded, an import) are redacted, not refused: each is
replaced by `[REDACTED:<rule>]` and the record's data lists the rules under `redacted`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

from repo_memory.formats import experience
from repo_memory.guards import secretscan

# Joins the strings of many records into one text to scan at once. No secret rule can match across it: `.` stops at
# the newlines, `\s` and every character class stop at the NUL, and `$` cannot see past it (tests/core/test_import.py
# checks that a secret in any part is still found in the joined text).
SCAN_SEPARATOR = "\n\x00\n"
SCAN_BATCH = 256


def redact_entry(entry: experience.Entry) -> experience.Entry:
    """A captured record with every secret in its text, data and refs replaced by `[REDACTED:<rule>]`."""
    text, in_text = secretscan.redact(entry.text) if entry.text else (entry.text, [])
    data, in_data = secretscan.redact_value(entry.data)
    refs, in_refs = secretscan.redact_value(list(entry.refs))
    if not (in_text or in_data or in_refs):
        return entry
    rules = sorted({f.rule for f in (*in_text, *in_data, *in_refs)})
    data = {**data, "redacted": rules} if isinstance(data, dict) else {"value": data, "redacted": rules}
    return dataclasses.replace(entry, text=text, data=data, refs=refs)


def redact_entries(entries: Sequence[experience.Entry]) -> list[experience.Entry]:
    """`redact_entry` of each entry, fast when there is nothing to redact (the usual case): the strings of a batch of
    entries are scanned as one text, which costs what scanning them one by one costs in characters but pays the
    scanner's fixed cost per call (about 20 µs, more than a short record's whole write) once per batch."""
    out: list[experience.Entry] = []
    for start in range(0, len(entries), SCAN_BATCH):
        batch = entries[start : start + SCAN_BATCH]
        strings = [s for e in batch for s in _strings([e.text, e.data, list(e.refs)])]
        out += batch if not secretscan.scan(SCAN_SEPARATOR.join(strings)) else [redact_entry(e) for e in batch]
    return out


def _strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value, dict keys included (what redact_value scans)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
