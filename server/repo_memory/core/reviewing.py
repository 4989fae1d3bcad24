"""A person's review of a skill or a loop spec counts for the content they read (named by its sha), and turning a
draft down undoes the agent's change, never the person's work. Neither, nor an agent's update, goes ahead on a skill
that is invalid or that git left in a merge conflict: which version to keep is for a person to settle in git."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from pathlib import Path

from repo_memory.config import SKILLS_DIR
from repo_memory.core import agent_commits, codex_policy, merges, review_sha, skill_files
from repo_memory.errors import ConflictError, InvalidArgumentError, Problem, UnsafePathError
from repo_memory.formats import skills
from repo_memory.git.committed import Committed
from repo_memory.git import history, message
from repo_memory.git.committer import Committer
from repo_memory.git.repo import Git
from repo_memory.guards import disk
from repo_memory.guards.shellwords import quoted


SETTLE = "Settle the conflict and finish the merge or rebase (`repo-memory doctor` names each git step)"


def invalid(name: str, rel: str, problems: Sequence[Problem], refused: str, person: bool = False) -> str:
    """Why skill `name`, whose SKILL.md `rel` has `problems`, is not `refused` ("served", "accepted"…), and what to do:
    a merge conflict is settled in git first, anything else fixed in the file (by a `person` reviewing it, then again)."""
    said = "; ".join(p.message.rstrip(".") + (f" (line {p.line})" if p.line else "") for p in problems)
    if conflicting(problems):
        then = f"{SETTLE}, then review it again" if person else f"{SETTLE}; skill_write is refused until then"
    else:
        then = "Fix the file (`repo-memory doctor` lists every problem)" + (", then review it again" if person else
                                                                           ", or write it again with skill_write")
    return f"Skill '{name}' ({rel}) is invalid, so it is not {refused}: {said or 'it could not be read'}. {then}."


def conflicting(problems: Sequence[Problem]) -> bool:
    """Whether `problems` say the file holds a merge conflict's markers (formats/frontmatter.py)."""
    return any("unresolved merge conflict" in p.message for p in problems)


def usable(git: Git, skill: skills.Skill, doing: str) -> None:
    """Refuse `doing` ("accepted", "rejected") to `skill` while its folder holds a path git left unmerged or SKILL.md
    is invalid: its status cannot be trusted, and during a merge the version to keep is for a person to settle."""
    if not conflicting(skill.problems):  # else its markers name the line to settle
        unmerge(git, skill.path.rsplit("/", 1)[0], f"skill:{skill.name} is not {doing}")
    if skill.problems:
        raise ConflictError(invalid(skill.name, skill.path, skill.problems, doing, person=True))


def unmerge(git: Git, where: str, refused: str) -> None:
    """Raise, saying `refused`, when git left a path under `where` unmerged (in conflict, markers or not, until `git add`)."""
    listed = git.run("ls-files", "-u", "-z", "--", where, check=False).stdout.split("\0")
    unmerged = sorted({entry.partition("\t")[2] for entry in listed if entry})
    if unmerged:
        raise ConflictError(f"{refused}: git left {', '.join(unmerged)} unmerged, a merge conflict not settled yet. {SETTLE}; "
                            "until then no version of it is to commit, accept or discard: each side is someone's work.")


def accepted_as(path: Path, raw: bytes, sha: str, links_kept: bool = True) -> bool:
    """Whether `sha` names the draft that accept made the active skill whose SKILL.md (`raw`) is at `path`: accepting
    that version again changes nothing, where any other sha names a version that is not the one active."""
    name = path.parent.name
    drafted = skills.edit(raw.decode("utf-8"), name, {("metadata", "status"): "draft"}).encode("utf-8")
    current = review_sha.of(path.parent, links_kept, drafted)
    return len(sha) >= 7 and (current.startswith(sha.lower())
                              or review_sha.by_previous_release(path.parent, sha, current, links_kept, drafted))


