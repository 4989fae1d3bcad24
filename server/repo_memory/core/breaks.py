"""A break in an experience log, told once: what verify says of it, and the fix doctor gives for it.

Whether git holds a line is judged by the line's place among the lines HEAD holds of its log, never by byte offsets:
a hand edit moves the bytes of every line after it, so an edited committed line can end past HEAD's size.
"""

from __future__ import annotations

from collections.abc import Sequence

from repo_memory.core.dropped import SAID as DROPPED
from repo_memory.core.dropped import UNMERGED
from repo_memory.core.redacting import EMPTIED, SAID
from repo_memory.core.versions import SAID as VERSIONS
from repo_memory.formats import experience
from repo_memory.git.committed import CRLF
from repo_memory.guards import torn
from repo_memory.guards.shellwords import quoted

HELD_NOT = ", which git does not hold yet"  # a line only the working tree has
COMMITTED = ", as a commit holds it"  # the break itself is committed: an earlier commit may hold the line as written
NEVER_HELD = "; the record before it was removed or changed before any commit held it, so git has no copy of it"
MISSING = ", which HEAD holds, is missing from the working tree"  # the file before a session's `+n` file
DELETED = "the session's earlier records are gone from this branch: "  # a commit deleted the file before: a note, no break
SET_ASIDE = f".git/repo-memory/{torn.FOLDER}/"  # where torn lines go (the clone's state folder)
MORE = "more lines from here on hold no record either"  # a log's lines past the first few verify names (core/audit.py)


def account(problem: str, rel: str, number: int, raw: bytes, hash_ok: bool, held: bytes | None, changed: Sequence[str]) -> str:
    """What verify says of the record on line `number` of `rel` that fails its hash or its chain (`hash_ok`): `held` is
    the line HEAD holds at that place (None past HEAD's lines), `changed` the logs of its session so far whose committed
    bytes differ (a checkout restores those)."""
    where = f"line {number} of {rel}"
    if hash_ok and changed:  # the record before it may be one of the committed ones changed
        return (f"{problem}: {where}, after committed records were changed; restore them with "
                f"`git checkout HEAD -- {quoted(*changed)}`")
    if held is not None and held != raw:
        return f"{problem}: {where}, which differs from the line git holds there; restore it with `git checkout HEAD -- {quoted(rel)}`"
    if held is not None:
        return f"{problem}: {where}{COMMITTED} (`git log -p -- {quoted(rel)}` shows which)"
    return f"{problem}: {where}{HELD_NOT}" if not hash_ok else f"{problem}: {where}{NEVER_HELD}"


def missing(before: str) -> str:
    """What verify says of the first record of a session's `+n` file when the file before it, `before`, is gone from
    the working tree but not from HEAD: a deletion not committed, undone by a checkout, not a break a commit keeps."""
    return (f"its prev hash does not match the record before it, the last of the session's file before this one: "
            f"{before}{MISSING} (deleted, or `git rm` not committed): restore it with `git checkout HEAD -- {quoted(before)}`; "
            "or, to end the session, delete its other files too and commit the deletion")


def deleted(before: str, commit: str) -> str:
    """The note verify gives a session's `+n` file whose file before it, `before`, a commit of HEAD's history deleted."""
    return (f"{DELETED}{before} was deleted by commit {commit} (`git show --stat {commit}`), and this file's first record "
            f"links to its last; `git checkout {commit}^ -- {quoted(before)}` brings it back")


def note(what: str) -> bool:
    """Whether verify's finding `what` is worth knowing but no break: a torn last line, a committed deletion, a redaction,
    records on a branch deleted before it was merged."""
    return what == experience.TORN or what.startswith((DELETED, SAID, UNMERGED))


