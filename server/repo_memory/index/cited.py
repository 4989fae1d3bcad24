"""The code a memory cites (its anchors, `path/to/file.py::Class.method`) as words it is found by, and whether a query
or `recall(symbol=…)` names that code: its file, its symbol, or both.

A memory anchored to a file is about that file, whatever words it is written in: "what do we know about
django/db/models/query.py?" found none of the four memories anchored there, since anchors were in no full-text column.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from repo_memory.errors import nearest
from repo_memory.formats.refs import RECORD
from repo_memory.index.query import parts

# A memory anchored to code the query names outranks one that only holds the name in its text (NAME_BOOST, 1.5): an
# anchor says the memory is about that code; a mention may be in passing. Not tuned: records and skills without anchors
# (every LoCoMo turn) are ranked as before.
CITED_BOOST = 2.0
CITES = "by the code it cites"  # a record hit's `matched` when its text holds no word of the query and its anchors do


def plain(ref: str) -> str:
    """`ref` without a leading `./` or a trailing `::`: `./pkg/store.py::` is the file pkg/store.py."""
    ref = ref.strip()
    while ref.startswith("./"):
        ref = ref[2:]
    return ref.removesuffix("::")


def anchors(column: str | None) -> list[str]:
    """The anchors an index row's `anchors` column holds (JSON: anchor -> pinned hash; '' when it cites no code)."""
    return list(json.loads(column)) if column else []


def words(cited: Iterable[str]) -> str:
    """What a memory's anchors add to the words it is indexed by: each anchor (the tokenizer splits its path and its
    name) and the words of the camelCase names in them (QuerySet: query, set)."""
    listed = " ".join(plain(a) for a in cited)
    return " ".join([listed, *parts(listed)]) if listed else ""


def given(refs: str | None) -> str:
    """The free text of a record's `refs` column (JSON: a list), a URL or a ticket it gives, as words it is found by:
    not its code anchors (`words` has those) nor the ids of other memories (`skill:NAME`, `SESSION#SEQ`)."""
    listed = json.loads(refs) if refs else []
    return " ".join(r for r in listed if isinstance(r, str) and "::" not in r and not RECORD.match(r)
                    and not r.startswith(("skill:", "loop:", "session:")))


def in_file(anchor: str, path: str) -> bool:
    """Whether `anchor` points into the file `path`, named whole or by its last parts (`store.py`, `models/query.py`)."""
    return _ends(plain(anchor).partition("::")[0], plain(path), "/")


def named(names: Sequence[str], cited: Iterable[str]) -> bool:
    """Whether one of a query's code names (query.code_names: lowercased) names code one of `cited` points at: its file
    (whole or by its last parts), its symbol (whole or by its last parts: `bulk_create` for `QuerySet.bulk_create`) or
    both (`models/query.py::QuerySet.bulk_create`)."""
    if not names:
        return False
    for anchor in cited:
        file, _, symbol = plain(anchor).lower().partition("::")
        for name in names:
            where, _, what = name.partition("::")
            if (_ends(file, where, "/") and _ends(symbol, what, ".")) if what else (_ends(file, name, "/") or _ends(symbol, name, ".")):
                return True
    return False


def near(wanted: str, cited: Iterable[str], n: int = 3) -> list[str]:
    """The anchors and files most like `wanted`, a symbol no memory cites (a misspelling, a method of another class)."""
    forms: dict[str, str] = {}
    for anchor in cited:
        anchor = plain(anchor)
        file, _, symbol = anchor.partition("::")
        forms.update({symbol: anchor, file: file, anchor: anchor})
    close = nearest(plain(wanted), forms, limit=n, whole=True)  # rapidfuzz: difflib took 1.1 s over 30k anchors
    return list(dict.fromkeys(forms[c] for c in close))


def _ends(whole: str, part: str, separator: str) -> bool:
    return bool(part) and (whole == part or whole.endswith(f"{separator}{part}"))