def reviewed(what: str, sha: str, current: str, show: str, other: str = "", versions: Collection[str] | None = None) -> None:
    """Raise unless `sha` (7+ hex digits) is a prefix of `current`: the content a person reviewed is the content now.
    `other`, a skill file's own sha256 (which `read` and `skill_write` give), is named as such, not as a change; a sha
    none of `versions` (the shas it ever had, when known) starts with is named as matching none, not as a change."""
    if not re.fullmatch(r"[0-9a-f]{7,64}", sha.lower()):
        raise InvalidArgumentError(f"--sha takes the hash `{show}` printed (7 to 64 hex digits), not {sha[:70]!r}.")
    if other and other.startswith(sha.lower()) and not current.startswith(sha.lower()):
        raise InvalidArgumentError(f"{sha[:12]} is the sha256 of {what}'s SKILL.md file; --sha takes the sha of the whole reviewed "
                                   f"folder, which `{show}` prints (now {current[:12]}). Nothing was accepted.")
    if versions is not None and not any(v.startswith(sha.lower()) for v in (current, *versions)):
        raise InvalidArgumentError(f"--sha {sha[:12]} matches no version of {what}; the current one is {current[:12]}. "
                                   f"Nothing was accepted. Check the sha `{show}` printed.")
    if not current.startswith(sha.lower()):
        raise ConflictError(f"{what} changed since the version you reviewed (sha {sha[:12]}; now {current[:12]}). "
                            f"Nothing was accepted. Review it again: `{show}` (or `git diff`), then accept with its new sha.")


SHOWN = "shown-shas"  # in the state folder: the shas `show` printed on this clone, the newest last
SHOWN_KEPT = 200


def note_shown(state_dir: Path, sha: str) -> None:
    """Keep `sha`, which a `show` just printed, so that an accept naming it after the content changed reads as a change,
    not as a sha of no version (uncommitted versions are in no history). Local wording help, never a permission."""
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        kept = [line for line in shown(state_dir) if line != sha][-(SHOWN_KEPT - 1):]
        disk.write_atomic(state_dir / SHOWN, "".join(f"{line}\n" for line in [*kept, sha]).encode("ascii"))
    except (OSError, UnsafePathError):
        pass  # a read-only state folder: the accept's wording is all that is lost


def shown(state_dir: Path) -> list[str]:
    try:
        return [line for line in (state_dir / SHOWN).read_text(encoding="ascii", errors="replace").split() if line]
    except OSError:
        return []


def turn_down(committer: Committer, committed: Committed, name: str, path: Path, rel: str) -> tuple[list[str], str, str]:
    """Reject draft skill `name` (its SKILL.md at `path`, `rel`): back to the last version a commit holds as active (the
    whole history searched), or, when none was ever accepted, deleted — but never a file beside it that no commit holds
    as it is, or that a person committed (theirs); bytecode in no commit (skill_files.regenerable) goes with it. Returns (changed paths, commit message, what was done)."""
    git, source = committer.git, rel.rsplit("/", 2)[0]
    skill = f"{source}/{name}"
    if (accepted := last_accepted(git, rel, committer.state_dir)) is not None:
        commit, data, target = accepted
        disk.write_atomic(path, data)
        beside, kept = _give_back(committer, committed, skill, target)
        return ([rel, *beside], f"memory(skill): reject {name}, back to {commit[:7]}",
                f"rejected the draft: skill:{name} is back to its last accepted version (commit {commit[:7]})"
                + (f", with {', '.join(b.rsplit('/', 1)[-1] for b in beside)} as they were" if beside else "")
                + (f"; kept as they are: {', '.join(kept)}, see `git log -p -- {quoted(skill)}`" if kept else ""))
    if source != SKILLS_DIR:  # a person's own folder (.claude/skills): never deleted on the strength of an agent's draft
        raise ConflictError(f"skill:{name} in {source} was never committed as active, so git holds no version to go back to "
                            f"and reject would delete a folder of yours: edit {rel} by hand (`git diff -- {quoted(rel)}`).")
    folder, head = path.parent, committed.head()
    entries = sorted(folder.rglob("*"), reverse=True)  # deepest first, so folders are empty when removed
    ours = codex_policy.ours_in(folder)  # written with the draft
    files = sorted([*(e.path for e in skill_files.walk(folder, unfiltered=True)), *ours], reverse=True)  # ignored: maybe a person's
    unheld = [why for p in files if p != path and p not in ours and (why := _theirs(committer, committed, skill, p, head))]
    if unheld:
        raise ConflictError(f"skill:{name} was never accepted, so reject deletes it, but beside it is {', '.join(unheld)}. "
                            f"Move or delete it yourself, then run `repo-memory reject {quoted(name)}` again.")
    for entry in entries:
        entry.rmdir() if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    folder.rmdir()
    return ([f"{skill}/{p.relative_to(folder).as_posix()}" for p in files], f"memory(skill): reject {name}",
            f"rejected and deleted the draft skill:{name}")


