"""Chinese, Japanese and Korean text as the words it is found by: overlapping pairs of characters.

These scripts do not put spaces between words, and the index's tokenizer (unicode61) makes a whole run of their
characters one token: a record holding 金曜日 in a sentence was not found by 金曜日. As the standard analyzers for
them do (Lucene's CJKAnalyzer), each run is also indexed as its overlapping bigrams (金曜 曜日), and a query's runs
are asked for as theirs. A single character is a word too (锁 'lock', 表 'table'), so each run is indexed as its
characters as well, between its pairs (as CJKAnalyzer's outputUnigrams does): a query's lone character is asked for
as itself, its longer runs still as pairs, which hold the order of the characters (precise). Other text is
tokenized as before. The index and the duplicate-skill check split such text with these functions and the secret
scan tells its characters by `CHARS`, so this sits in guards, the lowest layer they share.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Hiragana, Katakana (and its prolonged sound mark), CJK ideographs (with extension A and compatibility ones), Hangul
# syllables and half-width Katakana: the ranges, for a character class.
CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f"
_RUN = re.compile(f"[{CHARS}]+")


def pairs(run: str) -> list[str]:
    """The overlapping bigrams of a run of CJK characters (a lone character: itself)."""
    return [run] if len(run) < 2 else [run[n : n + 2] for n in range(len(run) - 1)]


def indexed(run: str) -> list[str]:
    """The words a run of CJK characters is indexed as: each character, and between each two their pair."""
    return [gram for n, char in enumerate(run) for gram in (char, run[n : n + 2])][:-1] if len(run) > 1 else [run]


def grams(text: str) -> str:
    """The words of every CJK run in `text` (`indexed`), space-separated, to index beside it ('' for text without any)."""
    if text.isascii():
        return ""
    return " ".join(gram for run in _RUN.findall(text) for gram in indexed(run))


def spaced(text: str) -> str:
    """`text` with each CJK run written as its words (`indexed`), where the run was (for an index that keeps its own
    copy of the words, and for comparing words in place)."""
    if text.isascii():
        return text
    return _RUN.sub(lambda run: f" {' '.join(indexed(run.group()))} ", text)


def runs(text: str) -> Iterator[re.Match[str]]:
    """The CJK runs of `text`, where they are."""
    return _RUN.finditer(text)


def holds(text: str) -> bool:
    """Whether `text` has a CJK character."""
    return _RUN.search(text) is not None


def split(token: str) -> list[str]:
    """A query's word as the words the index holds: its CJK runs as their bigrams, the rest of it as it is."""
    if token.isascii() or not _RUN.search(token):
        return [token]
    return [piece for part in re.split(f"({_RUN.pattern})", token) if part
            for piece in (pairs(part) if _RUN.fullmatch(part) else [part])]
