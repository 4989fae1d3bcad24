"""The Store: the one facade every shell calls. It wires the services of one repository and hands none of them out."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from repo_memory.code.anchors import Code
from repo_memory.code.pinned import Pinned
from repo_memory.code.staleness import Stale, Staleness
from repo_memory.config import MEMORY_DIR, SKILLS_DIR, Config
from repo_memory.core import briefing, merges, redacting, runlock, unreviewed
from repo_memory.core.indexing import Indexer
from repo_memory.core.journal import Journal, Moved
from repo_memory.core.logbook import Logbook
from repo_memory.core.loopbook import Loopbook
from repo_memory.core.past import Past
from repo_memory.core.provenance import Provenance
from repo_memory.core.reading import Item
from repo_memory.core.recall import RecallResult, Recall
from repo_memory.core.semantic import Semantic
from repo_memory.core.settling import Followed, Settling
from repo_memory.core.skillbook import Redrafted, Skillbook, WriteResult
from repo_memory.core.utility import Evidence, Utility
from repo_memory.errors import GitError, InvalidArgumentError
from repo_memory.formats import experience, loops
from repo_memory.formats.refs import check_session, parse as parse_ref
from repo_memory.git.committer import Committer, Health, Policy
from repo_memory.git.committed import Committed
from repo_memory.git.history import Change
from repo_memory.git.repo import CommitResult, Git
from repo_memory.git.sparse import Sparse
from repo_memory.index.activity import Activity
from repo_memory.index.db import Database
from repo_memory.index.docs import DocIndex, Progress, SyncReport
from repo_memory.index.records import RecordIndex

log = logging.getLogger("repo_memory")


class Store:
    """Memory of one repository: skill, loop and log files on disk, the derived index, and their commits."""

    def __init__(self, config: Config, session: str | None = None, owner: int | None = None):
        self.config, self.root = config, config.root
        self.sources = (SKILLS_DIR, *(d for d in config.skill_dirs if d != SKILLS_DIR))  # skill folders, highest priority first
        self._db = db = Database(config.index_path)
        self._git = git = Git(config.root, config.git_dir, private=config.commit == "private")
        self.sparse = Sparse(git)  # memory left out of a sparse checkout is neither served nor written (git/sparse.py)
        policy = Policy(config.commit, config.commit_window, config.sign, config.author_name, config.author_email, config.harness, config.author_fallback)
        self._journal = Journal.of_clone(config.root, config.common_dir, config.clone_dir, config.inline_max, config.key_dir, git.holds, config.state_dir)
        self.key = self._journal.key  # marks what this clone's repo-memory writes (guards/authorship.py)
        self.session = self._journal.owned(check_session(session or config.session or experience.new_session_id()))
        self._committer = Committer(git, config.state_dir, policy, self.session, owner, self.key, config.clone_dir)  # owner: who commits what it writes
        committed, code = Committed(git), Code(config.root)
        provenance = self._provenance = Provenance(config.root, self.key, committed, journal=self._journal)
        self._evidence = Evidence(db)
        self._docs, self._records, self._activity = DocIndex(db), RecordIndex(db, config.root, provenance.server_kind), Activity(db)
        self._staleness = Staleness(db, code, config.state_dir, git_dir=config.git_dir, vouch=provenance.vouched,
                                    pinned=Pinned(git, (MEMORY_DIR, *config.skill_dirs)).over, moves=lambda f: self._settling.moves(f))
        self._skills = Skillbook(config.root, config.state_dir, self.sources, config.review, self._docs, self._committer, committed, code, self._staleness)
        self._logs = Logbook(config.root, config.harness, self._journal, self._records, self._activity, self._committer, committed, self._skills, provenance)
        self._loops, self._past = Loopbook(config.root, self._activity, committed), Past(config.root, git, self._docs, self._journal, self._activity, self._skills.similar_names, self.sparse)
        self._settling = Settling(root=config.root, state_dir=config.state_dir, staleness=self._staleness, code=code, logs=self._logs,
                                  docs=self._docs, committer=self._committer, committed=committed, changes=self._past.code_changes, repin_skill=self._skills.repin)
        self._index = Indexer(config, self.sources, db, self._docs, self._records, self._logs, self._staleness)
        self._recall = Recall(config.root, self.sources, db, self._records, git, committed, self._staleness, self._evidence,
                              config.decay_half_life_days, config.recall_limit, self._skills.similar_names, self._index.semantic, provenance)
        try:  # every repo-memory process lands what a killed one left pending (a stat of two files when there is none)
            self._committer.recover()
        except (GitError, OSError) as exc:
            log.warning("could not commit what an earlier process left pending: %s", exc)
        if db.rebuilt:  # the file was damaged and thrown away at open: index the memory files again now
            self.refresh()

    def name_client(self, name: str) -> None:  # the MCP client's own name names the harness (Logbook.name_client)
        self._logs.name_client(name, self.config.harness_chosen)

    def close(self, commit: bool = True) -> str:  # why what this process wrote still waits for a commit, or ''
        self._index.semantic.stop()
        self._recall.close()
        self._committer.close(commit)  # commits what is pending (with commit=False it stays recorded for the next flush)
        self._git.close()
        self._db.close()
        return self._committer.waits()

    # --- the index ----------------------------------------------------------------------------------

    def refresh(self, progress: Progress | None = None, changed: Collection[str] | None = None, budget: int | None = None) -> SyncReport:
        return merges.after(self._index.refresh(progress, changed, budget), self._git, self._skills)  # indexing.py, merges.py

    def reindex(self, progress: Progress | None = None, embedding: Progress | None = None) -> SyncReport:
        return self._index.repair("a person asked for a rebuild", progress, embedding, damaged=False)

    def repair_index(self, why: str) -> SyncReport:
        return self._index.repair(why)

    def index_health(self) -> tuple[str, list[str], tuple[int, int] | None]:
        return self._index.health()

    # --- reading ------------------------------------------------------------------------------------

    def recall(self, text: str, limit: int | None = None, kinds: Sequence[str] | None = None, session: str | None = None,
               since: str | None = None, until: str | None = None, cursor: str | None = None, symbol: str | None = None,
               as_of: str | None = None, include: Sequence[str] = ("active", "draft")) -> RecallResult:
        if as_of:  # memory as it stood then; otherwise one search over skills, loops and experience (core/recall.py)
            return self._recall.recall_at(text, as_of, limit or self.config.recall_limit, kinds)
        return self.sparse.on_disk(self._recall).recall(text, limit, include, kinds, session and self._journal.named(session), since, until, cursor, symbol)

    def read(self, ref: str, cursor: str | None = None, as_of: str | None = None) -> Item:
        if as_of:  # any reference (formats/refs.py): a skill or a file beside it, a loop, records, a session
            return self._past.read_at(ref, as_of, cursor)
        parsed = parse_ref(self.sparse.on_disk(ref))
        if parsed.kind == "record":
            return self._logs.read(ref, cursor)
        if parsed.kind == "loop" or parsed.kind == "name" and not parsed.inner and not self._skills.exists(parsed.name) \
                and parsed.name in self._loops.names():
            return self._loops.read(parsed.name, cursor)
        if parsed.kind == "session" or parsed.kind == "name" and not self._skills.exists(parsed.name) and self._journal.path(self._journal.named(parsed.name)):
            return self._logs.read_session(parsed.name, cursor)
        if parsed.kind == "code":
            raise InvalidArgumentError(f"'{ref[:80]}' is code: read it from the repository; recall(symbol=...) finds memories citing it.")
        return self._skills.read(parsed.name, parsed.inner, cursor, parsed.kind == "name")

    def history(self, ref: str, since: str | None = None, limit: int = 20) -> tuple[str, list[Change]]:
        return self._past.changes(ref, since, limit)  # (path, the commits that changed it, newest first, with diffs)

    def skills(self) -> list[dict[str, Any]]:
        return self._skills.rows()  # every skill file the index knows, valid or not, with where it came from

    def skill_digests(self) -> dict[str, str]:
        return self._docs.digests("skill")  # {name: content hash} of every searchable skill

    def skill_states(self, source: str) -> list[dict[str, Any]]:  # what offering.indexed reads of the skills of `source`
        return self._docs.rows("kind='skill' AND source=?", (source,), columns="path, problems, flags, status, mtime_ns, sha256")

    def documents(self) -> list[dict[str, Any]]:
        return self._docs.rows()  # every skill and loop file the index knows

    def embedding(self) -> Semantic:  # the vectors and the job keeping them complete: start, behind, finish (core/semantic.py)
        return self._index.semantic

    def loop_spec(self, name: str) -> loops.Loop:
        return self._loops.spec(name)

    def loop_names(self) -> list[str]:
        return self._loops.names()

    def lines(self, session: str) -> list[experience.Line]:
        return self._logs.lines(session)

    def log_files(self, session: str) -> list[tuple[list[experience.Line], bool]]:
        return self._logs.files(session)  # each file's lines, and whether the one before it is missing here

    def trusted(self, session: str) -> list[dict[str, Any]]:
        return self._logs.trusted(session)  # records of server kinds only when the server wrote them

    def sessions(self) -> list[tuple[str, int, str, str]]:
        return self._activity.sessions()

    def timeline(self, since: str | None = None, limit: int = 200) -> tuple[list[dict[str, Any]], int]:
        return self._activity.timeline(since, limit)

    def per_day(self) -> list[tuple[str, int]]:
        return self._activity.per_day()

    def runs(self) -> list[str]:
        return self._activity.runs()

    def receipts(self, loop: str, limit: int = 5) -> list[dict[str, Any]]:
        return self._activity.receipts(loop, limit)

    def flagged(self, ids: Sequence[str] | None = None) -> list[tuple[str, str]]:
        return self._activity.flagged(ids)  # (id, JSON list of what quarantines it), of `ids` or of every record

    def forked(self) -> list[tuple[str, list[str], list[str]]]:
        return self._activity.forked()

    def stale(self, memories: list[str] | None = None, checkable: bool = True) -> list[Stale]:
        return self._staleness.stale(memories, check=True, checkable=checkable, settle=checkable)  # not checkable: not parsed, …

    def evidence(self) -> dict[str, Utility]:
        return self._evidence.all()

    def skill_changed(self, files: list[tuple[str, int]]) -> dict[str, int]:
        return self._recall.ages.many(files)  # when each skill file (path, mtime_ns) last changed: its last commit, else its mtime

    def similar_names(self, text: str) -> list[str]:
        return self._skills.similar_names(text)

    def verify(self, progress: Progress | None = None) -> list[tuple[str, str]]:
        return self._logs.verify(progress)  # progress in bytes of the logs checked

    def redact(self, ref: str, strings: Sequence[str], whole: bool, dry_run: bool = False) -> redacting.Redacted:
        return redacting.Redactor(journal=self._journal, logs=self._logs, records=self._records, committer=self._committer,
                                  said=self._provenance.redacted).redact(ref, strings, whole, dry_run)  # a person's (log redact)

    def briefing(self) -> str:  # the session briefing a harness shows at start (core/briefing.py)
        moving, quiet = self._activity.live_runs(since=briefing.quiet_since())  # and whose check was cut off (core/runlock.py)
        live = [{**r, "cut_off": runlock.cut_off(self.config.state_dir, r["run"], self.trusted(r["run"]))} for r in moving], quiet
        return briefing.compose(live, self._skills.active(), self._activity.recently_used_skills(), self.evidence(),
                                self._activity.last_summary(self.session), self.skill_changed, self._skills.drafts(), self.stale)

    def code_changes(self, paths: Collection[str], anchors: Collection[str] = ()) -> dict[str, str]:
        return self._past.code_changes(paths, anchors)  # which commit last changed each file (or uncommitted), and definition

    # --- writing ------------------------------------------------------------------------------------

    def source(self, actor: str, tool: str) -> dict[str, str]:
        return self._logs.source(actor, tool)

    def log(self, session: str, entries: Sequence[experience.Entry], captured: bool = False, first: str | None = None,
            moved: Moved | None = None) -> list[dict[str, Any]]:
        return self.sparse.on_disk(self._logs).append(session, entries, captured, first, moved)  # one write; captured content redacted, an agent's with a secret refused

    def following(self, session: str) -> str:
        return self._journal.following(session)  # the id the next record of `session` takes (an import cites it first)

    def batched(self) -> AbstractContextManager[None]:
        return self._db.transaction()  # one index transaction around many `log` calls (an import), not one per write

    def pin(self, cited: Sequence[str]) -> dict[str, str]:
        return self._skills.pin(cited, "refs")  # each code ref's hash now, as remember pins them; InvalidRecordError names a bad one

    def put_blob(self, data: bytes) -> str:
        return self._journal.put_blob(data)

    def remember(self, text: str | None, kind: str = "note", refs: Sequence[str] = (), data: Any = None, session: str | None = None,
                 actor: str = "agent", tool: str = "remember", ts: str | None = None) -> list[dict[str, Any]]:
        return self.sparse.on_disk(self._logs).remember(session or self.session, text, kind, refs, data, actor, tool, ts)

    def checkpoint(self, summary: str, covers: Sequence[str], session: str | None = None, actor: str = "agent",
                   tool: str = "checkpoint") -> dict[str, Any]:
        return self.sparse.on_disk(self._logs).checkpoint(session or self.session, summary, covers, actor, tool)

    def feedback(self, ref: str, outcome: str, note: str | None = None, actor: str = "agent", tool: str = "feedback", session: str | None = None) -> dict[str, Any]:
        return self.sparse.on_disk(self._logs).feedback(session or self.session, ref, outcome, note, actor, tool)

    def write_skill(self, name: str, description: str | None, body: str | None, tags: Sequence[str] | None = None, related: Sequence[str] | None = None,
                    actor: str = "agent", new: bool = False, anchors: Sequence[str] | None = None, draft: bool = False, session: str | None = None) -> WriteResult:
        return self.sparse.on_disk(self._skills).write(name, description, body, tags, related, actor, new, anchors, draft, session or "")

    def review(self, name: str, accept: bool, sha: str | None = None) -> str:
        return self.sparse.on_disk(self._skills).review(name, accept, sha)

    def skill_exists(self, name: str) -> bool:
        return self._skills.exists(name)

    def fingerprint(self, name: str) -> str:
        return self._skills.fingerprint(name)

    def unreviewed(self, name: str) -> unreviewed.Unreviewed:
        return self._skills.unreviewed(name)  # what a draft changes against the version a person last accepted

    def redraft(self, rels: Sequence[str], via: str, since: int | None = None, before: Mapping[str, str] | None = None) -> Redrafted:
        return self._skills.redraft(rels, via, since, before)  # drafts again, seen by this session (only those)

    def repin(self, name: str) -> tuple[list[str], str]:  # a person checked a skill, loop:NAME or a record against the code
        return self._settling.pin(name, self.session)  # (the anchors pinned, the note that settles a record, else '')

    def follow_renames(self) -> Followed:
        return self._settling.follow_renames(self.session)  # skills re-anchored, records whose code moved unchanged settled

    # --- git ----------------------------------------------------------------------------------------

    def flush(self, scope: str = "docs", session: str | None = None, harness: str | None = None) -> CommitResult | None:
        return self._committer.flush(scope, session, harness)  # skills and loops; experience of `session`, this process's (final), all

    def commit_files(self, paths: list[str], message: str) -> CommitResult | None:
        return self._committer.commit(paths, message)  # files repo-memory created besides memory writes (init's scaffolding)

    def commit_status(self, kind: str = "doc", session: str | None = None) -> str:
        return self._committer.describe(kind, session)  # where the latest writes of `kind` stand with git (of `session`: held?)

    def git_health(self) -> Health:
        return self._committer.health((".agents", *self.sources[1:]))  # pending, repaired, at risk, uncommitted (doctor)

    def heal(self, paths: list[str]) -> dict[str, str]:
        return self._committer.heal(paths)  # doctor --fix: index entries a commit would delete; held changes let go