def last_accepted(git: Git, rel: str, state_dir: Path) -> tuple[str, bytes, str] | None:
    """The version of the skill whose SKILL.md is `rel` that a person last accepted, the whole history searched: (the
    commit holding SKILL.md so, its bytes as a checkout writes them, the commit whose folder is the one accepted), or
    None when no commit ever held it active and valid (other than by a merge that joined an unreviewed change)."""
    source, skill = rel.rsplit("/", 2)[0], rel.rsplit("/", 1)[0]
    usable: dict[str, bytes | None] = {}  # blob id -> its text when it reads as active and valid (an agent may write one text often)
    for commit, blob, _ in history.versions(git, rel):
        if blob not in usable:
            text = history.checked_out(git, rel, blob)  # the skill, where git may hold an LFS pointer
            found = skills.parse(text, rel, source)
            usable[blob] = text if found.status == "active" and not found.problems else None
        if (data := usable[blob]) is not None and not merges.joined(git, commit, skill):  # else no person accepted that text
            return commit, data, _as_accepted(git, skill, rel, commit, blob, agent_commits.made(state_dir))
    return None


def _as_accepted(git: Git, skill: str, rel: str, accepted: str, blob: str, agents: frozenset[str]) -> str:
    """The commit whose folder `skill` is the one a person accepted with SKILL.md (`rel`) `blob` in commit `accepted`:
    the newest holding that SKILL.md, files beside it changed since by a person included — not the next version by date,
    which may be an agent's on a branch made before the accept — and no merge that joined an unreviewed change to it,
    nor a commit an agent made itself (`agents`, core/agent_commits.py)."""
    commits = history.touching(git, skill)
    for commit, held in zip(commits, history.blob_ids(git, commits, rel)):
        if held == blob and commit not in agents and not merges.joined(git, commit, skill):
            return commit
    return accepted


def _theirs(committer: Committer, committed: Committed, skill: str, path: Path, head: str | None) -> str:
    """Why the file at `path` in the folder of `skill` is a person's, not to delete with a draft no one accepted: in
    no commit as it is, or committed by a person ('' when it is the agent's)."""
    git, rel = committer.git, path.relative_to(committer.git.root / skill).as_posix()
    full, entry = f"{skill}/{rel}", skill_files.Entry(rel, path, path.is_symlink())
    if not skill_files.held(committed, full, entry, git.modes_at(head, (skill,)) if head else {}, head, git.links_kept()):
        return "" if skill_files.regenerable(path) else f"{full.rsplit('/', 1)[-1]}, in no commit (a person's?)"
    persons = _persons(committer, head, full)
    return f"{full.rsplit('/', 1)[-1]}, as your commit {persons} left it" if persons else ""


def _persons(committer: Committer, head: str | None, full: str) -> str:
    """The commit that made `full` as `head` holds it (git's walk follows the side of a merge it came from), when a
    person committed it, not repo-memory; '' else, and where every commit is a person's (commit = "stage" or "off")."""
    if committer.mode not in ("auto", "private") or head is None:
        return ""
    sha, _, who = committer.git.run("log", "-1", "--format=%H%x00%cn", head, "--", full).stdout.strip().partition("\0")
    return sha[:7] if sha and who != message.COMMITTER and sha not in agent_commits.made(committer.state_dir) else ""


def unsaved(committer: Committer, committed: Committed, path: Path, rel: str, doing: str, agent: bool = False) -> None:
    """Refuse `doing` to a skill whose file holds what no commit has and repo-memory did not write: a person's edit in
    progress, which the memory commit would take as the agent's, or a rejection would lose. An `agent` is told to
    leave that edit alone and tell the person: only the person may commit or drop their own work."""
    if committer.mode in ("auto", "private") and not committed.file(rel, disk.read_safely(path)) and not committer.waiting(rel):
        unmerge(committer.git, rel, f"{doing[0].upper()}{doing[1:]} is refused")  # a merge's changes: never to discard
        said = f"{rel} has changes that no commit holds and repo-memory did not write (a person's edit in progress?); "
        if agent:
            raise ConflictError(said + f"{doing} would commit them as yours, so it is refused. Leave that edit as it is (do "
                                "not commit, discard, stash or check out the file) and tell the person: once they commit "
                                "their edit, write again.")
        raise ConflictError(said + f"{doing} would commit them. Commit or discard them first (`git diff -- {quoted(rel)}`).")


