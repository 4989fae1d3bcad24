"""The message of a memory commit: a subject, a line per change when there are several, and trailers naming the
sessions and the harness; a session's line gives the span of records the commit adds (and how a loop run ended)."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from repo_memory.errors import UnsafePathError
from repo_memory.formats import nesting
from repo_memory.git.pending import Pending
from repo_memory.git.repo import Git
from repo_memory.guards import disk

LISTED = 20  # changes and sessions a commit message names one by one (a bulk import touches thousands)
COMMITTER = "repo-memory"  # the committer of every memory commit (its author is the person, committer.py)
NOBODY = ("repo-memory", "repo-memory@localhost")  # the author when nothing names the person (a fresh machine, a CI container)
NAME_YOURSELF = ('Set who you are: `git config --global user.name "Your Name"` and `git config --global user.email '
                 'you@example.com`, or name the author of memory commits in .agents/repo-memory.toml: '
                 '`author = {name = "...", email = "..."}`.')


def author(git: Git, name: str | None, email: str | None, fallback: bool = False) -> tuple[str, str]:
    """The author of memory commits: the `author` the person set (REPO_MEMORY_AUTHOR), else who git says the person is,
    else the `author` of the repository's config file (`fallback`: a file anyone who commits can write names no one
    git knows), else NOBODY's parts."""
    mine, files = ((None, None), (name, email)) if fallback else ((name, email), (None, None))
    return (mine[0] or os.environ.get("GIT_AUTHOR_NAME") or git.config("user.name") or files[0] or NOBODY[0],
            mine[1] or os.environ.get("GIT_AUTHOR_EMAIL") or git.config("user.email") or files[1] or NOBODY[1])


def identity(git: Git, name: str | None, email: str | None, fallback: bool = False) -> dict[str, str]:
    """A memory commit's environment: the author is the person (`author`); the committer is repo-memory."""
    name, email = author(git, name, email, fallback)
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": COMMITTER, "GIT_COMMITTER_EMAIL": email}


def nameless(git: Git, name: str | None, email: str | None, fallback: bool = False) -> str:
    """What to tell a person whose memory commits name no one (no `author`, user.name or user.email), else ''."""
    who = author(git, name, email, fallback)
    if who[0] != NOBODY[0] and who[1] != NOBODY[1]:
        return ""
    return (f"memory commits are authored as {who[0]} <{who[1]}>, no person: no git identity (user.name, user.email) "
            "is set here")


def compose(git: Git, entries: list[Pending], harness: str | None, default_harness: str,
            logs: Mapping[str, bytes | None], base: str | None) -> str:
    """The message of a commit of `entries` onto `base`, the logs in `logs` committed as those bytes (None: deleted).
    The harness named is `harness` (an import's), else the one(s) the records it adds name (none: a person's note typed
    at a terminal, whichever process commits it), else, for a commit of no records, the one its writes were noted with,
    else this process's."""
    first: dict[tuple[str, str], str] = {}
    for e in entries:
        if e.kind == "doc":
            first.setdefault((e.path, e.session), e.message)  # a skill a session added then updated, it added
    messages = _joined(first)
    sessions = list(dict.fromkeys(e.session for e in entries if e.kind == "experience" and e.session))
    wrote: set[str] = set()  # the harnesses the records this commit adds name
    spanned = False  # whether it adds records at all
    for n, session in enumerate(sessions):
        paths = sorted({e.path for e in entries if e.session == session and e.path.endswith(".jsonl")})
        spans = [span for path in paths if (span := _span(git, base, path, logs))] if n < LISTED else []
        low, high = min((s.first for s in spans), default=0), max((s.last for s in spans), default=0)
        ended = next((s.ended for s in spans if s.ended), "")  # a loop run's commit says how it ended
        wrote.update(*(s.harnesses for s in spans))
        spanned = spanned or bool(spans)
        messages.append(f"memory(experience): {session}" + (f"#{low}" if low else "") + (f"-{high}" if high > low else "")
                        + (f", run ended {ended}" if ended else ""))
    messages = list(dict.fromkeys(messages)) or ["memory: update"]
    subject = _subject(messages)
    listed = [f"- {m}" for m in messages[:LISTED]] + ([f"- … and {len(messages) - LISTED} more"] if len(messages) > LISTED else [])
    body = "" if len(messages) == 1 else "\n" + "\n".join(listed) + "\n"
    sessions = sorted({e.session for e in entries if e.session})
    trailers = "".join(f"Memory-Session: {s}\n" for s in sessions[:LISTED])
    if len(sessions) > LISTED:
        trailers += f"Memory-Sessions: {len(sessions)}\n"
    own = ", ".join(sorted({e.harness for e in entries if e.harness})) or default_harness  # a skill's writer's, if noted
    named = harness or ", ".join(sorted(wrote - {"unknown"})) or ("" if spanned else own)
    if (sessions or harness) and named not in ("", "unknown"):  # init's scaffolding, and a note typed at a terminal, name none
        trailers += f"Memory-Harness: {named}\n"
    return f"{subject}\n{body}\n{trailers}" if trailers else f"{subject}\n{body}"


