"""The user's git repository: finding it, reading it through gitpython, and running bounded plumbing commands.

Reads (HEAD, trees, blobs, history) go through gitpython, imported on first use (~0.1 s) so hooks that never read
git stay fast. Commands that write (commit-tree, update-ref, update-index, config) run as `git` processes through
`Git.run`, with a timeout and an environment that never prompts; see commit.py for why writes use plumbing.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from repo_memory.errors import GitError, InvalidArgumentError, NotFoundError, WorkspaceError
from repo_memory.formats import when
from repo_memory.git import objects, running
from repo_memory.git.objects import Objects
from repo_memory.guards.shellwords import quoted

GIT_TIMEOUT = 30.0
_UNASKED = re.compile("[\r\n\ud800-\udfff]")  # what a path sent to `git cat-file` on a line of its input cannot hold
_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/~^@{}-]{0,250}$")  # a commit id or a ref expression (HEAD~3, main@{1})
SIGN_TIMEOUT = 15.0
INDEX_LOCK_WAIT = 5.0
# Before every git command: a folder inside the repository that looks like a bare repository (HEAD, objects/, refs/
# committed by an upstream in a skill folder) is refused, never taken for a repository whose config git obeys
# (core.fsmonitor, a clean filter: commands run on the machine). A clone's own .git, a submodule's, are not bare.
SAFE = ("-c", "safe.bareRepository=explicit")
# Every git command of ours takes no lock it can do without, as git asks of background processes: `git status`
# holds .git/index.lock while it looks (to write back what it refreshed), and a person's `git commit` starting then
# dies ("Unable to create '.git/index.lock': File exists").
BACKGROUND = {"GIT_OPTIONAL_LOCKS": "0"}
IN_PROGRESS = {
    "rebase-merge": "a rebase", "rebase-apply": "a rebase or am", "MERGE_HEAD": "a merge", "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert", "BISECT_LOG": "a bisect",
}


def discover(start: Path) -> tuple[Path, Path, Path]:
    """Return (top level, absolute git dir, common git dir) of the repository containing `start` (one `git rev-parse`,
    ~2 ms). In a linked worktree the git dir is the worktree's own (`.git/worktrees/<name>`: its HEAD and index) and the
    common dir the repository's (`.git`: its objects, refs, config and info/); elsewhere they are the same."""
    if not start.exists():
        raise WorkspaceError(f"Workspace {start} does not exist. Pass --root PATH (or set REPO_MEMORY_ROOT) to a git repository.")
    cwd = start if start.is_dir() else start.parent
    try:
        # --absolute-git-dir resolves linked worktrees to their own git dir, so each worktree keeps its own index.
        out = subprocess.run(["git", *SAFE, "rev-parse", "--show-toplevel", "--absolute-git-dir", "--path-format=absolute", "--git-common-dir"],
                             cwd=cwd, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise WorkspaceError("git is not installed or not on PATH. Install git, then try again.") from None
    if out.returncode != 0 and "work tree" in out.stderr:
        raise WorkspaceError(f"{cwd} is a bare git repository (no working tree); run repo-memory in a clone of it instead.")
    if out.returncode != 0 and "not a git repository" not in out.stderr:  # git found one and refuses it: say why, in its words
        said = [line.strip() for line in out.stderr.splitlines() if line.strip()]
        fix = next((f" If you trust it, run `{line}`, then try again." for line in said if line.startswith("git config ")), "")
        if "safe.bareRepository" in out.stderr:  # our SAFE: a bare repository, or a look-alike folder inside a clone
            raise WorkspaceError(f"{cwd} is a bare git repository (no working tree), or a folder inside a clone that looks "
                                 "like one (repo-memory runs git in no repository it was not given): run repo-memory in a "
                                 "clone's working tree, or pass --root PATH to it.")
        raise WorkspaceError(f"git refuses to work in {cwd}: {said[0].removeprefix('fatal: ') if said else 'no reason given'}.{fix}")
    if out.returncode != 0:
        raise WorkspaceError(
            f"{cwd} is not inside a git repository. repo-memory keeps memory in a repository's files: "
            f"run `git init` there, or pass --root PATH (or set REPO_MEMORY_ROOT) to an existing repository."
        )
    lines = out.stdout.splitlines()
    if len(lines) != 3:
        raise WorkspaceError(f"{cwd} is inside a bare git repository; run repo-memory in a working tree instead.")
    return Path(lines[0]).resolve(), Path(lines[1]).resolve(), Path(lines[2]).resolve()


def run_at(cwd: Path, *args: str, stdin: bytes = b"", ok: tuple[int, ...] = (0,), timeout: float = 10,
           env: dict[str, str] | None = None) -> bytes | None:
    """What `git ARGS` run in `cwd` with `env` added prints, outside a repository too; None on an exit code not in `ok`."""
    full = {**os.environ, **BACKGROUND, **(env or {})}
    out = subprocess.run(["git", *SAFE, *args], cwd=cwd, input=stdin, capture_output=True, timeout=timeout, env=full)
    return out.stdout if out.returncode in ok else None


def _env(env: dict[str, str] | None) -> dict[str, str]:
    """The environment of a git command of ours: no prompt, no editor, BACKGROUND, and no token of a step or
    `loop run` round (runner/verify.py)."""
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true", **BACKGROUND, **(env or {}),
            "REPO_MEMORY_VERIFY": ""}


