"""Where each character of a text as the index holds it came from in the text as written, to show an excerpt cut from
the one as the other.

Excerpts are cut by FTS5's snippet() from a scratch copy of a text, which must hold the words a query asks for: the
text folded (index/folding.py), each CJK run written as its characters and pairs (guards/cjk.py). The excerpt cut
there is placed back in the text as written, its marks over the characters they matched: a user reads ＡＰＩ and
デプロイは金曜日に as they wrote them, never "API" or "金 金曜 曜 曜日 日". Only the few places that differ are
recorded (a run, a folded letter or symbol), not a position per character: a long Chinese record is one of them.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

from repo_memory.guards import cjk
from repo_memory.index.folding import fold

# Characters that compose with the one before them though they are not combining marks (canonical class 0): Hangul
# vowel and final jamo, half-width katakana voicing marks. A piece of text folded on its own keeps them with it.
_JOINED = re.compile("[\u1160-\u11ff\uff9e\uff9f]")
# Where folding may change text: a run of non-ASCII characters and the letter before it. CJK ideographs, which folding
# leaves as they are and nothing composes with, end a run: Chinese text is not walked character by character.
_CHANGED = re.compile("[\x00-\x7f]?[^\x00-\x7f\u3400-\u4dbf\u4e00-\u9fff]+")


@dataclass(frozen=True)
class Placed:
    """A text as the index holds it (`text`) and as written, with where they differ: `folds` are the (folded start,
    folded end, written start, written end) of each piece folding changed, `runs` the (start in `text`, start in the
    folded text, characters) of each CJK run, in order."""

    written: str
    text: str
    folds: list[tuple[int, int, int, int]]
    runs: list[tuple[int, int, int]]

    def excerpt(self, cut: str, marks: tuple[str, str], gap: str) -> str:
        """The written text of `cut`, an excerpt of `text` with `marks` around matched words and `gap` where text was
        left out (FTS5's snippet()), marked likewise; `cut` as it is when it is not in `text`."""
        body = cut.removeprefix(gap).removesuffix(gap)
        plain = body.replace(marks[0], "").replace(marks[1], "")
        at = self.text.find(plain)
        if at < 0 or not plain:
            return cut
        spans, offset = [], at
        for n, piece in enumerate(body.replace(marks[1], marks[0]).split(marks[0])):
            if n % 2 and piece:  # between an opening and a closing mark
                spans.append((self._written(offset)[0], self._written(offset + len(piece) - 1)[1]))
            offset += len(piece)
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):  # the two pairs of a three-character word overlap: marked once
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        out, done = [gap if cut.startswith(gap) else ""], self._written(at)[0]
        for start, end in merged:
            out += [self.written[done:start], marks[0], self.written[start:end], marks[1]]
            done = end
        end = at + len(plain) - 1
        while end > at and self._written(end)[0] == self._written(end)[1]:  # a space of ours ends it: the run before
            end -= 1
        last = self._written(end)[1]
        return "".join([*out, self.written[done:last], gap if cut.endswith(gap) else ""])

    def _written(self, at: int) -> tuple[int, int]:
        """The span of the written text that character `at` of `text` came from (empty for a space of ours)."""
        folded, empty = at, False
        n = bisect_right(self._run_starts, at) - 1
        if n >= 0:
            start, begins, length = self.runs[n]
            if at < start + 5 * length - 2:  # " a ab b bc c ": 5 characters for each but the last, which has 3
                step, within = divmod(at - start - 1, 5)  # a character, a space, a pair, a space
                folded = begins + step + (within == 3 or within == 4)
                empty = at == start or within in (1, 4)
            else:
                folded = at - start - 5 * length + 2 + begins + length
        n = bisect_right(self._fold_starts, folded) - 1
        if n >= 0:
            start, end, written, written_end = self.folds[n]
            if folded < end:
                return (written, written) if empty else (written, written_end)
            folded += written_end - end
        return (folded, folded) if empty else (folded, folded + 1)

    @cached_property
    def _run_starts(self) -> list[int]:
        return [run[0] for run in self.runs]

    @cached_property
    def _fold_starts(self) -> list[int]:
        return [piece[0] for piece in self.folds]


def placed(text: str) -> Placed:
    """`text` as the index holds it (folding.searched), with where each piece came from in `text`. A piece that
    folding changes (a letter and its marks, a symbol) is placed as a whole."""
    folds: list[tuple[int, int, int, int]] = []
    pieces: list[str] = []
    done = length = 0  # in `text`; in the folded text
    for found in _CHANGED.finditer(text) if not text.isascii() else ():
        if fold(found.group()) == found.group():
            continue
        pieces.append(text[done : found.start()])
        length += found.start() - done
        begin = found.start()
        for end in range(found.start() + 1, found.end() + 1):  # a letter and what composes with it folds on its own
            if end == found.end() or not (unicodedata.combining(text[end]) or _JOINED.match(text[end])):
                alone = fold(text[begin:end])
                if alone != text[begin:end]:
                    folds.append((length, length + len(alone), begin, end))
                pieces.append(alone)
                length += len(alone)
                begin = end
        done = found.end()
    pieces.append(text[done:])
    folded = "".join(pieces)
    runs, grown = [], 0
    for run in cjk.runs(folded):
        runs.append((run.start() + grown, run.start(), len(run.group())))
        grown += 4 * len(run.group()) - 2  # written as 5 characters for each but the last, which has 3
    return Placed(text, cjk.spaced(folded), folds, runs)
