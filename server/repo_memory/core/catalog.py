"""The skills this repository publishes to MCP clients through the skills extension (SEP-2640): which ones, and every
file of each with its SHA-256 digest and size.

A skill is published only when a person accepted it and every byte of it is fit to hand to another agent as is:
active (never a draft or a deprecated skill), valid, not quarantined, its frontmatter within the Agent Skills format
(which the extension requires), every file a plain file inside its folder (no link, no hard link, no FIFO), no secret
or injection marker in any file, and within the extension's limits per skill. Anything else is withheld whole — an
entry must list every file — and asking for it says why. The index says which skills exist and which copy of a name
wins (mirror copies `repo-memory sync` generated are never indexed, so no skill appears twice); each entry is built
from the files as they are now, so a digest always matches the bytes a read returns.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repo_memory.core import skill_files
from repo_memory.errors import InvalidRecordError, NotFoundError, RepoMemoryError, UnsafePathError
from repo_memory.formats import frontmatter, skills
from repo_memory.guards import disk, markers, paths, secretscan
from repo_memory.guards.shellwords import quoted

MAX_FILES = 512  # the extension's limits per skill: hosts must accept up to these, servers should not serve beyond
MAX_BYTES = 16 * 1024 * 1024
STRING_FIELDS = ("license", "compatibility", "allowed-tools")  # Agent Skills: these are text when present
# repo-memory's own metadata with no text form in skill.schema.json: served as one line of text each (anchors joined by
# ", ", hashes as JSON), so a skill anchored to code is served; the SKILL.md resource keeps them as written.
AS_TEXT: dict[str, Callable[[Any], str]] = {"anchors": lambda v: ", ".join(v), "anchor_hashes": lambda v: json.dumps(v)}


@dataclass(frozen=True)
class SkillFile:
    """One file of a published skill: its path inside the skill folder, digest and size of its bytes."""

    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Published:
    """A published skill: its frontmatter as written, and every file it has (SKILL.md first)."""

    name: str
    folder: str  # relative to the repository root
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...]


class Withheld(NotFoundError):
    """A skill exists but is not published; the message says why and what would publish it."""


Rows = Callable[[], list[dict[str, Any]]]


class Catalog:
    """The published skills of one repository: `rows` gives the index rows of every skill file (Store.skills),
    `similar` names close to a name that matches none (Store.similar_names)."""

    def __init__(self, root: Path, rows: Rows, similar: Callable[[str], list[str]]):
        self.root, self._rows, self._similar = root, rows, similar

    def _winners(self) -> dict[str, dict[str, Any]]:
        """The searchable row of each skill name: the valid copy in the highest-priority folder."""
        return {row["name"]: row for row in self._rows() if row["winner"]}

    def page(self, after: str | None, limit: int) -> tuple[list[Published], str | None]:
        """Up to `limit` published skills named after `after`, by name; and the name to continue after (None at the end)."""
        winners = self._winners()
        names = sorted(name for name, row in winners.items()
                       if (after is None or name > after) and not _unpublished(name, row["status"], row["flags"], row["problems"]))
        found: list[Published] = []
        for number, name in enumerate(names):
            try:
                found.append(self._build(name, winners[name])[0])
            except (RepoMemoryError, OSError):
                continue  # withheld or gone since the index saw it: a listing may be partial, an entry never is
            if len(found) == limit:
                return found, name if number + 1 < len(names) else None
        return found, None

    def withheld(self) -> dict[str, str]:
        """Why each skill that is active, valid and not quarantined is withheld all the same, by its SKILL.md path: what
        only its files tell (a list under `metadata`, a link, a secret beside SKILL.md), for doctor to name."""
        out = {}
        for name, row in sorted(self._winners().items()):
            if _unpublished(name, row["status"], row["flags"], row["problems"]):
                continue  # doctor reports drafts, invalid and quarantined skills in their own words
            try:
                self._build(name, row)
            except Withheld as exc:
                out[row["path"]] = str(exc).removeprefix(f"skill:{name} is not served over MCP: ")
            except (RepoMemoryError, OSError):
                continue  # gone since the index saw it: the index's own finding says so
        return out

    def entry(self, name: str) -> Published:
        """Skill `name` as published; Withheld (saying why) when it exists but is not, NotFoundError when it does not."""
        return self._build(name, self._row(name))[0]

    def file(self, name: str, path: str) -> bytes:
        """The bytes of file `path` of published skill `name`, exactly those its entry's digest covers."""
        published, data = self._build(name, self._row(name), path)
        # a name typed composed (NFC) reads the file the disk names decomposed (NFD, as macOS writes), if one only
        found = [path] if path in data else [rel for rel in data
                                             if rel != skills.SKILL_FILE and skill_files.same_name(rel, path)]
        if len(found) != 1:
            listed = ", ".join(f.path for f in published.files)
            raise NotFoundError(f"skill:{name} has no file '{path[:200]}' it publishes. Its files: {listed}.")
        return data[found[0]]

    def _row(self, name: str) -> dict[str, Any]:
        paths.check_name(name, "skill name")
        row = self._winners().get(name)
        if row is None:
            raise NotFoundError(f"No skill '{name}'.", self._similar(name))
        return row

    def _build(self, name: str, row: dict[str, Any], wanted: str | None = None) -> tuple[Published, dict[str, bytes]]:
        folder_rel = row["path"].rsplit("/", 1)[0]
        _refuse(name, _unpublished(name, row["status"], row["flags"], row["problems"]))
        try:
            folder = paths.inside(self.root, *folder_rel.split("/"))  # a linked skill folder (or a linked parent)
        except UnsafePathError as exc:
            raise Withheld(f"skill:{name} is not served over MCP: {exc}") from None
        files, data = _files(folder, name, wanted)
        parsed = skills.parse(data[skills.SKILL_FILE], row["path"], row["source"])  # the file as it is now, not as indexed
        _refuse(name, _unpublished(name, parsed.status, parsed.flags, "; ".join(str(p) for p in parsed.problems)))
        return Published(name=name, folder=folder_rel, frontmatter=_frontmatter(name, data[skills.SKILL_FILE]), files=files), data


