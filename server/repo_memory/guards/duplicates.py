"""Near-duplicate skills: a new skill whose name or description is close to an existing one.

Names are compared as word lists, ignoring a leading ordering number ("02-"), small words ("to", "the") and the
endings -s and -ing, so `deploy-to-staging` meets `deploy-staging` and `fixing-flaky-tests` meets
`fix-flaky-tests`, while `deploy-staging`/`deploy-production`, `setup-ci`/`setup-cd` and `deploy-1`/`deploy-2`
stay apart. Descriptions are close when, as sorted word lists of their content words, they are nearly the same
text (a reworded copy), or one holds every content word of the other and both have at least five. Words are
letters and digits of any script; Chinese, Japanese and Korean, written without spaces, count as overlapping
character pairs (the index's split, guards/cjk.py), so a reworded Chinese copy is found, and two Chinese skills
that only name the same tools (CI, pytest) are not one.
Thresholds are set on the labelled pairs in tests/guards/test_duplicates.py (no false positive on the distinct
pairs, in English, Chinese, Japanese, Korean and Russian).
"""

from __future__ import annotations

import functools
import re

from repo_memory.guards import cjk

NAME_MIN = 90.0
DESCRIPTION_MIN = 85.0
# A word: letters and digits of any script (`_` splits, as `-` does), so a Chinese or Russian description is compared
# by its own words, not by the few ASCII tool names (CI, pytest) it shares with a different procedure.
_WORD = re.compile(r"[^\W_]+")
SMALL_WORDS = frozenset("a an and as at by for from in into of on or the this to use used using when with how your it its is are be".split())


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)]
    return word


def words(text: str) -> list[str]:
    """Content words of a name or sentence, stemmed lightly: letters and digits of any script, a CJK run as its
    overlapping character pairs, as the index splits it (guards/cjk.py)."""
    tokens = _WORD.findall(text.lower())
    if not text.isascii():
        tokens = [piece for token in tokens for piece in cjk.split(token)]
    return [_stem(t) for t in tokens if t not in SMALL_WORDS]


@functools.lru_cache(maxsize=65536)
def name_key(name: str) -> str:
    return " ".join(words(re.sub(r"^\d+-", "", name)))


def names_close(a: str, b: str) -> bool:
    from rapidfuzz import fuzz

    return fuzz.token_sort_ratio(name_key(a), name_key(b)) >= NAME_MIN


def descriptions_close(a: str, b: str) -> bool:
    from rapidfuzz import fuzz

    wa, wb = words(a), words(b)
    if min(len(wa), len(wb)) < 3:
        return False
    if fuzz.token_sort_ratio(" ".join(wa), " ".join(wb)) >= DESCRIPTION_MIN:
        return True
    small, large = (set(wa), set(wb)) if len(set(wa)) <= len(set(wb)) else (set(wb), set(wa))
    return len(small) >= 5 and small <= large


@functools.lru_cache(maxsize=65536)
def _description_key(text: str) -> str:
    return " ".join(words(text))


def near_duplicates(name: str, description: str, existing: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(existing name, its description, why) for each existing skill close to the new one, closest first.

    The comparisons run in rapidfuzz's C loops over keys cached per text, so a library of 10k skills costs
    milliseconds, not a Python loop per skill."""
    from rapidfuzz import fuzz, process  # on a skill write: every hook and command would pay ~15 ms to import it

    others = [(n, d) for n, d in existing if n != name]
    out: dict[str, tuple[float, str, str, str]] = {}
    keys = [name_key(n) for n, _ in others]
    for _, score, i in process.extract(name_key(name), keys, scorer=fuzz.token_sort_ratio, score_cutoff=NAME_MIN, limit=5):
        out[others[i][0]] = (score, others[i][0], others[i][1], "a similar name")
    mine = _description_key(description)
    if len(mine.split()) >= 3:
        described = [_description_key(d) for _, d in others]
        for _, score, i in process.extract(mine, described, scorer=fuzz.token_set_ratio, score_cutoff=DESCRIPTION_MIN, limit=10):
            other, other_description = others[i]
            if other not in out and descriptions_close(description, other_description):
                out[other] = (fuzz.token_sort_ratio(mine, described[i]), other, other_description, "a similar description")
    return [(o, d, why) for _, o, d, why in sorted(out.values(), reverse=True)]
