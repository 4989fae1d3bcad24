"""Who said a record and when what it tells happened: the `speaker` and `when` that `remember` takes, kept in the
record's data as an import keeps them (`data.speaker`, `data.when`), so the index reads both ways alike.

A leading `Name:` is read as the speaker only when the whole text is one quotation after it — `Caroline: "I went to
the support group yesterday."` — the name is one to three capitalised words, and it is not a label people write
before a quotation (`Error: "file not found"`, `Note: "…"`, `Decision: "…"`). Anything else keeps its text and no
speaker: a wrong speaker would boost the record for questions about a person it is not about, while a missed one only
leaves it ranked as it was.
"""

from __future__ import annotations

import re
from typing import Any

from repo_memory.errors import InvalidArgumentError
from repo_memory.formats import when as moments

SPEAKER_CHARS = 80
_QUOTED = re.compile(r"(?P<name>[A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30}){0,2}): ?[\"“](?P<said>[^\"“”]*\S[^\"“”]*)[\"”]")
LABELS = frozenset("""actual answer bug caution cause command comment commit context danger debug decision description done
    edit error example expected fix fixme fwd goal got hint idea important info input issue log message name next note nb
    observation output plan problem prompt ps q a question quote re reason reply request response result solution status
    subject summary task test tip title todo update usage value warning""".split())


def quoted_speaker(text: str | None) -> str | None:
    """The name before a quoted utterance (`Name: "…"`), or None when `text` is not one."""
    match = _QUOTED.fullmatch((text or "").strip())
    if not match or match["name"].lower() in LABELS or match["name"].split()[0].lower() in LABELS:
        return None
    return match["name"]


def told(text: str | None, data: Any, speaker: str | None = None, when: str | None = None) -> Any:
    """`data` with the record's speaker (given, or read from a quoted utterance) and the time it is about (any form
    formats/when.py reads, stored as UTC ISO) added; unchanged when there is neither."""
    if speaker is not None and not speaker.strip():
        raise InvalidArgumentError("speaker is empty: give the name of who said it, or leave it out.")
    named = speaker.strip()[:SPEAKER_CHARS] if speaker else None
    if named is None and not (isinstance(data, dict) and isinstance(data.get("speaker"), str)):
        named = quoted_speaker(text)
    about = moments.moment(when, "when") if when else None
    extra = {**({"speaker": named} if named else {}), **({"when": about} if about else {})}
    if not extra:
        return data
    if isinstance(data, dict):
        return {**data, **extra}
    return {**({"value": data} if data is not None else {}), **extra}
