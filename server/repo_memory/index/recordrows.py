"""What a record's row in the index holds (index/records.py writes it): its columns, the words it is found by, who
said it, the date it is about, the code it cites, and the text its vector is made of."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Any

from repo_memory.formats import experience, schema, tool_output, when
from repo_memory.guards import markers
from repo_memory.index.vectors import EMBED_CHARS, vkey

ORIGIN = re.compile(r".+@[0-9a-f]{12}")  # an exported record's key: its id and the opening of its sha256
COLUMNS = ("id", "session", "seq", "ts", "kind", "actor", "harness", "tool", "text", "speaker", "covers", "refs", "file",
           "offset", "length", "sha256", "origin", "flags", "outcome", "anchors", "vkey", "vlen")


def _outcome(record: dict[str, Any]) -> str:
    data = record.get("data")
    if record["kind"] == "outcome" and isinstance(data, dict) and isinstance(data.get("outcome"), str) and not experience.untrusted(record):
        return str(data["outcome"])
    return ""


def _record_anchors(record: dict[str, Any]) -> str:
    """Code a record cites: its refs of the form path::Symbol, with the hashes pinned when it was written."""
    pinned = record.get("anchors")
    pinned = pinned if isinstance(pinned, dict) else {}
    cited = {ref: str(pinned.get(ref, "")) for ref in record.get("refs", []) if isinstance(ref, str) and "::" in ref}
    return json.dumps(cited) if cited else ""


# Speakers that are roles, not people: who wrote a record that names no speaker (source.actor), and the roles chat
# transcripts give their turns. They are words a question may mean as words ("the user's session").
ROLES = frozenset({"human", "agent", "user", "assistant", "system"})


def _speaker(record: dict[str, Any]) -> str:
    data = record.get("data")
    if isinstance(data, dict) and isinstance(data.get("speaker"), str):
        return str(data["speaker"])
    return str(record["source"].get("actor", ""))


def _moment(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
    except ValueError:
        return None


def date_words(record: dict[str, Any]) -> str:
    """Words for the date the record is about (`data.when`, else when it was written), so 'May 2023' or '2023-05-08'
    in a query can match it, and for the dates its relative times mean ('yesterday' in a record of 8 May 2023 is 7
    May 2023)."""
    data = record.get("data")
    ts = str(record["ts"])
    at = _moment(data.get("when") if isinstance(data, dict) else None) or _moment(ts)
    if at is None:
        return str(data["date"]) if isinstance(data, dict) and isinstance(data.get("date"), str) else ts
    own = str(data["date"]) if isinstance(data, dict) and isinstance(data.get("date"), str) else when.day_words(at)
    return " ".join([own, *when.mentions(str(record.get("text") or ""), at)])


PLACED = ("speaker", "date", "when")  # data keys indexed in fields of their own


@cache
def searchable() -> tuple[str, ...]:
    """Keys of a record's data whose words are indexed with its text: those the experience schema marks x-searchable.
    The rest (ids, hashes, flags, a benchmark's dia_id) stays out of the words, or it would match questions."""
    keys = schema.schema("experience")["properties"]["data"].get("properties", {})
    return tuple(key for key, spec in keys.items() if spec.get("x-searchable"))


def words_of(record: dict[str, Any]) -> str:
    """The words a record is found by: its text and the searchable keys of its data; all of its data when it has no text."""
    text = str(record.get("text") or "")
    data = record.get("data")
    if call := _call(record):
        return "\n".join(filter(None, call))[: len(call[0]) + 4000]
    if not text and data is not None:
        rest = {k: v for k, v in data.items() if k not in PLACED} if isinstance(data, dict) else data
        return "" if rest == {} else rest[:4000] if isinstance(rest, str) else json.dumps(rest, ensure_ascii=False)[:4000]
    if isinstance(data, dict):
        words = [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k in searchable() if (v := data.get(k)) is not None]
        return "\n".join([text, *words])[: len(text) + 4000]
    return text


def _call(record: dict[str, Any]) -> tuple[str, str] | None:
    """A hook's record of a tool call as (the tool and its input, its output): the content of each, not the harness's
    field names and flags (formats/tool_output.py). Its text (`Bash {"command": …}`) is the input again: left out."""
    data = record.get("data")
    if record["kind"] != "tool" or not isinstance(data, dict) or not isinstance(data.get("tool"), str) or "input" not in data:
        return None
    given = data["input"]
    given = tool_output.dumped(given) if isinstance(given, str) else tool_output.content(given)
    said = data.get("output_text")
    said = said if isinstance(said, str) else tool_output.dumped(str(data.get("output_excerpt") or ""))
    return " ".join(filter(None, [data["tool"], given])), said


# Why a record of a server kind does not count ('' when it does), given (record, log, end of its line): see
# core/provenance.py. Without one, only the tool that wrote it is checked.
Judge = Callable[[dict[str, Any], str, int], str]


def row(line: experience.Line, rel: str, judge: Judge | None = None) -> tuple[Any, ...]:
    """The index row of a log line holding a valid record, in COLUMNS order, then the words of its date."""
    r = line.record
    assert r is not None
    src = r["source"]
    text, speaker = words_of(r), _speaker(r)
    distrust = judge(r, rel, line.offset + len(line.raw)) if judge else experience.untrusted(r)
    flags = [*(str(m) for m in markers.find(text)), *filter(None, [distrust])]  # both keep it out of recall and evidence
    call = _call(r)  # of a tool call, its tool and input are embedded
    own = min(len(call[0]) if call else len(r["text"]) if r.get("text") else len(text), EMBED_CHARS)  # its words, not its data
    return (r["id"], r["session"], r["seq"], r["ts"], r["kind"], src.get("actor", ""), src.get("harness", ""), src.get("tool", ""),
            text, speaker, _listed(r.get("covers")), _listed(r.get("refs")), rel, line.offset,
            len(line.raw), r["sha256"], _origin(r), json.dumps(flags) if flags else "", _outcome(r), _record_anchors(r),
            vkey(embedded(speaker, text[:own])), own, date_words(r))


def _origin(record: dict[str, Any]) -> str:
    """The `id@hash` of the record `log import` copied this one from (its key, as data.source_id keeps it), or ''."""
    data = record.get("data")
    key = data.get("source_id") if isinstance(data, dict) and record["source"].get("tool") == "import" else None
    return key if isinstance(key, str) and ORIGIN.fullmatch(key) else ""


def _listed(value: Any) -> str:
    """A record's list (covers, refs) as the JSON its column holds; most are empty."""
    return json.dumps(value) if value else "[]"


def embedded(speaker: str, text: str) -> str:
    """The text a record's vector is made of. Its key is this text's hash, so records saying the same thing (a
    repeated tool output, the same line in many sessions) share one vector and it is embedded once."""
    return f"{speaker}: {text}" if speaker else text
