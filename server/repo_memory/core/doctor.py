"""Health checks of a repository's memory: index against files, invalid files, shadowed skills, set-up."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from repo_memory import layout
from repo_memory.core import (breaks, indexing, loop_checks, mirror, mirror_checks, native_checks, offering, rewrites,
                              secret_checks, stale_checks)
from repo_memory.core.breaks import SET_ASIDE
from repo_memory.core.catalog import Catalog
from repo_memory.core.driver_checks import foreign
from repo_memory.core.native_memory import Homes
from repo_memory.core.store import Store
from repo_memory.errors import UnsafePathError
from repo_memory.formats import experience, loops, skills, when
from repo_memory.git import sparse, status, textconv_cache
from repo_memory.git.deferral import FINISH, held_up, left, next_step, why
from repo_memory.git.message import NAME_YOURSELF
from repo_memory.git.repo import Git
from repo_memory.guards import authorship, disk, torn
from repo_memory.guards.shellwords import quoted


@dataclass(frozen=True)
class Finding:
    """One thing doctor found, with the fix."""

    level: str  # "error" | "warning" | "info" (done, nothing to fix)
    path: str
    message: str
    fix: str


EMBED_RATE = 29  # short texts a second on two cores (docs/benchmarks.md): how long the rest takes, roughly
MANY_UNEMBEDDED = 20  # texts without a vector (and a tenth of all) that no running process embeds: worth a warning
GONE = "the index lists a file that no longer exists"


def _index_damage(store: Store) -> list[Finding]:
    """A full check of the index file (a damaged one, a cache, is rebuilt now), and how many texts have no vector yet."""
    problem, rebuilt, embedded = store.index_health()
    if problem:
        store.repair_index(problem)
    where = store.config.index_path.relative_to(store.root).as_posix() if store.config.index_path.is_relative_to(store.root) else str(store.config.index_path)
    found = [Finding("warning", where, f"the index was damaged ({why}) and has been rebuilt from the memory files",
                     "Nothing to fix: the index is a cache of .agents/ and nothing there was lost. If it happens again, check "
                     "the disk (`dmesg`, free space).") for why in [*rebuilt, *([problem] if problem else [])]]
    if embedded and embedded[0] < embedded[1]:  # a fresh clone's, or a week of short sessions': recall ranks them by words
        done, total = embedded
        one, missing = total - done == 1, total - done
        with disk.try_lock(store.config.state_dir, "embed.lock") as idle:  # held: a server or an embedder is at it now
            pass
        by = "a running server embeds" if idle else "the process embedding now reaches"
        rest = (f"the one without is ranked by its words alone until {by} it" if one else
                f"the {missing:,} without are ranked by their words alone until {by} them")
        took = f"{when.length(missing / EMBED_RATE)} of its time"
        if idle and missing >= MANY_UNEMBEDDED and missing * 10 >= total:  # questions in other words miss them meanwhile
            found.append(Finding("warning", where, f"semantic recall: only {done:,} of {total:,} texts have a vector and no "
                                 f"process is embedding them; {rest} in the background ({took}): a question in other words "
                                 "misses them meanwhile", f"Embed them now: `repo-memory reindex` (a progress bar; {took})."))
        else:
            found.append(Finding("info", where, f"semantic recall: {done:,} of {total:,} {'text has' if total == 1 else 'texts have'}"
                                 f" a vector; {rest} in the background ({took})",
                                 f"Nothing to fix; `repo-memory reindex` embeds {'it' if one else 'them all'} now, with a progress bar."))
    return found


def examine(store: Store, homes: Homes | None = None, progress: Callable[[int, int], None] | None = None,
            unmoved: dict[str, str] | None = None) -> list[Finding]:
    """Everything wrong or worth knowing about the memory of `store`'s repository; given `homes` (where the harnesses
    keep their state on this machine), also about their own memories of it (core/native_checks.py). `progress` hears
    how many bytes of the logs are checked, the long part; `unmoved`, why `doctor --fix` left a log's torn line."""
    drift = _index_drift(store)
    store.refresh()  # judge the files as they are, not as last indexed: a pull brings log records no index row holds yet
    caught = [f for f in drift if f.fix.startswith("Run `repo-memory reindex`")]  # the refresh did it: one line for them all
    drift = [f for f in drift if f not in caught] + [  # (an upgrade: many) and a file gone from disk is never "indexed"
        Finding("info", ".agents", f"{len(done)} file(s) {what}: {_listed(done, 3)}", "Nothing to do.") for what, done in (
            ("the index had not seen yet, indexed now", [f.path for f in caught if f.message != GONE]),
            ("gone from disk, dropped from the index now", [f.path for f in caught if f.message == GONE])) if done]
    findings = _index_damage(store) + _setup(store) + drift
    for row in store.documents():
        if not row["valid"] and row["kind"] == "loop":
            findings.append(Finding("error", row["path"], "the loop spec is invalid", f"Run `repo-memory loop lint {quoted(row['name'])}` "
                                    "to see every problem with its line."))
            continue
        if row["kind"] != "skill":
            continue
        fix = f"Edit {row['path']} as it says (repo-memory's fields go under `metadata:`: valid Agent Skills)."
        findings += [Finding("warning", row["path"], note, fix) for note in json.loads(row["notes"] or "[]")]
        if not row["valid"]:
            for problem in json.loads(row["problems"] or "[]"):
                findings.append(Finding("error", row["path"], _located(problem), _fix_for(problem["message"], row["path"])))
        elif row["flags"]:
            flags = json.loads(row["flags"])
            secrets = [f.removeprefix("secret: ") for f in flags if f.startswith("secret: ")]
            others = [f for f in flags if not f.startswith("secret: ")]
            if secrets:  # whether a commit holds it decides what comes first
                said, fix = secret_checks.said(store.root, store.config.git_dir, row["path"])
                findings.append(Finding("error", row["path"], f"holds what looks like a secret ({'; '.join(secrets)}); {said}", fix))
            if others:
                findings.append(Finding("error", row["path"], f"quarantined: injection markers ({', '.join(others)})",
                                        "Read it in an editor that shows invisible characters; remove them, or delete the skill. "
                                        "It stays out of recall and briefings until then."))
        elif not row["winner"]:
            findings.append(Finding(
                "warning", row["path"], f"skill '{row['name']}' is shadowed by a skill of the same name in a higher-priority folder",
                "Rename one of them, or delete the copy you no longer want.",
            ))
    for path, reason in Catalog(store.root, store.skills, store.similar_names).withheld().items():
        findings.append(Finding("warning", path, f"the MCP skills extension does not serve it: {reason}", "Fix what it names; "
                                "until then clients that load skills over `skills/list` lack it (recall still serves it)."))
    drafts = sorted(r["name"] for r in store.documents() if r["kind"] == "skill" and r["valid"] and r["status"] == "draft")
    if drafts:
        findings.append(Finding("warning", ".agents/skills/", f"{len(drafts)} draft skill(s) await a person's review (recall "
                                f"marks them draft; briefings and loops use only accepted skills): {_listed(drafts)}", "Read each with `repo-memory skill show "
                                "NAME`, then `repo-memory accept NAME --sha SHA` or `repo-memory reject NAME`."))
    findings += [Finding(n.level, n.path, n.message, n.fix) for n in loop_checks.notices(store)]
    findings += [Finding(n.level, n.path, n.message, n.fix) for n in stale_checks.notices(store)]  # summed up by cause
    for item in store.stale(checkable=False):
        findings.append(Finding("warning", item.memory, item.reason, "Nothing checks this anchor: cite a definition in a file "
                                "that can be checked, or take the anchor out of the memory."))
    for evidence in store.evidence().values():
        if evidence.deprecate:
            findings.append(Finding("warning", f"skill:{evidence.name}", f"misled {evidence.misled}, failed {evidence.failures}, "
                                    f"outdated {evidence.outdated} time(s) against {evidence.successes + evidence.helped} good outcome(s)",
                                    "Read the feedback (`repo-memory stats`, recall the skill's name) and fix the skill, or set "
                                    "`status: deprecated` under metadata so it leaves default recall."))
    for name, count in rewrites.churning(store.config.state_dir):
        findings.append(Finding("warning", f"skill:{name}", f"an agent rewrote it {count} times within 10 minutes (churning, not "
                                "converging)", f"Read `git log -p {quoted(f'.agents/skills/{name}')}` and settle the procedure by hand; "
                                "a skill that keeps changing is not yet a procedure."))
    for record_id, flags in store.flagged():
        findings.append(Finding("warning", record_id, f"quarantined record: {'; '.join(json.loads(flags))}",
                                f"Out of recall and briefings; `repo-memory log show {record_id.partition('#')[0]}` "
                                "shows it. Logs are append-only: if meant without those characters, add it again."))
    broken = store.verify(progress)
    in_git = _git(store, {where.partition(" at byte ")[0] for where, _ in broken})  # a torn line's log too: not to commit by hand
    unmerged = {f.path for f in in_git if f.message.startswith("unresolved merge conflict (")}  # one finding, one advice: the conflict's
    findings = [f for f in findings if not (f.path in unmerged and "merge conflict" in f.message)] + in_git
    for session, ids, citing in store.forked():
        cited = f"; cited by {', '.join(citing[:5])}" + (" …" if len(citing) > 5 else "") if citing else ""
        findings.append(Finding("warning", session, f"the log holds two chains: two clones wrote it under one name and git "
                                f"union-merged them, so {len(ids)} id(s) name two records each ({', '.join(ids[:8])}"
                                f"{' …' if len(ids) > 8 else ''}): the id reads back one, its twin is ID~HASH{cited}",
                                f"Logs are append-only, so these ids stay ambiguous: read both records of each (`repo-memory log show "
                                f"{session}`) and, where a record cites one, remember a note naming the record it meant by its ID~HASH. "
                                "A session this version begins under a chosen name is kept per clone (NAME.<clone>) and cannot fork so."))
    for where, what in broken:
        level, fix = breaks.advice(where, what, unmoved or {})
        findings.append(Finding(level, where, f"experience log: {what}", fix))
    findings += _set_aside(store)
    if homes is not None:
        notices = native_checks.notices(store, store.root, store.config.git_dir, homes)
        findings += [Finding(n.level, n.path, n.message, n.fix) for n in notices]
    return findings


