"""The memory layout in a user's repository, created idempotently by `repo-memory init`.

Shared files (`.agents/…`, `.gitattributes`) hold nothing machine-specific. The diff driver that renders logs lives
in the clone's own `.git/config`, and calls `repo-memory` by name with a fallback to the raw text, so `git log -p`
keeps working where repo-memory is not installed. In private mode (`commit = "private"`) nothing of repo-memory's
goes into shared files at all: the attribute rules go to `.git/info/attributes` and `.agents/` to `.git/info/exclude`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from repo_memory.config import Config
from repo_memory.git import attributes as attrs, skill_merge, status
from repo_memory.git.repo import CommitResult, Git
from repo_memory.guards import disk

FOLDERS = (".agents/skills", ".agents/loops", ".agents/experience")
UNION_LINE = ".agents/experience/** merge=union"
DIFF_LINE = ".agents/experience/**/*.jsonl diff=repo-memory"
# git hands logs and blobs back with the bytes committed, whatever core.autocrlf says: a CRLF checkout is not what git holds
EOL_LINE = ".agents/experience/**/*.jsonl text eol=lf"
BLOB_LINE = ".agents/experience/blobs/** -text"
RULES = [UNION_LINE, DIFF_LINE, EOL_LINE, BLOB_LINE, skill_merge.LINE]
# a path of each kind the rules are for, and the attributes they set: what git applies to these is what must be theirs
SAMPLES = {".agents/experience/2000-01/2000-01-01-000000.jsonl": "experience logs", ".agents/experience/blobs/00/00": "blobs",
           ".agents/skills/sample/SKILL.md": "skills"}
NAMES = ("text", "eol", "merge", "diff")
TEXTCONV = 'f() { repo-memory textconv "$1" 2>/dev/null || cat "$1"; }; f'  # the raw lines when repo-memory is not installed
README = """\
# .agents — this repository's memory (repo-memory)

- `skills/<name>/SKILL.md` — reusable procedures (Agent Skills format). Edit them like any file.
- `loops/<name>.md` — loop specifications the server can run.
- `experience/` — append-only session logs; summaries cite records by id.

Inspect every change with `git log -p .agents/`. Search with `repo-memory search "..."`.
"""


@dataclass
class Setup:
    """What init changed, and the shared files it wrote doing so (none in private mode): to commit, and only those; a
    file it left as it was is not its to commit (edits the person has under way in it stay theirs)."""

    changes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def init(root: Path, common_dir: Path | None = None, private: bool = False) -> Setup:
    """Create missing folders, the union-merge and diff rules, a short README, and the clone's diff driver.
    `common_dir`: the repository's git dir, shared by its worktrees (git reads info/ only there)."""
    git_dir = common_dir or root / ".git"
    done = Setup()
    for folder in FOLDERS:
        keep = root / folder / ".gitkeep"
        if not keep.exists():
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.touch()
            done.changes.append(f"created {folder}/")
            done.files.append(f"{folder}/.gitkeep")
    readme = root / ".agents" / "README.md"
    if not readme.exists():
        disk.write_atomic(readme, README.encode())
        done.changes.append("created .agents/README.md")
        done.files.append(".agents/README.md")
    attributes = git_dir / "info" / "attributes" if private else root / ".gitattributes"
    held = attributes.read_text(encoding="utf-8").splitlines() if attributes.exists() else []
    if add_lines(attributes, RULES):
        added = [line for line in RULES if line not in held]
        done.changes.append(f"added {'its rules' if len(added) == len(RULES) else 'the rules it lacked'} to "
                            f"{_shown(root, attributes)}: " + "; ".join(f"`{line}`" for line in added)
                            + (" (union merge, readable diffs and LF line endings for experience logs, -text for their blobs, "
                               "the merge driver for skills)" if len(added) == len(RULES) else ""))
        done.files.append(".gitattributes")
    if moved := _put_last(root, git_dir, attributes):
        done.changes.append(moved)
        done.files += [] if ".gitattributes" in done.files else [".gitattributes"]
    if private:
        if add_lines(git_dir / "info" / "exclude", [".agents/"]):
            done.changes.append("added .agents/ to .git/info/exclude (private mode: memory stays out of your branch)")
        done.files = []  # nothing of it is shared
    git = Git(root, git_dir)
    if git.config("diff.repo-memory.textconv") != TEXTCONV:
        git.set_config("diff.repo-memory.textconv", TEXTCONV)
        done.changes.append("set the clone's git config diff.repo-memory.textconv (git diff/log -p/show render experience records)")
    if git.config("diff.repo-memory.cachetextconv") != "true":  # a process per log version, else: `git log -p` took 21 s
        git.set_config("diff.repo-memory.cachetextconv", "true")
        done.changes.append("set diff.repo-memory.cachetextconv (each log version is rendered once, kept in refs/notes/textconv)")
    if git.config(f"merge.{skill_merge.NAME}.driver") != skill_merge.DRIVER:  # an agent's rewrite merged into an accepted skill stays a draft
        git.set_config(f"merge.{skill_merge.NAME}.name", "repo-memory: a merged skill no person accepted stays a draft")
        git.set_config(f"merge.{skill_merge.NAME}.driver", skill_merge.DRIVER)
        done.changes.append(f"set the clone's git config merge.{skill_merge.NAME}.driver (a merge never makes a skill active "
                            "with text no person accepted)")
    return done


