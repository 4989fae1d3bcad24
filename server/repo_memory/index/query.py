"""Turning natural-language text into a safe FTS5 query: an OR of non-stopword terms, and the code names it holds."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from repo_memory.formats import when
from repo_memory.guards import cjk
from repo_memory.index import folding
from repo_memory.index.stopwords import STOPWORDS

_WORD = re.compile(r"\w+", re.UNICODE)
# A name written in camelCase or PascalCase (flushPending, SessionManager, HTTPServer) is one token to the index's
# tokenizer; its words are found by these (snake_case and dotted names are split by the tokenizer itself).
_SHIFT = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")  # where a name's case shifts: the scan starts from these, not every word
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# A name written with underscores, dots, slashes, colons or hyphens (mod_19, 8.1.0, cli/parse_args.py, --no-verify) is
# split into its words by the tokenizer, so records holding the same words apart (f_3 in mod_11, a date's 19) matched
# it as well as the record holding it; it is also asked for as one phrase, whose rarity BM25 rewards.
_COMPOUND = re.compile(r"\w+(?:[._/:-]+\w+)+")
_FRAME_PY = re.compile(r'\s*File "[^"\n]*", line \d+')
_FRAME_AT = re.compile(r"^\s+at \S.*(?::\d+\)?|\.java:\d+\)|\(Native Method\)|\(Unknown Source\))\s*$|^\s+\.\.\. \d+ more\s*$", re.M)
_RAISED = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)+([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning|Abort)\b)")
_ISSUE = re.compile(r"(?<![\w&])#\d+\b")
_CODE = re.compile(r"[_./:\d]")
# A version or other dotted number (2.3.1, v2.3.1, 0.2): its digits apart are in every numbered list and count of a
# memory, and the index holds `v2.3.1` as the tokens v2, 3 and 1, so "2.3.1" never matched it as a phrase. It is asked
# for as the phrase of its words with and without the v, never as lone digits.
_DOTTED = re.compile(r"(?<![\w.])(v?)(\d+(?:\.\d+)+)(?!\w|\.\d)", re.I)
COMPOUND_WORDS = 8  # words of a compound name asked for as a phrase (a long path's last ones)
_ORDINAL = re.compile(r"(\d{1,2})(?:st|nd|rd|th)")  # "May 8th": the day as dates are indexed ("8 May 2023"), as well
_MONTHS = {month[:3]: month for month in ("january", "february", "march", "april", "june", "july", "august", "september",
                                         "october", "november", "december")} | {"sept": "september"}
MAX_TERMS = 48  # terms of a query searched for, from its opening and its end (the rest would cost and dilute)
MAX_PHRASE = 6


@dataclass(frozen=True)
class Query:
    """A parsed search: its terms and the FTS5 expression that matches any of them."""

    text: str
    terms: tuple[str, ...]
    names: tuple[str, ...] = ()  # code names in it (mod_19, 8.1.0, cli/parse_args.py) as written, lowercased

    @property
    def fts(self) -> str:
        """An OR of quoted terms: user text can never be read as FTS5 syntax."""
        return " OR ".join(f'"{t}"' for t in self.terms)

    def has_phrase(self, text: str) -> bool:
        """True when the words of a short multi-word query appear in `text` in order and adjacent."""
        tokens = self.tokens
        if not 2 <= len(tokens) <= MAX_PHRASE or tokens[0] not in folding.fold(text).lower():
            return False  # a long question never appears verbatim; the substring test rejects most texts cheaply
        return f" {' '.join(tokens)} " in f" {' '.join(words(text))} "

    def quotes(self, text: str, run: int = 4) -> bool:
        """Whether `text` holds `run` words of the query in a row, as the query has them (a quoted error message)."""
        grams = self._grams(run)
        if not grams:
            return False
        found = words(text)
        return any(tuple(found[n : n + run]) in grams for n in range(len(found) - run + 1))

    def _grams(self, run: int) -> frozenset[tuple[str, ...]]:
        tokens = self.tokens
        return frozenset(tuple(tokens[n : n + run]) for n in range(len(tokens) - run + 1)
                         if any(t not in STOPWORDS for t in tokens[n : n + run]))

    def holds_name(self, text: str) -> bool:
        """Whether `text` holds one of the query's code names whole, as written ("mod_19", not "mod_1" in it)."""
        return bool(self.names) and self._names.search(text.lower()) is not None

    @cached_property
    def _names(self) -> re.Pattern[str]:
        return re.compile("|".join(rf"(?<![\w./:-]){_written(n)}(?![\w]|[._/:-]\w)" for n in self.names))

    @cached_property
    def tokens(self) -> list[str]:
        """Every word of the query, stopwords included, in order."""
        return words(self.text)

    @property
    def slug(self) -> str:
        return "-".join(self.tokens)

    def __bool__(self) -> bool:
        return bool(self.terms)


def _written(name: str) -> str:
    """A pattern for `name` as a record may write it: a version with or without its v ("2.3.1" holds in "v2.3.1")."""
    number = _DOTTED.fullmatch(name)
    return rf"v?{re.escape(number.group(2))}" if number else re.escape(name)


def words(text: str) -> list[str]:
    """Lowercased word tokens (underscores and hyphens split words, as the index tokenizer does), in the form the index
    holds (index/folding.py), CJK runs as their bigrams (guards/cjk.py)."""
    text = folding.fold(text)
    found = [w for token in _WORD.findall(text.lower()) for w in token.split("_") if w]
    return found if text.isascii() else [piece for w in found for piece in cjk.split(w)]


