"""Mirror .agents/skills into .claude/skills so Claude Code sees the same skills natively."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from repo_memory import layout
from repo_memory.core import offering, skill_files
from repo_memory.errors import UnsafePathError
from repo_memory.guards import disk
from repo_memory.guards import paths as guard
from repo_memory.formats import nesting, skills
from repo_memory.git import clone
from repo_memory.config import SKILLS_DIR

if TYPE_CHECKING:
    from repo_memory.core.store import Store

TARGET = ".claude/skills"
View = Mapping[str, offering.Indexed]  # each skill of .agents/skills as the index has it (offering.indexed)


def of(store: Store, view: View | None = None, recheck: Collection[str] = ()) -> MirrorReport:
    """Mirror the skills of `store`'s repository, at most its `mirror_limit`, the most useful first; with `view`
    (offering.indexed), which are served is what the index says, not what reading every SKILL.md again would, and the
    copies of `recheck` (whose source folders `stamps` says changed) are compared file by file."""
    return mirror(store.root, store.config.state_dir, git_dir=store.config.common_dir, limit=store.config.mirror_limit,
                  worth=_worth(store), changed=store.skill_changed, view=view, recheck=recheck)


def _worth(store: Store) -> dict[str, float]:
    return {name: u.utility for name, u in store.evidence().items()}  # what outcomes earned each skill


def beyond_note(report: MirrorReport, limit: int) -> str:
    """What a person is told of the skills past the limit ('' when none)."""
    return (f"{len(report.beyond)} more active skill(s) not copied: beyond mirror_limit ({limit}), since Claude Code lists every "
            "copy on every request; recall serves them (raise mirror_limit in .agents/repo-memory.toml to copy more)") if report.beyond else ""


@dataclass
class MirrorReport:
    """What a mirror pass did, folder by folder."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept_hand_written: list[str] = field(default_factory=list)
    kept_edited: list[str] = field(default_factory=list)  # copies a person edited: left as they are (`drift` says why)
    withheld: dict[str, str] = field(default_factory=dict)  # name -> why it is not copied (not what recall serves)
    beyond: list[str] = field(default_factory=list)  # served, but past the limit of copies (config mirror_limit)


def _copied(copy: Path, key: str = "sha256") -> str | None:
    """The digest of what `mirror` wrote in `copy` (`key` skill_sha256: of its SKILL.md alone), as its marker keeps it
    (None when the marker says none)."""
    try:
        found = nesting.loads((copy / skills.MIRROR_MARKER).read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def edited(copy: Path) -> bool:
    """Whether generated copy `copy` holds what `mirror` did not write (a person's edit): it is never overwritten or
    deleted by a pass, since git ignores the copies and nothing would bring the edit back."""
    return _digest(copy) != _copied(copy)


def _digest(folder: Path) -> str:
    """Of what a copy holds of skill `folder`: what its review sha counts (core/skill_files.py), a link by its target."""
    h = hashlib.sha256()
    for entry in _entries(folder):
        # An executable file's mark comes after its bytes: a copy an older release wrote, counting no mode, reads as
        # its digest says (no person's edit) and is made again with the mode.
        h.update(os.fsencode(entry.rel) + b"\0" + (b"link:" if entry.link else b"") + entry.data() + b"\0"
                 + (b"exec\0" if entry.executable else b""))
    return h.hexdigest()


def _entries(folder: Path) -> list[skill_files.Entry]:
    # The marker is no content of the skill; git ignores a copy whole, so nothing in one is left out as ignored.
    return [e for e in skill_files.walk(folder, unfiltered=True) if e.rel != skills.MIRROR_MARKER]


def stamps(root: Path, target: str = TARGET, only: Collection[str] | None = None) -> dict[str, str]:
    """{name: a digest of the names, sizes and times of the files beside the SKILL.md of its source} of each generated
    copy in `target` (with `only`, of those names): that one changed, which the index (of SKILL.md files alone) does not
    say, without reading a file; one folder per copy, at most mirror_limit of them."""
    base, out = root / target, {}
    try:
        copies = [e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False) and (only is None or e.name in only)]
    except OSError:
        return {}
    for name in sorted(copies):
        if not os.path.isfile(base / name / skills.MIRROR_MARKER):
            continue
        h = hashlib.sha256()
        source = root / SKILLS_DIR / name
        for where, _, files in sorted(os.walk(source)):
            for file in sorted(f for f in files if not (f == skills.SKILL_FILE and where == str(source))):
                try:
                    st = os.lstat(os.path.join(where, file))
                except OSError:
                    continue
                rel = os.path.relpath(os.path.join(where, file), root)
                h.update(f"{rel}\0{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}\0".encode())
        out[name] = h.hexdigest()
    return out