def set_up(config: Config, commit: Callable[[list[str], str], CommitResult | None]) -> tuple[Setup, CommitResult | None]:
    """`init` for `config`'s repository, and with commit = "auto" the commit of its shared files (`commit`: the Store's
    commit_files), one memory commit: what `repo-memory init` does, and the demo's repository gets."""
    # A file of the layout that already holds uncommitted work of the person's (their own .gitattributes edits) is not
    # init's to commit: its rules are added, and the person commits it with their work.
    theirs: set[str] = set()
    if config.commit == "auto":
        changed, deleted, conflicted = status.worktree(Git(config.root, config.common_dir), (".gitattributes", ".agents"))
        theirs = {*changed, *deleted, *(path for path, _ in conflicted)}
    done = init(config.root, config.common_dir, private=config.commit == "private")
    if not done.files or config.commit != "auto":
        return done, None
    if left := [f for f in done.files if f in theirs]:
        done.changes.append(f"left {', '.join(left)} for you to commit with your work (it holds uncommitted edits of "
                            f"yours): git add {' '.join(left)}")
    done.files = [f for f in done.files if f not in theirs]  # what init committed
    return done, commit(done.files, "memory: set up repo-memory (.agents/ layout, .gitattributes rules)") if done.files else None


def remove(root: Path, git_dir: Path, dry_run: bool = False) -> list[str]:  # git_dir: the common one (see init)
    """Undo the clone-local parts of init (the diff driver, private-mode rules); memory files and .gitattributes stay.
    `dry_run` only says what it would remove."""
    changes = []
    git = Git(root, git_dir)
    note = " (dry run, not written)" if dry_run else ""
    if git.config("diff.repo-memory.textconv"):
        if not dry_run:
            git.run("config", "--local", "--remove-section", "diff.repo-memory", check=False)
            git.run("update-ref", "-d", "refs/notes/textconv/repo-memory", check=False)  # its cache of rendered logs
        changes.append("removed the diff driver and its cache from .git/config and refs/notes/textconv" + note)
    if git.config(f"merge.{skill_merge.NAME}.driver"):
        if not dry_run:
            git.run("config", "--local", "--remove-section", f"merge.{skill_merge.NAME}", check=False)
        changes.append("removed the skill merge driver from .git/config" + note)
    for path, lines in ((git_dir / "info" / "attributes", RULES),
                        (git_dir / "info" / "exclude", [".agents/"])):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            kept = [line for line in text.splitlines() if line not in lines]
            if kept != text.splitlines():
                if not dry_run:
                    disk.write_atomic(path, ("\n".join(kept) + "\n" if kept else "").encode())
                changes.append(f"removed repo-memory's lines from {_shown(root, path)}" + note)
    return changes