def set_aside_torn(store: Store) -> dict[str, str]:
    """`doctor --fix`: move every log's torn tail aside (guards/torn.py) under the lock every append holds; nothing else
    of ours touches a log HEAD holds. Bytes git holds are never cut. Returns, per log whose tail stayed, why."""
    unmoved: dict[str, str] = {}
    base = store.root / experience.EXPERIENCE_DIR
    logs = sorted(p for p in base.glob("*/*.jsonl") if p.parent.name != "blobs" and not p.is_symlink()) if base.is_dir() else []
    git: Git | None = None
    try:
        for path in logs:
            rel = path.relative_to(store.root).as_posix()
            try:
                fd = disk.open_safely(path, os.O_RDWR)
            except (OSError, UnsafePathError):
                continue  # read-only, a link, gone: verify says what it is
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                size = os.fstat(fd).st_size
                if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
                    continue
                git = git or Git(store.root, store.config.git_dir, private=store.config.commit == "private")
                held = [git.entry(commit, rel) for commit in {git.head(), git.memory_head()} if commit]
                keep = max((entry[1] for entry in held if entry), default=0)
                if size < keep:  # no append made it shorter than git holds it: it was cut short by hand (verify says so)
                    unmoved[rel] = f"git holds more of it than the working tree (a commit holds the whole line): `git checkout HEAD -- {quoted(rel)}`"
                    continue
                try:
                    if torn.set_aside(fd, path, store.config.clone_dir, keep=keep) is None:
                        unmoved[rel] = "git holds the start of the line (a commit took it torn), so it stays; readers skip it"
                except (OSError, UnsafePathError) as exc:
                    unmoved[rel] = f"it could not be moved to {SET_ASIDE} ({exc})"
            finally:
                os.close(fd)  # closing releases the lock
    finally:
        if git is not None:
            git.close()
    return unmoved


