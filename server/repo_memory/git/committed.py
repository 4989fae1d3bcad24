"""Whether memory content is committed: what HEAD holds of a memory file, looked up per file and remembered per HEAD.

Recall and read say of every hit whether it is in a commit (shared with the team, recoverable from history) or only
on disk. HEAD and the file's blob come from gitpython (refs read from files, objects from one long-lived `git
cat-file` process); answers are kept until HEAD moves, so a search pays for git only after a commit.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading

from repo_memory.errors import UnsafePathError
from repo_memory.git import repo
from repo_memory.git.repo import Git
from repo_memory.formats import experience, nesting
from repo_memory.guards import disk


_NOW = object()
# "look HEAD up now" (None already means an unborn branch)
# a log git converted at checkout (core.autocrlf=true and no eol rule for logs, or a later line overriding it)
CRLF = "its lines end in CRLF where the lines git holds end in LF, its records as committed: git converted them at checkout"

CUT = "it was cut short since its commit"  # a prefix of what HEAD holds: a checkout restores it and loses nothing


class Committed:
    """HEAD's view of memory files: path -> (blob id, size), looked up on demand."""

    def __init__(self, git: Git):
        self.git = git
        self._head: str | None = None
        self._entries: dict[str, tuple[str, int] | None] = {}
        self._intact: dict[str, tuple[str | None, int, int, int]] = {}  # log -> (head, size, mtime_ns, bytes held: _held)
        self._lock = threading.Lock()
        self._incoming: dict[tuple[str, str], frozenset[bytes]] = {}  # (commit, log) -> its lines, of a merge under way
        self._clean: dict[tuple[str, str], str] = {}  # (path, id of its bytes) -> the id git's conversion gives them

    def upstream(self) -> str:
        """The remote branch the checked-out branch pulls from, as `origin/main` ('' when it has none)."""
        found = self.git.run("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}", check=False)
        return found.stdout.strip() if found.returncode == 0 else ""

    def head(self) -> str | None:
        """The commit HEAD points at now (None on an unborn branch); forgets what it knew of an older HEAD."""
        head = self.git.memory_head()
        with self._lock:
            if head != self._head:
                self._head, self._entries = head, {}
        return head

    def _entry(self, rel: str, head: str | None) -> tuple[str, int] | None:
        if head is None:
            return None
        with self._lock:
            if rel in self._entries and self._head == head:
                return self._entries[rel]
        found = self.git.entry(head, rel)
        with self._lock:
            if self._head == head:
                self._entries[rel] = found
        return found

    def file(self, rel: str, data: bytes, head: str | None | object = _NOW) -> bool:
        """Whether `data`, the file at `rel` now, is what HEAD holds as `git status` means it (`head`: one `head()` for
        many calls): its very bytes (no git process: recall asks this of every hit), or else what git's conversion
        makes of them: a clone with core.autocrlf=true checks skills out with CRLF, an LFS filter commits a pointer."""
        blob = self._entry(rel, self.head() if head is _NOW else head)  # type: ignore[arg-type]
        if blob is None:
            return False
        raw = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's object id
        return blob[0] == raw or self._cleaned(rel, data, raw) == blob[0]

    def _cleaned(self, rel: str, data: bytes, raw: str) -> str:
        """The blob id `git add` would give `data` (whose own id is `raw`) at `rel`: after line-ending conversion and
        clean filters, as `rel`'s attributes and the config say; asked of git once per content (a person's edit in
        progress differs from HEAD whatever git converts)."""
        with self._lock:
            known = self._clean.get((rel, raw))
        if known is None:
            done = self.git.run("hash-object", "--stdin", f"--path={rel}", stdin=data, check=False)
            known = done.stdout.strip() if done.returncode == 0 else raw  # a filter that fails: the bytes as they are
            with self._lock:
                if len(self._clean) > 4096:
                    self._clean.clear()
                self._clean[(rel, raw)] = known
        return known

    def rewritten(self, rel: str, data: bytes) -> str:
        """How an append-only file on disk (`data`) departs from its committed version, or '' when the committed bytes
        are a prefix of it (appends since the commit are fine). A log can be re-hashed so its chain verifies again; it
        cannot make git hold different bytes."""
        head = self.head()
        entry = self._entry(rel, head)
        if head is None or entry is None:
            return ""
        held = self.git.blob(head, rel)
        if data.startswith(held):
            return ""
        if entry[1] > len(data) and held.startswith(data):  # cut short by hand: no append makes a log shorter
            cut = "its last line ends partway through, and HEAD holds it whole" if data[-1:] not in (b"", b"\n") else \
                f"{departures(held, data)}, and HEAD holds them"
            return f"{CUT} ({len(data)} of the {entry[1]} bytes HEAD holds, every one as HEAD holds it): {cut}"
        if b"\r\n" in data and data.replace(b"\r\n", b"\n").startswith(held):
            return CRLF
        if said := departures(held, data):
            return said
        if entry[1] > len(data):  # no whole committed line is missing: the torn end git holds was cut
            return f"it is shorter than its committed version ({len(data)} of {entry[1]} bytes)"
        return "its committed bytes were changed (the bytes git holds differ), even if its hash chain verifies"

    def record(self, rel: str, end: int, head: str | None | object = _NOW) -> bool:
        """Whether the log line ending at byte `end` of `rel` (its newline at `end`) is in HEAD: within the committed size,
        newline included (logs only grow; a torn line git holds is not a line, and a newline added later must not make
        it one git vouches for), and the file still holds the committed bytes (a record rewritten and re-hashed in place
        is not what git holds)."""
        at = self.head() if head is _NOW else head
        blob = self._entry(rel, at)  # type: ignore[arg-type]
        return blob is not None and self._held(rel, at) > end  # type: ignore[arg-type]

    def lines(self, rel: str, head: str | None) -> list[bytes]:
        """The lines HEAD holds of log `rel`, in order, without their newlines ([] when it holds none): a line of the
        file now is one git holds when its place is among them; its bytes may have moved since."""
        if head is None or self._entry(rel, head) is None:
            return []
        return self.git.blob(head, rel).split(b"\n")[:-1]  # a torn last line is none

    def _held(self, rel: str, head: str | None) -> int:
        """How many bytes at the start of log `rel` are what HEAD holds of it: its committed bytes, or those bytes as a
        checkout writes them here (git's own line-ending conversion: a team's `* text=auto eol=crlf` after init's rules);
        -1 when it starts with neither. Remembered per (HEAD, size, mtime)."""
        try:
            st = os.stat(self.git.root / rel)
        except OSError:
            return -1
        with self._lock:
            known = self._intact.get(rel)
        if known and known[:3] == (head, st.st_size, st.st_mtime_ns):
            return known[3]
        entry = self._entry(rel, head)
        if entry is None or self._begins_with(rel, entry):
            held = -1 if entry is None else entry[1]
        else:
            try:
                held = self._checked_out(rel, head, disk.read_safely(self.git.root / rel))
            except (OSError, UnsafePathError):  # gone, or a link: in no case what git holds
                return -1
        with self._lock:
            self._intact[rel] = (head, st.st_size, st.st_mtime_ns, held)
        return held

    def _begins_with(self, rel: str, blob: tuple[str, int]) -> bool:
        """Whether the file at `rel` begins with the bytes of `blob` (id, size): its first `size` bytes hashed as git
        hashes a blob, a block at a time. A hit in a log of 100 MB had the log and its committed copy read whole."""
        digest = (hashlib.sha256 if len(blob[0]) == 64 else hashlib.sha1)(b"blob %d\0" % blob[1])
        left = blob[1]
        try:
            with os.fdopen(disk.open_safely(self.git.root / rel), "rb") as handle:
                while left > 0 and (block := handle.read(min(left, 1 << 20))):
                    digest.update(block)
                    left -= len(block)
        except (OSError, UnsafePathError):  # gone, or a link: in no case what git holds
            return False
        return left == 0 and digest.hexdigest() == blob[0]

    def _checked_out(self, rel: str, head: str | None, data: bytes) -> int:
        """The length of HEAD's bytes of `rel` as git's checkout converts them now when `data` starts with them, else -1:
        a byte changed beyond that conversion is no line git holds."""
        found = repo.run_at(self.git.root, "cat-file", "--filters", f"{head}:{rel}", timeout=30) if head else None
        return len(found) if found and data.startswith(found) else -1

    def incoming(self, rel: str, line: bytes) -> bool:
        """Whether a merge or cherry-pick under way brings `line` of log `rel` as the other side committed it (a pull
        stopped by a conflict: the teammate's records are in the file before the merge commit holds them)."""
        for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD"):
            try:
                commits = (self.git.git_dir / name).read_text(encoding="ascii").split()
            except (OSError, UnicodeDecodeError):
                continue
            for commit in commits:
                if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):  # git writes object ids there; nothing else counts
                    continue
                with self._lock:
                    lines = self._incoming.get((commit, rel))
                if lines is None:
                    # its lines with their newline: a torn last line is none
                    lines = frozenset(self.git.blob(commit, rel).split(b"\n")[:-1]) if self.git.entry(commit, rel) else frozenset()
                    with self._lock:
                        if len(self._incoming) > 256:
                            self._incoming.clear()
                        self._incoming[(commit, rel)] = lines
                if line in lines:
                    return True
        return False


