"""Known prompt-injection markers: invisible or control characters and chat-template tokens, found deterministically.

Flagged content is quarantined: stored and shown by `doctor`, but left out of default recall and of briefings.
This catches the markers, not the meaning: plain-language instructions hidden in a note are not detected.
The index keeps what was flagged in each row: a change to what these rules flag raises index/db.py's SCHEMA_VERSION,
so an index built by the old rules is rebuilt (else a record they flagged stays out of recall for good).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Embeddings, overrides and isolates: they reorder what a reader sees (Trojan Source), so any one is flagged.
BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# LRM, RLM and ALM reorder nothing (each is an invisible letter of one direction): right-to-left keyboards, Slack and
# Jira put them in ordinary Hebrew and Arabic. Suspect only where they split a word or pile up, as zero-width ones.
MARKS = set("\u200e\u200f\u061c")
SOFT_HYPHEN = "\u00ad"  # a hyphenation point: in German or Dutch copied from the web or Word, one inside a word is spelling
ZERO_WIDTH = set("\u200b\u200c\u200d\u2060\ufeff\u180e")
JOINERS = set("\u200c\u200d")  # ZWNJ and ZWJ: spelling in Persian, Arabic and Indic scripts (beside a non-ASCII letter)
WORD_JOINERS = set("\u2060\ufeff")  # no line break here: between digits or a number and its unit (10\u2060000 €)
INVISIBLE = set("\u2061\u2062\u2063\u2064")  # invisible times, separator, plus, function application
HIDDEN = ZERO_WIDTH | MARKS | {SOFT_HYPHEN}  # shown as nothing: suspect where one splits a word, or in a mixed run of
RUN = 4  # or more: no writing mixes these up, but bits hidden as two of them (LRM for 0, RLM for 1) would
# Scripts written without spaces between words, where a zero-width space is the word break (Thai, Lao, Tibetan,
# Myanmar, Khmer, Tai Le/Lue/Tham/Viet, Balinese, Javanese) or a line-break hint (kana and ideographs).
_UNSPACED = ((0x0E00, 0x0FFF), (0x1000, 0x109F), (0x1780, 0x17FF), (0x1950, 0x19FF), (0x1A20, 0x1AAF), (0x1B00, 0x1B7F),
             (0x3040, 0x30FF), (0x3400, 0x9FFF), (0xA980, 0xA9FF), (0xAA60, 0xAADF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))
# Scripts whose letters look alike count as one, so that a homoglyph (Cyrillic і before Latin gnore) is no change of script.
_ALIKE = {"LATIN", "GREEK", "CYRILLIC", "ARMENIAN", "COPTIC"}
# Chat-template tokens as a family: any `<|word|>` (ChatML, Llama 3, harmony's <|start|>/<|message|>/<|channel|>,
# <|im_sep|>, DeepSeek's <｜begin▁of▁sentence｜> once NFKC folds its bars, U+2581 between its words, …), the
# [INST]/<<SYS>> and Gemma turn markers, role tags, the tags of Claude's older tool format, the Alpaca instruction
# header, and a legacy `Human:`/`Assistant:` turn. Not `System:` or `User:` after a blank line, nor `### Response:`:
# bug reports and API notes are written so (tests/guards/test_markers.py BENIGN).
TEMPLATE = re.compile(
    r"<\|[A-Za-z][A-Za-z0-9_\u2581]{1,30}\|>"
    r"|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user)>|<start_of_turn>|<end_of_turn>"
    r"|</?function_(?:calls|results)>|^###[ \t]*Instruction:"
    r"|\n\n(?:Human|Assistant):",
    re.IGNORECASE | re.MULTILINE,
)
_SUSPECT = re.compile("[" + "".join(sorted(BIDI | HIDDEN | INVISIBLE)) + "\ufe00-\ufe0f\U000e0000-\U000e007f\U000e0100-\U000e01ef]")
# A valid emoji tag sequence: WAVING BLACK FLAG, 2-6 tag letters or digits (a region and subdivision code such as
# "gbeng"), CANCEL TAG: the flags of England, Scotland, Wales and the like. Anything longer is a message.
EMOJI_TAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f")
_HIDDEN_RUN = re.compile("[" + "".join(sorted(HIDDEN)) + "]+")
_ESCAPED = re.compile("[" + "".join(sorted(BIDI)) + "\U000e0000-\U000e007f]")  # what `shown` never prints raw
_VARIATION_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")


def _ideograph(ch: str) -> bool:
    code = ord(ch)
    return 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3FFFF


def _unspaced(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in _UNSPACED)


def _script(ch: str) -> str:
    """The script of a word character, near enough: the first word of its Unicode name ("digit" for any digit)."""
    if unicodedata.category(ch) == "Nd":
        return "digit"
    name = unicodedata.name(ch, "").split(" ", 1)[0]
    return "LATIN" if name in _ALIKE else name


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _splits_word(text: str, start: int, end: int) -> bool:
    """Whether the invisible run `text[start:end]` splits a word, rather than standing where real writing puts it: each
    of its characters is judged alone (doubled ones are common in copied text)."""
    before = start - 1
    while before >= 0 and unicodedata.category(text[before]).startswith("M"):
        before -= 1  # a combining accent belongs to the letter before it: it hides no split
    if before < 0 or end >= len(text) or not (_word(a := text[before]) and _word(b := text[end])):
        return False  # at a word's edge: a direction mark after a number, a BOM, a joiner between emoji
    return not all(_spelling(ch, a, b) for ch in text[start:end])


def _spelling(ch: str, a: str, b: str) -> bool:
    """Whether invisible `ch` between word characters `a` and `b` is there as real writing puts it."""
    if ch == SOFT_HYPHEN or _unspaced(a) or _unspaced(b):  # a hyphenation point; a word break in Thai or Khmer
        return True
    if ch in JOINERS and not (a.isascii() and b.isascii()):
        return True  # Persian or Indic spelling
    if ch in WORD_JOINERS and not (a.isalpha() and b.isalpha()):
        return True  # a number kept on one line (10\u2060000)
    if ch == "\u180e" and _script(a) == _script(b) == "MONGOLIAN":
        return True  # the Mongolian vowel separator, spelling there
    return _script(a) != _script(b)  # where one script meets another (Redis\u200fשל) it is not inside a word


@dataclass(frozen=True)
class Marker:
    """One marker: its rule, the character offset where it starts, and which character it is (none for a template token);
    the text itself is never echoed."""

    rule: str
    position: int
    code: str = ""

    def __str__(self) -> str:
        return f"{self.rule} {self.code + ' ' if self.code else ''}at character {self.position}"


def _at(rule: str, text: str, i: int) -> Marker:
    return Marker(rule, i, f"U+{ord(text[i]):04X}")


def find(text: str) -> list[Marker]:
    """Every injection marker in `text` (after NFKC folding for the template tokens)."""
    found: list[Marker] = []
    if _SUSPECT.search(text) is None:  # nearly every text: no invisible character at all, skip the character walk
        folded = text if text.isascii() else unicodedata.normalize("NFKC", text)
        return [Marker("chat-template-token", m.start()) for m in TEMPLATE.finditer(folded)][:5]
    allowed = {i for m in EMOJI_TAG_SEQUENCE.finditer(text) for i in range(m.start(), m.end())}
    for i, ch in enumerate(text):
        code = ord(ch)
        if 0xE0000 <= code <= 0xE007F and i not in allowed:
            found.append(_at("unicode-tag-character", text, i))
        elif ch in BIDI:
            found.append(_at("bidi-control", text, i))
        elif ch in INVISIBLE:
            found.append(_at("invisible-format-character", text, i))
        elif 0xE0100 <= code <= 0xE01EF and not (i and _ideograph(text[i - 1])):
            found.append(_at("variation-selector", text, i))  # an ideographic variant selector after no ideograph
        if len(found) >= 20:
            break  # enough of these: the kinds after it are still named
    for m in _HIDDEN_RUN.finditer(text):
        if _splits_word(text, m.start(), m.end()):
            found.append(_at("zero-width-inside-word", text, m.start()))
        elif m.end() - m.start() >= RUN and len(set(m.group())) > 1:  # one character repeated carries next to nothing
            found.append(_at("invisible-format-character", text, m.start()))
    found += [_at("variation-selector", text, m.start()) for m in _VARIATION_RUN.finditer(text)][:5]  # bytes smuggled as selectors
    folded = text if text.isascii() else unicodedata.normalize("NFKC", text)
    found += [Marker("chat-template-token", m.start()) for m in TEMPLATE.finditer(folded)][:5]
    return found


def shown(text: str) -> str:
    """`text` for a terminal or a diff: each bidi control and tag character (but a real flag's) as `<U+202E>`, so what
    is printed reads in the order it is stored and hides nothing."""
    if _ESCAPED.search(text) is None:
        return text
    allowed = {i for m in EMOJI_TAG_SEQUENCE.finditer(text) for i in range(m.start(), m.end())}
    return "".join(f"<U+{ord(ch):04X}>" if i not in allowed and _ESCAPED.match(ch) else ch for i, ch in enumerate(text))


def escaped(text: str) -> str:
    """`text` with every invisible character of the kinds markers are made of, and the first character of every
    chat-template token, written as `<U+XXXX>`: a quarantined text read back shows its markers and carries none. (A
    token only NFKC folding makes, in full-width letters, is left as written: visible, and flagged by `find`.)"""
    text = TEMPLATE.sub(lambda m: f"<U+{ord(m.group()[0]):04X}>{m.group()[1:]}", text)
    return _SUSPECT.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)