def own_logs(store: Store, paths: list[str]) -> tuple[list[str], list[str]]:
    """Which logs at `paths` hold only records this clone wrote (its mark on each, each line whole), and which are the
    blobs they cite (hashing to their names): its own memory whose note of a commit due was lost, to commit together."""
    own: list[str] = []
    blobs: list[str] = []
    waiting = set(paths)
    for rel in paths:
        if not rel.endswith(".jsonl") or not rel.startswith(f"{experience.EXPERIENCE_DIR}/"):
            continue
        try:
            lines = experience.parse_lines(disk.read_safely(store.root / rel))
        except (OSError, UnsafePathError):
            continue
        if any(line.record for line in lines) and all(line.record and authorship.signed(line.record, store.key)
                                                      and experience.seal(line.record)["sha256"] == line.record["sha256"]
                                                      for line in lines):
            own.append(rel)
            cited = {f"{experience.BLOB_DIR}/{line.record['blob']['sha256']}" for line in lines
                     if line.record and isinstance(line.record.get("blob"), dict)}
            blobs += sorted(blob for blob in cited - set(blobs) if blob in waiting and _intact(store.root / blob))
    return own, blobs


def _intact(path: Path) -> bool:
    try:
        return hashlib.sha256(disk.read_safely(path)).hexdigest() == path.name
    except (OSError, UnsafePathError):
        return False