def beside(folder: Path) -> dict[str, skill_files.Entry]:
    """The files and links of skill `folder` (core/skill_files.py) but its SKILL.md and Codex's file, by their path in it."""
    return {entry.rel: entry for entry in skill_files.walk(folder) if not _settled_elsewhere(entry.rel)}


def agents_change(git: Git, committed: Committed, skill: str, named: set[str], since: int | None) -> list[str]:
    """The files and links beside SKILL.md of `skill` (its folder's path) that an agent's tool call changed — named by
    the call, or changed while it ran (status-change times; a removal changes its folder's) — and HEAD does not hold as
    they are: committed with the draft, so that `git log -p` shows them and `reject` can give back what was accepted. A
    name that is no UTF-8 stays uncommitted (reject names it)."""
    folder, head, found = git.root / skill, committed.head(), []
    modes, kept = git.modes_at(head, (skill,)) if head else {}, git.links_kept()
    for rel, entry in beside(folder).items():
        full = f"{skill}/{rel}"
        try:
            touched = full in named or since is not None and os.lstat(entry.path).st_ctime_ns >= since
            if touched and skill_files.committable(full) and not skill_files.held(committed, full, entry, modes, head, kept):
                found.append(full)
        except (OSError, UnsafePathError):
            continue
    for full in modes:
        where = git.root / full
        if not _settled_elsewhere(full[len(skill) + 1:]) and not os.path.lexists(where):
            while not where.exists() and where != folder.parent:
                where = where.parent  # the nearest folder still there: removing what it held changed it
            if full in named or since is not None and where.exists() and os.lstat(where).st_ctime_ns >= since:
                found.append(full)
    return found


def _give_back(committer: Committer, committed: Committed, skill: str, target: str) -> tuple[list[str], list[str]]:
    """Put the files beside SKILL.md of `skill` back as commit `target` holds them: changed, added and removed ones only
    when HEAD holds them so and repo-memory committed that (an agent's change, committed with its draft) or its commit
    of them is to come; never what no commit holds, nor what a person committed. Returns (the paths changed, the files
    kept as they are, each with why)."""
    git = committer.git
    folder, head, links_kept = git.root / skill, committed.head(), git.links_kept()
    then = {rel: mode for full, mode in git.modes_at(target, (skill,)).items() if not _settled_elsewhere(rel := full[len(skill) + 1:])}
    heads, now = git.modes_at(head, (skill,)) if head else {}, beside(folder)
    changed, kept = [], []
    for rel in sorted(set(then) | set(now)):
        full, path, entry = f"{skill}/{rel}", folder / rel, now.get(rel)
        then_held = git.entry(target, full) if rel in then else None
        old = history.checked_out(git, full, then_held[0]) if then_held else None  # as a checkout writes it: never an LFS pointer
        if entry is not None and old is not None and skill_files.same_kind(entry, then[rel], links_kept) and (
                entry.data() == old or not entry.link and committed.file(full, entry.data(), target)):
            continue  # as `target` holds it, also where a checkout would convert it (CRLF, a filter) and this copy is not
        held = skill_files.held(committed, full, entry, heads, head, links_kept) if entry else head is not None and not git.entry(head, full)
        if entry is not None and not held and not committer.waiting(full):
            kept.append(f"{rel} (changes no commit holds: yours?)")
            continue
        if held and (persons := _persons(committer, head, full)):  # HEAD holds it so, made by a person's commit
            kept.append(f"{rel} (as your commit {persons} left it)")
            continue
        as_link = old is not None and then[rel] == skill_files.LINK and links_kept
        if entry is not None and (entry.link or old is None or as_link):
            path.unlink()  # the link itself, never what it leads to
        if old is None:
            while (path := path.parent) != folder and not any(path.iterdir()):
                path.rmdir()  # a folder only the agent's files were in
        elif as_link:
            os.symlink(os.fsdecode(old), path)
        else:
            disk.write_atomic(path, old)
            mode = os.stat(path).st_mode
            os.chmod(path, mode | 0o111 if then[rel] == 0o100755 else mode & ~0o111)
        changed.append(full)
    return changed, kept


def _settled_elsewhere(rel: str) -> bool:
    """Whether `rel`, a path inside a skill folder, is its SKILL.md or Codex's file (offering.settle's)."""
    return rel == skills.SKILL_FILE or rel.startswith(codex_policy.SETTLED)
