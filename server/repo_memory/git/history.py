"""Memory through time: the commits that changed a file, with their diffs, every version of it, and a file as it stood
at a date or commit."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

from repo_memory.errors import GitError
from repo_memory.formats import when
from repo_memory.git import objects, textconv_cache
from repo_memory.git.repo import Git

DIFF_CHARS = 4000


@dataclass(frozen=True)
class Change:
    """One commit that touched a file, with its diff (rendered by the textconv driver when configured)."""

    sha: str
    date: str  # UTC, 2026-12-05T23:27:26Z
    author: str
    subject: str
    diff: str


def changes(git: Git, paths: list[str], since: str | None = None, limit: int = 20) -> list[Change]:
    """Commits that changed any of `paths` (pathspecs), newest first, each with its diff — one `git log -p` walk; where
    a shallow clone's history stops, a note that says so instead of a diff that shows every file as created."""
    out, stops = [], objects.cut(git.common_dir)
    textconv_cache.drop_raw(git)  # a version another process showed raw (repo-memory not on its PATH) is rendered now
    for block in _log(git, paths, since, limit, textconv_cache.driver_path()).split("\x1e")[1:]:
        header, _, diff = block.partition("\n")
        sha, date, author, subject = header.split("\x1f", 3)
        diff = objects.at_cut(sha) if sha in stops else diff.strip("\n") + "\n" if diff.strip() else ""
        out.append(Change(sha, _utc(date), author, subject, diff if len(diff) <= DIFF_CHARS else diff[:DIFF_CHARS] + "\n… (diff truncated)"))
    return out


def _log(git: Git, paths: list[str], since: str | None, limit: int, driver_path: str | None) -> str:
    """`git log -p` of `paths`, newest first, as one walk; each commit starts with a 0x1e line. Rendered by the diff
    driver run with PATH `driver_path` (textconv_cache.driver_path); None: not rendered, raw lines."""
    since = when.moment(since, "since")
    import git as gitpython

    rev = git.memory_rev()
    if rev != "HEAD" and git.memory_head() is None:
        return ""
    textconv, env = ("--textconv", {"PATH": driver_path}) if driver_path else ("--no-textconv", None)
    # a merge's patch is what it brought to this branch: git prints none for a merge unless asked
    args = ["-p", "--diff-merges=first-parent", textconv, f"-n{limit}", "--format=%x1e%H%x1f%aI%x1f%an%x1f%s",
            *([f"--since={since}"] if since else []), rev, "--", *paths]
    with git.reading() as repo:
        try:
            try:
                return str(repo.git.log(*args, env=env))
            except gitpython.GitCommandError as exc:  # git before 2.31 knows no --diff-merges: its combined diff, then
                if "--diff-merges" not in str(exc):
                    raise
                return str(repo.git.log("--cc", *args[:1], *args[2:], env=env))
        except gitpython.GitCommandError as exc:
            if "does not have any commits" in str(exc) or "unknown revision" in str(exc):
                return ""  # an unborn branch has no history yet
            if "promisor remote" in str(exc):  # git's own words name neither the clone's kind nor a fix
                raise GitError(objects.unfetched(repo, "the file versions these diffs need")) from None
            raise GitError(f"`git log` failed: {exc.stderr.strip()}") from None


@dataclass(frozen=True)
class Touch:
    """The newest commit of memory's history that changed a file: the file, the commit, its subject, and whether it
    removed the file."""

    path: str
    sha: str
    subject: str
    removed: bool


def last_change(git: Git, pathspecs: list[str]) -> Touch | None:
    """The newest commit of the memory branch (not a merge: the commit that did it) that changed a file `pathspecs`
    match, or None when none did: where memory no file of which is in this checkout went."""
    if git.memory_head() is None:
        return None  # an unborn branch, or a private ref not made yet
    log = git.run("log", "-n1", "--no-merges", "--full-history", "--no-renames", "--format=%x01%H %s", "--name-status",
                  "-z", git.memory_rev(), "--", *pathspecs, check=False).stdout
    for commit in log.split("\x01")[1:]:
        header, _, names = commit.partition("\0")
        fields = names.lstrip("\n").split("\0")
        changed = list(zip(fields[::2], fields[1::2]))
        if changed:
            sha, _, subject = header.partition(" ")
            return Touch(changed[0][1], sha, subject, all(status == "D" for status, _ in changed))
    return None


def _utc(date: str) -> str:
    """A commit's author date (ISO, with the author's offset) as every answer spells a time: 2026-12-05T23:27:26Z."""
    try:
        return datetime.fromisoformat(date).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return date


def at(git: Git, path: str, as_of: str, rest: list[str] | None = None) -> tuple[str, bytes]:
    """(commit, bytes) of `path` at a commit or a date (the last commit at or before it); read from objects, no checkout.
    The files in `rest` follow it, those the commit has (a session's later log files)."""
    commit, _ = git.resolve(as_of)
    data = git.blob(commit, path)
    for more in rest or []:
        if git.entry(commit, more) is not None:
            data += git.blob(commit, more)
    return commit, data


def versions(git: Git, path: str) -> Iterator[tuple[str, str, bytes]]:
    """Every committed version of `path` on the memory branch, newest first: (commit, blob id, the file's bytes)."""
    commits = touching(git, path)
    for commit, blob in zip(commits, blob_ids(git, commits, path)):
        if blob:  # not the commit that deleted it
            yield commit, blob, git.read(blob)


def checked_out(git: Git, path: str, blob: str) -> bytes:
    """The bytes `git checkout` writes of `blob` at `path`: its line endings and smudge filters applied as the
    attributes and config say (git may hold an LFS pointer where the disk holds the skill); the blob's own bytes when
    git cannot convert it (an LFS object this clone lacks)."""
    done = git.run("cat-file", "--filters", f"--path={path}", blob, stdin=b"", check=False)  # bytes in: bytes back
    return done.stdout.encode("utf-8", "surrogateescape") if done.returncode == 0 else git.read(blob)


def touching(git: Git, path: str) -> list[str]:
    """The commits of the memory branch that changed anything at `path`, newest first by commit date: the whole
    history, every side of each merge (git's default walk follows only a side the merge holds `path` as, and misses
    what the other side did). GitError when git cannot tell: a search cut short is no answer."""
    if git.memory_head() is None:
        return []  # an unborn branch, or a private ref not made yet
    return git.run("rev-list", "--full-history", git.memory_rev(), "--", path).stdout.split()


def blob_ids(git: Git, commits: list[str], path: str) -> list[str | None]:
    """The blob id of the file at `path` in each of `commits` (None where there is none): one `git cat-file` for all,
    where reading each commit's trees took seconds for a few thousand."""
    asked = "".join(f"{commit}:{path}\n" for commit in commits)
    out = git.run("cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=asked).stdout.splitlines() if asked else []
    return [line.split(" ", 1)[0] if line.endswith(" blob") else None for line in out]