def _set_aside(store: Store) -> list[Finding]:
    """The torn lines appends and commits moved out of logs (guards/torn.py): said once, as information."""
    moved = torn.found(store.config.clone_dir)
    if not moved:
        return []
    shown = [p.relative_to(store.root).as_posix() if p.is_relative_to(store.root) else str(p) for p in moved]
    return [Finding("info", SET_ASIDE, f"{len(moved)} torn last line(s) were moved out of experience logs (bytes no append "
                    f"acknowledged: a process killed mid-append, or a line written without its newline): {_listed(shown)}",
                    "Nothing to fix: they were never committed or served. Look at them if you wish, then delete them.")]


def _git(store: Store, broken: Collection[str] = ()) -> list[Finding]:
    """Memory that is not (yet) in git, and what a killed commit left behind. A `broken` log (its own error says to
    restore it) is not also proposed for commit: one finding, one advice."""
    swept = indexing.sweep(store.root)  # before git is asked: what is swept is not "changed but not committed"
    health, out = store.git_health(), []
    if swept:
        out.append(Finding("info", ".agents/", f"removed {len(swept)} temporary file(s) interrupted writes had left: {', '.join(swept[:3])}",
                           "Nothing to do."))
    if raw := textconv_cache.drop_raw_in(store.root, store.config.git_dir, store.config.state_dir):  # rendered anew
        out.append(Finding("info", textconv_cache.REF, f"dropped {raw} raw JSON log version(s) git cached", "Nothing to do."))
    for path in health.repaired:
        out.append(Finding("warning", path, "an interrupted memory commit had left this file staged for deletion; repaired",
                           "Nothing to do: the index entry was put back when repo-memory started. `git status` is clean for it."))
    for path in health.at_risk:
        out.append(Finding("error", path, "staged for deletion although it is in HEAD and on disk: your next `git commit` would "
                           "delete this memory", f"Run `repo-memory doctor --fix` (or `git reset -q HEAD -- {quoted(path)}`)."))
    if health.held:
        out.append(Finding("warning", _folders(health.held), f"{len(health.held)} memory path(s) written are held back from "
                           f"commits: {_listed(health.held)}", "; ".join(dict.fromkeys(health.why.values())) + "."))
    if health.pending > len(health.held):  # what holds them up, and its step; `doctor --fix` is named only where it commits
        waits = health.deferred or held_up(health.underway, store.config.commit == "private")
        said = f" ({why(waits)})" if waits else ""
        out.append(Finding("warning", ".agents/", f"{health.pending - len(health.held)} memory path(s) written but not committed "
                           f"yet{said}", f"They are kept durably. {next_step(waits)}".strip() if waits else
                           "They are kept durably and committed at the next checkpoint, session end or server exit; "
                           "`repo-memory doctor --fix` commits them now."))
    if health.nameless and store.config.commit in ("auto", "private"):  # a fresh machine or CI: memory commits go on
        out.append(Finding("warning", ".git/config", health.nameless, NAME_YOURSELF))
    if health.staged:  # commit = "stage": where repo-memory leaves memory, for the person's own commit
        out.append(Finding("info", _folders(health.staged), f"{len(health.staged)} memory file(s) staged for your next commit "
                           f"(commit = \"stage\"): {_listed(health.staged)}", "Nothing to fix: your next `git commit` takes them."))
    if health.deleted:
        folders = _folders(health.deleted)
        out.append(Finding("warning", folders, f"{len(health.deleted)} memory file(s) git holds were deleted from the working "
                           f"tree: {_listed(health.deleted)}", f"Bring them back with `git restore {folders}`; only if you "
                           "meant to delete them, `git rm` them and commit."))
    finish = FINISH.get(health.underway, "`git commit`")
    for path, code in health.conflicted:  # `git restore` and `git commit` refuse an unmerged path: it is settled first
        words, settle = status.unmerged(code, path)
        underway = health.underway or "a merge"
        out.append(Finding("error", path, f"unresolved merge conflict ({words}): {underway} left it unmerged",
                           f"{settle}, then finish the {underway.removeprefix('a ')} with {finish}."))
    # copies `sync` remakes at will, and the temporary file of a write (swept once it is a minute old) are not memory
    uncommitted = [p for p in health.uncommitted if not mirror.generated(store.root, p) and not disk.is_temp(p) and p not in broken]
    noted = left(store.config.state_dir) if store.config.commit != "off" else set(uncommitted)  # off: nothing is committed
    if yours := [p for p in uncommitted if p in noted]:  # not deferred, nor a lost note: left to the person
        out.append(Finding("info", _folders(yours), f"{len(yours)} memory file(s) written while commit = \"off\" are not "
                           f"committed: {_listed(yours)}", f"Nothing to fix: they are yours to commit (`git add {_folders(yours)} "
                           "&& git commit`) when you want them in git."))
        uncommitted = [p for p in uncommitted if p not in noted]
    own, blobs = own_logs(store, uncommitted) if health.underway not in FINISH else ([], [])
    if own:
        cite = f", with the {len(blobs)} blob(s) their records cite" if blobs else ""
        out.append(Finding("warning", _folders(own), f"{len(own)} experience log(s) repo-memory wrote on this clone were never "
                           f"committed (the note that they await a commit was lost, e.g. with .git/repo-memory/): {_listed(own)}"
                           f"{cite}", f"`repo-memory doctor --fix` commits them (or `git add {quoted(*own, *blobs)} && git commit`)."))
        uncommitted = [p for p in uncommitted if p not in own and p not in blobs]
    if uncommitted:
        folders = _folders(uncommitted)
        out.append(Finding("warning", folders, f"{len(uncommitted)} memory file(s) changed but not committed: {_listed(uncommitted)}",
                           f"They are part of {health.underway}: `git add` what you settled and finish it with {finish}."
                           if health.underway in FINISH else f"Commit them with `git add {folders} && git commit` (edits you "
                           f"made by hand), or review them with `git status -uall {folders}` and `git diff {folders}`."))
    return out


