"""Embedding vectors of skills, loops and records: a usearch HNSW index in the git dir, beside the SQLite index.

Like the SQLite index it is a cache, rebuilt from the memory files when missing, damaged or made by another model.
A vector's key is a 60-bit number derived from what it embeds (a record's text; a document's path and content
hash), stored on the row as `vkey`, so a key survives an index rebuild, an unchanged text is never embedded twice,
and records with the same words share one vector. Vectors are float16 (half the memory of float32; no measurable change in ranking); search is HNSW over
cosine similarity. Saved atomically (by the embedding job within seconds of embedding, a second apart at least, and when it
stops; by `reindex` at its end); a process that did not write it reloads it when it changes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from functools import cached_property
from pathlib import Path
from typing import Any

log = logging.getLogger("repo_memory")
KEY_BITS = 60
SAMPLE = 256  # vectors a query is compared with to know what an unrelated text scores
# Characters of a text that are embedded. The model's cost grows faster than the length (on two cores: 35 texts/s
# at 100 characters, 18 at 300, 8 at 600, 2.4 at 1,500), and what a skill or a record is about is in its opening:
# a skill's name and description, a record's first lines. The full text still counts for full-text ranking.
EMBED_CHARS = 400


def vkey(*parts: str) -> int:
    """The key of a vector for the text identified by `parts` (a record's embedded text; a document's path and sha256)."""
    return int(hashlib.sha256("\0".join(parts).encode()).hexdigest()[: KEY_BITS // 4], 16)


class VectorIndex:
    """The vectors of one model, on disk at `path` (+ `.json` for what made them). Thread-safe."""

    def __init__(self, path: Path, model: str | Callable[[], str], dim: int):
        self.path, self._model, self.dim = path, model, dim
        self._meta_path = path.with_suffix(".json")
        self._lock = threading.RLock()
        self._index: Any = None
        self._loaded_mtime = 0
        self._sample: tuple[tuple[int, int, int], Any] = ((0, -1, 0), None)

    @cached_property
    def model(self) -> str:
        """What made the vectors (asked of a callable the first time: core/semantic.model_id)."""
        return self._model() if callable(self._model) else self._model

    def _new(self) -> Any:
        from usearch.index import Index

        return Index(ndim=self.dim, metric="cos", dtype="f16")

    def load(self) -> None:
        """Read the saved vectors (or start empty when there are none, or they came from another model)."""
        with self._lock:
            self._index = self._read() or self._new()

    def _read(self) -> Any:
        from usearch.index import Index

        try:
            meta = json.loads(self._meta_path.read_text(encoding="utf-8"))
            if meta.get("model") != self.model or meta.get("dim") != self.dim:
                log.info("vectors at %s were made by %s; re-embedding with %s", self.path, meta.get("model"), self.model)
                return None
            mtime = self.path.stat().st_mtime_ns
            index = Index.restore(str(self.path))
        except (OSError, ValueError, RuntimeError) as exc:
            if self.path.exists():
                log.warning("vectors at %s are unreadable (%s); re-embedding", self.path, exc)
            return None
        if index is None or index.ndim != self.dim:
            return None
        self._loaded_mtime = mtime
        return index

    def refresh(self) -> None:
        """Reload when another process saved newer vectors (this one does not embed)."""
        try:
            mtime = self.path.stat().st_mtime_ns
        except OSError:
            return
        if mtime != self._loaded_mtime:
            with self._lock:
                self._index = self._read() or self._index

    @property
    def loaded(self) -> bool:
        return self._index is not None

    def __len__(self) -> int:
        return len(self._index) if self._index is not None else 0

    def missing(self, keys: list[int]) -> list[int]:
        """Of `keys`, those without a vector."""
        if not keys:
            return []
        import numpy as np

        with self._lock:
            if self._index is None:
                return list(keys)
            present = self._index.contains(np.array(keys, dtype=np.uint64))
        return [k for k, there in zip(keys, present, strict=True) if not there]

    def add(self, keys: list[int], vectors: Any) -> None:
        import numpy as np

        with self._lock:
            if self._index is None:
                self._index = self._new()
            wanted = np.array(keys, dtype=np.uint64)
            new = ~np.asarray(self._index.contains(wanted), dtype=bool) if len(self._index) else np.ones(len(keys), dtype=bool)
            if new.any():  # a key is added once (another batch or process may have embedded the same text)
                self._index.add(wanted[new], np.asarray(vectors)[new], copy=True)

    def remove(self, keys: list[int]) -> None:
        import numpy as np

        with self._lock:
            if self._index is not None and keys:
                self._index.remove(np.array(keys, dtype=np.uint64))

    def search(self, query: Any, count: int) -> list[tuple[int, float]]:
        """(key, cosine similarity) of the `count` nearest vectors, nearest first."""
        with self._lock:
            if self._index is None or len(self._index) == 0:
                return []
            found = self._index.search(query, min(count, len(self._index)))
        return [(int(k), 1.0 - float(d)) for k, d in zip(found.keys, found.distances, strict=True)]

    def vectors(self, keys: list[int]) -> dict[int, Any]:
        """The vectors of `keys` that have one."""
        if not keys:
            return {}
        import numpy as np

        with self._lock:
            if self._index is None:
                return {}
            got = self._index.get(np.array(keys, dtype=np.uint64))
        return {k: v for k, v in zip(keys, got, strict=True) if v is not None}

    def sample(self, count: int) -> Any:
        """The unit vectors of up to `count` keys spread evenly over the stored ones, as rows of one matrix (kept until
        the vectors change: every query compares itself with the same ones)."""
        with self._lock:
            index = self._index
            size = len(index) if index is not None else 0
            if self._sample[0] != (id(index), size, self._loaded_mtime):
                keys = [int(index.keys[i]) for i in range(0, size, max(1, size // count))][:count] if size else []
                self._sample = ((id(index), size, self._loaded_mtime), _unit(list(self.vectors(keys).values())))
            return self._sample[1]

    def save(self) -> bool:
        """Write the vectors and what made them, atomically (readers never see half a file), into the folder that holds
        them, never made again here: False, nothing written, when it is gone (the repository deleted meanwhile)."""
        with self._lock:
            if self._index is None:
                return True
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            try:
                self._index.save(str(tmp))  # usearch raises RuntimeError where the folder is gone
                os.replace(tmp, self.path)
                self._meta_path.write_text(json.dumps({"model": self.model, "dim": self.dim, "count": len(self._index)}), encoding="utf-8")
            except (OSError, RuntimeError):
                if self.path.parent.is_dir():
                    raise
                return False
            self._loaded_mtime = self.path.stat().st_mtime_ns
            return True


class QueryVectors:
    """One query's embedding against the stored vectors: its nearest neighbours, and its similarity to given keys.
    Stored vectors can be read (`prefetch`) while the query is still being embedded; only the products wait for it."""

    def __init__(self, vector: Any, index: VectorIndex):
        self._vector, self.index = vector, index
        self._unit: Any = None  # the embedding scaled to length 1, once it is known
        self.unembedded = 0  # candidates of this query that had no vector yet and were ranked by their words alone
        self.worded = 0  # candidates the query's words matched (none: every hit is by meaning alone)
        self._counting = threading.Lock()  # skills and records are ranked in two threads at once
        self._stored: dict[int, Any] = {}  # unit vectors of the keys read so far (None: the key has no vector)
        self._reading = threading.Lock()

    def count_unembedded(self, found: int, worded: int = 0) -> None:
        """Add `found` candidates ranked without a vector, and `worded` that the query's words matched."""
        with self._counting:
            self.unembedded += found
            self.worded += worded

    @property
    def vector(self) -> Any:
        """The query's unit embedding; given as a Future, it is waited for at first use (the full-text pass runs meanwhile)."""
        if self._unit is None:
            self._unit = _unit([self._vector.result() if isinstance(self._vector, Future) else self._vector])[0]
        return self._unit

    def nearest(self, count: int) -> list[tuple[int, float]]:
        return self.index.search(self.vector, count)

    def unrelated(self) -> float | None:
        """The similarity of the query to a text it has nothing to do with: the lowest over a fixed sample of the
        stored vectors (the nearest ones are all related in a large store, so they cannot tell where 'unrelated' is)."""
        sample = self.index.sample(SAMPLE)
        return float((sample @ self.vector).min()) if len(sample) else None

    def prefetch(self, keys: list[int]) -> None:
        """Read the stored vectors of `keys` now, so `similarity` later is only a product."""
        with self._reading:
            wanted = [k for k in dict.fromkeys(keys) if k not in self._stored]
        if not wanted:
            return
        found = self.index.vectors(wanted)
        unit = dict(zip(found, _unit(list(found.values())), strict=True))
        with self._reading:
            self._stored |= {k: unit.get(k) for k in wanted}

    def similarity(self, keys: list[int]) -> dict[int, float]:
        """Cosine similarity of the query to each of `keys` that has a vector (exact, not approximate)."""
        import numpy as np

        self.prefetch(keys)
        with self._reading:
            known = {k: v for k in keys if (v := self._stored.get(k)) is not None}
        if not known:
            return {}
        sims = np.asarray(list(known.values())) @ self.vector
        return {k: float(s) for k, s in zip(known, sims, strict=True)}


def _unit(vectors: list[Any]) -> Any:
    """`vectors` as rows of a float32 matrix, each scaled to length 1 (a zero vector stays zero)."""
    import numpy as np

    if not len(vectors):
        return np.zeros((0, 0), dtype=np.float32)
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
