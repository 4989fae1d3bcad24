"""Which commit changed a cited definition: the file's versions, newest first, each hashed as an anchor is.

The last commit that touched a file is often not the one that changed the definition a memory cites (a commit
editing a sibling function comes after it). Walking the file's history and hashing the definition in each version
finds the commit where its hash last moved, where it was removed or renamed, or that it was never there (a typo).
A memory's pin in an older release's form (code/fingerprint.py) is compared in every form: the commit after which the
code no longer matches it is a change too, although the hash in this release's form did not move there.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence

from repo_memory.code.anchors import MAX_FILE_BYTES, parse_tree, supported
from repo_memory.code.fingerprint import hashed

Version = tuple[str, bytes | None]  # ("HASH SUBJECT" of a commit, the file's bytes there or None when it had none)
NEVER = "never defined"  # what starts the answer for a name no version defined


def hashes_in(source: bytes, suffix: str, symbols: Collection[str]) -> dict[str, str]:
    """The hash of each of `symbols` in a source file, as `Code.resolve` gives it ('' for a name it does not define)."""
    return {s: forms[0] for s, forms in forms_in(source, suffix, symbols).items()}


def forms_in(source: bytes, suffix: str, symbols: Collection[str]) -> dict[str, tuple[str, ...]]:
    """Of each of `symbols` in a source file, its hash and then the hashes older releases gave it (('',) for a name it
    does not define)."""
    try:
        tree, found = parse_tree(source, suffix)
    except ValueError:
        return dict.fromkeys(symbols, ("",))
    out: dict[str, tuple[str, ...]] = {}
    for s in symbols:
        now, _, legacy = hashed(tree, tuple((n.start_byte, n.end_byte, 0) for n in found[s])) if s in found else ("", 0, ())
        out[s] = (now, *legacy)
    return out


def changed_in(path: str, symbols: Collection[str], versions: Sequence[Version], whole: bool,
               pins: Mapping[str, Collection[str]] | None = None) -> dict[str, str]:
    """For each of `symbols` of file `path`, what its `versions` (newest first; `whole`: back to the file's first
    commit) say changed it: "last changed in HASH SUBJECT", "removed or renamed in HASH SUBJECT", or that no version
    defined it. A name the versions say nothing certain about is left out. `pins`: the hashes memories pinned of a
    symbol, in any release's form; a version matching one where the newer one matches none changed it too."""
    suffix = os.path.splitext(path)[1]
    out: dict[str, str] = {}
    if not supported(path):
        return out
    newer: tuple[str, dict[str, str]] | None = None
    matched: set[str] = set()
    for header, data in versions:
        left = [s for s in symbols if s not in out]
        if not left or data is not None and len(data) > MAX_FILE_BYTES:  # too big to parse, as on disk: no more certainty
            whole = whole and not left
            break
        forms = forms_in(data, suffix, left) if data is not None else dict.fromkeys(left, ("",))
        now = {s: forms[s][0] for s in left}
        held = {s for s in left if set(forms[s]) & set((pins or {}).get(s, ())) - {""}}  # the code a memory pinned
        if newer is not None:
            for symbol in left:
                if now[symbol] != newer[1][symbol] or symbol in held and symbol not in matched:
                    out[symbol] = f"{'last changed' if newer[1][symbol] else 'removed or renamed'} in {newer[0]}"
        newer, matched = (header, now), held
    if newer is not None:
        for symbol in (s for s in symbols if s not in out):
            if newer[1][symbol] and whole:  # the same since the file's first commit
                out[symbol] = f"last changed in {newer[0]}"
            elif not newer[1][symbol]:
                span = "in its history" if whole else f"in its last {len(versions)} commits"
                out[symbol] = f"{NEVER}: {path} has had no definition named {symbol} {span}"
    return out
