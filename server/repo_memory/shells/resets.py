"""What an agent's `git reset` (or `git read-tree -u --reset`) would take from memory, asked before it runs.

Committing memory first keeps it through a discard of the worktree only while HEAD stays: a reset to another commit
throws such a commit away. So a reset to HEAD, however spelled (`@`, the branch's name), is swept like any discard; a
reset moving the branch past memory commits that its target lacks is refused with the line that keeps them (the reset,
then `git cherry-pick` of those commits); and pending records a `git add` staged are taken out of the index before a
reset that empties it, so they stay on disk, untracked, as repo-memory keeps them until it commits them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from repo_memory.config import Config
from repo_memory.git import running
from repo_memory.git.pending import Journal
from repo_memory.git.repo import Git
from repo_memory.shells import gitline

MEMORY = ".agents"
DISCARDING = ("--hard", "--merge", "--keep")  # the modes that write the worktree: what the target lacks goes from disk
SHOWN = 8  # memory commits named in a refusal; more are named by a range


@dataclass(frozen=True)
class Reset:
    """A reset of a shell line: its mode (`--hard`, `--mixed`…), its target as written (HEAD for a reset of paths, which
    moves nothing), and that target's commit ('' when it names none)."""

    mode: str
    target: str
    commit: str
    moves_head: bool  # read-tree writes the index and worktree only


class Resolver:
    """Commits named on a shell line, asked of git once each."""

    def __init__(self, git: Git):
        self.git = git
        self._seen: dict[str, str] = {}

    def commit(self, name: str) -> str:
        """The commit `name` names ('' when it names none)."""
        if name not in self._seen:
            done = self.git.run("rev-parse", "-q", "--verify", "--end-of-options", f"{name}^{{commit}}", check=False)
            self._seen[name] = done.stdout.strip() if done.returncode == 0 else ""
        return self._seen[name]

    def head(self) -> str:
        return self.commit("HEAD")


def reset_of(words: list[str], resolver: Resolver) -> Reset | None:
    """The reset `words` (a git command) runs, None when it runs none."""
    command = running.subcommand(words)
    args = words[words.index(command) + 1:] if command in words else []
    cut = args.index("--") if "--" in args else len(args)
    operands = [w for w in args[:cut] if not w.startswith("-")]
    if command == "read-tree":  # `-u --reset TREE` / `-u -m TREE`: the worktree as TREE holds it, HEAD left
        if "-u" not in args or not {"--reset", "-m"} & set(args) or len(operands) != 1:
            return None
        return Reset("--hard", operands[0], resolver.commit(operands[0]), moves_head=False)
    if command != "reset":
        return None
    mode = next((w for w in args[:cut] if w in (*DISCARDING, "--soft", "--mixed")), "--mixed")
    if cut < len(args) or len(operands) > 1:  # paths (`git reset T -- file`): their index entries only, HEAD stays
        return Reset(mode, "HEAD", resolver.head(), moves_head=False)
    target = operands[0] if operands else "HEAD"
    return Reset(mode, target, resolver.commit(target), moves_head=True)


def resets(text: str, alias: gitline.Alias, resolver: Resolver) -> Iterator[tuple[Reset, list[list[str]]]]:
    """Each reset of the shell line `text`, with the git commands that follow it in the line."""
    calls = [list(call.words) for call in gitline.git_calls(text, alias)]
    for n, words in enumerate(calls):
        if (found := reset_of(words, resolver)) is not None:
            yield found, calls[n + 1:]


def to_head(found: Reset, resolver: Resolver) -> bool:
    """Whether a reset leaves the branch where it is (a memory commit made first stays on it)."""
    return not found.moves_head or found.target == "HEAD" or bool(found.commit) and found.commit == resolver.head()


def moves_branch(text: str, alias: gitline.Alias, resolver: Resolver) -> bool:
    """Whether the shell line `text` resets the branch to another commit (one a memory commit made first is not in)."""
    return any(not to_head(found, resolver) for found, _ in resets(text, alias, resolver) if found.moves_head)


def dropped(text: str, alias: gitline.Alias, resolver: Resolver) -> str:
    """Why the shell line `text` may not run ('' when it may): a reset of the worktree moving the branch past commits
    holding memory that its target lacks, when the line does not cherry-pick them back after it."""
    for found, after in resets(text, alias, resolver):
        if found.mode not in DISCARDING or not found.moves_head or not found.commit or found.commit == resolver.head():
            continue
        listed = resolver.git.run("rev-list", "--reverse", f"{found.commit}..HEAD", "--", MEMORY, check=False).stdout.split()
        picked = [w for words in after if running.subcommand(words) == "cherry-pick" for w in words if len(w) >= 7]
        lost = [sha for sha in listed if not any(sha.startswith(w) for w in picked)]
        if not lost:
            continue
        shas = [sha[:12] for sha in lost] if len(lost) <= SHOWN else [f"$(git rev-list --reverse {found.commit[:12]}..HEAD -- {MEMORY})"]
        line = f"git reset {found.mode} {found.commit[:12]} && git cherry-pick {' '.join(shas)}"
        return (f"`git reset {found.mode} {found.target}` would throw away {len(lost)} commit(s) holding this repository's "
                f"memory ({', '.join(s[:12] for s in lost[:SHOWN])}{', …' if len(lost) > SHOWN else ''}) that "
                f"{found.target} does not hold, and the records in them with it; to undo your own commits, `git revert` "
                f"them; to reset and keep memory, run `{line}`")
    return ""


def keep_pending(config: Config, text: str, alias: gitline.Alias, resolver: Resolver) -> None:
    """Take the pending records a `git add` staged out of the index before a line's reset to another commit empties it
    (`--hard`, `--merge`, `read-tree -u --reset`): untracked, they stay on disk."""
    if not any(found.mode in ("--hard", "--merge") and found.commit and found.commit != resolver.head()
               for found, _ in resets(text, alias, resolver)):
        return
    paths = sorted({entry.path for entry in Journal(config.state_dir).read() if (config.root / entry.path).is_file()})
    staged = resolver.git.run("ls-files", "--", *paths, check=False).stdout.split() if paths else []
    held = set(resolver.git.run("ls-tree", "-r", "--name-only", "HEAD", "--", *staged, check=False).stdout.split()) if staged else set()
    if left := [path for path in staged if path not in held]:  # never a file HEAD holds: its removal would be staged
        resolver.git.run("rm", "-q", "--cached", "--", *left, check=False)


def resolver_for(config: Config) -> Resolver:
    """A Resolver asking the repository of `config` (no git runs until a reset is read)."""
    return Resolver(Git(config.root, config.git_dir))