def advice(where: str, what: str, unmoved: dict[str, str]) -> tuple[str, str]:
    """(level, fix) of a break verify found at `where`: the fix that holds for it, as git can restore only what it holds.
    `unmoved`: why `doctor --fix` left the torn tail of a log."""
    if what == experience.TORN:  # no break: bytes no append acknowledged (guards/torn.py)
        rel = where.partition(" at byte ")[0]
        if rel in unmoved:
            return "warning", f"`repo-memory doctor --fix` left it: {unmoved[rel]}."
        return "warning", (f"Run `repo-memory doctor --fix`: it moves the line to {SET_ASIDE} (never committed); do not commit "
                           "the log by hand meanwhile.")
    if what.startswith(SAID):  # a person's attested redaction (core/redacting.py): no break
        return "info", "A person redacted it (`repo-memory log redact`); older commits hold what it said until history is rewritten."
    if what.startswith(VERSIONS):
        rid = where
        return "error", (f"Run `repo-memory log redact {quoted(rid)}` in a terminal: it folds the lines into one redacting what each "
                         "redacts and commits it. If it refuses, the lines differ by more than redactions: never keep one "
                         f"as it stands (it may hold what the other took out); `repo-memory log redact {quoted(rid)} --all-text` "
                         "folds them into one line whose text and data are [REDACTED].")
    if what.startswith(DELETED):
        return "warning", ("Nothing is broken: a commit deleted the session's first records. If that was a mistake, run the "
                           "`git checkout` the line gives and commit the file; if the session is to go, delete its other files "
                           "too and commit that.")
    if what.startswith(UNMERGED):
        return "warning", ("Nothing is broken if the branch was meant to go: `repo-memory log accept-loss` says so once. To "
                           "keep its records, run the `git branch` the line gives and merge that branch.")
    if what.startswith(DROPPED):
        return "error", ("Run the `git checkout` and `git commit` the line gives (the session's next records then link to "
                         "them again); if the records were meant to go, `repo-memory log accept-loss` says so once.")
    if MISSING in what:
        return "error", ("Run that `git checkout` to keep the session (`repo-memory verify` passes then); to end it, delete "
                         "all its files and commit the deletion.")
    if "written outside" in what:
        return "error", "As the line says: commit it if it is yours, or remove it."
    if what.startswith(CRLF):
        return "error", ("Do as the line says (`repo-memory init`, where it names it), then run the git commands it gives (a "
                         "`git checkout HEAD` alone writes the CRLF again).")
    if "git checkout HEAD" in what:
        return "error", "Run that `git checkout`; `repo-memory verify` lists every break."
    if EMPTIED in what:  # on purpose: it held a secret, and no checkout brings it back
        return "error", (f"Run `repo-memory log redact {quoted(where)} --all-text` in a terminal: the record stops citing the "
                         "blob, and its own text (a preview of the blob's) is redacted too, as it may hold the secret.")
    if "blob" in what.lower():
        return "error", (f"Bring it back with `git checkout HEAD -- {experience.BLOB_DIR}/` or a pull; a blob git never held "
                         "cannot be restored. `repo-memory verify` lists every break.")
    if " at byte " in where:  # a line that is no record (readers skip it)
        rel = where.partition(" at byte ")[0]
        this, it, stays = (("these lines are", "them", "they stay") if MORE in what else
                           ("this line is", "it", "it stays"))
        return "error", (f"repo-memory does not commit {rel} while {this} there: a hand edit, or a record an older "
                         f"repo-memory cut short and then ended with its next append. If git holds {it} (`git log -p "
                         f"-- {quoted(rel)}`) {stays}; if not (`git status -uall -- {quoted(rel)}`), delete {it}. `repo-memory verify` "
                         "lists every break.")
    session = where.rpartition("#")[0]
    if what.endswith(HELD_NOT):  # an edit of a line no commit holds: no `git diff` or `git checkout` reaches it
        rel = what.rpartition(" of ")[2].removesuffix(HELD_NOT)
        return "error", (f"Nothing of {rel} is committed (nor later records of its session) while this line differs from "
                         "what repo-memory wrote; git has no copy of it. Put it back as it was (`repo-memory verify` passes "
                         f"then) and log the correction: `repo-memory log add TEXT -s {quoted(session)} -r {quoted(where)}`. Or keep the "
                         f"edit: `git add {quoted(rel)} && git commit` (verify keeps naming it; the session goes on).")
    if COMMITTED in what:
        rel = what.partition(COMMITTED)[0].rpartition(" of ")[2]
        return "error", (f"A commit holds this break. If an earlier one held the line as written (`git log -p -- {quoted(rel)}` "
                         "shows the commit that changed it), put that line back and commit it — `git revert COMMIT` when that "
                         "commit changed nothing else — and `repo-memory verify` passes (a pull gives every clone the line "
                         "back). Otherwise logs are append-only: it stays, and verify keeps naming it; say what it should read "
                         f"as a record of your own: `repo-memory log add TEXT -s {quoted(session)} -r {quoted(where)}`.")
    if what.endswith(NEVER_HELD):
        return "error", ("Put it back if you kept a copy of it (`repo-memory verify` passes then). Otherwise the gap stays: "
                         "the log is committed as it is and verify keeps naming this break; say what the lost record held "
                         f"as a record of your own: `repo-memory log add TEXT -s {quoted(session)}`.")
    return "error", ("Logs are append-only: something other than repo-memory changed this record. `git log -p` of its log "
                     "shows whether a commit did; a change git does not hold yet can only be taken out by hand (`git diff`). "
                     "`repo-memory verify` lists every break.")