def together(entries: Sequence[Pending], paths: Sequence[str], whole: Collection[Pending] = frozenset()) -> list[list[Pending]]:
    """The entries of `paths` to commit (`entries` in the order written) as parts, a commit each, earliest first, so
    that git says which session changed what: a part per session that wrote them ('': none), but sessions that wrote
    one path (B updated the skill A added) or one change are one part, as the file holds both their writes, and so are
    the `whole` entries (an import's, one act) with any session that wrote one of their paths."""
    wanted, one = set(paths), object()  # `one`: the part of the whole entries
    mine = [e for e in entries if e.path in wanted]
    joined: dict[object, object] = {}  # a part joined to another: the other

    def part(e: Pending) -> object:
        k = one if e in whole else e.session
        while joined.setdefault(k, k) != k:
            k = joined[k]
        return k

    for tag in ("path", "change"):  # each path's (and change's) entries join the part of its first
        first: dict[str, Pending] = {}
        for e in mine:
            if value := getattr(e, tag):
                joined[part(e)] = part(first.setdefault(value, e))
    parts: dict[object, list[Pending]] = {}
    for e in mine:
        parts.setdefault(part(e), []).append(e)
    return list(parts.values())


def commits(git: Git, entries: Sequence[Pending], paths: Sequence[str], named: Sequence[Pending], harness: str | None,
            default_harness: str, logs: Mapping[str, bytes | None], base: str | None,
            whole: Collection[Pending] = frozenset()) -> list[tuple[list[str], str]]:
    """The commits of `paths` as (paths, message), the `named` of `entries` named in them (`compose`): one per part
    (`together`). `harness` is named in the part that holds the `whole` entries (an import's), or in all without them."""
    parts = together(entries, paths, whole)
    if len(parts) <= 1:  # one session's (or no entry names a path: a commit the others took over, blobs alone)
        return [(list(paths), compose(git, list(named), harness, default_harness, logs, base))]
    made = []
    for part in parts:
        mine = {e.path for e in part}
        said = harness if not whole or any(e in whole for e in part) else None
        made.append(([p for p in paths if p in mine], compose(git, [e for e in named if e.path in mine], said,
                                                               default_harness, logs, base)))
    named_nowhere = [p for p in paths if not any(p in part for part, _ in made)]  # no entry of its own: the last commit
    made[-1][0].extend(named_nowhere)
    return made


def _joined(first: Mapping[tuple[str, str], str]) -> list[str]:
    """The messages of the changes (each session's first of a path), once each; those several sessions wrote of one
    path are one: `memory(skill): add deploy-steps; update deploy-steps`."""
    order = {m: n for n, m in enumerate(dict.fromkeys(first.values()))}
    group: dict[str, list[str]] = {m: [m] for m in order}
    of_path: dict[str, list[str]] = {}
    for (path, _), m in first.items():
        of_path.setdefault(path, []).append(m)
    for said in of_path.values():
        merged = sorted({g for m in said for g in group[m]}, key=order.__getitem__)
        group.update((m, merged) for m in merged)
    joined = []
    for m in order:
        head, *rest = group[m]
        prefix = head.partition("): ")[0] + "): " if head.startswith("memory(") else "memory: "
        joined.append("; ".join([head, *(r.removeprefix(prefix) for r in rest)]))
    return list(dict.fromkeys(joined))


