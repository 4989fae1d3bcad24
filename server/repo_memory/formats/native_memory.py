"""The memories Claude Code and Codex keep outside the repository, read as passages to import as experience.

Pure functions over one file's text; core/native_memory.py finds the folders, reads the files and writes records.
What the formats hold, as read from the CLIs and their public sources:

- Claude Code's auto memory (2.1.59+, on by default): `<config dir>/projects/<key>/memory/`, where `<key>` is the
  canonical git root (all worktrees share it) with every character but A-Z a-z 0-9 as '-', and a key over 200
  characters cut there and followed by '-' and a base-36 hash of the path (Claude Code 2.1.332's `J$`/`Nle`; its
  settings schema says "defaults to ~/.claude/projects/<sanitized-cwd>/memory/"). Since 2.1.1xx each memory is one
  topic file with frontmatter `name`, `description` and `type` (top level, later under `metadata:`), and Claude Code
  stamps `metadata.originSessionId`, `modified` and `node_type` on what it writes (recorded in
  tests/fixtures/memory/); MEMORY.md is the index loaded at session start, one `- [Title](file.md) — hook` line per
  memory. Earlier versions wrote notes straight into MEMORY.md and free-form topic files (`debugging.md`) organised
  by headings (shaneholloman/claude-code-prompts, system-prompt-use-persistent-memory-files-2.md).
- Codex's memories (off by default; `[features] memories = true`): `$CODEX_HOME/memories/` (0.1xx) or
  `memories_v2/` (0.171.0), global to the machine. `rollout_summaries/<time>-<thread>-<slug>.md` start with
  `thread_id:`, `updated_at:`, `rollout_path:`, `cwd:` and `git_branch:` lines (openai/codex
  codex-rs/core/src/memories/storage.rs); `raw_memories.md` holds a `## Thread` section per thread with the same lines;
  MEMORY.md holds `# Task Group: …` blocks with `scope:` and `applies_to: cwd=…` lines; `memory_summary.md` starts
  `v1` and has `## User Profile`, `## User preferences`, `## General Tips` and `## What's in Memory` with a
  `### <project scope>` per project (the consolidation prompts Codex 0.171.0 carries).

A passage is one memory: a topic file, a section of a file without frontmatter, a task group, a project scope, a
thread. Its `entry` names it within its file, so a changed passage is known as the same memory changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from repo_memory.errors import InvalidRecordError
from repo_memory.formats import frontmatter

CLAUDE_INDEX = "MEMORY.md"
KEY_LIMIT = 200  # UTF-16 units of a project folder name before Claude Code cuts it and adds a hash
# MEMORY.md's index lines point at topic files, which are imported themselves.
_POINTER = re.compile(r"^\s*[-*+]\s*\[[^\]]*\]\([^)\s]+\.md\)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# A path a memory names: absolute, or from the home folder; it ends at a space, a quote, a bracket or a separator.
_PATH = re.compile(r"(?<![\w.~/-])(?:~/|/)[^\s,;()\[\]{}<>'\"`|*]+")
_HEADER = re.compile(r"^([a-z_]+):[ \t]*(.*)$")
_CWD = re.compile(r"\bcwd=([^\s,;)]+)")
_STEP = re.compile(r"^[ \t]*(\d{1,2})[.)][ \t]+\S", re.MULTILINE)


@dataclass(frozen=True)
class Passage:
    """One memory read from a file: its name within the file ('' for the whole file), a title, its text, when it
    last changed (if the file says), what the format says about it, and the working directories it names."""

    entry: str
    title: str
    text: str
    when: str | None = None
    meta: dict[str, str] = field(default_factory=dict)
    places: tuple[str, ...] = ()

    def mentions(self) -> tuple[str, ...]:
        """Every path this passage names: the places its format gives, then those in its title and text."""
        return (*self.places, *paths_in(f"{self.title}\n{self.text}"))


def claude_project_key(path: str) -> str:
    """The folder name Claude Code gives a project under `<config dir>/projects/` (see the module docstring)."""
    units = "".join(ch if ch.isascii() and ch.isalnum() else "-" * (2 if ord(ch) > 0xFFFF else 1) for ch in path)
    if len(units) <= KEY_LIMIT:
        return units
    value, data = 0, path.encode("utf-16-le")
    for at in range(0, len(data), 2):  # JavaScript's string hash (h * 31 + unit, 32-bit), over UTF-16 code units
        value = (value * 31 + int.from_bytes(data[at : at + 2], "little")) & 0xFFFFFFFF
    signed = value - (1 << 32) if value >= 1 << 31 else value
    return f"{units[:KEY_LIMIT]}-{_base36(abs(signed))}"


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
        if not number:
            return out


def table(value: Any) -> dict[str, Any]:
    """`value` when it is a mapping, else an empty one (JSON, TOML and YAML read from files outside our control)."""
    return value if isinstance(value, dict) else {}


def steps(text: str) -> int:
    """How many numbered steps (`1.`, `2)`) a text holds: the shape of a procedure."""
    return len({m.group(1) for m in _STEP.finditer(text)})


def paths_in(text: str) -> list[str]:
    """The absolute and home-relative paths a text names, without trailing punctuation."""
    return [m.group().rstrip(".:!?") for m in _PATH.finditer(text)]


def claude(rel: str, content: str) -> list[Passage]:
    """The passages of a file in Claude Code's memory folder (`rel`: its path inside the folder)."""
    content = content.removeprefix("\ufeff").replace("\r\n", "\n")
    stem = PurePosixPath(rel).stem
    if content.startswith("---"):
        try:
            document = frontmatter.split(content, rel)
            fields = frontmatter.load(document.frontmatter, rel)
        except InvalidRecordError:
            fields = None
        if fields is not None:
            return [_topic(stem, fields, document.body)] if document.body.strip() else []
    if PurePosixPath(rel).name == CLAUDE_INDEX:
        content = "\n".join(line for line in content.split("\n") if not _POINTER.match(line))
    return _sections(content, stem, levels=2)


