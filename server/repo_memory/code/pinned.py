"""The code a memory's pin was written over, as git holds it.

A pin in an older release's hash form (code/fingerprint.py) is translated into this release's form from the code it
was taken of. The code on disk serves while it is unchanged (code/staleness.py), but only in a clone that looked before
the code moved on: a teammate cloning after a re-wrap has only the re-wrapped code. The commit that first holds the pin
in a memory file holds the code it was pinned over too (a memory is committed after the code it cites, or with it), so
every clone of that history translates the pin alike.
"""

from __future__ import annotations

import os
import re

from repo_memory.code.anchors import MAX_FILE_BYTES, supported
from repo_memory.code.lineage import forms_in
from repo_memory.errors import GitError, NotFoundError
from repo_memory.git.repo import Git

PIN = re.compile(r"[0-9a-f]{16}")  # a hash as body_hash gives it


class Pinned:
    """Looks a pin up in the history of the memory folders `folders` of one repository."""

    def __init__(self, git: Git, folders: tuple[str, ...]):
        self._git, self._folders = git, folders
        self._asked: dict[tuple[str, str], str | None] = {}  # every memory citing one code shares its pin: asked once

    def over(self, anchor: str, pin: str) -> str | None:
        """This release's hash of the code `anchor` cites at the first commit holding `pin` in a memory file, when
        `pin` is a hash an older release gave that code; `pin` itself when it is not (nothing to translate); None when
        no commit holds it (a memory not committed yet, a history cut short): the code on disk is all there is."""
        if (anchor, pin) not in self._asked:
            self._asked[(anchor, pin)] = self._look_up(anchor, pin)
        return self._asked[(anchor, pin)]

    def _look_up(self, anchor: str, pin: str) -> str | None:
        path, _, symbol = anchor.partition("::")
        if not PIN.fullmatch(pin) or not supported(path):
            return pin
        log: list[str] = []
        try:  # -S: the commits that changed how often the pin occurs, the oldest wrote it; in the bytes git holds (a log's
            # textconv driver would start a process per version of every log)
            log = self._git.run("--literal-pathspecs", "log", "--no-textconv", "--reverse", "--format=%H", f"-S{pin}",
                                self._git.memory_rev(), "--", *self._folders, check=False).stdout.split()
            data = self._git.blob(log[0], path) if log else None
        except (GitError, NotFoundError):
            return pin if log else None  # the code was not committed when the pin was
        if data is None:
            return None
        forms = forms_in(data, os.path.splitext(path)[1], [symbol])[symbol] if len(data) <= MAX_FILE_BYTES else ("",)
        return forms[0] if pin in forms[1:] else pin
