"""The sha a person reviews a skill folder by (`skill show` prints it, `accept --sha` checks it): of what git would
store of each file and link the folder holds (core/skill_files.py), so one commit's skill has one sha in every clone of
it, whatever the checkout wrote: a file by its blob id (`git hash-object`, end-of-line conversion and clean filters
applied), a link by its target, also where core.symlinks=false checked it out as a file holding the target.

An executable file (git's mode 100755) counts as `exec` where any other file counts as `blob`, so a `chmod +x` is a
change to review, and a folder holding no executable file keeps the sha the release before gave it. That release
counted no mode, and the one before it hashed the bytes of this checkout: a sha either printed still names the folder
as it is (`by_previous_release`), so an accept of it goes ahead for that very content (its modes as they are now).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from repo_memory.core import skill_files
from repo_memory.formats import skills
from repo_memory.git import as_stored
from repo_memory.guards import disk


def of(folder: Path, links_kept: bool = True, skill_md: bytes | None = None, modes: bool = True) -> str:
    """The review sha of skill `folder` (its SKILL.md as `skill_md` when given), where a checkout writes committed
    links as links (`links_kept`) or as files (core.symlinks=false: git's index says which files are links); without
    `modes`, as the release before this one gave it (an executable file counted as any other)."""
    entries = skill_files.walk(folder)
    held_links = set() if links_kept else as_stored.index_links(folder)
    links = {e.rel: e.data() if e.link else disk.read_safely(e.path) for e in entries if e.link or e.rel in held_links}
    files = [e for e in entries if e.rel not in links and not (skill_md is not None and e.rel == skills.SKILL_FILE)]
    for entry in files:
        os.close(disk.open_safely(entry.path))  # a hard-linked file is refused, as a read of it is
    ids = dict(zip((e.rel for e in files), as_stored.blob_ids(folder, [e.rel for e in files]) or _own_ids(files)))
    if skill_md is not None and any(e.rel == skills.SKILL_FILE for e in entries):
        ids[skills.SKILL_FILE] = as_stored.blob_id_of(folder, skills.SKILL_FILE, skill_md) or _blob_id(len(skill_md), [skill_md])
    digest = hashlib.sha256()
    for entry in entries:
        kind, named = (b"link", links[entry.rel]) if entry.rel in links else (
            b"exec" if modes and entry.executable else b"blob", ids[entry.rel].encode("ascii"))
        digest.update(kind + b"\0" + os.fsencode(entry.rel) + b"\0%d\0" % len(named) + named)
    return digest.hexdigest()


def by_previous_release(folder: Path, sha: str, current: str, links_kept: bool = True,
                        skill_md: bytes | None = None) -> bool:
    """Whether `sha` (7+ hex digits), which names no version `current` does, is the sha an earlier release printed for
    skill `folder` as it is now (its SKILL.md as `skill_md` when given): the same content, named by the formula of then."""
    sha = sha.lower()
    if not re.fullmatch(r"[0-9a-f]{7,64}", sha) or current.startswith(sha):
        return False
    return of(folder, links_kept, skill_md, modes=False).startswith(sha) or previous(folder, skill_md).startswith(sha)


def previous(folder: Path, skill_md: bytes | None = None) -> str:
    """The review sha as the release before this one computed it: every path, length and bytes of this checkout."""
    digest = hashlib.sha256()
    for entry in skill_files.walk(folder, unfiltered=True):
        if entry.link:
            data = b"link:" + entry.data()
        else:
            data = skill_md if skill_md is not None and entry.rel == skills.SKILL_FILE else entry.data()
        digest.update(os.fsencode(entry.rel) + f"\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def _own_ids(files: list[skill_files.Entry]) -> list[str]:
    """Blob ids (sha1, as `git hash-object` outside a repository gives them) where no git answers."""
    return [_blob_id(os.path.getsize(entry.path), entry.chunks()) for entry in files]


def _blob_id(size: int, chunks: Iterable[bytes]) -> str:
    digest = hashlib.sha1(b"blob %d\0" % size)  # noqa: S324 - git's object id, not a secret
    for chunk in chunks:
        digest.update(chunk)
    return digest.hexdigest()