def checked_out(top: Path, rel: str) -> bytes | None:
    """The bytes `git checkout` would write for `rel` from the index (line endings, smudge), None when it holds none."""
    return run_at(top, "cat-file", "--filters", f":{rel}")  # `:` first: `rel` never passes for an option


@dataclass(frozen=True)
class CommitResult:
    """What one commit attempt did: a new commit, nothing to commit, or a deferral with its reason."""

    sha: str | None = None
    deferred: str = ""
    unchanged: bool = False
    refused: bool = False  # a git hook refused it: retrying will not help


LIGHT_READS = 24  # a SessionEnd hook makes ~6 (HEAD, the last record's entry and blob, the commit's)


class Git:
    """One repository: gitpython for reads, bounded `git` processes for plumbing. Every method is thread-safe."""

    def __init__(self, root: Path, git_dir: Path, private: bool = False):
        self.root, self.git_dir = root, git_dir
        self.private = private  # memory history lives on refs/memory/<branch>, not on the branch
        self._repo: Any = None
        self._head: tuple[Any, str | None] | None = None  # (ref files' signature, HEAD's commit)
        self._ref: str | None = None  # the branch HEAD names, e.g. refs/heads/main
        self._common: Path | None = None  # the common git dir (a linked work tree's is its main one's)
        self._asked = 0  # reads git answered while gitpython is not loaded (_light)
        self._lock = threading.RLock()  # gitpython's object database talks to one `git cat-file` process at a time
        self._objects = Objects(lambda: self.repo)  # trees and sizes kept: objects never change
        self._builtins: frozenset[str] | None = None  # git's own commands, see alias

    # --- plumbing ---------------------------------------------------------------------------------

    def run(self, *args: str, env: dict[str, str] | None = None, timeout: float = GIT_TIMEOUT, check: bool = True,
            stdin: str | bytes | None = None) -> subprocess.CompletedProcess[str]:
        """Run `git ARGS` in the work tree, bounded by `timeout`; GitError when it fails (with `check`) or hangs."""
        raw = isinstance(stdin, bytes)  # a file's contents: bytes in and out, no newline turned (CRLF stays), out as text
        # Its own session, and no token of a step or `loop run` round (runner/verify.py): when a harness kills our process
        # group, or a step ends, a git command already running still finishes and removes its lock files (a git killed
        # mid-write would leave .git/index.lock behind, blocking the user's git).
        proc = subprocess.Popen(["git", *SAFE, *args], cwd=self.root, env=_env(env), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=not raw, start_new_session=True,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
        try:
            out, err = (b.decode("utf-8", "surrogateescape") if raw else b for b in proc.communicate(stdin, timeout=timeout))
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # git and whatever it started (a signing agent that hangs)
            proc.communicate()
            raise GitError(f"`git {args[0]}` did not finish within {timeout:g} s" + (
                " (commit signing may be waiting for a passphrase or an agent; `git config repo-memory.sign "
                "never` commits memory unsigned)" if args[0] == "commit-tree" else "")) from None
        result = subprocess.CompletedProcess(["git", *args], proc.returncode, out, err)
        if check and result.returncode != 0:
            raise GitError(f"`git {' '.join(args[:2])}` failed: {err.strip() or out.strip()}")
        return result

    def start(self, *args: str) -> subprocess.Popen[str]:
        """`git ARGS` started in the work tree as `run` runs it, its input, output and errors pipes of text to talk
        to it line by line (`git update-ref --stdin`); the caller waits for it to end."""
        return subprocess.Popen(["git", *SAFE, *args], cwd=self.root, env=_env(None), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def operation_in_progress(self, quick: bool = False) -> str:
        """The git operation under way ('a rebase', …), 'a detached HEAD', a person's git command that will move the
        branch ("`git commit` (process 123)", see running.py), or '' when memory may be committed.
        `quick`: read the HEAD file instead of asking git (for a tool's answer, not for a commit)."""
        for name, what in IN_PROGRESS.items():
            if (self.git_dir / name).exists():
                return what
        if quick:
            try:
                if not (self.git_dir / "HEAD").read_bytes().startswith(b"ref:"):
                    return "a detached HEAD"
            except OSError:
                return ""
        elif self.run("symbolic-ref", "-q", "HEAD", check=False).returncode != 0:
            return "a detached HEAD"
        return running.under_way(self.root, self.alias)

    def alias(self, name: str) -> str:
        """What the git alias `name` stands for; '' when none, or when `name` is a git command (git ignores the alias)."""
        if self._builtins is None:  # asked once: repo-memory's own `git cat-file` runs in the worktree all along
            self._builtins = frozenset(self.run("--list-cmds=builtins", check=False).stdout.split())
        return "" if name in self._builtins else self.config(f"alias.{name}")

    def branch(self) -> tuple[str, str | None]:
        """(the branch ref HEAD points at, its commit or None on an unborn branch), read by git itself under the commit lock."""
        ref = self.run("symbolic-ref", "-q", "HEAD").stdout.strip()
        proc = self.run("rev-parse", "-q", "--verify", f"{ref}^{{commit}}", check=False)
        return ref, proc.stdout.strip() or None

    def config(self, key: str) -> str:
        """A git config value ('' when unset)."""
        return self.run("config", "--get", key, check=False).stdout.strip()

    def set_config(self, key: str, value: str) -> None:
        """Set a value in this repository's own config (.git/config)."""
        self.run("config", "--local", key, value)

    def hooks_dir(self) -> Path:
        """The folder git runs hooks from (core.hooksPath respected)."""
        return (self.root / self.run("rev-parse", "--git-path", "hooks").stdout.strip()).resolve()

    def files(self) -> list[str]:
        """Tracked and untracked-but-not-ignored files of the work tree."""
        return [p for p in self.run("ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout.split("\0") if p]

    # --- reads through gitpython --------------------------------------------------------------------

    @property
    def repo(self) -> Any:
        if self._repo is None:
            from repo_memory.git.detached import Repo  # gitpython, on the first read; its git out of reach of Ctrl-C

            # gitpython ignores GIT_DIR when given a path: a work tree without .git (GIT_DIR/GIT_WORK_TREE set apart) is
            # opened through the git dir `discover` found, whose work tree gitpython reads from GIT_WORK_TREE or core.worktree.
            self._repo = Repo(self.root if (self.root / ".git").exists() else self.git_dir)
        return self._repo

    def close(self) -> None:
        """Stop gitpython's helper processes."""
        with self._lock:
            if self._repo is not None:
                self._repo.close()
                self._repo = None

    def head(self) -> str | None:
        """The commit HEAD points at (None on an unborn branch), resolved by gitpython (~0.5 ms, validating each ref path)
        or, in a process that has not loaded it (a hook's: its import is ~60 ms of the ~300 a SessionEnd hook has to start
        in), by git (~6 ms); kept while HEAD, the branch's ref file and packed-refs keep their inode, size and mtime (git
        renames a new ref file over the old one, so every update changes the inode)."""
        with self._lock:
            signature = self._ref_signature()
            if self._head is not None and self._head[0] == signature:
                return self._head[1]
            sha: str | None
            if self._light():
                self._ref = self.run("symbolic-ref", "-q", "HEAD", check=False).stdout.strip() or None  # None: detached
                sha = self.run("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).stdout.strip() or None
            else:
                head = self.repo.head
                self._ref = None if head.is_detached else str(head.reference.path)  # also on an unborn branch: its ref file is watched
                try:
                    sha = str(head.commit.hexsha)
                except ValueError:
                    sha = None  # an unborn branch: HEAD names a ref that does not exist yet
            self._head = (self._ref_signature(), sha)
            return sha

    @property
    def common_dir(self) -> Path:
        """The repository's common git dir (objects, refs, packed-refs; a linked work tree's is its main one's)."""
        if self._common is None:
            self._common = Path(self._repo.common_dir if self._repo is not None else
                                self.run("rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip())
        return self._common

    def _ref_signature(self) -> tuple[tuple[int, int, int] | None, ...]:
        common = self.common_dir
        files = [self.git_dir / "HEAD", common / "packed-refs", *([common / self._ref] if self._ref else [])]
        out: list[tuple[int, int, int] | None] = []
        for path in files:
            try:
                st = os.stat(path)
                out.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                out.append(None)
        return tuple(out)

    def memory_rev(self) -> str:
        """Where memory's history is: HEAD, or in private mode `refs/memory/<branch>`."""
        if not self.private:
            return "HEAD"
        with self._lock:
            head = self.repo.head
            return "HEAD" if head.is_detached else f"refs/memory/{head.reference.name}"

    def memory_head(self) -> str | None:
        """The commit that holds memory as committed: HEAD's, or the private memory ref's (None when there is none yet)."""
        if not self.private:
            return self.head()
        import git

        rev = self.memory_rev()
        with self._lock:
            try:
                return str(self.repo.commit(rev).hexsha)
            except (ValueError, KeyError, git.BadName):
                return None  # no memory committed on this branch yet

    def holds(self, path: str) -> bool:
        """Whether the commit HEAD points at has a file at `path` (the user's HEAD, also when memory commits go to a
        private ref): a file git's working tree would count as changed if it grew."""
        if self._light():  # git answers in ~3 ms, loading gitpython costs ~60-90 ms
            return self.run("cat-file", "-t", f"HEAD:{path}", check=False).stdout.strip() == "blob"
        head = self.head()
        return head is not None and self.entry(head, path) is not None

    def _light(self) -> bool:
        """Whether git itself answers a read (~3 ms a process) rather than gitpython (~60-90 ms to import, then
        microseconds, its trees and sizes kept): while gitpython is not loaded, for a process's first LIGHT_READS reads,
        as a hook's process makes. One that reads more (a server, a search) loads it."""
        self._asked += 1
        return self._repo is None and self._asked <= LIGHT_READS

    def entry(self, commit: str, path: str) -> tuple[str, int] | None:
        """(blob id, size) of `path` at `commit`, or None when it is not a file there."""
        if not _UNASKED.search(path) and self._light():  # a line of git's input holds the path as it is
            said = self.run("cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", stdin=f"{commit}:{path}\n",
                            check=False).stdout.rstrip("\n").rsplit(" ", 2)  # or `<commit>:<path> missing`
            return (said[0], int(said[2])) if len(said) == 3 and said[1] == "blob" and said[2].isdigit() else None
        with self._lock:
            found = self._objects.find(commit, path)
            return (found[0], self._objects.size(found[0], path)) if found is not None and found[1] == "blob" else None

    def blob(self, commit: str, path: str) -> bytes:
        """The exact bytes of `path` at `commit`."""
        if self._light() and (held := self.entry(commit, path)) is not None and held[1] <= 1 << 20:  # a big one: gitpython's stream
            done = self.run("cat-file", "blob", held[0], stdin=b"", check=False)  # bytes in: its bytes out, as text
            if done.returncode == 0:
                return done.stdout.encode("utf-8", "surrogateescape")
        with self._lock:
            found = self._objects.find(commit, path)
            if found is None:
                raise NotFoundError(f"{path} did not exist at {commit[:12]}.")
            if found[1] != "blob":
                raise NotFoundError(f"{path} is a folder at {commit[:12]}, not a file.")
            return self._objects.read(found[0], path)

    def read(self, blob: str) -> bytes:
        """The bytes of the blob whose id is `blob`."""
        with self._lock:
            return self._objects.read(blob)

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        """gitpython's Repo, held for this thread's reads (its object database talks to one `git cat-file` at a time)."""
        with self._lock:
            yield self.repo

    def links_kept(self) -> bool:
        """Whether a checkout here writes a committed link as a link (core.symlinks; false: a file holding its target)."""
        return bool(self.repo.config_reader().get_value("core", "symlinks", True))  # config files: no cat-file, no lock

    def modes_at(self, commit: str, folders: tuple[str, ...]) -> dict[str, int]:
        """The mode (0o100644, 0o120000 for a link…) of every file under `folders` at `commit`, by path (its keys: the paths)."""
        import git

        out: dict[str, int] = {}
        with self._lock:
            tree = self.repo.commit(commit).tree
            for folder in folders:
                try:
                    sub = tree / folder
                except KeyError:
                    continue
                out.update((str(item.path), int(item.mode)) for item in sub.traverse() if isinstance(item, git.Blob))
        return out

    def resolve(self, as_of: str) -> tuple[str, str]:
        """(commit, the moment in the records' ISO form) for a commit id or ref (its commit time), or for a time (the
        last commit at or before it, and the time itself: a session is committed at its end, so records written by
        then may be in no commit of that time)."""
        import git

        moment = when.parse(as_of, end=True)  # a date means the memory as it stood at the end of that day
        if moment is None and (as_of.startswith("-") or not _REF.match(as_of)):  # never let a value become an option
            raise InvalidArgumentError(f"as_of '{as_of[:40]}' is neither a time nor a commit: give a commit id or ref (HEAD~3) or "
                                       f"a time ({', '.join(when.FORMS)}).")
        with self._lock:
            if moment is not None:
                try:
                    commit = next(self.repo.iter_commits(self.memory_rev(), before=when.iso(moment), max_count=1), None)
                except (git.GitCommandError, ValueError):
                    commit = None
                if commit is None:
                    raise NotFoundError(f"No memory commit at or before {when.iso(moment)[:19]}Z (as_of '{as_of[:40]}')."
                                        + objects.cut_short(self.common_dir))
            else:
                try:
                    commit = self.repo.commit(as_of)
                except (git.BadName, ValueError, git.BadObject):
                    raise InvalidArgumentError(f"as_of '{as_of[:40]}' is neither a commit of this repository nor a time: give a "
                                               f"commit id or ref (HEAD~3) or a time ({', '.join(when.FORMS)})."
                                               + objects.cut_short(self.common_dir)) from None
                self._on_memory_branch(as_of, str(commit.hexsha))
            if moment is not None:
                return str(commit.hexsha), when.iso(moment)
            return str(commit.hexsha), datetime.fromtimestamp(commit.committed_date, UTC).strftime("%Y-%m-%dT%H:%M:%S.999999Z")

    def _on_memory_branch(self, as_of: str, sha: str) -> None:
        """Refuse a commit memory's history lacks (a stash, another branch, a fetched fork): anyone can commit a forged
        record there, and what it holds would be served as committed. The caller holds the lock."""
        rev = self.memory_rev()
        if self.run("merge-base", "--is-ancestor", sha, rev, check=False).returncode != 0:  # 1: not in it; 128: no such ref yet
            raise InvalidArgumentError(f"as_of '{as_of[:40]}' is commit {sha[:12]}, which is not in this branch's memory history "
                                       f"({rev}), so what it holds is not memory this branch committed. Give a time ({when.FORMS[0]}, "
                                       f"{when.FORMS[4]}) or a commit `git log {quoted(rev)}` lists (HEAD~3, a tag, an id); to read another "
                                       "branch's memory, check it out.")