def _chosen(root: Path, report: MirrorReport, limit: int | None, worth: Mapping[str, float] | None,
            changed: Callable[[list[tuple[str, int]]], dict[str, int]] | None, view: View | None = None) -> list[str]:
    """The skills `mirror` copies (sorted); those it does not go in `report` (withheld, or beyond the limit)."""
    source_base = root / SKILLS_DIR
    if view is None:  # each SKILL.md read as it is now
        names = sorted(p.name for p in source_base.iterdir() if p.is_dir() and not p.is_symlink() and (p / skills.SKILL_FILE).is_file()) if source_base.is_dir() else []
        view = {n: offering.Indexed(offering.withheld(root, SKILLS_DIR, n), (source_base / n / skills.SKILL_FILE).stat().st_mtime_ns, "")
                for n in names}
    else:  # real folders (not links) the index has a SKILL.md of: one listing, no file read
        real: set[str] = set()
        if source_base.is_dir():
            with os.scandir(source_base) as entries:
                real = {entry.name for entry in entries if entry.is_dir(follow_symlinks=False)}
        view = {n: v for n, v in view.items() if n in real}
    report.withheld.update({n: v.why for n, v in sorted(view.items()) if v.why})
    names = sorted(n for n, v in view.items() if not v.why)
    if limit is not None and len(names) > limit:
        files = {n: (f"{SKILLS_DIR}/{n}/{skills.SKILL_FILE}", view[n].mtime_ns) for n in names}
        ages = changed(list(files.values())) if changed else {}
        ranked = sorted(names, key=lambda n: (-(worth or {}).get(n, 1.0), -ages.get(files[n][0], files[n][1]), n))
        past = set(ranked[limit:])
        report.beyond = [n for n in names if n in past]
        names = sorted(ranked[:limit])
    return names


def mirror(root: Path, state_dir: Path, target: str = TARGET, git_dir: Path | None = None, limit: int | None = None,
           worth: Mapping[str, float] | None = None, changed: Callable[[list[tuple[str, int]]], dict[str, int]] | None = None,
           view: View | None = None, recheck: Collection[str] = ()) -> MirrorReport:
    """Copy each active, valid skill folder to `target`, marking copies as generated (a hand-written folder there, and a
    copy a person edited, are left alone); copies of skills no longer served are removed, with the lines that made git
    ignore them. Past `limit` skills, the most useful (`worth`: their utility from outcomes), then the most recently
    changed (`changed([(path, mtime_ns)])`: core/ages.py), are copied: Claude Code lists every copy on every request.
    With `view`, the skills are taken as the index has them: a copy whose SKILL.md it says is unchanged is not read,
    unless it is one of `recheck` (a file beside its SKILL.md changed: `stamps`)."""
    report = MirrorReport()
    disk.write_atomic(state_dir / IN_USE, b"")  # copies are in use here, even once none is left (core/mirror.py: in_use)
    names = _chosen(root, report, limit, worth, changed, view)
    source_base = root / SKILLS_DIR
    with disk.repo_lock(state_dir):
        for name in names:
            guard.check_name(name, "skill folder name")
            source = source_base / name
            dest = guard.inside(root, target, name)
            marker = dest / skills.MIRROR_MARKER
            if dest.exists() and not marker.exists():
                report.kept_hand_written.append(name)
                continue
            if view is not None and name not in recheck and marker.exists() \
                    and _copied(dest, "skill_sha256") == view[name].sha256:
                report.unchanged.append(name)  # its SKILL.md is as copied, says the index, and nothing beside it changed
                continue
            try:
                digest = _digest(source)
            except UnsafePathError as exc:  # a hard-linked file, say: no review sha either (core/review_sha.py)
                report.withheld[name] = str(exc)
                continue
            if marker.exists() and _copied(dest) == digest:
                report.unchanged.append(name)
                continue
            if dest.exists() and edited(dest):
                report.kept_edited.append(name)
                continue
            _write(source, dest, name, digest)
            report.written.append(name)
        if git_dir is not None:  # each clone makes its own copies from the committed source: git ignores them, here only
            layout.add_lines(git_dir / "info" / "exclude", [f"/{target}/{name}/" for name in names if name not in report.kept_hand_written])
        base = root / target
        if base.is_dir():
            for dest in sorted(base.iterdir()):
                if dest.is_dir() and not dest.is_symlink() and (dest / skills.MIRROR_MARKER).exists() and dest.name not in names:
                    if edited(dest):
                        report.kept_edited.append(dest.name)
                        continue
                    shutil.rmtree(dest)
                    report.removed.append(dest.name)
        if git_dir is not None:
            _unexclude(root, git_dir, target, report.removed)
    return report


