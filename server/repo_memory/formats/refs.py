"""References to memory: the one grammar every tool, command and record uses.

    skill:NAME              a skill; skill:NAME/scripts/tag.sh is a file beside its SKILL.md
    loop:NAME               a loop spec
    SESSION#SEQ             an experience record; SESSION#FIRST-LAST a range of one session; SESSION#SEQ~HASH8 one
                            of two records with the same seq in a log two clones continued and git union-merged
    session:SESSION         a whole session log (a loop run's id is its session)
    path/to/file.py::Name   code a memory cites (an anchor)
    NAME                    a bare name: a skill, else a loop, else a session, whichever exists

A skill's or a loop's path (.agents/skills/NAME/SKILL.md, as recall's hits give it; .agents/loops/NAME.md) and the
resource URI skill://NAME are read as skill:NAME and loop:NAME.

Names are slugs (ASCII lowercase letters, digits, single hyphens, at most 64 characters); session ids are letters,
digits, '.', '_' and '-' (at most 128, starting with a letter or digit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from repo_memory.errors import InvalidArgumentError
from repo_memory.guards import paths, secretscan

SESSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
RECORD = re.compile(r"^(?P<session>[A-Za-z0-9][A-Za-z0-9._-]{0,127})#(?P<start>[0-9]{1,12})"
                    r"(?:~(?P<fork>[0-9a-f]{8})|-(?P<end>[0-9]{1,12}))?$")
KINDS = ("skill", "loop", "record", "session", "code", "name")
_SKILL_PATH = re.compile(r"^(?:\./)?\.(?:agents|claude|codex)/skills/(?P<name>[^/]+)(?:/(?P<inner>.+))?$")
_LOOP_PATH = re.compile(r"^(?:\./)?\.agents/loops/(?P<name>[^/]+)\.md$")


@dataclass(frozen=True)
class Ref:
    """A parsed reference. `kind` is one of KINDS; `name` is the skill, loop or session; `inner` a file in a skill's folder."""

    kind: str
    name: str
    inner: str = ""
    start: int = 0
    end: int = 0
    fork: str = ""  # the first 8 hex digits of the record's sha256, naming one of two records with the same seq

    @property
    def session(self) -> str:
        return self.name

    def __str__(self) -> str:
        if self.kind == "record":
            return f"{self.name}#{self.start}" + (f"~{self.fork}" if self.fork else f"-{self.end}" if self.end != self.start else "")
        if self.kind in ("skill", "loop", "session"):
            return f"{self.kind}:{self.name}" + (f"/{self.inner}" if self.inner else "")
        return self.name + (f"/{self.inner}" if self.inner else "")


def check_session(session: object) -> str:
    """Return `session` if it is usable as a file name and an id prefix (and holds no credential: it becomes a file
    name, every record's id and a commit trailer)."""
    if isinstance(session, str):
        secretscan.refuse(("the session id", session))
    if (not isinstance(session, str) or not SESSION.match(session) or ".." in session
            or session.lower().split(".")[0] in paths.RESERVED):
        # as typed where it prints as itself (`café-notes`); a control character or the like escaped
        shown = str(session) if str(session).isprintable() else str(session).encode("unicode_escape").decode("ascii")
        if isinstance(session, str) and SESSION.match(session) and ".." not in session:
            raise InvalidArgumentError(f"Session id '{shown[:60]}' is not allowed: '{session.split('.')[0]}' is a name "
                                       "Windows reserves for a device (it would be no file there); choose another.")
        raise InvalidArgumentError(
            f"Session id '{shown[:60]}' is not allowed: use only ASCII letters (a-z, A-Z), digits, '.', '_' and '-' (no '..'), "
            "at most 128, starting with a letter or digit."
        )
    return session


def record(text: str) -> Ref:
    """Parse `SESSION#SEQ` or `SESSION#FIRST-LAST`."""
    match = RECORD.match(text.strip())
    if not match:
        shown = text.strip()[:80]
        raise InvalidArgumentError(f"'{shown}' is not an experience id: write it as SESSION#SEQ (e.g. 2026-12-02-a1b2c3#17) or "
                                   "SESSION#FIRST-LAST.")
    start = int(match["start"])
    end = int(match["end"] or start)
    if start < 1 or end < start:
        raise InvalidArgumentError(f"'{text.strip()}' is not a valid range: the first number must be at least 1 and not above the last.")
    return Ref("record", check_session(match["session"]), start=start, end=end, fork=match["fork"] or "")


def parse(text: str) -> Ref:
    """Parse any reference (see the module docstring); InvalidArgumentError says which forms exist."""
    text = text.strip() if isinstance(text, str) else ""
    if not text:
        raise InvalidArgumentError("Give a reference: skill:NAME, loop:NAME, SESSION#SEQ, session:SESSION, or a bare name.")
    prefix, colon, rest = text.partition(":")
    if "::" in text:
        return Ref("code", text)
    if found := _SKILL_PATH.match(text):  # a skill's path, as recall's hits give it (provenance.path)
        inner = found["inner"] or ""
        return Ref("skill", paths.check_name(found["name"], "skill name"), "" if inner == "SKILL.md" else inner)
    if found := _LOOP_PATH.match(text):
        return Ref("loop", paths.check_name(found["name"], "loop name"))
    if colon and prefix in ("skill", "loop") and rest.startswith("//"):  # the resource's URI (skill://NAME/FILE)
        rest = rest[2:].removesuffix("/SKILL.md").rstrip("/")
    if colon and prefix in ("skill", "loop"):
        name, _, inner = rest.partition("/")
        if prefix == "loop" and inner:
            raise InvalidArgumentError(f"'{text[:80]}': a loop is one file; write loop:NAME.")
        return Ref(prefix, paths.check_name(name, f"{prefix} name"), inner)
    if colon and prefix == "session":
        return Ref("session", check_session(rest))
    if "#" in text:
        return record(text)
    name, _, inner = text.partition("/")
    if paths.SLUG.match(name) and len(name) <= paths.MAX_NAME:
        return Ref("name", name, inner)
    if not inner and SESSION.match(name):
        return Ref("session", check_session(name))
    if inner or "." in name:  # a path or a file name: say which forms a reference takes, not how to fix a name
        raise InvalidArgumentError(f"'{text[:80]}' is not a reference to memory: read a skill as skill:NAME (or its path "
                                   ".agents/skills/NAME/SKILL.md), a loop as loop:NAME, records as SESSION#SEQ or "
                                   "SESSION#FIRST-LAST, a session as session:SESSION. Code is read from the repository.")
    paths.check_name(name, "name")  # raises, saying what is wrong with it
    raise InvalidArgumentError(f"'{text[:80]}' is not a reference.")  # pragma: no cover - check_name raised
