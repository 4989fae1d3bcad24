"""Write-path guards: names that are safe slugs, and paths that stay inside the memory root."""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

from repo_memory.errors import UnsafePathError

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
# Latin letters NFKD leaves whole (no base letter plus accent), spelt as their languages spell them in ASCII.
_UNACCENTED = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i", "ħ": "h"})
# Windows device names: a file called `con` or `lpt1` breaks a checkout there, so no memory item may be named so.
RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})


def check_name(name: object, what: str = "name") -> str:
    """Return `name` if it is a slug (ASCII lowercase letters, digits, single hyphens, at most 64 characters)."""
    if not isinstance(name, str) or not name:
        raise UnsafePathError(f"The {what} must be non-empty text, like 'release-checklist'.")
    from repo_memory.guards import secretscan  # ~20 ms to import: not for a pre-tool hook that checks no name

    secretscan.refuse((f"the {what}", name))  # a name becomes a path, an id and a commit message: never a credential
    shown = legible(name[:80])
    if len(name) > MAX_NAME:
        raise UnsafePathError(f"The {what} '{legible(name[:40])}…' is {len(name)} characters; the limit is {MAX_NAME}.")
    if SLUG.fullmatch(name) and name not in RESERVED:  # fullmatch: `$` would also match before a final newline
        return name
    if name in RESERVED:
        raise UnsafePathError(f"The {what} '{name}' is a reserved device name on Windows; choose another, like '{name}-notes'.")
    if any(c in name for c in ("/", "\\", "\x00")) or ".." in name or ".git" in name.lower():
        raise UnsafePathError(f"The {what} '{shown}' is not allowed: it contains a path separator, '..', NUL or '.git'.")
    rule = f"a {what} may hold only ASCII lowercase letters a-z, digits 0-9 and single hyphens between them"
    odd = [f"'{legible(c)}'" for c in dict.fromkeys(name) if not (c == "-" or c.isascii() and c.isalnum() and not c.isupper())]
    listed = ", ".join(odd[:-1]) + f" and {odd[-1]}" if 1 < len(odd) <= 5 else ", ".join([*odd[:5], "…"][:len(odd)])
    if not odd:
        reason = f"{rule} (no hyphen at either end, never two in a row)"
    else:  # the characters named where some of the name is fine: all of it named would only repeat it
        reason = f"it holds {listed}; {rule}" if len(odd) < len(set(name) - {"-"}) else rule
    suggestion = suggested(name)
    hint = (f" Try '{suggestion}'." if suggestion else "" if name.isascii() else
            " Write the name in ASCII (a transliteration or a translation); the text inside may be in any language.")
    raise UnsafePathError(f"The {what} '{shown}' is not allowed: {reason}.{hint}")


def suggested(name: str) -> str:
    """The slug closest to `name`: Latin letters without their accents (NFKD), ß as ss; '' when a letter of another
    script would be left out, since a fragment of the name ('checklist' for '发布-checklist') would mislead."""
    folded = unicodedata.normalize("NFKD", name.casefold().translate(_UNACCENTED))  # casefold: ß -> ss, as upper() does
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    if any(c.isalnum() and not c.isascii() for c in folded):
        return ""
    slug = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")[:MAX_NAME].strip("-")
    return slug if SLUG.fullmatch(slug) and slug not in RESERVED else ""


def legible(text: str) -> str:
    """`text` as typed, but each character a terminal would not show as itself (a control, bidi or zero-width one) escaped."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def inside(root: Path, *parts: str) -> Path:
    """Join `parts` under `root`, refusing anything that leaves it or passes through a symbolic link."""
    if any(ch in part for part in parts for ch in "\x00\\") or any(ord(ch) < 32 for part in parts for ch in part):
        raise UnsafePathError("A path may not contain NUL, control characters or backslashes; use plain relative paths like 'scripts/tag.sh'.")
    if any(len(part.encode("utf-8", "surrogatepass")) > 255 for part in parts):
        raise UnsafePathError("A path component is over 255 bytes, longer than file systems allow; use a shorter name.")
    path = root.joinpath(*parts)
    relative = path.relative_to(root)  # joinpath with an absolute part would replace root entirely
    if any(p in ("..", "") for p in relative.parts) or ".." in Path(*parts).parts:
        raise UnsafePathError(f"'{'/'.join(parts)}' leaves the repository; use a path inside it.")
    current = root
    for part in relative.parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            break
        # A link anywhere on the path could redirect a write outside the repository, so none is followed.
        if stat.S_ISLNK(mode):
            raise UnsafePathError(f"'{current.relative_to(root)}' is a symbolic link; repo-memory follows no link, to read or to write.")
    return path


def resolves_inside(root: Path, path: Path) -> bool:
    """True when `path`, with every link resolved, is `root` or below it."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True
