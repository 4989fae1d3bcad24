"""gitpython, with every git process it starts (its long-lived `cat-file` helpers too) in a session of its own.

A person's Ctrl-C reaches the whole foreground process group: a helper in it died mid-commit, and the commit that
records an interrupted `loop run`'s end failed with a broken pipe. Git commands of our own already run apart (Git.run).
"""

from __future__ import annotations

from typing import Any

import git


class SessionGit(git.Git):
    """gitpython's git command wrapper, starting each git in a new session."""

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        return super().execute(*args, **{"start_new_session": True, **kwargs})


class Repo(git.Repo):
    """A gitpython Repo whose git processes do not share our process group."""

    GitCommandWrapperType = SessionGit
