"""Memory through time: which file a reference names, the commits that changed it, and how it stood at a date or commit."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from pathlib import Path

from repo_memory.core.journal import Journal
from repo_memory.core.session_files import SEGMENT
from repo_memory.core.reading import DATA_NOTE, Item, RecordView, framed, page
from repo_memory.config import SKILLS_DIR
from repo_memory.errors import InvalidArgumentError, InvalidRecordError, NotFoundError
from repo_memory.formats import experience, loops, refs, skills
from repo_memory.git import history
from repo_memory.git.committed import describe, describe_loop, describe_skill
from repo_memory.git.repo import Git
from repo_memory.index.docs import DocIndex

PATHS_PER_RUN = 2000  # paths on one git command line (at most ~256 KB of arguments)
RECENT = 50  # commits the first look through history covers
MOVES_LOOKED_UP = 3  # commits that deleted cited files whose renames are looked for (one git process each)


class Past:
    """History and time travel over one repository's memory files, read from git objects."""

    def __init__(self, root: Path, git: Git, docs: DocIndex, journal: Journal, similar: Callable[[str], list[str]]):
        self.root, self._git, self._docs, self._journal, self._similar = root, git, docs, journal, similar

    def path_of(self, ref: str) -> str:
        """The repository path behind a reference: a skill, a loop, a session or an experience id."""
        parsed = refs.parse(ref)
        if parsed.kind == "loop":
            return f"{loops.LOOPS_DIR}/{parsed.name}.md"
        if parsed.kind in ("record", "session"):  # a session's name a person gave means this clone's log under it
            return self._session_path(self._journal.named(parsed.name) if parsed.kind == "session" else parsed.name)
        if parsed.kind == "code":
            raise InvalidArgumentError(f"'{ref[:80]}' is code, not memory: history follows skills, loops and sessions.")
        row = self._docs.get(parsed.name)
        if row is not None:
            return str(row["path"])
        if parsed.kind == "name":
            if (self.root / loops.LOOPS_DIR / f"{parsed.name}.md").is_file():
                return f"{loops.LOOPS_DIR}/{parsed.name}.md"
            if self._journal.path(named := self._journal.named(parsed.name)) is not None:
                return self._session_path(named)
        return f"{SKILLS_DIR}/{parsed.name}/{skills.SKILL_FILE}"  # a deleted skill still has history

    def _session_path(self, session: str) -> str:
        found = self._journal.segments(refs.check_session(session))
        if not found:
            raise NotFoundError(f"No session '{session}'.")
        return found[0].relative_to(self.root).as_posix()

    def _files(self, path: str) -> list[str]:
        """The files behind `path`: a session's log is its first file and the `+n` files that continue it."""
        if path.endswith(".jsonl"):
            return [path, path.removesuffix(".jsonl") + f"{SEGMENT}*.jsonl"]  # a pathspec: git matches the glob
        return [path]

    def changes(self, ref: str, since: str | None = None, limit: int = 20) -> tuple[str, list[history.Change]]:
        """(path, the commits that changed it newest first, each with its diff)."""
        path = self.path_of(ref)
        found = history.changes(self._git, self._files(path), since, limit)
        if not found and not since and not (self.root / path).exists():
            name = refs.parse(ref).name
            raise NotFoundError(f"Nothing named '{ref[:80]}' has history: no skill, loop or session by that name exists or "
                                "ever was committed.", self._similar(name))
        return path, found

    def read_at(self, ref: str, as_of: str, cursor: str | None = None) -> Item:
        """`ref` as it stood at `as_of` (a date or a commit): the whole file, or the records of an id or range."""
        path = self.path_of(ref)
        parsed = refs.parse(ref)
        if parsed.kind == "record":  # read from every file of the session that the commit has
            session = [f.relative_to(self.root).as_posix() for f in self._journal.segments(parsed.session)] or [path]
            commit, data = history.at(self._git, session[0], as_of, rest=session[1:])
        else:
            commit, data = history.at(self._git, path, as_of)
        as_of = commit[:12]
        if parsed.kind in ("record", "session"):  # read as `read` gives records now, each verified by its hash alone
            views = [RecordView(id=r["id"], verified=experience.seal(r)["sha256"] == r["sha256"], record=r, committed=True,
                                recorded=describe(r["source"].get("actor", ""), True, r["source"].get("harness", ""), r["source"].get("tool", ""), r["kind"]))
                     for ln in experience.parse_lines(data) if (r := ln.record) and (parsed.kind == "session" or parsed.start <= r["seq"] <= parsed.end)]
            if not views:
                raise NotFoundError(f"No record {parsed} in {path} at {as_of}.")
            views, recorded = framed(views)
            return Item(id=ref, kind="experience", records=views, committed=True, recorded=recorded, note=DATA_NOTE, as_of=as_of)
        text, next_cursor = page(data.decode("utf-8", errors="replace"), cursor)
        digest = hashlib.sha256(data).hexdigest()
        if path.startswith(f"{loops.LOOPS_DIR}/"):  # the same shape as a live read, as the commit holds it (runs are now's)
            try:
                spec = loops.parse(data, path)
                status, description = spec.status, spec.description or spec.goal
            except InvalidRecordError as exc:
                status, description = "invalid", f"invalid spec: {exc}"
            return Item(id=f"loop:{parsed.name}", kind="loop", name=parsed.name, path=path, status=status, description=description,
                        sha256=digest, content=text, next_cursor=next_cursor, committed=True, recorded=describe_loop(status, True), as_of=as_of)
        if path.endswith(f"/{skills.SKILL_FILE}"):
            skill = skills.parse(data, path, path.rsplit("/", 2)[0])
            return Item(id=f"skill:{skill.name}", kind="skill", name=skill.name, path=path, status=skill.status, origin=skill.origin,
                        description=skill.description, sha256=digest, content=text, next_cursor=next_cursor, committed=True,
                        recorded=describe_skill(skill.origin, skill.status, True), as_of=as_of)
        return Item(id=ref, kind="file", path=path, sha256=digest, content=text, next_cursor=next_cursor, committed=True,
                    recorded=f"a file as committed in {as_of}", as_of=as_of)

    def code_changes(self, paths: Collection[str]) -> dict[str, str]:
        """For each code file of `paths`, which commit last changed it or that it has uncommitted changes (no entry when
        git knows neither). One `git diff` and one or two `git log` for them all: doctor asked twice per stale anchor,
        18 s at 2,000. Chunks keep each command line short."""
        wanted, out = sorted(set(paths)), {}
        for start in range(0, len(wanted), PATHS_PER_RUN):
            out.update(self._code_changes(wanted[start:start + PATHS_PER_RUN]))
        return out

    def _code_changes(self, wanted: list[str]) -> dict[str, str]:
        # --literal-pathspecs: a cited path is a file name, never a pattern
        diff = self._git.run("--literal-pathspecs", "diff", "--name-only", "-z", "HEAD", "--", *wanted, check=False).stdout
        out = {path: f"uncommitted changes in {path}" for path in set(diff.split("\0")) & set(wanted)}
        deleted: dict[str, list[str]] = {}  # commit -> the paths it deleted, last
        for recent in (True, False):  # the last RECENT commits first: after a move or a merge every path is found there
            left = {path for path in wanted if path not in out}
            if not left:
                break
            log = self._git.run("--literal-pathspecs", "log", *(["-n", str(RECENT)] if recent else []), "--format=%x01%h %s",
                                "--name-status", "--no-renames", "-z", "--", *sorted(left), check=False).stdout
            commits = log.split("\x01")[1:]
            for commit in commits:  # newest first: the first commit naming a path changed it last
                header, _, names = commit.partition("\0")
                fields = names.lstrip("\n").split("\0")
                for status, name in zip(fields[::2], fields[1::2]):
                    if name in left and name not in out:
                        out[name] = f"last changed in {header}"
                        if status == "D":
                            deleted.setdefault(header, []).append(name)
            if len(commits) < RECENT:
                break  # that was the whole history
        for header in list(deleted)[:MOVES_LOOKED_UP]:  # git's rename detection says where a deleted file went
            moves = self._moves(header.partition(" ")[0])
            out.update({path: f"moved to {moves[path]} in {header}" for path in deleted[header] if path in moves})
        return out

    def _moves(self, commit: str) -> dict[str, str]:
        """Old path -> new path of every file `commit` renamed (against its first parent)."""
        fields = self._git.run("diff-tree", "-r", "-M", "--name-status", "-z", "--no-commit-id", commit, check=False).stdout.split("\0")
        moves, i = {}, 0
        while i < len(fields) - 1:
            if fields[i][:1] in ("R", "C"):  # a rename or copy names two paths
                if fields[i][0] == "R" and i + 2 < len(fields):
                    moves[fields[i + 1]] = fields[i + 2]
                i += 3
            else:
                i += 2
        return moves