def departures(held: bytes, data: bytes) -> str:
    """Which committed lines of a log (`held`) the file (`data`) no longer holds, by record id: edited when a line of the
    file still carries the id, removed when none does ('' when every committed line is still there)."""
    now = data.split(b"\n")
    present, places = set(now), {_id(line): number for number, line in enumerate(now, start=1)}
    edited, removed = [], []
    for number, line in enumerate(held.split(b"\n")[:-1], start=1):  # a torn last line git holds is no record
        if line in present:
            continue
        rid = _id(line)
        if rid and rid in places:
            edited.append(f"{rid} (line {places[rid]})")
        else:
            removed.append(f"{rid or 'a record'} (committed as line {number})")
    return "; ".join(_were(what, items) for what, items in (("edited", edited), ("removed", removed)) if items)


def _were(what: str, items: list[str]) -> str:
    if len(items) == 1:
        return f"committed record {items[0]} was {what}"
    return f"{len(items)} committed records were {what}: {', '.join(items[:5])}{' …' if len(items) > 5 else ''}"


def _id(line: bytes) -> str:
    try:
        found = nesting.loads(line)
    except ValueError:
        return ""
    return found["id"] if isinstance(found, dict) and isinstance(found.get("id"), str) else ""


def describe_skill(origin: str, status: str, committed: bool, edited: bool = False) -> str:
    """The framing of a skill: who wrote it, its review status, and when HEAD does not hold it, that it is not committed
    (`edited`: HEAD holds a version, and the file holds an edit repo-memory did not write beyond it)."""
    written = f"skill written by {describe(origin, True).removeprefix('recorded by ')}; status {status}"
    if edited:
        return written + ("; the file holds a person's edit in progress that no commit holds: leave it as it is, and tell "
                          "the person before you write this skill")
    return written + _pending(committed)


