"""Experience records rendered for people: one-line summaries and a session as markdown, each with bidi controls and
tag characters escaped (guards/markers.shown): a quarantined record's right-to-left override never reorders a terminal
or a diff."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from repo_memory.formats import experience, when
from repo_memory.formats.experience import Line, check_chain
from repo_memory.guards import markers

DATA_SHOWN = 500  # characters of a record's data a diff shows; more is said to be there


def one_line(record: dict[str, Any]) -> str:
    """`time  id  kind  who  first line of text` (who: the actor, or the loop engine for its verdicts)."""
    text = (record.get("text") or json.dumps(record.get("data"), ensure_ascii=False) or "").replace("\n", " ")
    who = experience.author(record["kind"], record["source"])
    return markers.shown(f"{when.shown(record['ts'])}  {record['id']}  {record['kind']}  {who}  {text[:100]}")


def markdown(session: str, files: Sequence[tuple[Sequence[Line], bool]]) -> str:
    """The session as markdown: a heading per record (id as anchor), provenance, text, data, refs; breaks called out.
    `files`: the lines of each of the session's files, and whether the file before it is missing (`check_chain`)."""
    seen: dict[int, set[str]] = {}
    checked = {id(c.line): c for lines, resumed in files for c in check_chain(lines, seen, resumed)}
    out = [f"# Session {session}\n"]
    for line in (line for lines, _ in files for line in lines):
        record = line.record
        if record is None:
            out.append(f"> **Unreadable line at byte {line.offset}:** {line.problem}\n")
            continue
        src = record["source"]
        out.append(f'<a id="{record["id"]}"></a>\n### {record["id"]} · {record["kind"]}\n')
        meta = f"*{when.shown(record['ts'])} · {experience.author(record['kind'], src)}" + (
            f" via {src['harness']}" if src.get("harness") and src["harness"] != "unknown" else "")
        meta += (f" / {src['tool']}" if src.get("tool") else "") + "*"
        out.append(meta + "\n")
        if record.get("text"):
            out.append(record["text"].rstrip() + "\n")
        if record.get("data") is not None:
            out.append("```json\n" + json.dumps(record["data"], indent=2, ensure_ascii=False) + "\n```\n")
        if record.get("blob"):
            out.append(f"(full content in blob `{record['blob']['sha256']}`, {record['blob']['bytes']} bytes)\n")
        for label in ("covers", "refs"):
            if record.get(label):
                out.append(f"{label}: " + ", ".join(f"[{r}](#{_anchor(r)})" for r in record[label]) + "\n")
        check = checked.get(id(line))
        if check is not None and not check.verified:
            out.append(f"> **Verification failed:** {check.problem}\n")
        out.append("")
    return markers.shown("\n".join(out))


def _anchor(ref: str) -> str:
    """The anchor of an id or of a range's first record."""
    session, _, seqs = ref.partition("#")
    return f"{session}#{seqs.split('-')[0]}" if seqs else ref


def textconv(data: bytes) -> str | None:
    """A log rendered for `git diff`: one block per record (time, actor, kind, id, text), so diffs read as prose; None
    when `data` holds no record at all, for the file to pass through as it is.

    Any file a `.gitattributes` line gives the driver reaches it, so only records are rendered: a line that holds none
    shows its own bytes (behind a marker no record's rendering starts with, bytes that are not UTF-8 as `\\xNN`). Else
    `* diff=repo-memory` would turn a build script's diff into notes about unreadable lines."""
    lines = (experience.parse_line(raw, offset, torn) for offset, raw, torn in experience.split_lines(data))
    if not any(line.record is not None for line in lines):  # stops at the first record: logs may be huge
        return None
    out = []
    for line in (experience.parse_line(raw, offset, torn) for offset, raw, torn in experience.split_lines(data)):
        record = line.record
        if record is None:
            out.append(f"[no record at byte {line.offset}] {line.raw.decode('utf-8', 'backslashreplace')}")
            continue
        out += _rendered(record)
    return markers.shown("\n".join(out)) + "\n"


def _rendered(record: dict[str, Any]) -> list[str]:
    src = record["source"]
    head = f"{when.shown(record['ts'])}  {record['id']}  {record['kind']}  by {experience.author(record['kind'], src)}"
    head += f" via {src['harness']}" if src.get("harness") and src["harness"] != "unknown" else ""
    out = [head]
    text = record.get("text") or ""
    out += [f"    {t}" for t in text.splitlines()] or ["    (no text)"]
    if record.get("data") is not None:
        data = json.dumps(record["data"], ensure_ascii=False, sort_keys=True)
        cut = f"{data[:DATA_SHOWN]} … ({len(data):,} characters)"
        out.append("    data: " + (data if len(data) <= DATA_SHOWN else cut))
    for label in ("refs", "covers"):
        if record.get(label):
            out.append(f"    {label}: {', '.join(record[label])}")
    return out