def _refuse(name: str, why: str) -> None:
    if why:
        raise Withheld(f"skill:{name} is not served over MCP: {why}.")


def _unpublished(name: str, status: str, flags: Any, problems: Any) -> str:
    """Why a skill with this status, these quarantine flags and these problems is not published ('' when it may be)."""
    if flags:
        return "it is quarantined (injection markers or a secret in SKILL.md; `repo-memory doctor` lists them)"
    if problems:
        return f"its SKILL.md is invalid ({str(problems)[:300]}); `repo-memory doctor` says what to fix"
    if status == "draft":
        return f"it is a draft awaiting review; a person accepts it with `repo-memory accept {quoted(name)}`"
    if status != "active":
        return f"its status is {status}; only active skills are served"
    return ""


def _files(folder: Path, name: str, wanted: str | None) -> tuple[tuple[SkillFile, ...], dict[str, bytes]]:
    """Every file of the skill in `folder` (SKILL.md first, then by path), with the bytes of SKILL.md and of `wanted`.
    Hidden entries (a leading dot) are not part of a skill; anything that cannot be served whole withholds the skill."""
    found: list[SkillFile] = []
    kept: dict[str, bytes] = {}
    total = 0
    stack = [""]
    while stack:
        inner = stack.pop()
        with os.scandir(folder / inner if inner else folder) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            rel = f"{inner}/{entry.name}" if inner else entry.name
            if entry.name.startswith("."):
                continue
            mode = entry.stat(follow_symlinks=False).st_mode
            if stat.S_ISDIR(mode):
                stack.append(rel)
                continue
            if stat.S_ISLNK(mode):
                raise Withheld(f"skill:{name} is not served over MCP: '{rel}' is a symbolic link; links are never served")
            try:
                data = disk.read_safely(paths.inside(folder, *rel.split("/")))  # no link, hard link or FIFO: plain files only
            except UnsafePathError as exc:
                raise Withheld(f"skill:{name} is not served over MCP: {exc}") from None
            problem = _content_problem(rel, data)
            if problem:
                raise Withheld(f"skill:{name} is not served over MCP: '{rel}' {problem}")
            total += len(data)
            if len(found) == MAX_FILES or total > MAX_BYTES:
                raise Withheld(f"skill:{name} is not served over MCP: it is over the extension's limits per skill "
                               f"({MAX_FILES} files, {MAX_BYTES // 2**20} MiB); move bulky material out of the skill folder")
            found.append(SkillFile(rel, hashlib.sha256(data).hexdigest(), len(data)))
            if rel == skills.SKILL_FILE or wanted is not None and skill_files.same_name(rel, wanted):
                kept[rel] = data
    found.sort(key=lambda f: (f.path != skills.SKILL_FILE, f.path))
    if not found or found[0].path != skills.SKILL_FILE:
        raise NotFoundError(f"skill:{name} has no {skills.SKILL_FILE}.")
    return tuple(found), kept


def _content_problem(rel: str, data: bytes) -> str:
    """What makes a file unfit to hand out as is: a secret, or an injection marker in text ('' when none)."""
    text = data.decode("utf-8", errors="replace")
    found = secretscan.scan(text)
    if found:
        return f"holds what looks like a secret ({secretscan.summary(found)}); remove it"
    flagged = markers.find(text) if b"\x00" not in data else []
    if flagged:
        return f"holds injection markers ({', '.join(str(m) for m in flagged[:3])}); remove them"
    return ""


def _frontmatter(name: str, data: bytes) -> dict[str, Any]:
    """The frontmatter of SKILL.md as a JSON object, when it keeps to the Agent Skills format (which the extension
    requires of every skill served, and strict clients check): the fields that are text are text, and `metadata` maps
    text to text (our own `AS_TEXT` fields written as text here)."""
    what = f"skill:{name}"
    try:
        meta = frontmatter.load(frontmatter.split(data.decode("utf-8"), what).frontmatter, what)
        json.dumps(meta, allow_nan=False)
    except (InvalidRecordError, UnicodeDecodeError, ValueError) as exc:
        raise Withheld(f"{what} is not served over MCP: its frontmatter is not plain JSON-compatible YAML ({str(exc)[:200]})") from None
    wrong = [f for f in STRING_FIELDS if f in meta and not isinstance(meta[f], str)]
    metadata = meta.get("metadata", {})
    if not isinstance(metadata, dict):
        wrong.append("metadata")
    elif "metadata" in meta:  # never added where the file has none: a host compares this with the file it reads
        meta["metadata"] = metadata = {k: AS_TEXT[k](v) if k in AS_TEXT and not isinstance(v, str) else v
                                       for k, v in metadata.items()}  # valid, so a list of text or a map of text
        wrong += [f"metadata.{k}" for k, v in metadata.items() if not isinstance(v, str)]
    if wrong:
        raise Withheld(f"{what} is not served over MCP: the Agent Skills format allows only text in {', '.join(wrong)} (quote a "
                       "number or true/false, `version: \"2\"`; write a list as one line of text, `tags: release, ci`; a map "
                       "as separate keys)")
    return meta