def describe_loop(status: str, committed: bool) -> str:
    """The framing of a loop spec: its status, and when HEAD does not hold it, that it is not committed."""
    return f"loop spec, status {status}{_pending(committed)}"


def describe(actor: str, committed: bool, harness: str = "", tool: str = "", kind: str = "") -> str:
    """The framing every hit carries: who recorded it, through what, and when HEAD does not hold it that it is not
    committed (its `committed` says so when HEAD does; its time is its `ts`: said in both, a record hit spelled each
    fact twice and its time three times). A verdict of the loop engine (a `loop.*`, `skill.used` or `outcome` record
    its tools wrote) is the server's, in a run an agent drove: it read "recorded by an agent (loop)"."""
    if kind and experience.server_kind(kind) and tool in experience.ENGINE_TOOLS:
        actor, tool = "repo-memory's loop engine", f"{tool}, in a run driven by {'a person' if actor == 'human' else 'an agent'}"
    who = {"agent": "an agent", "human": "a person"}.get(actor, actor if actor not in ("", "unknown") else "someone")
    if kind == "note" and tool == experience.FOLLOW_TOOL:  # what repo-memory wrote, not the person who ran the command
        who, tool = "repo-memory", f"`stale --follow-renames`, run by {who}"
    via = ", ".join(p for p in (harness if harness not in ("", "unknown") else "", tool) if p)
    return f"recorded by {who}{f' ({via})' if via else ''}{_pending(committed)}"


def _pending(committed: bool) -> str:
    return "" if committed else "; not committed yet"