def add_lines(path: Path, lines: list[str]) -> bool:
    """Append to the text file at `path` (made if missing) the `lines` it does not hold yet; whether any were."""
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    missing = [line for line in lines if line not in current.splitlines()]
    if missing:
        prefix = current if not current or current.endswith("\n") else current + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        disk.write_atomic(path, (prefix + "".join(f"{line}\n" for line in missing)).encode())
    return bool(missing)


@dataclass(frozen=True)
class Override:
    """Attributes git applies to memory files other than repo-memory's rules (in `rules`) set them: the line that does
    it, of `file` (`line` 0: none found), and what it changes (`changes`)."""

    file: str
    line: int
    text: str
    changes: str
    rules: str

    @property
    def movable(self) -> bool:
        """The line comes after the rules in their own file: init moves them past it."""
        return bool(self.line) and self.file == self.rules

    def said(self) -> str:
        if self.movable:
            return (f"line {self.line} of {self.file}, `{self.text}`, comes after repo-memory's rules and overrides them "
                    f"({self.changes}): git applies the last line that matches a path")
        if self.line:
            return (f"line {self.line} of {self.file}, `{self.text}`, overrides repo-memory's rules in {self.rules} "
                    f"({self.changes}): " + (f"git reads {self.file} before every .gitattributes" if self.file.endswith(
                        "info/attributes") else "a folder's .gitattributes outranks those above it for the files under it")
                    + f", so no order of lines in {self.rules} can outrank it")
        return (f"git applies {self.changes}, though no line after repo-memory's rules in {self.rules}, in "
                ".git/info/attributes or in a folder's .gitattributes above these files says so")

    def fix(self) -> str:
        if self.movable:
            return f"run `repo-memory init` (it moves repo-memory's rules to the end of {self.file}, where they win)"
        if self.line:
            return (f"take that line out of {self.file}, or narrow its pattern to leave .agents/ alone" + (
                " (the file is this clone's own: nothing to commit)" if self.file.endswith("info/attributes") else
                ", and commit that"))
        return (f"find the line (`git check-attr -a -- {next(iter(SAMPLES))}` shows what git applies; "
                "`git grep -n eol -- '*.gitattributes'` finds it), take it out and commit that")


def overridden(root: Path, git_dir: Path | None = None, paths: list[str] | None = None) -> list[Override]:
    """Where what git applies to memory files (`paths`, else one of each kind) is not what repo-memory's rules set, as
    `git check-attr` answers, each with the line that does it; [] when init has not run here or all is as they set."""
    found = _attributes(root, git_dir)
    if found is None:
        return []
    paths = paths or list(SAMPLES)
    lines, now = found[1].splitlines(), attrs.applied(root, paths, NAMES)
    held = [rule for rule in RULES if rule in lines]  # a rule an older init did not write is missing_rules' to name
    intended = attrs.ruled(held, paths)
    wrong = [(path, name, want, have) for path in paths if now.get(path) for name in NAMES
             if (want := intended.get(path, {}).get(name, "unspecified")) != "unspecified"
             and want != (have := now[path].get(name, "unspecified"))]
    if not wrong:
        return []
    first = min(lines.index(rule) for rule in held)  # a line before the rules decides nothing: they come later
    sources = [*_outranking(root, git_dir or root / ".git", found[0], paths),
               (found[0], "", {n: line for n, line in enumerate(lines) if n >= first})]
    decided = attrs.deciding(root, git_dir or root / ".git", [source[1:] for source in sources], paths, NAMES)
    changes: dict[tuple[Path, int, str], list[str]] = {}
    for path, name, want, have in wrong:  # the file git ranks highest that has a line deciding it, its last such line
        at = next(((file, n + 1, text[n]) for (file, _, text), d in zip(sources, decided)
                   if (n := d.get(path, {}).get(name, -1)) >= 0), (found[0], 0, ""))
        said = f"{_spelled(name, have)} for {SAMPLES.get(path, 'it')} where they set {_spelled(name, want)}"
        if said not in (known := changes.setdefault(at if at[2] not in RULES else (found[0], 0, ""), [])):
            known.append(said)
    return [Override(_shown(root, file), line, text, "; ".join(said), _shown(root, found[0]))
            for (file, line, text), said in changes.items()]