def _write(source: Path, dest: Path, name: str, digest: str) -> None:
    """Make `dest` a copy of skill folder `source` (whose `_digest` is `digest`), with the marker saying so."""
    if dest.exists():
        shutil.rmtree(dest)
    skill_sha = ""  # of its SKILL.md as copied: the index's digest of that file says whether it changed since
    for entry in _entries(source):
        there, data = guard.inside(dest, *entry.rel.split("/")), entry.data()
        if entry.link:  # as git would check it out: the same depth below the repository, so a relative target holds
            there.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(entry.path.readlink(), there)
        else:
            disk.write_atomic(there, data)
            _mode_as(there, entry.executable)  # `scripts/deploy.sh` runs from the copy as from its skill
        skill_sha = hashlib.sha256(data).hexdigest() if entry.rel == skills.SKILL_FILE else skill_sha
    note = {"generated_by": "repo-memory sync", "source": f"{SKILLS_DIR}/{name}", "sha256": digest, "skill_sha256": skill_sha,
            "note": "Edit the source folder, not this copy; `repo-memory sync` rewrites it."}
    disk.write_atomic(dest / skills.MIRROR_MARKER, (json.dumps(note, indent=2) + "\n").encode())


def _unexclude(root: Path, git_dir: Path, target: str, removed: list[str], gone: bool = False) -> None:
    """Take out of `git_dir`'s info/exclude the lines `mirror` wrote for the copies `removed`, and with `gone` for every
    copy whose folder is no longer there (a copy an older version removed and left the line of)."""
    exclude = git_dir / "info" / "exclude"
    if not exclude.is_file() or not (removed or gone):
        return
    lines = exclude.read_text(encoding="utf-8").splitlines(keepends=True)
    # the line serves every checkout of the repository: it stays while another one still has its copy
    elsewhere = {d.name for checkout in clone.other_checkouts(root) if (checkout / target).is_dir()
                 for d in (checkout / target).iterdir() if (d / skills.MIRROR_MARKER).is_file()}
    ours = {f"/{target}/{name}/" for name in removed if name not in elsewhere}
    prefix = f"/{target}/"

    def dropped(line: str) -> bool:
        text = line.rstrip("\r\n")
        if text in ours:
            return True
        name = text[len(prefix):-1] if gone and text.startswith(prefix) and text.endswith("/") else ""
        return bool(name) and "/" not in name and not (root / target / name).exists() and name not in elsewhere

    kept = [line for line in lines if not dropped(line)]
    if kept != lines:
        disk.write_atomic(exclude, "".join(kept).encode())


IN_USE = "mirror-in-use"  # in the checkout's state dir: `sync` made copies here, until `uninstall` takes them away


def in_use(root: Path, state_dir: Path, target: str = TARGET) -> bool:
    """Whether `sync` makes copies here: it noted so, or a folder carries its marker (copies an older version made). A
    copy `sync` removed (a skill back to draft) comes back at `accept`, though it was the last one."""
    base = root / target
    return (state_dir / IN_USE).is_file() or base.is_dir() and any(
        (d / skills.MIRROR_MARKER).is_file() for d in base.iterdir() if d.is_dir() and not d.is_symlink())


def withdraw(root: Path, state_dir: Path, names: list[str], target: str = TARGET) -> list[str]:
    """Remove the generated copies of `names` that recall no longer serves (an agent's rewrite made a draft): Claude
    Code lists every copy, so a draft's would be offered while the briefing calls it one (a copy a person edited stays:
    doctor names it). Returns those removed; the next `sync` (or `accept`) copies what is served again."""
    gone = []
    with disk.repo_lock(state_dir):
        for name in names:
            dest = root / target / name
            if (dest / skills.MIRROR_MARKER).is_file() and not dest.is_symlink() and offering.withheld(root, SKILLS_DIR, name) \
                    and not edited(dest):
                shutil.rmtree(dest)
                gone.append(name)
    return gone


def generated(root: Path, rel: str, target: str = TARGET) -> bool:
    """Whether repository-relative `rel` lies in a copy `mirror` generated (its folder carries the marker)."""
    prefix = f"{target}/"
    if not rel.startswith(prefix):
        return False
    name = rel[len(prefix):].split("/", 1)[0]
    return bool(name) and (root / target / name / skills.MIRROR_MARKER).is_file()


def unmirror(root: Path, state_dir: Path, target: str = TARGET, dry_run: bool = False, git_dir: Path | None = None) -> list[str]:
    """Delete the copies `mirror` generated (a hand-written skill folder there is left alone), the note that they are in
    use, and the lines that made git ignore them (in `git_dir`'s info/exclude: the common one), those of copies already
    gone too; returns their names (with `dry_run`, the names it would delete)."""
    base, removed = root / target, []
    if not dry_run:
        (state_dir / IN_USE).unlink(missing_ok=True)
    if base.is_dir():
        for dest in sorted(base.iterdir()):
            if dest.is_dir() and not dest.is_symlink() and (dest / skills.MIRROR_MARKER).exists():
                if not dry_run:
                    shutil.rmtree(dest)
                removed.append(dest.name)
    if git_dir is not None and not dry_run:
        _unexclude(root, git_dir, target, removed, gone=True)
    return removed


