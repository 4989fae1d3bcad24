"""The code a memory cites (its anchors, `path/to/file.py::Class.method`): whether `recall(symbol=…)` names it, by its
file or its symbol, and which anchors a symbol no memory cites may have meant."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def plain(ref: str) -> str:
    """`ref` without a leading `./` or a trailing `::`: `./pkg/store.py::` is the file pkg/store.py."""
    ref = ref.strip()
    while ref.startswith("./"):
        ref = ref[2:]
    return ref.removesuffix("::")


def in_file(anchor: str, path: str) -> bool:
    """Whether `anchor` points into the file `path`, named whole or by its last parts (`store.py`, `models/query.py`)."""
    return _ends(plain(anchor).partition("::")[0], plain(path), "/")


def near(wanted: str, cited: Iterable[str], n: int = 3) -> list[str]:
    """The anchors and files most like `wanted`, a symbol no memory cites (a misspelling, a method of another class)."""
    forms: dict[str, str] = {}
    for anchor in cited:
        anchor = plain(anchor)
        file, _, symbol = anchor.partition("::")
        forms.update({symbol: anchor, file: file, anchor: anchor})
    close = difflib.get_close_matches(plain(wanted), list(forms), n=n, cutoff=0.6)
    return list(dict.fromkeys(forms[c] for c in close))


def _ends(whole: str, part: str, separator: str) -> bool:
    return bool(part) and (whole == part or whole.endswith(f"{separator}{part}"))
