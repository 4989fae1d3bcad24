"""Known prompt-injection markers: invisible or control characters and chat-template tokens, found deterministically.

Flagged content is quarantined: stored and shown by `doctor`, but left out of default recall and of briefings.
This catches the markers, not the meaning: plain-language instructions hidden in a note are not detected.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
ZERO_WIDTH = set("\u200b\u200c\u200d\u2060\ufeff\u180e")
JOINERS = set("\u200c\u200d")  # ZWNJ and ZWJ: spelling in Persian, Arabic and Indic scripts (one, next to a non-ASCII letter)
INVISIBLE = set("\u00ad\u2061\u2062\u2063\u2064")  # soft hyphen; invisible times, separator, plus, function application
# Chat-template tokens as a family: any `<|word|>` (ChatML, Llama 3, harmony's <|start|>/<|message|>/<|channel|>,
# <|im_sep|>, …), the [INST]/<<SYS>> and Gemma turn markers, role tags, and a legacy `Human:`/`Assistant:` turn.
TEMPLATE = re.compile(
    r"<\|[A-Za-z][A-Za-z0-9_]{1,30}\|>"
    r"|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user)>|<start_of_turn>|<end_of_turn>"
    r"|\n\n(?:Human|Assistant):",
    re.IGNORECASE | re.MULTILINE,
)
_SUSPECT = re.compile("[" + "".join(sorted(BIDI | ZERO_WIDTH | INVISIBLE)) + "\ufe00-\ufe0f\U000e0000-\U000e007f\U000e0100-\U000e01ef]")
# A valid emoji tag sequence: WAVING BLACK FLAG, 2-6 tag letters or digits (a region and subdivision code such as
# "gbeng"), CANCEL TAG: the flags of England, Scotland, Wales and the like. Anything longer is a message.
EMOJI_TAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,6}\U000e007f")
_ZERO_WIDTH_RUN = re.compile("(?<=\\w)[" + "".join(sorted(ZERO_WIDTH)) + "]+(?=\\w)")
_VARIATION_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")


def _ideograph(ch: str) -> bool:
    code = ord(ch)
    return 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3FFFF


@dataclass(frozen=True)
class Marker:
    """One marker: its rule and the character offset where it starts (the text itself is never echoed)."""

    rule: str
    position: int

    def __str__(self) -> str:
        return f"{self.rule} at character {self.position}"


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
            found.append(Marker("unicode-tag-character", i))
        elif ch in BIDI:
            found.append(Marker("bidi-control", i))
        elif ch in INVISIBLE:
            found.append(Marker("invisible-format-character", i))
        elif 0xE0100 <= code <= 0xE01EF and not (i and _ideograph(text[i - 1])):
            found.append(Marker("variation-selector", i))  # an ideographic variant selector after no ideograph
        if len(found) >= 20:
            break  # enough of these: the kinds after it are still named
    for m in _ZERO_WIDTH_RUN.finditer(text):  # inside a word; one joiner next to a non-ASCII letter is spelling
        if not (len(m.group()) == 1 and m.group() in JOINERS and not (text[m.start() - 1].isascii() and text[m.end()].isascii())):
            found.append(Marker("zero-width-inside-word", m.start()))
    found += [Marker("variation-selector", m.start()) for m in _VARIATION_RUN.finditer(text)][:5]  # bytes smuggled as selectors
    folded = text if text.isascii() else unicodedata.normalize("NFKC", text)
    found += [Marker("chat-template-token", m.start()) for m in TEMPLATE.finditer(folded)][:5]
    return found


def shown(text: str) -> str:
    """`text` with every invisible character of the kinds markers are made of, and the first character of every
    chat-template token, written as `<U+XXXX>`: a quarantined text read back shows its markers and carries none. (A
    token only NFKC folding makes, in full-width letters, is left as written: visible, and flagged by `find`.)"""
    text = TEMPLATE.sub(lambda m: f"<U+{ord(m.group()[0]):04X}>{m.group()[1:]}", text)
    return _SUSPECT.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)

