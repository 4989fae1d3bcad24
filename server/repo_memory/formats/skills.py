"""Skills: SKILL.md files in the Agent Skills format, parsed, validated, rendered and edited in place."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repo_memory.formats import frontmatter
from repo_memory.guards import markers
from repo_memory.errors import InvalidRecordError, Problem
from repo_memory.guards.paths import resolves_inside
from repo_memory.formats.schema import validate

SKILL_FILE = "SKILL.md"
MIRROR_MARKER = ".repo-memory-generated"
STATUSES = ("draft", "active", "deprecated")
INVALID = "invalid"  # the status of a file whose frontmatter could not be read: it says none, so none is trusted
MAX_SKILL_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Skill:
    """One parsed SKILL.md; `problems` is empty when it is valid."""

    name: str
    path: str  # relative to the repository root, POSIX separators
    source: str  # the skills folder it was found in, e.g. ".agents/skills"
    sha256: str
    description: str = ""
    status: str = INVALID  # what the file says (no `metadata.status`: active), or INVALID when it could not be read
    origin: str = ""
    tags: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    body: str = ""
    problems: tuple[Problem, ...] = field(default_factory=tuple)
    flags: tuple[str, ...] = ()  # injection markers found (quarantine: out of default recall and briefings)
    anchors: dict[str, str] = field(default_factory=dict)  # code it cites -> the hash pinned when written ("" if none)
    notes: tuple[str, ...] = ()  # what is amiss that leaves it valid, each saying what to do (doctor, `skill list`)

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def ref(self) -> str:
        return f"skill:{self.name}"


def _as_list(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v for v in value.replace(",", " ").split() if v)
    if isinstance(value, (list, tuple, dict)):
        return tuple(str(v) for v in value)
    return (str(value),)  # `tags: 3`: invalid, reported, and still no reason to fail the whole sync


def listed(values: Sequence[str]) -> str:
    """A list as one line of text (`release, ci`): the Agent Skills format allows only text under `metadata`, and
    `parse` reads it back as a list (`_as_list`)."""
    return ", ".join(values)


def parse(data: bytes, path: str, source: str) -> Skill:
    """Parse a SKILL.md file's bytes; never raises, recording what is wrong in `problems` instead."""
    folder = path.rsplit("/", 2)[-2] if path.count("/") >= 1 else ""
    digest = hashlib.sha256(data).hexdigest()
    invalid = Skill(name=folder, path=path, source=source, sha256=digest)
    if len(data) > MAX_SKILL_BYTES:
        return _with(invalid, Problem(f"the file is over {MAX_SKILL_BYTES // 1024} KiB; move long material into files beside it"))
    if b"\x00" in data:
        return _with(invalid, Problem("the file is binary (it contains NUL bytes), not markdown"))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _with(invalid, Problem(f"the file is not UTF-8 (byte {exc.start}); re-save it as UTF-8"))
    from repo_memory.guards import secretscan  # here, not at the top: the pre-tool hook before a shell call reads no skill

    text, secrets = secretscan.redact(text)  # a person's edit may hold a secret: the index only ever sees it redacted
    try:
        doc = frontmatter.split(text, path)
        meta = frontmatter.load(doc.frontmatter, path)
    except InvalidRecordError as exc:
        return _with(invalid, *exc.problems)
    # YAML escapes ("\u200b", "\x67hp_…") decode into characters the raw text never showed: check the decoded values too,
    # those that differ from the text (the rest were checked in it: scanning each again was a fifth of parsing a skill).
    meta, decoded_secrets = secretscan.redact_value(meta, scanned=text)
    secrets = [*secrets, *decoded_secrets]
    decoded_markers = [m for v in _strings(meta) if v not in text for m in markers.find(v)]
    problems = validate("skill", meta)
    if isinstance(meta.get("name"), str) and meta["name"] != folder:
        problems.append(Problem(f"name '{meta['name']}' must equal the folder name '{folder}'", field="name", line=_line_of(doc.frontmatter, "name")))
    problems = [
        Problem(p.message, p.field, _field_line(doc.frontmatter, p.field)) if p.line is None and p.field else p
        for p in problems
    ]
    raw_md = meta.get("metadata")
    md: dict[str, Any] = raw_md if isinstance(raw_md, dict) else {}
    return Skill(
        name=folder,
        path=path,
        source=source,
        sha256=digest,
        description=str(meta.get("description") or ""),
        status=str(md.get("status") or (meta.get("status") if meta.get("status") in STRICTER else "active")),
        origin=str(md.get("origin") or ""),
        tags=_as_list(md.get("tags")),
        related=_as_list(md.get("related")),
        body=doc.body,
        problems=tuple(problems),
        flags=tuple(dict.fromkeys([*(str(m) for m in markers.find(text)), *(f"{m.rule} in a frontmatter value" for m in decoded_markers),
                                   *(f"secret: {f}" for f in secrets)])),
        anchors=_anchors(md),
        notes=(_top_status(meta.get("status"), md.get("status")),) if "status" in meta else (),
    )


