"""What git makes of files in a work tree, each question asked of one `git` process for a whole folder: which files
it ignores, and the blob id each file is stored as (its end-of-line conversion and clean filters applied, as `git add`
applies them), and which it keeps executable where it ignores the bit on disk, so that what a person reviews is named
the same in every clone of a commit."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from repo_memory.git import repo

TIMEOUT = 30.0


def ignored(folder: Path, rels: Sequence[str]) -> set[str]:
    """Those of `rels` (paths inside `folder`) that git ignores: untracked ones its ignore rules match (a tracked file
    is never ignored). None are outside a git repository, or when git cannot say."""
    if not rels:
        return set()
    out = _git(folder, ["check-ignore", "--stdin", "-z"], b"".join(os.fsencode(rel) + b"\0" for rel in rels), ok=(0, 1))
    return {os.fsdecode(path) for path in (out or b"").split(b"\0") if path}


def blob_ids(folder: Path, rels: Sequence[str]) -> list[str] | None:
    """The blob id git would store each of `rels` (files inside `folder`) as, in their order (outside a repository:
    of their bytes as they are); None when git cannot say."""
    if not rels:
        return []
    # git reads --stdin-paths from the top of the work tree, whichever folder it runs in (git 2.39): each path gets
    # the folder's place in the repository in front ('' outside one, where paths are the process's own).
    prefix = (_git(folder, ["rev-parse", "--show-prefix"]) or b"").rstrip(b"\n")
    out = _git(folder, ["hash-object", "--stdin-paths"], b"".join(_quoted(prefix + os.fsencode(rel)) + b"\n" for rel in rels))
    ids = (out or b"").decode("ascii", "replace").split()
    return ids if len(ids) == len(rels) else None


def blob_id_of(folder: Path, rel: str, data: bytes) -> str | None:
    """The blob id git would store `data` as, were it file `rel` inside `folder`; None when git cannot say."""
    out = _git(folder, ["hash-object", "--stdin", f"--path={rel}"], data)
    return out.decode("ascii", "replace").strip() or None if out is not None else None


def index_links(folder: Path) -> set[str]:
    """The paths inside `folder` that git's index holds as links (mode 120000), whatever the checkout wrote there."""
    out = _git(folder, ["ls-files", "-s", "-z", "--", "."]) or b""
    return {os.fsdecode(path) for entry in out.split(b"\0") if entry.startswith(b"120000 ")
            for path in [entry.partition(b"\t")[2]]}


def held_executables(folder: Path) -> set[str] | None:
    """Where core.fileMode is false (a FAT or NTFS mount: git ignores the execute bit on disk and keeps each entry's
    mode), the paths inside `folder` git's index holds as executable; None where the bit on disk is what git takes."""
    told = _git(folder, ["config", "--type=bool", "core.fileMode"], ok=(0, 1))
    if told is None or told.strip() != b"false":
        return None
    out = _git(folder, ["ls-files", "-s", "-z", "--", "."]) or b""
    return {os.fsdecode(entry.partition(b"\t")[2]) for entry in out.split(b"\0") if entry.startswith(b"100755 ")}


def _git(cwd: Path, args: list[str], stdin: bytes = b"", ok: tuple[int, ...] = (0,)) -> bytes | None:
    try:
        return repo.run_at(cwd, *args, stdin=stdin, ok=ok, timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None  # no git, or one that hangs: git's answer is not had


def _quoted(path: bytes) -> bytes:
    """`path` as `--stdin-paths` reads a line starting with a quote (C style): any name, a newline in it too."""
    out = bytearray(b'"')
    for byte in path:
        if byte in b'"\\':
            out += b"\\" + bytes([byte])
        elif 0x20 <= byte < 0x7F:
            out.append(byte)
        else:
            out += b"\\%03o" % byte
    return bytes(out + b'"')
