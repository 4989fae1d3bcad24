"""Authorship: a secret key per clone, kept outside the repository, that marks what repo-memory itself wrote.

A record's sha256 and hash chain show that a log was not changed by accident; anyone who knows the format can
re-hash it. What the server alone may write (loop verdicts, verified outcomes, skill use, a person's acceptance of a
loop spec) must be checkable as the server's, so every record repo-memory writes carries `mac`, an HMAC of its
sha256 under this clone's key. An agent that can only edit files (Claude Code's Write/Edit, Codex's apply_patch)
cannot compute it, and the key is not where those tools work: it lives in the user's state folder
(`$REPO_MEMORY_KEY_DIR`, else `$XDG_STATE_HOME/repo-memory/keys`, else `~/.local/state/repo-memory/keys`), created
0600 on first use. docs/security.md says what this stops and what it does not (a shell can read the key).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path

log = logging.getLogger("repo_memory")
MAC_HEX = 32  # 128 bits: forging one by guessing is out of reach, and each record pays 40 bytes for it
_CLONE = re.compile(r"^[0-9a-f]{8}$")
VOUCHED = 1 << 18  # log lines a process remembers writing (16 bytes each): an import's worth
_vouched: OrderedDict[bytes, None] = OrderedDict()  # keyed digests of the log lines this process wrote, oldest first
_vouched_lock = threading.Lock()


def key_dir(env: Mapping[str, str]) -> Path:
    """Where the per-clone keys live, from the environment (see the module docstring)."""
    if env.get("REPO_MEMORY_KEY_DIR"):
        return Path(env["REPO_MEMORY_KEY_DIR"]).expanduser()
    state = env.get("XDG_STATE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local" / "state")
    return Path(state).expanduser() / "repo-memory" / "keys"


class Key:
    """One clone's key: makes and checks the marks repo-memory puts on what it writes."""

    def __init__(self, secret: bytes, clone: str, where: Path):
        self._secret, self.clone, self.where = secret, clone, where
        self._former: dict[str, bytes] = {}  # ids this clone had before, and their keys: their marks still count

    @property
    def former(self) -> frozenset[str]:
        return frozenset(self._former)

    def adopt(self, clone: str, places: Iterable[Path]) -> None:
        """Let the marks of an id this clone had before count as its own (a linked worktree, which older versions gave
        an id and key of its own), when that key is found in `places`; never made."""
        if not _CLONE.match(clone) or clone == self.clone:
            return
        for place in places:
            try:
                secret = (place / f"{clone}.key").read_bytes()
            except OSError:
                continue
            if len(secret) == 32:
                self._former[clone] = secret
                return

    @classmethod
    def of_clone(cls, clone: str, folder: Path | None, fallback: Path) -> Key:
        """The key of `clone`, made on first use in `folder` (None: the default place). When `folder` cannot be written (a read-only home) the key is kept in
        `fallback` (the clone's git dir) with a warning: records are still marked, but any tool that can read the
        repository can read the key."""
        if not _CLONE.match(clone):
            raise ValueError(f"not a clone id: {clone!r}")
        folder = folder or key_dir(os.environ)
        for place in (folder, fallback):
            try:
                return cls(_load_or_make(place / f"{clone}.key"), clone, place)
            except OSError as exc:
                if place == folder:
                    log.warning("cannot keep repo-memory's key in %s (%s); keeping it in %s, where an agent's file tools "
                                "can read it (set REPO_MEMORY_KEY_DIR to a private folder)", folder, exc.strerror, fallback)
        raise OSError(f"cannot keep repo-memory's key in {folder} or {fallback}")

    def mark(self, purpose: str, text: str) -> str:
        """The mark of `text` for `purpose` (a record's sha256, a loop acceptance): hex, MAC_HEX digits."""
        return hmac.new(self._secret, f"{purpose}\0{text}".encode(), hashlib.sha256).hexdigest()[:MAC_HEX]

    def vouch(self, lines: Iterable[bytes]) -> None:
        """Remember that this process wrote `lines` (log lines it marked) under this key, so a check before a commit
        need not parse and re-hash them (`vouched`). Only a digest keyed by the secret is kept."""
        digests = [hashlib.blake2b(line, key=self._secret, digest_size=16).digest() for line in lines]
        with _vouched_lock:
            _vouched.update(dict.fromkeys(digests))
            while len(_vouched) > VOUCHED:  # popitem, not `del d[next(iter(d))]`: that walks every slot deleted
                _vouched.popitem(last=False)  # before it, so an import of 1M records spent 100 s evicting

    def vouched(self, line: bytes) -> bool:
        """Whether this process wrote exactly `line` under this key (see `vouch`)."""
        return hashlib.blake2b(line, key=self._secret, digest_size=16).digest() in _vouched

    def marked(self, purpose: str, text: str, mark: object) -> bool:
        """Whether `mark` is this key's mark of `text` for `purpose` (compared in constant time), or a former id's."""
        if not isinstance(mark, str) or len(mark) != MAC_HEX:
            return False
        return any(hmac.compare_digest(hmac.new(secret, f"{purpose}\0{text}".encode(), hashlib.sha256).hexdigest()[:MAC_HEX], mark)
                   for secret in (self._secret, *self._former.values()))


def sign(record: dict[str, object], key: Key) -> dict[str, object]:
    """`record` (sealed: its sha256 set) with this clone's mark added."""
    return {**record, "mac": key.mark("record", str(record["sha256"]))}


def signed(record: Mapping[str, object], key: Key | None) -> bool:
    """Whether `record` carries `key`'s mark of its sha256 (its hash is checked separately, by experience.seal)."""
    return key is not None and key.marked("record", str(record.get("sha256")), record.get("mac"))


def _load_or_make(path: Path) -> bytes:
    """The 32 secret bytes in `path`, created exclusively (0600, folder 0700) when there is none yet."""
    try:
        with open(path, "rb") as handle:
            secret = handle.read()
        if len(secret) == 32:
            return secret
        raise OSError(0, f"{path} is not a repo-memory key (expected 32 bytes); move it away and run again")
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = secrets.token_bytes(32)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, fresh)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # exclusive: two processes making the key at once agree on the first one
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    with open(path, "rb") as handle:
        return handle.read()