def _listed(paths: list[str], shown: int = 5) -> str:
    return ", ".join(paths[:shown]) + (f" and {len(paths) - shown} more" if len(paths) > shown else "")


def _folders(paths: list[str]) -> str:
    """The memory folders holding `paths`, as the words of one git command (.agents holds .agents/skills: named once)."""
    tops = sorted({p.split("/skills/")[0] + "/skills" if "/skills/" in p else p.split("/")[0] for p in paths})
    return quoted(*(t for t in tops if not any(t.startswith(f"{o}/") for o in tops)))


def _setup(store: Store) -> list[Finding]:
    if store.sparse.left_out():  # first of all: init and the rest cannot help while memory is not on disk
        return [Finding("error", f"{sparse.MEMORY}/", store.sparse.why(), store.sparse.fix())]
    out = []
    if not layout.initialised(store.root, store.config.common_dir):
        out.append(Finding("warning", ".gitattributes", "repo-memory init has not run here (no union-merge rule for experience logs)",
                           "Run `repo-memory init`."))
    elif (rules := layout.missing_rules(store.root, store.config.common_dir))[1]:
        eol = (" (without `text eol=lf` a clone with core.autocrlf=true checks logs out with CRLF, which is not what git holds, "
               "and verify reports them)") if layout.EOL_LINE in rules[1] else ""
        out.append(Finding("warning", rules[0], f"it lacks rules this version of init writes: {'; '.join(rules[1])}{eol}",
                           "Run `repo-memory init` again (it adds only what is missing)" + (", and commit .gitattributes if it "
                           "does not." if rules[0] == ".gitattributes" else f": {rules[0]} is this clone's own, nothing to commit.")))
    out += [Finding("warning", o.file, o.said(), o.fix()[0].upper() + o.fix()[1:] + "; then the git commands "
                    "`repo-memory verify` gives for each log git wrote with other line endings.")
            for o in layout.overridden(store.root, store.config.common_dir)]
    if layout.initialised(store.root, store.config.common_dir) and (lacks := layout.missing_drivers(store.root, store.config.git_dir)):
        out.append(Finding("warning", ".git/config", f"this clone lacks {' and '.join(lacks)} (not registered by an older "
                           "init, or this is a clone: git does not copy .git/config)",
                           "Run `repo-memory init` in this clone (it changes nothing that is committed)."))
    out += [Finding("warning", *found) for found in foreign(store.root, store.config.common_dir)]
    if store.config.commit == "private":  # each clone's ref starts a history of its own: no push, fetch or merge joins two
        out.append(Finding("info", "refs/memory/", "commit = \"private\": memory history is this clone's own "
                           "(refs/memory/<branch>); a teammate's clone neither sees it nor can push, fetch or merge its own into it",
                           "To share memory with your team: set commit = \"auto\" in .agents/repo-memory.toml, take the "
                           "`.agents/` line out of .git/info/exclude and commit .agents/; it then travels with the branch."))
    out += [Finding("warning", folder, what, fix) for folder, what, fix in mirror_checks.drift(store)]
    out += [Finding("warning", f"{source}/{name}", what, "Run `repo-memory sync`: it sets or takes away what keeps it out "
                    "(core/offering.py)." ) for source in store.sources for name, what in offering.unsettled(store.root, source)]
    return out


