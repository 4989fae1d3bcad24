"""Loop specs as memory: read through the same guards as every other memory file, with the runs they produced."""

from __future__ import annotations

import hashlib
from pathlib import Path

from repo_memory.core.reading import Item, page
from repo_memory.errors import InvalidRecordError, NotFoundError, Problem, UnsafePathError
from repo_memory.formats import loops
from repo_memory.git.committed import Committed, describe_loop
from repo_memory.guards import disk, paths
from repo_memory.index.activity import Activity


class Loopbook:
    """The loop specs of one repository (`.agents/loops/<name>.md`)."""

    def __init__(self, root: Path, activity: Activity, committed: Committed):
        self.root, self._activity, self._committed = root, activity, committed

    def names(self) -> list[str]:
        return [p.stem for p in loops.files(self.root)]

    def raw(self, name: str) -> tuple[str, bytes]:
        """(path, bytes) of spec `name`; a link, a hard link or a name that leaves the folder is refused."""
        paths.check_name(name, "loop name")
        path = paths.inside(self.root, loops.LOOPS_DIR, f"{name}.md")
        if not path.exists() and not path.is_symlink():
            known = self.names()
            raise NotFoundError(f"No loop '{name}' in {loops.LOOPS_DIR}/." + ("" if known else " No loop spec exists here yet: a person "
                                "writes one as .agents/loops/NAME.md (docs/memory.md, loops) and accepts it with `repo-memory loop "
                                "accept NAME`."), [k for k in known if k[:3] == name[:3]][:3] or known[:3])
        return f"{loops.LOOPS_DIR}/{name}.md", disk.read_safely(path)

    def spec(self, name: str) -> loops.Loop:
        """The current, valid spec `name` (InvalidRecordError lists every problem with its line). A spec file that is
        there but cannot be read as a spec (a name not allowed, a hard link) is an invalid spec like any other: whatever
        lists the specs goes on past it."""
        try:
            rel, data = self.raw(name)
        except UnsafePathError as exc:
            if name not in self.names():  # a name that names no file here: the caller's argument is what is wrong
                raise
            raise InvalidRecordError(f"{loops.LOOPS_DIR}/{name}.md", [Problem(str(exc), "name", 1)]) from None
        return loops.parse(data, rel)

    def read(self, name: str, cursor: str | None = None) -> Item:
        """The spec exactly as stored, and how its latest runs ended."""
        rel, data = self.raw(name)
        text, next_cursor = page(data.decode("utf-8", errors="replace"), cursor)
        committed = self._committed.file(rel, data)
        try:
            spec = loops.parse(data, rel)
            status, description = spec.status, spec.description or spec.goal
        except InvalidRecordError as exc:  # an invalid spec is still readable; `loop lint` explains it
            status, description = "invalid", f"invalid spec: {exc}"
        return Item(id=f"loop:{name}", kind="loop", name=name, path=rel, status=status, description=description,
                    sha256=hashlib.sha256(data).hexdigest(), content=text, runs=self._activity.receipts(name), next_cursor=next_cursor,
                    committed=committed, recorded=describe_loop(status, committed))
