"""Reading skill and loop files for the index: each parsed into a document, on every core when there are many, and
whether a file is certainly unchanged since it was indexed, judged by its stat alone."""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repo_memory.errors import InvalidRecordError, Problem, UnsafePathError
from repo_memory.formats import loops, skills
from repo_memory.guards import cjk, disk, markers, secretscan
from repo_memory.index import cited, folding
from repo_memory.index.query import parts

RACY_NS = 2_000_000_000  # a file modified this close to when we looked may change again within the mtime granularity
PARALLEL_MIN = 2000  # below this, starting worker processes costs more than it saves
BODY_WORDS = 20_000  # characters of a body scanned for camelCase names: bounded work for a huge file

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Loaded:
    """A file as read and parsed, with the stat it had when read."""

    path: str
    mtime_ns: int
    size: int
    doc: skills.Skill
    words: str = ""  # the words of the camelCase names in its text, its anchors, its CJK bigrams, its folded words (docs.WEIGHTS)

    def moved(self) -> bool:
        """True when the file changed after it was read."""
        if not self.path:
            return False
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return True
        return (st.st_mtime_ns, st.st_size) != (self.mtime_ns, self.size)


def unchanged(item: skills.Found, prev: tuple[Any, ...] | None) -> bool:
    """True when `item` certainly matches its index row `prev`, judged by stat alone (git's racy-clean rule)."""
    if prev is None or item.refused or prev[4] != item.rank:
        return False
    try:
        st = os.stat(item.path)
    except FileNotFoundError:
        return False
    return (prev[1], prev[2]) == (st.st_mtime_ns, st.st_size) and prev[3] - prev[1] > RACY_NS


def loop_document(data: bytes, rel: str) -> skills.Skill:
    """A loop spec as a searchable document: its goal, notes and the names of its checks."""
    name = Path(rel).stem
    digest = hashlib.sha256(data).hexdigest()
    try:
        spec = loops.parse(data, rel)
    except InvalidRecordError as exc:
        return skills.Skill(name=name, path=rel, source=loops.LOOPS_DIR, sha256=digest, problems=exc.problems)
    text = "\n".join([spec.goal, spec.notes, *(f"check: {s.name}" for s in spec.steps)])
    text, found = secretscan.redact(text)
    return skills.Skill(name=name, path=rel, source=loops.LOOPS_DIR, sha256=digest, description=spec.description or spec.goal,
                        status=spec.status, origin="", tags=(str(spec.trigger.get("on", "manual")),), body=text,
                        flags=tuple([*(str(m) for m in markers.find(text)), *(f"secret: {f}" for f in found)]),
                        anchors=dict.fromkeys(spec.anchors, ""))


def load(item: skills.Found) -> Loaded | None:
    """Read and parse one file (runs in worker processes too); None when it vanished."""
    name = Path(item.rel).parent.name if item.kind == "skill" else Path(item.rel).stem
    if item.refused:
        return Loaded("", 0, 0, skills.Skill(name=name, path=item.rel, source=item.source, sha256="", problems=(Problem(item.refused),)))
    try:
        with os.fdopen(disk.open_safely(Path(item.path)), "rb") as handle:
            st = os.fstat(handle.fileno())
            data = handle.read()
    except FileNotFoundError:
        return None
    except UnsafePathError as exc:
        return Loaded("", 0, 0, skills.Skill(name=name, path=item.rel, source=item.source, sha256="", problems=(Problem(str(exc)),)))
    doc = skills.parse(data, item.rel, item.source) if item.kind == "skill" else loop_document(data, item.rel)
    found = parts(f"{doc.description}\n{doc.body[:BODY_WORDS]}")
    said = f"{doc.name}\n{doc.description}\n{doc.body}"
    # docs_fts reads the text from `docs` as written: its CJK bigrams and the words folding changes go here
    written = f"{cjk.grams(folding.fold(said))} {folding.changed(said)}"
    return Loaded(item.path, st.st_mtime_ns, st.st_size, doc, " ".join([*found, cited.words(doc.anchors), written]).strip())


def load_all(items: list[skills.Found], progress: Progress | None, total: int) -> list[Loaded | None]:
    """Load `items`, on every core when there are many and forking is safe (no other threads to inherit)."""
    cores = os.cpu_count() or 1
    done = total - len(items)
    if len(items) >= PARALLEL_MIN and cores > 1 and threading.active_count() == 1:
        import multiprocessing  # only bulk loads use worker processes
        from concurrent.futures import ProcessPoolExecutor

        if "fork" in multiprocessing.get_all_start_methods():
            with ProcessPoolExecutor(max_workers=min(cores, 8), mp_context=multiprocessing.get_context("fork")) as pool:
                stream: Iterable[Loaded | None] = pool.map(load, items, chunksize=256)
                return _with_progress(stream, progress, done, total)
    return _with_progress(map(load, items), progress, done, total)


def _with_progress(stream: Iterable[Loaded | None], progress: Progress | None, done: int, total: int) -> list[Loaded | None]:
    results = []
    for number, loaded in enumerate(stream, start=done + 1):
        results.append(loaded)
        if progress and (number % 500 == 0 or number == total):
            progress(number, total)
    if progress and not results and total:
        progress(total, total)
    return results
