"""Text as the index compares it: one written form of each word, however the writer's system wrote it.

The same word reaches memory in several forms: an accent composed (é) or as a letter and a combining mark (e + ◌́,
as macOS writes file names and text copied from them). SQLite's tokenizer compares code points, and Python's `\\w`
does not match a combining mark, so a decomposed query was searched as the pieces between its marks, and a decomposed
Korean or Japanese record was indexed as jamo and unpaired kana, never found by the word as typed. The index, the
words a query asks for and the texts compared with them all hold the composed form (NFC). ASCII is its own
form: code names and English text are unchanged, and cost nothing.
"""

from __future__ import annotations

import re
import unicodedata

from repo_memory.index import cjk

_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """`text` in the one form the index holds and queries ask for."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", text)


def searched(text: str) -> str:
    """`text` as the full-text index holds it: folded, each CJK run written as its words (index/cjk.py)."""
    return cjk.spaced(fold(text))


def changed(text: str) -> str:
    """The words of `text` that folding changes, in their folded form ('' when it changes none): indexed beside a text
    the index reads as written (a document's body, which `docs_fts` reads from `docs`)."""
    folded = fold(text)
    if folded == text:
        return ""
    written = set(_WORD.findall(text.lower()))
    return " ".join(dict.fromkeys(w for w in _WORD.findall(folded.lower()) if w not in written))
