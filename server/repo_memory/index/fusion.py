"""Hybrid ranking: a lexical (BM25) score and a semantic (cosine) score fused by a weighted sum.

Both halves are scaled to [0, 1] over the candidates of one query — lexical by its best score (a candidate the
words did not match scores 0), semantic by min-max — then `LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) *
semantic`. A record's semantic score adds `NEIGHBOUR_WEIGHT` times the mean similarity of the records around it in
its session, as its lexical score already counts their words. A weighted sum beat reciprocal-rank fusion on LoCoMo
(whose neighbours-and-speaker BM25 is strong, so its weight is the larger one); see docs/benchmarks.md.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

LEXICAL_WEIGHT = 0.6
NEIGHBOUR_WEIGHT = 0.3
NEAREST = 100  # semantic candidates looked up per query, besides the lexical ones


def fuse(lexical: Mapping[K, float], semantic: Mapping[K, float], floor: float | None = None) -> dict[K, float]:
    """The fused score of every candidate of either half. `floor` is the similarity of an unrelated text — the lowest
    among all that were compared with the query, not only the candidates — so that semantic scores keep the spread
    they have over the whole collection (the candidates alone would stretch small differences to the full range)."""
    top = max(lexical.values(), default=0.0) or 1.0
    low = min(semantic.values(), default=0.0) if floor is None else floor
    spread = (max(semantic.values(), default=0.0) - low) or 1.0
    return {key: LEXICAL_WEIGHT * max(lexical.get(key, 0.0), 0.0) / top
            + (1 - LEXICAL_WEIGHT) * (max(semantic[key] - low, 0.0) / spread if key in semantic else 0.0)
            for key in {*lexical, *semantic}}
