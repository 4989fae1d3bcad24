"""An anchor that names nothing: why, and what its writer may have meant.

A name several definitions end with is ambiguous, not missing: `pkg/store.py::save` where `Store.save` and `Cache.save`
are (Django's compiler.py has six `as_sql`). What is suggested instead: the same name in another class or another
case first, then the definitions spelled most like it; for a file that does not exist, the code files beside it
spelled most like it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection

from repo_memory.errors import nearest

SUGGESTED = 3
LISTED = 8  # of the definitions an ambiguous name could mean


def unknown(path: str, symbol: str, names: Collection[str]) -> str:
    """Why `symbol` names no definition among `names`, those of file `path`: none has that name, or several end with it."""
    ending = [n for n in names if n.endswith(f".{symbol}")]
    if len(ending) < 2:
        return f"symbol not found: {path} has no definition named {symbol}"
    more = f" and {len(ending) - LISTED} more" if len(ending) > LISTED else ""
    return (f"ambiguous: {len(ending)} definitions in {path} are named {symbol} ({', '.join(ending[:LISTED])}{more}); "
            f"write the one you mean in full, e.g. {path}::{ending[0]}")


def definitions_like(symbol: str, names: Collection[str]) -> list[str]:
    """The definitions `symbol` may have meant: the one its name ends, the same name (in any case) in another class,
    near spellings (none when it is ambiguous: `unknown` lists the definitions it could mean)."""
    ending = [n for n in names if n.endswith(f".{symbol}")]
    if symbol in names or len(ending) > 1:
        return []
    last = symbol.rpartition(".")[2].casefold()  # `F0` for `f0`: too short for a near spelling, the same in another case
    same = [n for n in names if n.rpartition(".")[2].casefold() == last]
    return list(dict.fromkeys([*ending, *same, *nearest(symbol, names, cutoff=80, whole=True)]))[:SUGGESTED]


def files_like(root: str, path: str, wanted: Callable[[str], bool]) -> list[str]:
    """The files (those `wanted`) beside `path`, which does not exist, spelled most like it: `pkg/stor.py`: `pkg/store.py`."""
    folder, _, name = path.rpartition("/")
    try:
        files = [f for f in os.listdir(os.path.join(root, folder)) if wanted(f)]
    except OSError:  # the folder is gone too (moved or deleted): nothing near to name
        return []
    return [f"{folder}/{f}" if folder else f for f in nearest(name, files, limit=SUGGESTED, cutoff=75, whole=True)]