def _topic(stem: str, fields: dict[str, Any], body: str) -> Passage:
    """A topic file: one memory, its fields from the frontmatter (newer versions nest them under `metadata`)."""
    nested = table(fields.get("metadata"))

    def field_of(*names: str) -> str:
        for source in (nested, fields):
            for name in names:
                if isinstance(source.get(name), (str, int, float)) and str(source[name]).strip():
                    return str(source[name]).strip()
        return ""

    meta = {"name": field_of("name"), "description": field_of("description"), "type": field_of("type"),
            "origin_session": field_of("originSessionId"), "modified": field_of("modified")}
    meta = {k: v for k, v in meta.items() if v}
    title = meta.get("description") or meta.get("name") or stem
    return Passage("", title, body.strip(), meta.get("modified"), meta)


def codex(rel: str, content: str) -> list[Passage]:
    """The passages of a file in Codex's memory folder; files that hold no memory (instructions, diffs) give none."""
    content = content.removeprefix("\ufeff").replace("\r\n", "\n")
    path = PurePosixPath(rel)
    if path.parts[0] == "rollout_summaries" and path.suffix == ".md":
        return _rollout_summary(path.stem, content)
    if rel == "raw_memories.md":
        return [_thread(title, text) for title, _, text in _split(content, 2) if title.startswith(("Thread", "Session"))]
    if rel == "MEMORY.md":
        return [_task_group(title, text) for title, _, text in _split(content, 1) if title and text.strip()]
    if rel == "memory_summary.md":
        return _summary(content)
    return []


def _rollout_summary(stem: str, content: str) -> list[Passage]:
    meta, body = _header(content)
    if not body.strip():
        return []
    title = next((h for h, level, _ in _split(body, 1) if level == 1 and h), stem)
    return [Passage(meta.get("thread_id", stem), title, body.strip(), meta.get("updated_at"), meta,
                    tuple(p for p in [meta.get("cwd", "")] if p))]


