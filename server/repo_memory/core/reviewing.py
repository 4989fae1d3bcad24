"""A person's review of a skill or a loop spec counts for the content they read: named by its sha."""

from __future__ import annotations

import re

from repo_memory.errors import ConflictError, InvalidArgumentError


def reviewed(what: str, sha: str, current: str, show: str, other: str = "") -> None:
    """Raise unless `sha` (7+ hex digits) is a prefix of `current`: the content a person reviewed is the content now.
    `other`, a skill file's own sha256 (which `read` and `skill_write` give), is named as such, not as a change."""
    if not re.fullmatch(r"[0-9a-f]{7,64}", sha.lower()):
        raise InvalidArgumentError(f"--sha takes the hash `{show}` printed (7 to 64 hex digits), not {sha[:70]!r}.")
    if other and other.startswith(sha.lower()) and not current.startswith(sha.lower()):
        raise InvalidArgumentError(f"{sha[:12]} is the sha256 of {what}'s SKILL.md file; --sha takes the sha of the whole reviewed "
                                   f"folder, which `{show}` prints (now {current[:12]}). Nothing was accepted.")
    if not current.startswith(sha.lower()):
        raise ConflictError(f"{what} changed since the version you reviewed (sha {sha[:12]}; now {current[:12]}). "
                            f"Nothing was accepted. Review it again: `{show}` (or `git diff`), then accept with its new sha.")
