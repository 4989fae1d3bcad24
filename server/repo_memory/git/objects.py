"""A repository's objects read through gitpython's `git cat-file` processes, the answers kept (an object never changes),
and what to tell when the clone lacks one: a partial clone's object its remote could not send, a shallow clone's cut.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repo_memory.errors import GitError

KEPT = 4096  # commit -> tree and blob -> size answers a process keeps
TREES_KEPT = 256  # parsed trees a process keeps (a folder of 10k skills is about 2 MB)
SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
UNSHALLOW = "Run `git fetch --unshallow` to fetch the rest of the history"


def _bound(kept: OrderedDict[str, Any], limit: int = KEPT) -> None:
    """Forget the oldest answers of `kept` past `limit`."""
    while len(kept) > limit:
        kept.popitem(last=False)


class Objects:
    """Trees, blob sizes and blobs of one repository; the caller holds the lock of gitpython's cat-file processes."""

    def __init__(self, repo: Callable[[], Any]):
        self._repo = repo  # gitpython's Repo, opened on first use
        self._trees: OrderedDict[str, dict[str, tuple[str, str]]] = OrderedDict()  # tree id -> {name: (object id, type)}
        self._roots: OrderedDict[str, str] = OrderedDict()  # commit id -> its tree's id
        self._sizes: OrderedDict[str, int] = OrderedDict()  # blob id -> its size

    def find(self, commit: str, path: str) -> tuple[str, str] | None:
        """(object id, type) of `path` at `commit`, or None. Every tree on the way is read once per id and kept (a
        tree's entries never change): gitpython parses a tree in Python, about 13 us an entry, so looking one skill up in
        a folder of 10k skills cost 0.1 s each time, once per hit of every recall (bench/scale.py)."""
        import git

        root = self._roots.get(commit)
        if root is None:
            try:
                root = str(self._repo().commit(commit).tree.hexsha)  # a round trip to git each time otherwise
            except (KeyError, ValueError, git.BadName):
                return None
            if SHA.fullmatch(commit):  # not a ref or an abbreviation: those can name another commit tomorrow
                self._roots[commit] = root
                _bound(self._roots)
        found = (root, "tree")
        for part in (p for p in path.split("/") if p):
            entries = self._tree(found[0]) if found[1] == "tree" else {}
            if part not in entries:
                return None
            found = entries[part]
        return found

    def _tree(self, sha: str) -> dict[str, tuple[str, str]]:
        import git

        entries = self._trees.get(sha)
        if entries is None:
            entries = self._trees[sha] = {str(item.path): (str(item.hexsha), str(item.type))  # a submodule has no name
                                          for item in git.Tree(self._repo(), bytes.fromhex(sha), 0o040000, "")}  # but its path
            _bound(self._trees, TREES_KEPT)
        self._trees.move_to_end(sha)  # most recently used last
        return entries

    def size(self, blob: str, path: str = "") -> int:
        """The size of the blob whose id is `blob` (`path`: where it was found, to name it if it cannot be read)."""
        size = self._sizes.get(blob)
        if size is None:
            try:
                size = self._sizes[blob] = int(self._repo().odb.info(bytes.fromhex(blob)).size)
            except (OSError, ValueError):  # git died (a partial clone's fetch failed) or knows no such object
                raise GitError(unreadable(self._repo(), blob, path)) from None
            _bound(self._sizes)
        return size

    def read(self, blob: str, path: str = "") -> bytes:
        """The bytes of the blob whose id is `blob` (`path`: where it was found, to name it if it cannot be read)."""
        try:
            return bytes(self._repo().odb.stream(bytes.fromhex(blob)).read())
        except (OSError, ValueError):
            raise GitError(unreadable(self._repo(), blob, path)) from None


def promisor(repo: Any) -> tuple[str, str, str] | None:
    """(remote, its url, the filter the clone was made with) when `repo` is a partial clone, else None."""
    config = repo.config_reader()  # config files: no cat-file
    for section in config.sections():
        if section.startswith('remote "') and str(config.get_value(section, "promisor", "")).lower() == "true":
            return section[8:-1], str(config.get_value(section, "url", "")), str(config.get_value(section, "partialclonefilter", ""))
    return None


def unfetched(repo: Any, what: str) -> str:
    """What to tell when git could not read `what`: a partial clone's remote out of reach, or a damaged repository."""
    partial = promisor(repo)
    if partial is None:
        return f"git could not read {what}: the repository may be damaged; `git fsck` names what is wrong."
    remote, url, kind = partial
    return (f"This clone lacks {what}: it is a partial clone ({kind or 'filtered'}), which fetches such objects from "
            f"its remote '{remote}' ({url}) when they are read, and git could not fetch them from there. Connect to it and call "
            f"again; to work offline, while connected fetch every object: `git config --unset remote.{remote}.partialclonefilter "
            f"&& git fetch --refetch {remote}`.")


def unreadable(repo: Any, blob: str, path: str) -> str:
    """What to tell when the blob `blob` (found at `path`) could not be read."""
    return unfetched(repo, f"object {blob[:12]}" + (f" ({path})" if path else ""))


def cut(common_dir: Path) -> frozenset[str]:
    """The commits a shallow clone's history stops at (their parents are not here); empty in a full clone."""
    try:
        return frozenset((common_dir / "shallow").read_text(encoding="utf-8").split())
    except OSError:
        return frozenset()


def cut_short(common_dir: Path) -> str:
    """What to add to an answer that found no commit old enough: the clone is shallow, and how to get the rest; '' in
    a full clone."""
    stops = sorted(c[:12] for c in cut(common_dir))
    return (f" This clone is shallow: its history stops at commit {', '.join(stops)} and the commits before are not here. "
            f"{UNSHALLOW}, then call again.") if stops else ""


def at_cut(sha: str) -> str:
    """What stands for the diff of commit `sha` where a shallow clone's history stops: git shows every file it holds as
    created there, which says nothing of when the file was made or what this commit changed."""
    return (f"(This clone is shallow: its history stops at {sha[:12]}, so git shows the file as created here though it may "
            f"be older, and what this commit changed in it is not known here. {UNSHALLOW}.)\n")