# A top-level `status` is no field of ours (they go under `metadata`, so the file stays valid Agent Skills), but its
# author meant one: a draft or deprecated one is read as such while metadata says nothing, never as active.
STRICTER = ("draft", "deprecated")


def _top_status(top: Any, said: Any) -> str:
    """What a top-level `status` does, and where it belongs."""
    if said:
        now = f"`metadata.status: {said}` decides, and this key is not read"
    elif top in STRICTER:
        now = f"until then it is read as {top} (never as active), as no `metadata.status` says otherwise"
    else:
        now = "it is not read: the skill is active, as no `metadata.status` says otherwise"
    return (f"`status: {str(top)[:40]}` is at the top level of the frontmatter, where repo-memory does not keep a "
            f"skill's status: move it under `metadata:` (or delete it); {now}")


def _strings(value: Any) -> list[str]:
    """Every string inside a parsed YAML value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _anchors(md: dict[str, Any]) -> dict[str, str]:
    listed = md.get("anchors")
    pinned = md.get("anchor_hashes")
    listed = listed if isinstance(listed, list) else []
    pinned = pinned if isinstance(pinned, dict) else {}
    return {str(a): str(pinned.get(a, "")) if isinstance(a, str) else "" for a in listed}  # not text: invalid, reported


def _with(skill: Skill, *problems: Problem) -> Skill:
    return Skill(name=skill.name, path=skill.path, source=skill.source, sha256=skill.sha256, problems=tuple(problems))


def _field_line(fm: str, field: str) -> int | None:
    """The line of the deepest key of `field` (metadata.tags.1: the `tags:` line) found in the frontmatter."""
    return next((line for key in reversed(field.split(".")) if not key.isdigit() and (line := _line_of(fm, key))), None)


def _line_of(fm: str, key: str) -> int | None:
    """1-based file line of the first `key:` in the frontmatter (the file's line 1 is the opening fence)."""
    for number, line in enumerate(fm.splitlines(), start=2):
        if line.lstrip().startswith(f"{key}:"):
            return number
    return None


def render(name: str, description: str, body: str, metadata: dict[str, Any]) -> str:
    """The text of a new SKILL.md."""
    fields: dict[str, Any] = {"name": name, "description": description}
    if metadata:
        fields["metadata"] = metadata
    text = f"---\n{frontmatter.render_new(fields)}---\n\n{body.strip()}\n"
    check(text, name)
    return text


def edit(text: str, name: str, changes: dict[tuple[str, ...], Any], body: str | None = None,
         renamed: dict[tuple[str, ...], dict[str, str]] | None = None, dropped: Sequence[tuple[str, ...]] = ()) -> str:
    """Apply field `changes` (and a new body) to an existing SKILL.md, keeping every other byte; `renamed` replaces
    items of a list (or keys of a mapping) in place, old -> new, keeping the comments on their lines; the fields
    `dropped` go."""
    from repo_memory.formats import edits  # ruamel is imported only when something is edited

    doc = frontmatter.split(text, f"skill '{name}'")
    fm = doc.frontmatter.replace("\r\n", "\n")  # edited with LF, written back with the file's own line ending
    for path, renames in (renamed or {}).items():
        fm = edits.rename(fm, path, renames)
    for path, value in changes.items():
        fm = edits.set_field(fm, path, value)
    for path in dropped:
        fm = edits.drop_field(fm, path)
    new_body = doc.body if body is None else f"\n{body.strip()}\n".replace("\r\n", "\n").replace("\n", doc.newline)
    result = dataclasses.replace(doc, frontmatter=fm.replace("\n", doc.newline), body=new_body).render()
    check(result, name)
    return result


def says(text: str, name: str) -> tuple[Any, ...]:
    """What SKILL.md `text` says in the fields a write sets, its body as a write leaves it (stripped, LF line ends) and
    whether it is valid: equal for two files that differ only in layout (quoting, list style, blank lines)."""
    skill = parse(text.encode("utf-8"), f".agents/skills/{name}/{SKILL_FILE}", ".agents/skills")
    body = skill.body.replace("\r\n", "\n").strip()
    return skill.description, skill.tags, skill.related, skill.anchors, body, skill.valid


def check(text: str, name: str) -> None:
    """Raise InvalidRecordError naming every problem if `text` is not a valid SKILL.md for `name`."""
    skill = parse(text.encode("utf-8"), f".agents/skills/{name}/{SKILL_FILE}", ".agents/skills")
    if skill.problems:
        raise InvalidRecordError(f"skill '{name}'", skill.problems)


@dataclass(frozen=True)
class Found:
    """A memory document (a SKILL.md or a loop spec) found on disk, or a path refused while looking."""

    path: str
    rel: str
    source: str
    rank: int
    refused: str = ""
    kind: str = "skill"
    linked: bool = False  # the folder or the SKILL.md is a link: what it shows may change under another path


def scan(root: Path, sources: Sequence[str], links: list[str] | None = None) -> Iterator[Found]:
    """Every SKILL.md under the skill folders, in priority order; generated mirrors and links leaving the repo are
    skipped. `links` gathers every skill folder or SKILL.md that is a link, whether it shows a skill now or not."""
    seen: set[str] = set()
    for rank, source in enumerate(sources):
        base = os.path.join(root, source)
        if not os.path.isdir(base):
            continue
        if not resolves_inside(root, Path(base)):
            yield Found(base, source, source, rank, refused="the folder is a link that leads outside the repository")
            continue
        real_base = os.path.realpath(base)
        if real_base in seen:
            continue  # e.g. .claude/skills linked to .agents/skills: read once
        seen.add(real_base)
        with os.scandir(base) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if not entry.name.startswith("."):
                    try:
                        is_dir = entry.is_dir()
                    except OSError:  # a link loop: _look refuses it
                        is_dir = False
                    found = _look(root, source, rank, entry.name, entry.is_symlink(), is_dir, links)
                    if found is not None:
                        yield found


def find(root: Path, sources: Sequence[str], path: str) -> tuple[bool, Found | None]:
    """What `scan` would say of the one file `path` (absolute): (True, its Found, or None when scan would not read it —
    gone, skipped, or a file beside a skill, which is never indexed), or (False, None) when only a whole scan can tell:
    a folder of skills itself, a path outside them, or a link on the way or at the file (a link shows another file,
    whose change comes under that file's path)."""
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    inside = [s for s in sources if rel.startswith(f"{s}/")]
    if len(inside) != 1 or rel.startswith("../"):
        return False, None
    source = inside[0]
    name, _, rest = rel[len(source) + 1:].partition("/")
    if not name or not rest:
        return False, None  # a skill folder made, moved or removed, or a file among the folders
    bases = {s: os.path.join(root, s) for s in sources}
    real_root = os.path.realpath(root)
    if any(os.path.realpath(b) != os.path.join(real_root, s) for s, b in bases.items()):  # a link on the way: scan decides
        return False, None
    folder = os.path.join(bases[source], name)
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return True, None
    if stat.S_ISLNK(mode):
        return False, None
    if rest == MIRROR_MARKER:
        return False, None  # whether the SKILL.md beside it is read at all changes
    if name.startswith(".") or rest != SKILL_FILE:
        return True, None  # a hidden folder, or a file beside a skill (a script, an editor's temporary file): not indexed
    found = _look(root, source, sources.index(source), name, False, stat.S_ISDIR(mode))
    return (False, None) if found is not None and found.linked else (True, found)


LINKED_SKILL_FILE = "SKILL.md is a link: repo-memory neither writes nor reviews a skill through one, so it is not served"


def _look(root: Path, source: str, rank: int, name: str, is_link: bool, is_dir: bool, links: list[str] | None = None) -> Found | None:
    """The SKILL.md of skill folder `name` in `source`, if scan reads it (refused when a link leads outside or nowhere)."""
    try:
        return _look_at(root, source, rank, name, is_link, is_dir, links)
    except (OSError, RuntimeError):  # a link loop ("Symlink loop", ELOOP): one refused file, not a failed sync
        if links is not None:
            links.append(os.path.join(root, source, name))
        return Found(os.path.join(root, source, name, SKILL_FILE), f"{source}/{name}/{SKILL_FILE}", source, rank,
                     refused="a link loop: the path leads nowhere", linked=True)


def _look_at(root: Path, source: str, rank: int, name: str, is_link: bool, is_dir: bool, links: list[str] | None) -> Found | None:
    folder = os.path.join(root, source, name)
    rel = f"{source}/{name}/{SKILL_FILE}"
    skill_file = os.path.join(folder, SKILL_FILE)
    if is_link and links is not None:
        links.append(folder)
    if is_link and not resolves_inside(root, Path(folder)):
        return Found(skill_file, rel, source, rank, refused="the skill folder is a link that leads outside the repository", linked=True)
    if not is_dir or (rank > 0 and os.path.exists(os.path.join(folder, MIRROR_MARKER))):
        return None  # generated mirrors only ever live outside .agents/skills
    try:
        mode = os.lstat(skill_file).st_mode
    except FileNotFoundError:
        return None
    linked = is_link or stat.S_ISLNK(mode)
    if stat.S_ISLNK(mode) and links is not None:
        links.append(skill_file)
    if stat.S_ISLNK(mode) and not resolves_inside(root, Path(skill_file)):
        return Found(skill_file, rel, source, rank, refused="SKILL.md is a link that leads outside the repository", linked=True)
    if stat.S_ISLNK(mode) and rank == 0:  # .agents/skills: nothing is written through a link, so no draft, no accept either
        return Found(skill_file, rel, source, rank, refused=LINKED_SKILL_FILE, linked=True)
    if stat.S_ISREG(mode) or (stat.S_ISLNK(mode) and os.path.isfile(skill_file)):
        return Found(skill_file, rel, source, rank, linked=linked)
    return None
