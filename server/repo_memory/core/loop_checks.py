"""What doctor says of the loop specs: acceptances this clone cannot trust, and checks that can outlast the Stop hook."""

from __future__ import annotations

import contextlib

from repo_memory.core.acceptances import Acceptances
from repo_memory.core.native_checks import Notice
from repo_memory.core.store import Store
from repo_memory.errors import RepoMemoryError
from repo_memory.formats import loops
from repo_memory.guards.shellwords import quoted


def notices(store: Store) -> list[Notice]:
    return _unmarked_acceptances(store) + _long_ladders(store)


def _unmarked_acceptances(store: Store) -> list[Notice]:
    """Loop specs whose acceptance has no mark of this clone: after an upgrade from a version before acceptances were
    marked they read "not accepted" with no word why. Never trusted again here: the file is one an agent can write."""
    names = set(store.loop_names())
    acceptances = Acceptances(store.config.clone_dir, store.config.state_dir, store.key)
    return [Notice("warning", f"{loops.LOOPS_DIR}/{name}.md", "the loop is not accepted on this clone: its acceptance carries "
                   "no mark of this clone (made by a version before acceptances were marked, or by another clone), so its "
                   "runs are refused", f"Read it (`repo-memory loop show {quoted(name)}`); if its commands are what you want run here, "
                   f"accept it again: `repo-memory loop accept {quoted(name)} --sha SHA`.")
            for name in acceptances.unmarked() if name in names]


def _long_ladders(store: Store) -> list[Notice]:
    """Loop specs whose checks may take longer than the Stop hook has for them."""
    out = []
    for name in store.loop_names():
        with contextlib.suppress(RepoMemoryError):  # an invalid spec is reported as such
            if why := loops.outlasts_stop(store.loop_spec(name)):
                out.append(Notice("warning", f"{loops.LOOPS_DIR}/{name}.md", why, f"Drive it with `repo-memory loop run {quoted(name)}`, "
                                  "or lower its steps' timeouts."))
    return out