ASIDE = "copy-edits"  # in the state folder: agents' edits of copies that could not go into their skill


@dataclass(frozen=True)
class Taken:
    """An agent's edit of a generated copy, taken out of it: into its skill's folder, or kept `aside` (that path)."""

    name: str
    aside: str = ""

    @property
    def skill(self) -> str:
        """The SKILL.md of the skill the edit went into ('' when it was kept aside)."""
        return "" if self.aside else f"{SKILLS_DIR}/{self.name}/{skills.SKILL_FILE}"


def take(root: Path, state_dir: Path, rels: Collection[str], since: int | None, target: str = TARGET) -> list[Taken]:
    """Take an agent's edit out of the generated copies `rels` name, or whose files changed at or after `since` (ns):
    Claude Code loads a copy as the skill, and neither sync nor the follow overwrites an edited one. When the copy was
    made from its skill's folder as it is now, its files are the agent's change exactly: they go into that folder (an
    agent's edit of the skill there, which Skillbook.redraft makes a draft) and the copy goes, until the skill is
    served again (sync, or the next follow). Else the copy is kept aside in the state folder and made again."""
    base, prefix = root / target, f"{target}/"
    names = {rel[len(prefix):].split("/", 1)[0] for rel in rels if rel.startswith(prefix) and generated(root, rel, target)}
    if since is not None and base.is_dir():
        names |= {d.name for d in base.iterdir() if (d / skills.MIRROR_MARKER).is_file() and _touched(d, since)}
    taken = []
    with disk.repo_lock(state_dir):
        for name in sorted(names):
            dest, source = guard.inside(root, target, name), root / SKILLS_DIR / name
            if dest.is_symlink() or not (dest / skills.MIRROR_MARKER).is_file() or not edited(dest):
                continue
            if source.is_dir() and not source.is_symlink() and _digest(source) == _copied(dest):
                _carry(dest, source)
                shutil.rmtree(dest)
                taken.append(Taken(name))
                continue
            aside = state_dir / ASIDE / f"{name}-{time.time_ns()}"
            shutil.copytree(dest, aside, symlinks=True)
            (aside / skills.MIRROR_MARKER).unlink(missing_ok=True)
            if (source / skills.SKILL_FILE).is_file() and not source.is_symlink() and not offering.withheld(root, SKILLS_DIR, name):
                _write(source, dest, name, _digest(source))
            else:
                shutil.rmtree(dest)
            taken.append(Taken(name, str(aside)))
    return taken


def _touched(folder: Path, since: int) -> bool:
    try:
        return any(os.lstat(p).st_ctime_ns >= since for p in (folder, *folder.rglob("*")))
    except OSError:
        return True  # changing under us: `take` looks at it


def _carry(copy: Path, source: Path) -> None:
    """Make skill folder `source` hold what generated `copy` holds (but the marker), links as links, files removed too."""
    wanted = {e.rel: e for e in _entries(copy)}
    for entry in _entries(source):
        if entry.rel not in wanted or entry.link or wanted[entry.rel].link:
            entry.path.unlink()  # gone, or a link: made again below (a link itself, never what it leads to)
    for rel, entry in sorted(wanted.items()):
        there = guard.inside(source, *rel.split("/"))
        if entry.link:
            there.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(entry.path.readlink(), there)
        else:
            if not there.is_file() or there.read_bytes() != entry.data():
                disk.write_atomic(there, entry.data())
            _mode_as(there, entry.executable)


def _mode_as(path: Path, executable: bool) -> None:
    """Make file `path` executable, as git checks out mode 100755 (where the umask lets it), or not."""
    mode = os.stat(path).st_mode & 0o777
    os.chmod(path, mode | (0o111 & ~disk.umask()) if executable else mode & ~0o111)


def told(taken: list[Taken], target: str = TARGET) -> list[str]:
    """What the agent is told of the edits `take` took out of copies."""
    return [f"repo-memory: {target}/{t.name} is a copy repo-memory generated of {SKILLS_DIR}/{t.name} (Claude Code loads it as "
            + (f"the skill): your edit of it was moved into {SKILLS_DIR}/{t.name}, as an edit of skill:{t.name}, and the copy "
               "taken away. Edit skills in .agents/skills, never their copies." if not t.aside else
               f"the skill), and that skill changed since the copy was made: your edit was kept aside in {t.aside} (in no "
               f"skill), and the copy made again. Edit {SKILLS_DIR}/{t.name} instead, never a copy.") for t in taken]