def _index_drift(store: Store) -> list[Finding]:
    indexed = {row["path"]: row["sha256"] for row in store.documents()}
    out = []
    for found in [*skills.scan(store.root, store.sources), *loops.scan(store.root)]:
        known = indexed.pop(found.rel, None)
        if found.refused:
            if known is None:
                out.append(Finding("error", found.rel, found.refused, _fix_for(found.refused, found.rel)))
            continue
        digest = hashlib.sha256(Path(found.path).read_bytes()).hexdigest()
        if known is None:
            out.append(Finding("warning", found.rel, "the file is not in the index yet", "Run `repo-memory reindex` (a running server picks it up by itself)."))
        elif known != digest:
            out.append(Finding("warning", found.rel, "the index holds an older version of this file", "Run `repo-memory reindex`."))
    for path in indexed:
        out.append(Finding("warning", path, GONE, "Run `repo-memory reindex`."))
    return out


def _located(problem: dict[str, object]) -> str:
    where = f"line {problem['line']}: " if problem.get("line") else ""
    return f"{where}{problem['message']}"


SKILL_SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "skill.schema.json"  # installed with the package


def _fix_for(message: str, path: str) -> str:
    if "UTF-8" in message:
        return f"Re-save {path} as UTF-8 text (e.g. `iconv -f latin1 -t utf-8`), or remove it."
    if "binary" in message:
        return f"Remove {path} or replace it with a markdown SKILL.md."
    if "SKILL.md is a link" in message:  # the file is the link, not its folder
        return (f"Replace the link with a real SKILL.md file (`cp --remove-destination \"$(readlink -f {quoted(path)})\" "
                f"{quoted(path)}`), then review it.")
    if "link" in message:
        return "Replace the link with a real folder inside the repository."
    if "merge conflict" in message:  # the merge is what it needs, not the schema: its step is the conflict's finding
        return f"Edit {path} to the one version you want (no `<<<<<<<` lines left), then `git add {quoted(path)}` and finish the merge."
    # An invalid skill is not served, so `skill show` cannot read it: doctor is what checks it again
    return (f"Edit {path} to fix it (the message names the field and line); `repo-memory doctor` checks it again. Every field "
            f"is described in {SKILL_SCHEMA}.")
