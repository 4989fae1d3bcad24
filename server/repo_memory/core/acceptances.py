"""Which loop spec contents a person accepted on this clone: `accepted-loops.json` in the git dir, each entry marked.

The file sits where an agent's file tools can write, so an entry counts only with this clone's mark (guards/authorship.py).
An entry without a valid mark (written before acceptances were marked, copied from another clone, or forged) accepts
nothing; it is kept, so `doctor` can name its spec for a person to review and accept again.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from repo_memory.errors import InvalidArgumentError, NotFoundError
from repo_memory.formats.loops import LOOPS_DIR
from repo_memory.git.repo import Git
from repo_memory.guards import authorship, disk

ACCEPTED_FILE = "accepted-loops.json"
PURPOSE = "loop-accept"


class Acceptances:
    """The loop acceptances of one clone, kept in `clone_dir`; `state_dir` is a linked worktree's own folder."""

    def __init__(self, clone_dir: Path, state_dir: Path, key: authorship.Key | None):
        self.clone_dir, self.state_dir, self.key = clone_dir, state_dir, key

    def accepted(self) -> dict[str, str]:
        """Spec name -> the sha256 a person accepted on this clone (entries with a valid mark only)."""
        return {name: entry["sha256"] for name, entry in self._stored().items() if self._marked(name, entry)}

    def unmarked(self) -> list[str]:
        """Spec names whose stored acceptance carries no valid mark of this clone, and so accepts nothing."""
        return sorted(name for name, entry in self._stored().items() if not self._marked(name, entry))

    def accepted_at(self, name: str) -> float | None:
        """When a person accepted the content of spec `name` they accepted last (seconds since 1970); None when no marked
        acceptance of it says (none, or one made before acceptances kept their time). The time is outside the mark: it
        only tells a change loop where to start looking (runner/triggers.py), never whether a spec may run."""
        entry = self._stored().get(name)
        at = entry.get("at") if isinstance(entry, dict) and self._marked(name, entry) else None
        return float(at) if isinstance(at, (int, float)) else None

    def add(self, name: str, sha256: str) -> None:
        """Record, marked, that a person accepted content `sha256` of spec `name` now."""
        stored = self._stored()
        kept = {n: entry for n, entry in stored.items() if n != name and not self._marked(n, entry)}
        marked = {n: {"sha256": sha, "mac": self.key.mark(PURPOSE, f"{n}\0{sha}") if self.key else ""}
                  | ({"at": time.time()} if n == name else {"at": stored[n]["at"]} if "at" in stored[n] else {})
                  for n, sha in (self.accepted() | {name: sha256}).items()}
        text = json.dumps(kept | marked, indent=2, sort_keys=True) + "\n"
        disk.write_atomic(self.clone_dir / ACCEPTED_FILE, text.encode())

    def _stored(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        # A linked worktree's own folder first: versions before 2026-12-05 kept its acceptances there; the clone's win.
        for folder in dict.fromkeys((self.state_dir, self.clone_dir)):
            path = folder / ACCEPTED_FILE
            try:
                more = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
            except (OSError, ValueError):
                continue
            found |= more if isinstance(more, dict) else {}
        return found

    def _marked(self, name: str, entry: object) -> bool:
        return (isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and self.key is not None
                and self.key.marked(PURPOSE, f"{name}\0{entry['sha256']}", entry.get("mac")))


def trusted_at(git: Git, rev: str, names: list[str]) -> tuple[str, dict[str, str]]:
    """For a CI checkout, where no person accepts: the commit `rev` names, and spec name -> the sha256 of that spec as
    the commit holds it. A person names `rev` in the CI job (`loop due --trust-specs-at`), never an agent's command."""
    if rev.startswith("-"):  # never let a value become an option of git's
        raise InvalidArgumentError(f"--trust-specs-at takes a commit (a sha, or a ref such as HEAD), not {rev[:40]!r}.")
    found = git.run("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False).stdout.strip()
    if not found:
        raise NotFoundError(f"--trust-specs-at {rev[:40]}: no such commit in this clone (a shallow CI checkout lacks older "
                            "commits: fetch it, e.g. `git fetch --depth=1 origin SHA`, or name the commit checked out).")
    specs = {}
    for name in names:
        try:
            specs[name] = hashlib.sha256(git.blob(found, f"{LOOPS_DIR}/{name}.md")).hexdigest()
        except NotFoundError:
            continue  # not in that commit: nothing of it is trusted
    return found, specs
