"""gitpython, with every git process it starts (its long-lived `cat-file` helpers too) in a session of its own, and
a helper that failed replaced by a new one.

A person's Ctrl-C reaches the whole foreground process group: a helper in it died mid-commit, and the commit that
records an interrupted `loop run`'s end failed with a broken pipe. Git commands of our own already run apart (Git.run).
A helper also dies when it cannot get an object (a partial clone whose remote is out of reach): gitpython kept the dead
one, and every later read of that process failed with a broken pipe until it restarted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import git

T = TypeVar("T")


class SessionGit(git.Git):
    """gitpython's git command wrapper, starting each git in a new session and a failed cat-file helper anew."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        return super().execute(*args, **{"start_new_session": True, **kwargs})

    def get_object_header(self, ref: str | bytes) -> tuple[str, str, int]:
        return self._renewed(lambda: super(SessionGit, self).get_object_header(ref))

    def stream_object_data(self, ref: str | bytes) -> tuple[str, str, int, Any]:
        return self._renewed(lambda: super(SessionGit, self).stream_object_data(ref))

    def _renewed(self, ask: Callable[[], T]) -> T:
        """`ask()` of a cat-file helper, started anew when it died since; after a failure (a dead helper, an object it
        lacks, an answer left half read) the helpers are stopped, so the next call starts fresh ones."""
        for helper in (self.cat_file_all, self.cat_file_header):
            if helper is not None and helper.proc is not None and helper.proc.poll() is not None:
                self.clear_cache()  # died between calls: killed, or out of memory
        try:
            return ask()
        except (OSError, ValueError):
            self.clear_cache()
            raise


class Repo(git.Repo):
    """A gitpython Repo whose git processes do not share our process group."""

    GitCommandWrapperType = SessionGit
