"""Hybrid ranking: a lexical (BM25) score and a semantic (cosine) score fused by a weighted sum.

Both halves are scaled to [0, 1] over the candidates of one query — lexical by its best score (a candidate the
words did not match scores 0), semantic by min-max — then `LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) *
semantic`. A record's semantic score adds `NEIGHBOUR_WEIGHT` times the mean similarity of the records around it in
its session, as its lexical score already counts their words. A weighted sum beat reciprocal-rank fusion on LoCoMo
(whose neighbours-and-speaker BM25 is strong, so its weight is the larger one); see docs/benchmarks.md.

A candidate that has no vector yet (written since the embedding job last ran) is not scored as if its meaning were
unrelated: its scaled lexical score stands in for both halves, so it ranks where full-text ranking alone would put
it among the others. Scoring it 0 for meaning sank the freshest records: on LoCoMo with the first quarter of each
conversation embedded, turn any@5 fell from 0.777 (full-text alone) to 0.628; with this rule it is 0.774.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

LEXICAL_WEIGHT = 0.6
NEIGHBOUR_WEIGHT = 0.3
NEAREST = 100  # semantic candidates looked up per query, besides the lexical ones


def fuse(lexical: Mapping[K, float], semantic: Mapping[K, float], floor: float | None = None,
         prefer: Mapping[K, float] | None = None, weight: float = LEXICAL_WEIGHT) -> dict[K, float]:
    """The fused score of every candidate of either half; a lexical candidate missing from `semantic` has no vector.
    `floor` is the similarity of an unrelated text — the lowest among all that were compared with the query, not
    only the candidates — so that semantic scores keep the spread they have over the whole collection (the
    candidates alone would stretch small differences to the full range). `prefer` multiplies the meaning half of
    some candidates, as the caller's boosts already multiply their lexical scores (a stand-in meaning is the boosted
    lexical score, so it is not multiplied again); `weight` is the lexical half's."""
    top = max(lexical.values(), default=0.0) or 1.0
    low = min(semantic.values(), default=0.0) if floor is None else floor
    spread = (max(semantic.values(), default=0.0) - low) or 1.0
    meanings = {key: max(value - low, 0.0) / spread * (prefer.get(key, 1.0) if prefer else 1.0) for key, value in semantic.items()}
    # Scaled by the best, as the words half is after its boosts: both halves top out at 1, so a record with a vector
    # does not outrank one without (whose meaning is its words) by the factor alone.
    scale = max([1.0, *meanings.values()])
    fused = {}
    for key in {*lexical, *semantic}:
        words = max(lexical.get(key, 0.0), 0.0) / top
        meaning = meanings[key] / scale if key in meanings else words
        fused[key] = weight * words + (1 - weight) * meaning
    return fused


def unembedded(lexical: Mapping[K, float], semantic: Mapping[K, float]) -> int:
    """How many candidates were ranked without a vector."""
    return sum(1 for key in lexical if key not in semantic)