def _outranking(root: Path, git_dir: Path, rules: Path, paths: list[str]) -> list[tuple[Path, str, dict[int, str]]]:
    """The attributes files git ranks above `rules` for `paths`, highest first, each with the folder its patterns are
    relative to and its lines: .git/info/attributes, then each .gitattributes in a folder above them, deepest first."""
    if rules == git_dir / "info" / "attributes":
        return []
    folders = {"/".join(path.split("/")[:k]) for path in paths for k in range(1, path.count("/") + 1)}
    files = [(git_dir / "info" / "attributes", "")] + [(root / folder / ".gitattributes", folder)
                                                       for folder in sorted(folders, key=lambda f: -f.count("/"))]
    return [(file, folder, dict(enumerate(file.read_text(encoding="utf-8", errors="replace").splitlines())))
            for file, folder in files if file.is_file()]


def _put_last(root: Path, git_dir: Path, attributes: Path) -> str:
    """Move repo-memory's rules to the end of `attributes` when a line after them overrides them; what it did ('': none)."""
    found = [o for o in overridden(root, git_dir) if o.movable]
    if not found or not attributes.exists():
        return ""
    kept = [line for line in attributes.read_text(encoding="utf-8").splitlines() if line not in RULES]
    disk.write_atomic(attributes, "".join(f"{line}\n" for line in [*kept, *RULES]).encode())
    return (f"moved repo-memory's rules to the end of {_shown(root, attributes)}: "
            + "; ".join(f"line {o.line}, `{o.text}`, came after them and overrode them ({o.changes})" for o in found)
            + " (git applies the last line that matches a path)")


def _spelled(name: str, value: str) -> str:
    return {"set": name, "unset": f"-{name}", "unspecified": f"!{name}"}.get(value, f"{name}={value}")


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def missing_drivers(root: Path, git_dir: Path | None = None) -> list[str]:
    """The drivers init registers that this clone's git config lacks (a clone does not copy .git/config), each with what
    its absence does: the one that renders experience logs, the one that merges skills."""
    git = Git(root, git_dir or root / ".git")
    return ([] if git.config("diff.repo-memory.textconv") == TEXTCONV else
            ["the diff driver for experience logs (without it `git log -p` shows their raw JSON lines)"]) + (
        [] if git.config("diff.repo-memory.cachetextconv") == "true" else
        ["the diff driver's cache (without it `git log -p`, `-S` and `diff` render every log version anew, about half a "
         "second each)"]) + (
        [] if git.config(f"merge.{skill_merge.NAME}.driver") == skill_merge.DRIVER else
        ["the merge driver for skills (without it a merge of skills is git's plain text merge, which may join an agent's "
         "draft to an accepted skill: repo-memory then takes it for a draft)"])


def initialised(root: Path, git_dir: Path | None = None) -> bool:
    """True when init has run here (the union-merge rule is in place, shared or private; `git_dir`: the common one)."""
    return _attributes(root, git_dir) is not None


def set_up_in_clone(root: Path, git_dir: Path | None = None) -> bool:
    """True when init ran in this clone (its diff driver is in the clone's git config), whatever the branch checked out
    holds: a branch made before init has no rules of its own (`git_dir`: the common one)."""
    return Git(root, git_dir or root / ".git").config("diff.repo-memory.textconv") == TEXTCONV


def missing_rules(root: Path, git_dir: Path | None = None) -> tuple[str, list[str]]:
    """The attributes file init wrote its rules to, and those of today's rules it lacks (an older init's): ('', [])
    when init has not run here."""
    found = _attributes(root, git_dir)
    if found is None:
        return "", []
    have = found[1].splitlines()
    return _shown(root, found[0]), [rule for rule in RULES if rule not in have]


def _attributes(root: Path, git_dir: Path | None) -> tuple[Path, str] | None:
    for attributes in (root / ".gitattributes", (git_dir or root / ".git") / "info" / "attributes"):
        if attributes.exists() and UNION_LINE in (text := attributes.read_text(encoding="utf-8")).splitlines():
            return attributes, text
    return None
