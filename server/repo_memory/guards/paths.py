"""Write-path guards: names that are safe slugs, and paths that stay inside the memory root."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from repo_memory.errors import UnsafePathError
from repo_memory.guards import secretscan

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
# Windows device names: a file called `con` or `lpt1` breaks a checkout there, so no memory item may be named so.
RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))})


def check_name(name: object, what: str = "name") -> str:
    """Return `name` if it is a slug (lowercase letters, digits, single hyphens, at most 64 characters)."""
    if not isinstance(name, str) or not name:
        raise UnsafePathError(f"The {what} must be non-empty text, like 'release-checklist'.")
    secretscan.refuse((f"the {what}", name))  # a name becomes a path, an id and a commit message: never a credential
    shown = name.encode("unicode_escape").decode("ascii")[:80]
    if len(name) > MAX_NAME:
        raise UnsafePathError(f"The {what} '{shown[:40]}…' is {len(name)} characters; the limit is {MAX_NAME}.")
    if SLUG.match(name) and name not in RESERVED:
        return name
    if name in RESERVED:
        raise UnsafePathError(f"The {what} '{name}' is a reserved device name on Windows; choose another, like '{name}-notes'.")
    if any(c in name for c in ("/", "\\", "\x00")) or ".." in name or ".git" in name.lower():
        reason = "it contains a path separator, '..', NUL or '.git'"
    elif name.lower() != name:
        reason = "it has uppercase letters"
    else:
        reason = "only lowercase letters, digits and single hyphens between them are allowed"
    suggestion = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:MAX_NAME]
    hint = f" Try '{suggestion}'." if suggestion and SLUG.match(suggestion) else ""
    raise UnsafePathError(f"The {what} '{shown}' is not allowed: {reason}.{hint}")


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
