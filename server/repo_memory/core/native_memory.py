"""The harnesses' own memories, brought in for review: Claude Code's auto memory of this repository and the entries
of Codex's memories that name it become experience records a team can read, diff and recall.

Each memory becomes a `note` in one session per harness, `claude-memory` or `codex-memories`, at the time the memory
last changed (its `modified` or `updated_at` stamp, else the file's mtime). Provenance: `source.actor` is `agent`
(both harnesses write these files with their model: Claude Code with its Write tool, Codex with a consolidation
agent; a person may have edited one, which the file cannot tell, and calling it a person's would trust it more than
it deserves), `source.harness` the harness, `source.tool` `import`, and `data.memory` the folder, file, entry,
title, mtime and what the format says (type, name, description, the session that wrote it, cwd, thread…).

Idempotent: a record keeps `data.source_id` = `<harness>:<file>#<entry>@<hash of its text>`, so a second import
adds nothing; a memory whose text changed is imported again as a new record with `data.replaces` (and `refs`) naming
the record of its previous version (logs are append-only: the old text stays readable, recall finds both).

Secrets and markers take the write path captured content takes (`Store.log(..., captured=True)`, as `log import` of
transcripts): each secret is redacted before any byte is written, and records holding injection markers are
quarantined by the index. A memory file is text that already exists outside the repository, not something an agent
asks to write now; refusing it would lose the rest of the memory with it, and the person cannot fix a file Codex
regenerates. The report names each record that had a secret redacted.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repo_memory.core.importing import Memory
from repo_memory.errors import NotFoundError
from repo_memory.formats import native_memory
from repo_memory.formats.experience import Entry
from repo_memory.formats.native_memory import Passage

CLAUDE, CODEX = "claude-code", "codex"
SESSIONS = {CLAUDE: "claude-memory", CODEX: "codex-memories"}
CODEX_FOLDERS = ("memories_v2", "memories")  # Codex 0.171.0, then earlier versions
LARGEST = 4 << 20  # bytes of a memory file read at most (Claude Code keeps each under a few KB)


@dataclass(frozen=True)
class Homes:
    """Where the harnesses keep their state on this machine, read from the environment once, at the edge."""

    home: Path
    claude: Path  # $CLAUDE_CONFIG_DIR, else ~/.claude
    codex: Path  # $CODEX_HOME, else ~/.codex
    auto_memory_off: str = ""  # $CLAUDE_CODE_DISABLE_AUTO_MEMORY

    @classmethod
    def of(cls, env: Mapping[str, str], home: Path) -> Homes:
        return cls(home, Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude",
                   Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex", env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", ""))

    def short(self, path: Path | str, root: Path | None = None) -> str:
        """`path` with the home folder written as ~ (records name no user's home), or relative to `root` inside it."""
        text, home = str(path), str(self.home)
        if root is not None and text.startswith(str(root).rstrip(os.sep) + os.sep):
            return text[len(str(root).rstrip(os.sep)) + 1:]
        return "~" + text[len(home):] if text == home or text.startswith(home.rstrip(os.sep) + os.sep) else text


@dataclass(frozen=True)
class Found:
    """A memory read from a harness's folder: where it is, what it says, and when its file last changed."""

    harness: str
    folder: Path
    file: str  # inside the folder, with /
    passage: Passage
    mtime: str

    @property
    def identity(self) -> str:
        return f"{self.file}#{self.passage.entry}"

    @property
    def key(self) -> str:
        said = f"{self.passage.title}\n{self.passage.text}".encode()
        return f"{self.harness}:{self.identity}@{hashlib.sha256(said).hexdigest()[:16]}"


@dataclass
class Outcome:
    """What importing one harness's memory did (or, in a dry run, would do)."""

    harness: str
    session: str
    folders: list[str]
    added: int = 0
    present: int = 0
    changed: int = 0  # of the added: new versions of memories imported before
    elsewhere: list[str] = field(default_factory=list)  # file#entry of Codex memories about other places
    redacted: list[str] = field(default_factory=list)  # ids of records that had a secret redacted
    ids: list[str] = field(default_factory=list)


def claude_folder(root: Path, git_dir: Path, homes: Homes) -> Path:
    """The folder of this repository's Claude Code auto memory: `autoMemoryDirectory` when this user set it (Claude Code
    ignores it in the shared .claude/settings.json), else `<config dir>/projects/<key of the canonical root>/memory`."""
    custom, _ = claude_setting(root, homes, "autoMemoryDirectory", shared=False)
    if isinstance(custom, str) and custom.strip():
        return homes.home / custom[2:] if custom.startswith("~/") else Path(custom)
    canonical = canonical_root(root, git_dir)
    folders = [homes.claude / "projects" / native_memory.claude_project_key(str(p)) / "memory"
               for p in dict.fromkeys([canonical, Path(os.path.realpath(canonical))])]
    return next((f for f in folders if f.is_dir()), folders[0])


def canonical_root(root: Path, git_dir: Path) -> Path:
    """The main working tree of the repository (a linked worktree's git dir names the shared one in `commondir`)."""
    pointer = git_dir / "commondir"
    if not pointer.is_file():
        return root
    common = (git_dir / pointer.read_text(encoding="utf-8").strip()).resolve()
    return common.parent if common.name == ".git" else root


def claude_settings(root: Path, homes: Homes, shared: bool = True) -> list[Path]:
    """Claude Code's settings files for `root`, the most specific first (local, project, user); `shared` False leaves
    out the project's committed file, which Claude Code does not trust for some keys."""
    return [root / ".claude" / "settings.local.json", *([root / ".claude" / "settings.json"] if shared else []),
            homes.claude / "settings.json"]


def claude_setting(root: Path, homes: Homes, key: str, shared: bool = True) -> tuple[Any, Path | None]:
    """A Claude Code setting as the most specific settings file that sets it says, and that file."""
    for path in claude_settings(root, homes, shared):
        value = read_json(path).get(key)
        if value is not None:
            return value, path
    return None, None


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object file's content ({} when it is missing, unreadable or not an object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def codex_folders(homes: Homes) -> list[Path]:
    return [homes.codex / name for name in CODEX_FOLDERS if (homes.codex / name).is_dir()]


def read_claude(folder: Path) -> list[Found]:
    """Every memory in a Claude Code auto-memory folder."""
    return [Found(CLAUDE, folder, rel, p, mtime) for rel, text, mtime in _files(folder) for p in native_memory.claude(rel, text)]


def read_codex(folders: Sequence[Path], root: Path, homes: Homes) -> tuple[list[Found], list[Found]]:
    """The memories in Codex's folders that name this repository or a path inside it, and those that do not."""
    here: list[Found] = []
    elsewhere: list[Found] = []
    for folder in folders:
        for rel, text, mtime in _files(folder, skip=("extensions", "skills")):
            for passage in native_memory.codex(rel, text):
                found = Found(CODEX, folder, rel, passage, mtime)
                (here if names(passage, root, homes) else elsewhere).append(found)
    return here, elsewhere


def names(passage: Passage, root: Path, homes: Homes) -> bool:
    """Whether a memory names `root` or a path inside it. A bare name ("api") could be any of several checkouts, so
    only a path counts: a cwd Codex recorded, or one in the text."""
    tops = {os.path.normpath(str(root)), os.path.realpath(root)}
    for mention in passage.mentions():
        path = os.path.normpath(str(homes.home) + mention[1:] if mention.startswith("~/") else mention)
        for candidate in {path, os.path.realpath(path)}:
            if any(candidate == top or candidate.startswith(top.rstrip(os.sep) + os.sep) for top in tops):
                return True
    return False


def _files(folder: Path, skip: Sequence[str] = ()) -> list[tuple[str, str, str]]:
    """(path inside `folder`, text, mtime) of its markdown files; links, hidden folders and huge files are passed by."""
    out = []
    for path in sorted(folder.rglob("*.md")):
        rel = path.relative_to(folder)
        if any(part.startswith(".") for part in rel.parts) or rel.parts[0] in skip or path.is_symlink():
            continue
        try:
            stat = path.stat()
            if stat.st_size > LARGEST:
                continue
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        out.append((rel.as_posix(), text, _iso(datetime.fromtimestamp(stat.st_mtime, UTC))))
    return out


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _when(value: str | None) -> str | None:
    """A memory's own time stamp in the records' form, or None when it is not an ISO time."""
    try:
        moment = datetime.fromisoformat(value or "")
    except ValueError:
        return None
    return _iso(moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment)


class MemoryImport:
    """Imports memories into one harness's session, skipping what it already holds."""

    def __init__(self, memory: Memory, homes: Homes, write: bool = True):
        self._memory, self._homes, self._write = memory, homes, write
        self._source = memory.source("agent", "import")

    def run(self, harness: str, folders: Sequence[Path], found: Sequence[Found], elsewhere: Sequence[Found] = ()) -> Outcome:
        session = SESSIONS[harness]
        outcome = Outcome(harness, session, [self._homes.short(f) for f in folders], elsewhere=[f.identity for f in elsewhere])
        keys, latest = self.held(session)
        entries = []
        for item in found:
            if item.key in keys:
                outcome.present += 1
                continue
            keys.add(item.key)
            replaces = latest.get(item.identity)
            outcome.changed += replaces is not None
            entries.append(self._entry(item, replaces))
        outcome.added = len(entries)
        if entries and self._write:
            for record in self._memory.log(session, entries, captured=True):
                outcome.session = record["session"]  # the name is this clone's own log (Journal.owned)
                outcome.ids.append(record["id"])
                if isinstance(record.get("data"), dict) and record["data"].get("redacted"):
                    outcome.redacted.append(f"{record['id']} ({', '.join(record['data']['redacted'])})")
        return outcome

    def held(self, session: str) -> tuple[set[str], dict[str, str]]:
        """The keys `session` holds (with the logs clones keep under its name, `<session>.<clone>`), and the newest
        record id of each memory (file#entry) among them."""
        self._memory.refresh()
        fork = re.compile(re.escape(session) + r"\.[0-9a-f]{8}")
        keys: set[str] = set()
        latest: dict[str, str] = {}  # identity -> id of its last record (logs are in the order they were written)
        for name in [s[0] for s in self._memory.sessions() if s[0] == session or fork.fullmatch(s[0])]:
            try:
                lines = self._memory.lines(name)
            except NotFoundError:
                continue
            for record in (line.record for line in lines if line.record):
                data = native_memory.table(record.get("data"))
                memory = native_memory.table(data.get("memory"))
                if isinstance(data.get("source_id"), str):
                    keys.add(data["source_id"])
                if memory.get("file") is not None:
                    latest[f"{memory['file']}#{memory.get('entry', '')}"] = record["id"]
        return keys, latest

    def _entry(self, item: Found, replaces: str | None) -> Entry:
        p = item.passage
        text = p.text if p.title in p.text else f"{p.title}\n\n{p.text}"
        memory = {"harness": item.harness, "folder": self._homes.short(item.folder), "file": item.file, "entry": p.entry,
                  "title": p.title, "mtime": item.mtime, **p.meta}
        data: dict[str, Any] = {"memory": memory, "source_id": item.key, **({"replaces": replaces} if replaces else {})}
        source = {**self._source, "harness": item.harness}
        return Entry(kind="note", text=text, data=data, refs=[replaces] if replaces else [], source=source,
                     ts=_when(p.when) or item.mtime)
