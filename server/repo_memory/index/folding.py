"""Text as the index compares it: one written form of each word, however the writer's system wrote it.

The same word reaches memory in several forms: an accent composed (é) or as a letter and a combining mark (e + ◌́,
as macOS writes file names and text copied from them); full-width Latin (ＡＰＩ) and half-width katakana (ﾃﾞｰﾀ), as
Japanese input methods write them; ligatures (ﬁ, in text copied from a PDF). SQLite's tokenizer compares code points,
and Python's `\\w` does not match a combining mark, so a decomposed query was searched as the pieces between its
marks, a decomposed Korean or Japanese record was indexed as jamo and unpaired kana, and "API" did not find ＡＰＩ. The
index, the words a query asks for and the texts compared with them all hold the compatibility-composed form (NFKC),
with ё as е and ß as ss (as most of their writers type them). ASCII is its own form: code names and English text
are unchanged, and cost nothing; NFKC is also the form Python gives the identifiers it reads. A symbol that NFKC
spells with letters (™: TM, ㎏: kg) is kept a word apart, as it was: "Acme™" is still found by "Acme". (Invisible
characters inside a word, a soft hyphen or a zero-width space, are left alone: guards/markers.py quarantines text
holding them.)
"""

from __future__ import annotations

import re
import unicodedata

from repo_memory.guards import cjk

_WORD = re.compile(r"\w+")
# Letters written as others by many of a language's writers, to be found either way: ё (Russian is mostly typed
# with е), ß (Swiss German writes ss; a capital ẞ is SS).
_LETTERS = str.maketrans({"ё": "е", "Ё": "Е", "ß": "ss", "ẞ": "SS"})
# The blocks that hold the symbols NFKC spells with letters or digits (letterlike symbols, enclosed alphanumerics, CJK
# compatibility, Kangxi radicals, enclosed supplements); each is checked before it is spaced from its neighbours.
_SYMBOL = re.compile("[\u20a8\u2100-\u214f\u2460-\u24ff\u2e80-\u2fdf\u3190-\u33ff\ufdfc\U0001f100-\U0001f2ff]")


def fold(text: str) -> str:
    """`text` in the one form the index holds and queries ask for."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", _SYMBOL.sub(_apart, text)).translate(_LETTERS)


def _apart(symbol: re.Match[str]) -> str:
    """A symbol NFKC spells with letters or digits, between spaces (not run into the word beside it); others as is."""
    spelt = unicodedata.normalize("NFKC", symbol.group())
    return f" {spelt} " if not symbol.group().isalnum() and any(c.isalnum() for c in spelt) else symbol.group()


def searched(text: str) -> str:
    """`text` as the full-text index holds it: folded, each CJK run written as its words (guards/cjk.py)."""
    return cjk.spaced(fold(text))


def changed(text: str) -> str:
    """The words of `text` that folding changes, in their folded form ('' when it changes none): indexed beside a text
    the index reads as written (a document's body, which `docs_fts` reads from `docs`)."""
    folded = fold(text)
    if folded == text:
        return ""
    written = set(_WORD.findall(text.lower()))
    return " ".join(dict.fromkeys(w for w in _WORD.findall(folded.lower()) if w not in written))
