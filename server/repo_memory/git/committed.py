"""Whether memory content is committed: what HEAD holds of the memory folders, read once per HEAD.

Recall and read say of every hit whether it is in a commit (shared with the team, recoverable from history) or
only on disk. HEAD is resolved by reading the ref files (no subprocess); the tree listing is one `git ls-tree`
per new HEAD, so a search pays for git only after a commit.
"""

from __future__ import annotations

import hashlib
import threading

from repo_memory.git.repo import Git, GitError


class Committed:
    """HEAD's view of the memory paths: path -> (blob id, size)."""

    def __init__(self, git: Git, folders: tuple[str, ...]):
        self.git, self.folders = git, folders
        self._head: str | None = "unread"
        self._tree: dict[str, tuple[str, int]] = {}
        self._lock = threading.Lock()

    def head(self) -> str | None:
        """The commit HEAD points at (None on an unborn branch), from the ref files."""
        git_dir = self.git.git_dir
        common = git_dir
        if (git_dir / "commondir").is_file():
            common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        try:
            head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            return None
        if not head.startswith("ref: "):
            return head or None  # detached
        ref = head[5:]
        for base in (git_dir, common):
            try:
                return (base / ref).read_text(encoding="utf-8").strip() or None
            except OSError:
                continue
        try:
            for line in (common / "packed-refs").read_text(encoding="utf-8").splitlines():
                if line.endswith(f" {ref}") and not line.startswith(("#", "^")):
                    return line.split(" ", 1)[0]
        except OSError:
            pass
        return None

    def tree(self) -> dict[str, tuple[str, int]]:
        head = self.head()
        with self._lock:
            if head != self._head:
                self._tree = self._list(head) if head else {}
                self._head = head
            return self._tree

    def _list(self, head: str) -> dict[str, tuple[str, int]]:
        try:
            out = self.git.run("ls-tree", "-r", "-l", "-z", head, "--", *self.folders).stdout
        except GitError:
            return {}
        tree = {}
        for entry in out.split("\0"):
            if not entry:
                continue
            meta, _, path = entry.partition("\t")
            parts = meta.split()
            if len(parts) == 4 and parts[1] == "blob":
                tree[path] = (parts[2], int(parts[3]) if parts[3].isdigit() else 0)
        return tree

    def file(self, rel: str, data: bytes, tree: dict[str, tuple[str, int]] | None = None) -> bool:
        """Whether `data`, the file at `rel` now, is exactly what HEAD holds (`tree`: one `tree()` for many calls)."""
        blob = (self.tree() if tree is None else tree).get(rel)
        return blob is not None and blob[0] == hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's object id

    def record(self, rel: str, end: int, tree: dict[str, tuple[str, int]] | None = None) -> bool:
        """Whether the log line ending at byte `end` of `rel` is in HEAD (logs only grow, so size tells)."""
        blob = (self.tree() if tree is None else tree).get(rel)
        return blob is not None and blob[1] >= end


def describe_skill(origin: str, status: str, committed: bool) -> str:
    """The framing of a skill: who wrote it, whether it is committed, its review status."""
    return f"skill written by {describe(origin, '', committed).removeprefix('recorded by ')}; status {status}"


def describe(actor: str, ts: str, committed: bool, harness: str = "", tool: str = "") -> str:
    """The framing every hit carries: who recorded it, when, through what, and whether it is committed."""
    who = {"agent": "an agent", "human": "a person"}.get(actor, actor or "someone")
    via = ", ".join(p for p in (harness if harness not in ("", "unknown") else "", tool) if p)
    when = f" on {ts[:16].replace('T', ' ')} UTC" if ts else ""
    return f"recorded by {who}{f' ({via})' if via else ''}{when}; {'committed' if committed else 'not committed yet'}"


