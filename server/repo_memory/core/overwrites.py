"""An agent's skill_write never replaces a version of a skill its session has not seen.

skill_write creates or updates: a name that exists is an update. A session that neither read nor wrote the skill
(another session's, committed or not, a person's, a teammate's pulled) is refused as taking a name in use; one
that read an earlier version is refused until it reads the one there now. That a commit holds what the write would
replace is no excuse: git keeping it in its history is no one seeing it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from repo_memory.errors import ConflictError
from repo_memory.git import history
from repo_memory.git.committed import Committed
from repo_memory.git.committer import Committer


def taken(committer: Committer, committed: Committed, name: str, rel: str, data: bytes, session: str,
          similar: Sequence[str]) -> None:
    """Refuse an agent's write of skill `name`, whose SKILL.md `rel` holds `data`, that its session neither read
    nor wrote: a create of a name in use, or an update of what it never read, would replace it unseen. `similar`
    are skills' names close to it, named so that a new name is not one taken too."""
    _created_meanwhile(committer, name, rel, data, session)
    near = [n for n in similar if n != name]
    whence = _whence(committer, committed, rel, data, session)
    raise ConflictError(f"skill:{name} exists already ({whence}) and this session has not read it, so this write "
                        "would replace it unseen. If it is the procedure you meant, read it "
                        f"(read(ref='skill:{name}')) and write an update of it; if not, choose another name for "
                        "yours" + (f" (names in use near it: {', '.join(near)})." if near else "."))


def overtaken(committer: Committer, committed: Committed, name: str, rel: str, data: bytes, seen: str | None,
              session: str) -> None:
    """Refuse an agent's update of skill `name` over a version (`data`) other than the one its session last read
    or wrote (`seen`, a sha256): another session's write, a person's edit or commit, a pull, committed or not. An
    invalid version (a person's edit half typed) is no exception: `read` answering that it is invalid counts."""
    if seen is None or seen == hashlib.sha256(data).hexdigest():
        return
    _created_meanwhile(committer, name, rel, data, session)
    whence = _whence(committer, committed, rel, data, session)
    raise ConflictError(f"skill:{name} changed since this session last read or wrote it through repo-memory "
                        f"({whence}): read it (read(ref='skill:{name}')), then write again.")


def _created_meanwhile(committer: Committer, name: str, rel: str, data: bytes, session: str) -> None:
    """Refuse, naming it, when another session's write that created skill `name` left `data` and waits for its
    commit (two servers creating one skill at once); the session is named with its harness when noted."""
    by = committer.writer(rel, data)
    if by is not None and by.session and by.session != session and by.message.startswith("memory(skill): add "):
        who = ", ".join(filter(None, (by.session, by.harness)))
        raise ConflictError(f"another session ({who}) created skill:{name} meanwhile, and no commit holds it yet, "
                            f"so this write would replace it unseen: read it (read(ref='skill:{name}')) and write "
                            "an update of it, or choose another name for yours.")


def _whence(committer: Committer, committed: Committed, rel: str, data: bytes, session: str) -> str:
    """Where the version `data` of `rel` came from, as far as git tells: the commit holding it, or no commit."""
    if committed.file(rel, data) and (last := history.last_change(committer.git, [rel])) is not None:
        return f"as commit {last.sha[:7]} '{last.subject[:80]}' left it"
    if (by := committer.writer(rel, data)) is not None and by.session and by.session != session:
        return f"written by another session ({by.session}), not committed yet"
    return "in no commit yet: your own file tools' edit, another session's write or a person's"