def _thread(title: str, text: str) -> Passage:
    """A `## Thread` section of raw_memories.md (the id in backquotes): header lines, then the raw memory."""
    thread = title.split("`")[1] if title.count("`") >= 2 else title.split(" ", 1)[-1]
    meta, body = _header(text)
    meta = {"thread_id": thread, **meta}
    return Passage(thread, f"Raw memory of thread {thread}", body.strip(), meta.get("updated_at"), meta,
                   tuple(p for p in [meta.get("cwd", "")] if p))


def _task_group(title: str, text: str) -> Passage:
    name = title.removeprefix("Task Group:").strip()
    meta = {k: v.strip() for k, v in (m.groups() for m in map(_HEADER.match, text.split("\n")[:6]) if m) if k in ("scope", "applies_to")}
    return Passage(_slug(name), name, f"# {title}\n{text.strip()}", None, meta, tuple(_CWD.findall(meta.get("applies_to", ""))))


def _summary(content: str) -> list[Passage]:
    """memory_summary.md: its sections about the person, and one passage per project scope of `What's in Memory`."""
    out: list[Passage] = []
    for title, _, text in _split(content, 2):
        if not title or not text.strip():
            continue
        if title.lower() != "what's in memory":
            out.append(Passage(_slug(title), title, f"## {title}\n{text.strip()}"))
            continue
        for scope, _, inner in _split(text, 3):
            if scope.lower() == "older memory topics":
                out += [Passage(f"older/{_slug(s)}", s, f"#### {s}\n{t.strip()}") for s, _, t in _split(inner, 4) if s and t.strip()]
            elif scope and inner.strip():
                out.append(Passage(f"scope/{_slug(scope)}", scope, f"### {scope}\n{inner.strip()}", None, {}, tuple(paths_in(scope))))
    return out


def _header(text: str) -> tuple[dict[str, str], str]:
    """`key: value` lines at the top of `text` (Codex's provenance lines), and the rest after the blank line."""
    meta: dict[str, str] = {}
    lines = text.lstrip("\n").split("\n")
    for number, line in enumerate(lines):
        match = _HEADER.match(line)
        if match is None:
            return meta, "\n".join(lines[number:])
        meta[match.group(1)] = match.group(2).strip()
    return meta, ""


def _split(text: str, level: int) -> list[tuple[str, int, str]]:
    """(heading, its level, text under it) at every heading of exactly `level`, outside code fences; what comes before
    the first heading is under heading ''."""
    parts: list[tuple[str, int, str]] = [("", 0, "")]
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match and len(match.group(1)) == level:
            parts.append((match.group(2).strip(), level, ""))
            continue
        title, found, body = parts[-1]
        parts[-1] = (title, found, f"{body}{line}\n")
    return parts


def _sections(content: str, stem: str, levels: int) -> list[Passage]:
    """A file without frontmatter, one passage per heading of level 1..`levels` (the whole file when it has none)."""
    parts: list[tuple[str, str]] = [("", "")]
    fenced = False
    for line in content.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match and len(match.group(1)) <= levels:
            parts.append((match.group(2).strip(), f"{line}\n"))
        else:
            parts[-1] = (parts[-1][0], f"{parts[-1][1]}{line}\n")
    out, seen = [], {}  # type: list[Passage], dict[str, int]
    for title, text in parts:
        body = "\n".join(line for line in text.split("\n")[1 if title else 0:]).strip()
        if not body:
            continue  # a heading with nothing under it (a document's title) is not a memory
        entry = _slug(title) if title else ""
        seen[entry] = seen.get(entry, 0) + 1
        entry = entry if seen[entry] == 1 else f"{entry}-{seen[entry]}"
        out.append(Passage(entry, title or stem, text.strip()))
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:80] or "section"