def _subject(messages: list[str]) -> str:
    """One change's message, else each kind of change named, so that `git log --oneline` shows an agent's skill edit
    beside the session that made it: `memory(skill): deploy edited by an agent (Write); experience S#1-4`. A kind of
    several changes is counted, and a message past 60 characters cut."""
    if len(messages) == 1:
        return messages[0]
    kinds: dict[str, list[str]] = {}
    for m in messages:
        kind, _, said = m.partition("): ") if m.startswith("memory(") else ("memory(other", "", m.removeprefix("memory: "))
        kinds.setdefault(kind.removeprefix("memory("), []).append(said)
    if len(kinds) == 1:  # `memory(skill): add deploy; update lint`, or counted when that is long
        (only, each), = kinds.items()
        listed = "; ".join(each)
        return f"{'memory' if only == 'other' else f'memory({only})'}: {listed if len(listed) <= 60 else f'{len(each)} changes'}"
    named = [(said[0] if len(said[0]) <= 60 else said[0][:59] + "…") if len(said) == 1 else f"{len(said)} changes" for said in kinds.values()]
    first, *rest = zip(kinds, named)
    return "; ".join([f"memory({first[0]}): {first[1]}", *(f"{kind} {said}" for kind, said in rest)])


@dataclass(frozen=True)
class Span:
    """The records a commit adds to one log: their first and last seq, how the loop run they end ended ('' when they
    end none), and the harnesses they name."""

    first: int
    last: int
    ended: str
    harnesses: frozenset[str]


def _span(git: Git, base: str | None, path: str, logs: Mapping[str, bytes | None]) -> Span | None:
    """The records the log at `path` holds as committed (`logs`: the bytes checked under its lock, which the commit
    holds; the file itself has what came since) beyond its version in `base`."""
    try:
        data = logs[path] if path in logs else disk.read_safely(git.root / path)  # a log never checked: as it is now
    except (OSError, UnsafePathError):
        return None
    if data is None:
        return None  # deleted
    now = _last_seq(data)
    if base and git.entry(base, path):
        first = _last_seq(git.blob(base, path)) + 1
    else:
        first = _last_seq(data, first=True)  # a new file: a session's next (core/journal.py) begins past #1
    return Span(first, now, _ended(data, first), _harnesses(data, first)) if now >= first and now else None


def _last_seq(log: bytes, first: bool = False) -> int:
    """The seq of the last (`first`: the first) record of an experience log (0 when it has none)."""
    for line in (log.splitlines() if first else reversed(log.splitlines())):
        try:
            seq = nesting.loads(line).get("seq")
        except (ValueError, AttributeError):
            continue
        if isinstance(seq, int):
            return seq
    return 0


def _harnesses(log: bytes, first: int) -> frozenset[str]:
    """The harnesses the records from seq `first` on name in their `source`."""
    named: set[str] = set()
    for line in reversed(log.splitlines()):
        try:
            record = nesting.loads(line)
            seq, harness = record.get("seq"), record.get("source", {}).get("harness")
        except (ValueError, AttributeError):
            continue
        if isinstance(seq, int) and seq < first:
            break
        if isinstance(harness, str) and harness:
            named.add(harness)
    return frozenset(named)


def _ended(log: bytes, first: int) -> str:
    """How a loop run ended, when the records from seq `first` on hold its receipt (a `loop.end`); else ''."""
    for line in reversed(log.splitlines()):
        try:
            record = nesting.loads(line)
            seq, kind, state = record.get("seq"), record.get("kind"), record.get("data", {}).get("state")
        except (ValueError, AttributeError):
            continue
        if not isinstance(seq, int) or seq < first:
            return ""
        if kind == "loop.end" and isinstance(state, str):
            return state
    return ""
