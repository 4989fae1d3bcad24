"""When memory is committed, and as what: the commit policy over the durable pending list.

- Skills and loops (`doc` paths) are committed as they change, a burst coalesced into one commit per window.
- A session's experience is committed at its checkpoints and when it ends (the session-end hook, the server's exit),
  so a session's history is a commit or a few, not one per tool call.
- Anything a dead process left pending is committed by whichever repo-memory process comes next.

Modes (`commit` in the config): `auto` commits on the checked-out branch beside the user's work; `private` commits to
`refs/memory/<branch>` and never touches the branch or the index; `stage` only stages; `off` writes files only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import threading
import uuid
from functools import partial
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from repo_memory.errors import GitError, UnsafePathError
from repo_memory.git.commit import clean_temp_indexes, commit_lock, commit_paths, put_back, refresh_index, repair, signing_stalled, write_blob
from repo_memory.git.pending import Journal, Pending, alive, start_time
from repo_memory.git import deferral, foreign, message, status, written
from repo_memory.git.underway import Ending, held_by_git
from repo_memory.git.repo import CommitResult, Git
from repo_memory.git.status import Health
from repo_memory.guards import authorship, disk, secretscan

log = logging.getLogger("repo_memory")
MODES = ("auto", "private", "stage", "off")


@dataclass(frozen=True)
class Policy:
    """How memory is committed here: the `commit` mode, the coalescing window, signing, the author, the harness."""

    mode: str = "auto"
    window: float = 2.0
    sign: str = "auto"
    author_name: str | None = None
    author_email: str | None = None
    harness: str = "unknown"
    author_fallback: bool = False  # the author is the config file's: only where git knows no one (git/message.author)


def _holds_secret(path: Path) -> bool:
    """Whether a memory file a person or an agent's own tools may have edited (a skill, a script beside it, a loop spec)
    holds a secret: the last gate before a git object. Logs and their blobs are scanned as they are written."""
    if "/experience/" in path.as_posix():
        return False
    try:
        text = disk.read_safely(path).decode("utf-8", errors="replace")
    except (OSError, UnsafePathError):
        return False  # deleted, unreadable or not a plain file: nothing of it reaches git
    return bool(secretscan.scan(text))


class Committer:
    """Records memory writes durably and commits them per the policy; `owner` is the process that answers for them."""

    def __init__(self, git: Git, state_dir: Path, policy: Policy, session: str | None = None, owner: int | None = None,
                 key: authorship.Key | None = None, clone_dir: Path | None = None):
        self.git, self.state_dir, self.policy, self.session = git, state_dir, policy, session
        self.clone_dir = clone_dir or state_dir  # the clone's state folder (one for its worktrees): torn tails go there
        self.key = key  # with a key, a log is committed only when every record it gained carries this clone's mark
        self.root, self.window, self.mode = git.root, policy.window, policy.mode  # the mode never changes (the harness may)
        self.journal = Journal(state_dir)
        self.owner = owner or os.getpid()
        self._started = start_time(self.owner)
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.last: CommitResult | None = None
        self._retries: set[tuple[str, str | None]] = set()  # (scope, session) of flushes deferred, for the timer to retry
        self._ending = Ending(git, lambda: self._schedule(0, sooner=True))  # hears what deferred them end (underway.py)
        self._pending_seen: tuple[object, bool] = (None, False)  # (the kind asked and the list's stamp, the answer)
        # What this process recorded and has not committed: the pending list is in the state folder, which a person may
        # delete or a sandbox may make read-only, and this process commits its own writes all the same.
        self._own: list[Pending] = []
        self._unnoted: list[Pending] = []  # of those, what the pending list could not take (noted again with the next)
        self.unnoted = ""  # why, when the last write could not be noted ('' when it was)
        self.held: list[str] = []  # pending paths kept out of commits because they hold a secret
        self.foreign: dict[str, str] = {}  # pending logs kept out because they gained records repo-memory did not write
        self.displaced: dict[str, str] = {}  # pending paths of a change not whole on disk, kept out (git/written.py)
        self._stashed = False  # of those, a skill change a stash holds: looked for again until it is popped
        self._closed = False
        self.repaired: list[str] = []

    def commit(self, paths: list[str], message: str) -> CommitResult | None:
        """Note `paths` as changed documents of no session (init's scaffolding, an accepted loop) and commit them now."""
        self.record(paths, message, session=None)
        return self.flush()

    def record(self, paths: Iterable[str], message: str, kind: str = "doc", session: str | None = "", first: int = 0,
               last: int = 0, whole: bool = False, tip: str = "") -> None:
        """Note changed memory paths, durably; documents are committed within the window, experience at its session's end.
        `session`: the one whose write this is ('': this process's; None: none, a person's command). `whole`: the files
        as they are now are one change, committed only as they are now (git/written.py); the caller holds them still.
        `tip`: the sha256 of the last record written to the log among `paths`, checked before it is committed (written.taken)."""
        if self.mode == "off":
            return deferral.leave(self.state_dir, paths)  # the person's to commit: doctor says so (git/deferral.py)
        session = "" if session is None else session or self.session or ""
        shas = written.noted(self.root, dict.fromkeys(paths)) if whole else {}
        change = uuid.uuid4().hex[:16] if whole else ""
        harness = self.policy.harness if session and self.policy.harness != "unknown" else ""  # a change of none names none
        entries = [Pending(path, message, kind, session, self.owner, self._started, first, last, change,
                           shas.get(path, tip if path.endswith(".jsonl") else ""), harness)
                   for path in dict.fromkeys(paths)]
        with self._lock:  # the list gone with its folder: what this process still owes goes back in it
            again = self._unnoted or ([] if self.journal.path.exists() else list(self._own))
            self._own += entries
        try:
            self.journal.add([*again, *entries])
        except OSError as exc:  # the write itself is done and must not be made again: it waits in this process instead
            log.warning("could not note %s for commit (%s); this process commits it", ", ".join(e.path for e in entries), exc)
            with self._lock:
                self._unnoted = [*self._unnoted, *entries]
            self.unnoted = f"the file system refused {exc.filename or 'the pending list'} ({exc.strerror or exc})"
        else:
            with self._lock:
                self._unnoted = [e for e in self._unnoted if e not in again]
            self.unnoted = ""
        if (stamp := self.journal.stamp()) is not None:  # this process's own write of `kind` now waits: its answer
            self._pending_seen = ((kind if kind == "doc" else "experience", *stamp), True)  # needs no read (_pending_of)
        if kind == "doc":
            self._schedule(self.window)

    def _schedule(self, delay: float, sooner: bool = False) -> None:
        with self._lock:
            if self._closed:
                return
            if self._timer is not None and sooner:  # the timer waits longer than it now needs to
                self._timer.cancel()
                self._timer = None
            if self._timer is None:
                self._timer = threading.Timer(delay, self._flush_from_timer)
                self._timer.daemon = True
                self._timer.start()

    def _flush_from_timer(self) -> None:
        with self._lock:
            self._timer = None
            retries, self._retries = self._retries or {("docs", None)}, set()
        for scope, session in sorted(retries, key=str):  # a deferred checkpoint retries as the checkpoint, not as documents
            try:
                self.flush(scope, session)
            except (GitError, OSError) as exc:
                log.warning("memory commit failed: %s", exc)
        self._ending.stop(idle=True)  # unless a flush waits for an operation to end (one the retries just began)

    def _wanted(self, entry: Pending, scope: str, session: str | None) -> bool:
        if entry.kind == "doc" or scope == "all" or not alive(entry.owner, entry.started):
            return True  # documents commit as they change; a dead owner's work is taken over
        if session and entry.session == session:
            return True  # a checkpoint or the session's end
        return scope == "final" and entry.owner == self.owner

    def flush(self, scope: str = "docs", session: str | None = None, harness: str | None = None) -> CommitResult | None:
        """Commit (or stage) what is pending: documents always; experience of `session`, of this owner (`final`), of
        everyone (`all`), and whatever a dead process left; a commit per session that wrote it, sessions that wrote one
        path together (message.together); `import`: all this one wrote, as one commit. A deferral keeps all pending.
        `harness` names the harness(es) in the commit when this process's own is not the one that wrote it (an import).

        The pending list is read under the commit lock, so processes that end together make one commit: the first
        commits everything due and the others find nothing left."""
        if self.mode == "off":
            return None
        try:
            with commit_lock(self.state_dir):
                result = self._commit_due(scope, session, harness)
        except OSError as exc:  # a state folder or .git that cannot be written: nothing is lost, all stays pending
            log.warning("memory commit failed: %s", exc)
            result = CommitResult(deferred=f"the file system refused {exc.filename or 'a write'} ({exc.strerror or exc}); memory "
                                           "stays pending and is committed once it can be written")
        self.last = result
        if result is not None and result.deferred and not result.sha and not result.refused:
            with self._lock:
                self._retries.add((scope, session))
            self._schedule(self.window * 5)  # try again later, or once the operation in the way is heard ending
            if self.mode != "private" and held_by_git(result.deferred):  # a private ref waits on the timer
                self._ending.wait()
        elif self._stashed:  # looked for again until its files are back; a log waits for its session's checkpoint or end
            self._schedule(self.window * 5)
        return result

    def _listed(self) -> list[Pending]:
        """The pending list, and what this process wrote that it lacks (the list was deleted, or could not be written)."""
        listed = self.journal.read()
        known = set(listed)
        with self._lock:
            return listed + [e for e in self._own if e not in known]

    def _commit_due(self, scope: str, session: str | None, harness: str | None) -> CommitResult | None:
        """flush's work, under the commit lock; None when nothing is due."""
        with self._lock:  # an import's commit is what this process wrote, not what other sessions have due
            whole = set(self._own) if scope == "import" else set()
        listed = self._listed()
        entries = written.with_blobs([e for e in listed if e in whole or self._wanted(e, scope, session)], listed)
        paths = sorted({e.path for e in entries})
        self.held = [p for p in paths if _holds_secret(self.root / p)]
        if self.held:  # a person's edit put a secret in a file we were about to commit: it stays pending, uncommitted
            log.warning("not committing %s: it contains what looks like a secret (see `repo-memory doctor`)", ", ".join(self.held))
        paths = [p for p in paths if p not in self.held]
        checked: dict[str, tuple[bytes, int] | None] = {}  # each log's bytes and mode as checked under its lock (None: gone)
        checked_on = self.git.memory_head()  # the tip the logs are checked against, and the one their blobs go on
        self.foreign = {p: why for p in paths if (why := self._foreign(p, checked, checked_on))}
        for path, why in self.foreign.items():  # said where it matters: tool answers, `log add`, doctor; here for the log
            log.info("not committing %s: %s (see `repo-memory doctor`)", path, why)
        self.held += self.foreign
        kept = [e for e in entries if e.path not in self.held]  # a log a stash took stays pending, not committed as deleted
        got = {p: None if c is None else c[0] for p, c in checked.items()}  # the bytes checked under each log's lock
        off = written.displaced(self.git, kept)
        if off.settled:  # its files are what git holds: the person committed their own version, or threw the change away
            log.info("dropping the change of %s: its files are as committed", ", ".join(sorted({e.path for e in off.settled})))
            self._done(off.settled)
            entries = [e for e in entries if e not in set(off.settled)]
        self.displaced, self._stashed = {**off.why, **written.taken(self.git, kept, got.get)}, off.stashed
        for path, why in self.displaced.items():
            log.info("not committing %s yet: %s", path, why)
        self.held += self.displaced
        paths = [p for p in paths if p not in self.held]
        if not paths:
            return None  # nothing left to commit: whatever deferred the last flush no longer stands
        try:
            blobs = {p: None if got is None else write_blob(self.git, p, *got) for p, got in checked.items() if p in paths}
            if self.mode == "stage":
                staged = refresh_index(self.git, paths, blobs)
                result = CommitResult(unchanged=True) if staged else CommitResult(deferred="another git process holds .git/index.lock; staging will be retried")
            else:
                logs = {p: None if got is None else got[0] for p, got in checked.items()}  # the bytes committed
                overtaken = written.overtaken(self.root, entries)  # committed, but not named as theirs
                named = [e for e in entries if e.path in paths and e not in overtaken]  # not what is held back
                parts = message.commits(self.git, entries, paths, named, harness, self.policy.harness, logs, checked_on,
                                        whole=whole)
                identity = message.identity(self.git, self.policy.author_name, self.policy.author_email, self.policy.author_fallback)
                result = commit_paths(self.git, self.state_dir, paths, parts[0][1], identity, self.policy.sign,
                                      private=self.mode == "private", blobs=blobs, checked_on=checked_on, parts=parts)
        except GitError as exc:  # the files are written and stay pending: a failed commit never fails the write
            log.warning("memory commit failed: %s", exc)
            result = CommitResult(deferred=f"the commit failed ({exc}); memory stays pending and is committed on a later flush")
        if not result.deferred or result.sha:
            self._done([e for e in entries if e.path not in self.held])
        return result

    def _done(self, done: list[Pending]) -> None:
        self.journal.remove(done)  # committed, or nothing is left of them to commit
        with self._lock:
            self._own, self._unnoted = [e for e in self._own if e not in done], [e for e in self._unnoted if e not in done]

    def let_go(self) -> dict[str, str]:
        """`doctor --fix`: drop agents' changes not as written that no stash holds (the files stay); each path, and why."""
        with commit_lock(self.state_dir):
            off = written.displaced(self.git, self._listed())
            self._done(off.loose)
        return {p: why for p, why in off.why.items() if p in {e.path for e in off.loose}}

    def _foreign(self, path: str, checked: dict[str, tuple[bytes, int] | None], base: str | None) -> str:
        """Why the log at `path` must not be committed by us, or '' (git/foreign.py); its bytes checked go into `checked`."""
        return foreign.why(self.git, self.clone_dir, self.key, path, checked, base)
    def recover(self) -> CommitResult | None:
        """What a killed or terminated process left: its temporary index files, an interrupted index refresh, its
        pending writes. Cheap when there is nothing (a stat of two files)."""
        clean_temp_indexes(self.state_dir)
        self.journal.adopt_old()
        self.repaired = repair(self.git, self.state_dir)
        if self.repaired:
            log.warning("restored the index entries of %s (a memory commit was interrupted)", ", ".join(self.repaired))
        if self.mode != "off":  # commits resumed: what the person has committed since is no longer theirs from then
            deferral.prune(self.git, self.state_dir)
        if self.mode == "off" or self.journal.stamp() is None:
            return None
        if any(not alive(e.owner, e.started) for e in self.journal.read()):
            return self.flush()
        return None

    def writer(self, path: str, data: bytes) -> Pending | None:
        """The pending write that left `path` (repository-relative) holding `data`, when it noted what it left."""
        sha = hashlib.sha256(data).hexdigest()
        return next((e for e in reversed(self._listed()) if e.path == path and e.sha256 == sha), None)

    def waiting(self, path: str) -> bool:
        """Whether repo-memory wrote `path` (repository-relative) and its commit is still to come."""
        return self.mode != "off" and any(e.path == path for e in self._listed())

    def _pending_of(self, kind: str) -> bool:
        """Whether this process's writes of `kind` (not another window's) wait for a commit; the list is read again only
        when its file changed (each tool answer asks, and the list grows by a line a write until the checkpoint)."""
        with self._lock:
            if any((e.kind == "doc") == (kind == "doc") for e in self._own):
                return True  # kept by this process (the list may lack it)
        if (files := self.journal.stamp()) is None:
            return False
        if self._pending_seen[0] != (stamp := (kind, *files)):
            found = any((e.kind == "doc") == (kind == "doc") and (kind == "doc" or e.owner == self.owner or e.session == self.session)
                        for e in self.journal.read())
            self._pending_seen = (stamp, found)
        return self._pending_seen[1]

    def describe(self, kind: str = "doc", session: str | None = None) -> str:
        """One line for tool results: where the latest writes (of `kind`) stand with git; of `session`: why its log is held."""
        if session is not None:
            paths = sorted({e.path for e in self._listed() if e.session == session}) if self.mode != "off" else []
            return next((f"{p}: {why}" for p in paths if (why := self._foreign(p, {}, self.git.memory_head()))), "")
        if self.mode == "off":
            return "not committed (commit = off): commit .agents/ with your code"
        last = self.last
        pending = self._pending_of(kind)
        busy = self.git.operation_in_progress(quick=True) if pending and self.mode != "private" else ""
        if busy:  # what defers the next commit, also before one was tried; a session's records wait for its checkpoint anyway
            then = "when it is finished" if kind == "doc" or self._retries else "at the next checkpoint or session end after it"
            return deferral.lands(busy, then)
        if self.unnoted and pending:
            return (f"not committed yet: it could not be noted for commit ({self.unnoted}); this process keeps it and "
                    "commits it once that can be written (at the latest when it ends)")
        if last is not None and last.deferred and pending and "in progress" not in last.deferred and "detached" not in last.deferred:
            return f"deferred: {last.deferred}"
        if self.displaced:
            return f"not committed yet: {'; '.join(f'{p}: {why}' for p, why in list(self.displaced.items())[:1])}"
        if self.foreign:
            return f"not committed: {'; '.join(f'{p}: {why}' for p, why in list(self.foreign.items())[:2])} (see `repo-memory verify`)"
        if self.held:
            return f"not committed: {', '.join(self.held)} contains what looks like a secret; remove it (see `repo-memory doctor`)"
        if pending:
            verb = "staged" if self.mode == "stage" else "committed" + (" to refs/memory/<branch>" if self.mode == "private" else "")
            when = (f"within {self.window:g} s" if kind == "doc" else f"within {5 * self.window:g} s (a deferred commit is retried)"
                    if self._retries else "at the next checkpoint or when the session ends")
            return f"pending: {verb} {when} (kept durably until then)"
        return "up to date"

    def health(self, folders: tuple[str, ...]) -> Health:
        """Pending writes, repairs, files at risk of deletion and uncommitted memory files under `folders`."""
        listed = self._listed()
        pending = {e.path for e in listed}
        staged: set[str] = set()
        at_risk: list[str] = []
        uncommitted: list[str] = []
        deleted: list[str] = []
        conflicted: list[tuple[str, str]] = []
        if self.mode in ("auto", "stage", "off") and self.git.head() is not None:
            out = self.git.run("diff", "--cached", "--name-only", "-z", "--diff-filter=D", "HEAD", "--", *folders, check=False).stdout
            at_risk = [p for p in out.split("\0") if p and (self.root / p).is_file()]
            changed, deleted, conflicted = status.worktree(self.git, folders)
            staged = status.staged(self.git, folders) if self.mode == "stage" else set()  # there for the person's commit
            uncommitted = sorted(set(changed) - pending - set(at_risk) - {path for path, _ in conflicted} - staged)
        deferred = (self.last.deferred if self.last else "") or (signing_stalled(self.state_dir) if pending else "")
        why = {p: f"{p}: {self.foreign[p]} (see `repo-memory verify`)" if p in self.foreign else f"{p} holds what looks like a "
               "secret: take it out" for p in pending.intersection(self.held) if p not in self.displaced}  # as the last flush found
        why |= {**written.displaced(self.git, listed).why, **written.taken(self.git, listed, partial(written.read, self.root))}
        return Health(len(pending), deferred, list(self.repaired), at_risk, uncommitted, deleted, conflicted,
                      self.git.operation_in_progress(quick=True) if conflicted or uncommitted or pending else "",
                      sorted(why), sorted(staged - pending),
                      message.nameless(self.git, self.policy.author_name, self.policy.author_email, self.policy.author_fallback), why)

    def heal(self, paths: list[str]) -> dict[str, str]:
        """`doctor --fix`: put back index entries of memory files staged for deletion although they are in HEAD and on
        disk, and let go agents' changes not as written that no stash holds (`let_go`)."""
        if paths:
            with commit_lock(self.state_dir):
                put_back(self.git, paths)
        return self.let_go() if self.mode != "off" else {}

    def hand_over(self) -> int:
        """Give this process's pending experience of a session to the live process whose hooks write that session too
        (the harness): its session-end hook then commits the whole session as one commit, where this process ending
        first would have made one commit and the hook another. Returns how many entries changed hands."""
        entries = self.journal.read()
        harness = {e.session: e for e in entries if e.kind == "experience" and e.session and e.owner != self.owner
                   and alive(e.owner, e.started)}
        changes = [(e, dataclasses.replace(e, owner=harness[e.session].owner, started=harness[e.session].started)) for e in entries
                   if e.owner == self.owner and e.kind == "experience" and e.session in harness]
        self.journal.reown(changes)
        with self._lock:  # the harness commits them now, not this process
            handed = {old for old, _ in changes}
            self._own = [e for e in self._own if e not in handed]
        return len(changes)

    def close(self, commit: bool = True) -> None:
        """Cancel the timer and commit what this process owns — or, with `commit=False`, leave it pending (durably).
        A session whose harness still writes it through hooks is handed to the harness, to end as one commit."""
        with self._lock:
            self._closed = True  # no retry is scheduled after this: the process is ending
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if commit:
            try:
                self.hand_over()
                self.flush("final")
            except (GitError, OSError) as exc:
                log.warning("memory commit at close failed: %s", exc)
        self._ending.stop()  # after the last flush, which may have started it: this process hears no more

    def waits(self) -> str:
        """Why what this process wrote still waits for a commit after its last flush ('' when none of it does)."""
        last = self.last
        return last.deferred if self._own and last is not None and last.deferred and not last.sha else ""