def parts(text: str) -> list[str]:
    """The words inside the camelCase names of `text`, lowercased ("SessionManager.flushPending": session, manager,
    flush, pending): indexed beside a record's text and added to a query, so a name is found by its words and the
    words by the name. Code names are ASCII: "naïveCafé" is left whole. Only the words where the case shifts are
    looked at (a regular expression over every word of a 20 kB skill body cost ten times as much)."""
    found: list[str] = []
    end = 0
    for shift in _SHIFT.finditer(text):
        if shift.start() < end:
            continue  # a second shift in a name already read
        start = shift.start()
        while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        word = _WORD.match(text, start)
        assert word is not None
        end = word.end()
        name = word.group()
        if name.isascii() and name.isalnum():
            found += [p.lower() for p in _PART.findall(name)]
    return found


def compounds(text: str) -> list[str]:
    """The names in `text` written with underscores, dots, slashes, colons or hyphens, each as the phrase of its words
    the index holds ("cli/parse_args.py": 'cli parse args py')."""
    found = []
    for name in _COMPOUND.findall(text):
        split = words(name)
        if len(split) > 1:
            found.append(" ".join(split[-COMPOUND_WORDS:]))
    return found


def code_names(text: str) -> tuple[str, ...]:
    """The compound names of `text` that read as code, not as hyphenated words ("follow-up"): with an underscore, a dot,
    a slash, a colon or a digit; and issue or pull request numbers (#876). Lowercased, as a record's text is compared
    with them."""
    found = [n.lower().rstrip(".:") for n in _COMPOUND.findall(text) if _CODE.search(n.rstrip(".:"))]
    return tuple(dict.fromkeys([*found, *_ISSUE.findall(text)]))


def _day(token: str) -> tuple[str, ...]:
    found = _ORDINAL.fullmatch(token)
    return (found.group(1),) if found else ()


def _month(tokens: list[str], n: int) -> tuple[str, ...]:
    """The month a short name beside a day or a year means ("Nov 8", "8 Sept 2023"), as dates are indexed."""
    month = _MONTHS.get(tokens[n])
    beside = [t for t in (tokens[n - 1] if n else "", tokens[n + 1] if n + 1 < len(tokens) else "") if t[:1].isdigit()]
    return (month,) if month and beside else ()


def _meant(text: str, now: datetime | None) -> list[str]:
    """The dates the relative times of `text` mean at `now`, each as the phrase a record's date words hold: a day as
    '3 december 2026' (when.day_words without its ISO form), a month as 'november 2026', a year as '2025'."""
    found = when.mentions(text, now) if now else []
    return [" ".join(words(m)[-3:] if "-" in m else words(m)) for m in found]


def without_frames(text: str) -> str:
    """`text` without the stack frames of a traceback pasted in it (Python's `File "…", line N, in f` and the source line
    under it, JavaScript's and Java's `at …`): their paths, line numbers and frame names are in every record that
    cites the same code, and the error line that tells one failure from another comes after them."""
    if "Traceback (most recent call last)" not in text and not _FRAME_AT.search(text):
        return text
    kept: list[str] = []
    skip = False
    for line in text.splitlines():
        if _FRAME_PY.match(line):
            skip = True  # Python prints the frame's source line under it
            continue
        if (skip and line.startswith("    ")) or _FRAME_AT.match(line) or line.startswith(("Traceback (most recent call last)", "During handling of")):
            skip = False
            continue
        skip = False
        kept.append(_RAISED.sub(r"\1", line))  # `click.exceptions.UsageError: …`: the class and its message, not its module
    return "\n".join(kept)


def parse(text: str, now: datetime | None = None) -> Query:
    """Content words of `text` in order, deduplicated; all words when every one is a stopword. A day or month written as
    people write it ("May 8th", "Nov 8") also asks for the words dates are indexed with, a camelCase name for its
    words, and a name written with underscores, dots or slashes for the phrase of its words. With `now` (when the
    question is asked), a relative time in it ("yesterday", "last Friday", "3 days ago") asks for the date it means, as
    one phrase ("3 december 2026"), which a record of that day holds among its date words; the words alone would match
    the same day of every month. A dotted number ("2.3.1", "v2.3.1") is asked for as the phrase of its words with and
    without a v, not as its digits. Recall leaves a pasted traceback's stack frames out before (`without_frames`)."""
    numbers = [number.split(".") for _, number in _DOTTED.findall(text)]
    tokens = words(_DOTTED.sub(" ", text) if numbers else text)
    dated = [w for n, t in enumerate(tokens) for w in (t, *_day(t), *_month(tokens, n))]
    versions = [f"{v}{' '.join(digits)}" for digits in numbers for v in ("", "v")]
    content = [t for t in (*dated, *versions, *_meant(text, now), *parts(text), *compounds(text)) if t not in STOPWORDS] or tokens
    terms = tuple(dict.fromkeys(content))
    if len(terms) > MAX_TERMS:  # its opening and its end: a pasted traceback's error line, what tells it apart, comes last
        terms = terms[: MAX_TERMS // 2] + terms[-(MAX_TERMS - MAX_TERMS // 2):]
    return Query(text=text, terms=terms, names=code_names(text))
