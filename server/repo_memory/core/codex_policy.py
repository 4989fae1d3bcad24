"""Codex told per skill: an `agents/openai.yaml` whose `policy.allow_implicit_invocation` is false keeps a skill out of
the skills Codex offers its model by itself (codex 0.171.0 checked: tests/shells/test_codex_drafts.py).

Only that file is touched, never what sits beside it. A skill with no such file gets ours (OURS, known by its text,
whatever line endings a checkout gave it); a skill's own file is turned off in place, with a first line (MARK) saying
what to put back, so that accept gives it back as it was, comments and line endings kept. A file that cannot be edited
in place (not YAML, a link) is held aside as `openai.yaml.held`, and an `agents` that is a link or a file as
`agents.held`, never over one held already.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from repo_memory.errors import InvalidRecordError
from repo_memory.formats import frontmatter, nesting
from repo_memory.guards import disk

FILE, ASIDE, FOLDER, FOLDER_ASIDE = "agents/openai.yaml", "agents/openai.yaml.held", "agents", "agents.held"
SETTLED = (FILE, ASIDE, FOLDER_ASIDE)  # in a skill folder: what offering.settle puts right itself, no content of the skill
KEY = ("policy", "allow_implicit_invocation")
OURS = (b"# repo-memory wrote this file: this skill is not reviewed yet (a draft) or not served (deprecated, invalid or\n"
        b"# quarantined), so Codex leaves it out of the skills it offers its model. `repo-memory accept NAME` takes it away.\n"
        b"policy:\n  allow_implicit_invocation: false\n")
MARK = "# repo-memory: implicit invocation off until this skill is served again (accept); it was: "


def _text(path: Path) -> tuple[str, bool] | None:
    """The file's text with LF line endings, and whether it had CRLF; None for a link, a folder or no UTF-8 text."""
    try:
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        return (data.decode("utf-8").replace("\r\n", "\n"), b"\r\n" in data) if data is not None else None
    except (OSError, UnicodeDecodeError):
        return None


def state(folder: Path) -> str:
    """How Codex sees skill `folder`: 'ours' (our file), 'marked' (its own file, turned off by us), 'off' (its own file
    turns it off), 'on' (Codex lists it), or 'odd' (a link, a folder or text that is no YAML where the file would be)."""
    agents, path = folder / FOLDER, folder / FILE
    if os.path.lexists(agents) and (agents.is_symlink() or not agents.is_dir()):
        return "odd"
    if not os.path.lexists(path):
        return "on"
    found = _text(path)
    if found is None:
        return "odd"
    if found[0] == OURS.decode():
        return "ours"
    if any(line.lstrip().startswith(MARK) for line in found[0].split("\n")):  # wherever a person's edit moved it
        return "marked"
    try:
        policy = frontmatter.load(found[0], FILE).get("policy")
    except InvalidRecordError:
        return "odd"
    return "off" if isinstance(policy, dict) and policy.get(KEY[1]) is False else "on"


def withhold(folder: Path) -> list[str]:
    """Keep skill `folder` out of Codex's own list; returns the paths changed (relative to the folder)."""
    from repo_memory.formats import edits  # ruamel: only when a policy file is edited

    now, path = state(folder), folder / FILE
    if now in ("ours", "marked", "off"):
        return []
    if now == "odd":
        linked = (folder / FOLDER).is_symlink() or not (folder / FOLDER).is_dir()
        what, aside = (FOLDER, FOLDER_ASIDE) if linked else (FILE, ASIDE)
        if os.path.lexists(folder / aside):
            return []  # never over what is held already: doctor names the skill
        moved = _files(folder, what)
        os.rename(folder / what, folder / aside)  # a link itself, never what it points to
        disk.write_atomic(path, OURS)
        return [*moved, *_files(folder, aside), FILE]
    if not os.path.lexists(path):
        disk.write_atomic(path, OURS)
        return [FILE]
    text, crlf = _text(path) or ("", False)
    policy = frontmatter.load(text, FILE).get("policy")
    was = json.dumps(policy[KEY[1]]) if isinstance(policy, dict) and KEY[1] in policy else "unset"
    _write(path, f"{MARK}{was}\n" + edits.set_field(text, KEY, False), crlf)
    return [FILE]


def release(folder: Path) -> list[str]:
    """Let Codex list skill `folder` again: our file goes, the skill's own comes back as it was."""
    from repo_memory.formats import edits

    now, path, changed = state(folder), folder / FILE, []
    if now == "ours":
        path.unlink()
        changed.append(FILE)
        if os.path.lexists(folder / ASIDE):
            os.rename(folder / ASIDE, path)
            changed.append(ASIDE)
        elif not os.listdir(folder / FOLDER):
            os.rmdir(folder / FOLDER)
    elif now == "marked":
        text, crlf = _text(path) or ("", False)
        lines = text.split("\n")
        marks = [line.lstrip() for line in lines if line.lstrip().startswith(MARK)]  # every copy of it goes
        was, rest = marks[0].removeprefix(MARK), "\n".join(line for line in lines if not line.lstrip().startswith(MARK))
        try:
            value = nesting.loads(was)
        except ValueError:  # "unset", or a mark someone edited: the key goes, as when there was none
            _write(path, edits.drop_field(rest, KEY), crlf)
        else:
            _write(path, edits.set_field(rest, KEY, value), crlf)
        changed.append(FILE)
    if not os.path.lexists(folder / FOLDER) and os.path.lexists(folder / FOLDER_ASIDE):
        os.rename(folder / FOLDER_ASIDE, folder / FOLDER)
        changed += [FOLDER_ASIDE, FOLDER]
    return changed


def ours_in(folder: Path) -> tuple[Path, ...]:
    """Our file in skill `folder`, if it is there: no content of the skill's, so not part of what a person reviews."""
    return (folder / FILE,) if state(folder) == "ours" else ()


def _files(folder: Path, rel: str) -> list[str]:
    """`rel` in `folder`, or the files under it when it is a folder (git holds files and links, not folders)."""
    path = folder / rel
    if path.is_dir() and not path.is_symlink():
        return [Path(d, f).relative_to(folder).as_posix() for d, _, files in os.walk(path) for f in files]
    return [rel]


def _write(path: Path, text: str, crlf: bool) -> None:
    disk.write_atomic(path, (text.replace("\n", "\r\n") if crlf else text).encode("utf-8"))
