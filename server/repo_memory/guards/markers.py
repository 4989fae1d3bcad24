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
TEMPLATE = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\|>"
    r"|\[/?INST\]|<</?SYS>>|</?(?:system|assistant|user)>|<start_of_turn>|<end_of_turn>",
    re.IGNORECASE | re.MULTILINE,
)
_SUSPECT = re.compile("[" + "".join(sorted(BIDI | ZERO_WIDTH)) + "\U000e0000-\U000e007f]")
# A valid emoji tag sequence: WAVING BLACK FLAG, tag letters, CANCEL TAG (e.g. the flags of England, Scotland, Wales).
EMOJI_TAG_SEQUENCE = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")


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
        elif ch in ZERO_WIDTH and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            found.append(Marker("zero-width-inside-word", i))  # between letters, not in emoji sequences
        if len(found) >= 20:
            return found
    folded = text if text.isascii() else unicodedata.normalize("NFKC", text)
    found += [Marker("chat-template-token", m.start()) for m in TEMPLATE.finditer(folded)][:5]
    return found

