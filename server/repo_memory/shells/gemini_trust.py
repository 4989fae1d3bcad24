"""Gemini CLI's trust of a folder, which `setup gemini --trust` stores for the person and an undo takes back.

Gemini CLI starts a project's MCP servers, and runs its hooks, only in a folder the person trusted (`gemini mcp list`
says Disabled until then). It keeps the answers of its "Do you trust this folder?" dialog in
~/.gemini/trustedFolders.json (or $GEMINI_CLI_TRUSTED_FOLDERS_PATH): a JSON object of folder → TRUST_FOLDER,
TRUST_PARENT (the folder's parent) or DO_NOT_TRUST, the longest rule covering a folder deciding. Setup stores
TRUST_FOLDER for the repository and notes it in this checkout's state folder, so an undo takes back only that trust
(putting back the answer it replaced); a folder the person trusted themselves stays trusted. Gemini reads the file with
its comments stripped (strip-json-comments), and stops with "Error in …trustedFolders.json" on one that is then no JSON
object or gives a value that is no trust level: setup reads it the same way (shells/jsonc.py), keeps its comments when
it writes, and stores nothing in a file Gemini refuses.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

from repo_memory.config import Config
from repo_memory.guards import disk
from repo_memory.shells import foreign, jsonc

NOTE = "gemini-trust.json"  # in the checkout's state folder: the trust `setup gemini --trust` stored
UNTRUSTED = "note: Gemini CLI lists repo-memory as Disabled"  # how setup says it (its check line looks for it)
REFUSED = "note: Gemini CLI refuses the file of the folders you trust"  # and stops: it starts nothing, anywhere
LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")


@dataclasses.dataclass(frozen=True)
class Folders:
    """trustedFolders.json as Gemini CLI reads it (checkPathTrust, loadTrustedFolders)."""

    path: Path
    text: str | None  # None: there is no file
    rules: dict[str, Any] | None  # None: no JSON object, even without its comments
    refused: str  # why Gemini CLI refuses the file ("Error in …", and it exits); '' when it reads it

    @classmethod
    def read(cls, path: Path) -> Folders:
        try:
            text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else None
        except OSError as exc:
            return cls(path, None, None, f"cannot be read ({exc.strerror})")
        if text is None:
            return cls(path, None, {}, "")
        try:
            rules = jsonc.load(text)
        except ValueError as exc:
            return cls(path, text, None, f"is not JSON, even without its comments ({exc})")
        if not isinstance(rules, dict):
            return cls(path, text, None, "is not a JSON object")
        wrong = "; ".join(f"{json.dumps(v)} for {k}" for k, v in rules.items() if v not in LEVELS)
        return cls(path, text, rules, wrong and f"gives a trust level that is none of {', '.join(LEVELS)}: {wrong}")

    @property
    def commented(self) -> bool:
        return self.text is not None and jsonc.strip(self.text) != self.text

    def write(self, folder: str, level: str | None) -> str:
        """Give `folder` the trust `level` (none: the rule goes), keeping the file's comments where it has any; what
        became of them ('' when nothing was lost)."""
        rules = {k: v for k, v in {**(self.rules or {}), folder: level}.items() if v is not None}
        text = jsonc.with_member(self.text, folder, level) if self.text is not None and self.commented else None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        disk.write_atomic(self.path, (text or json.dumps(rules, indent=2) + "\n").encode())
        self.path.chmod(0o600)  # as Gemini CLI writes it: the owner's only
        if self.commented and text is None:
            return " (its comments are gone, as Gemini CLI's own dialog drops them: it could not be edited in place)"
        return ""


def folders_file(home: Path) -> Path:
    """Where Gemini CLI keeps the trusted folders: $GEMINI_CLI_TRUSTED_FOLDERS_PATH, else its home's .gemini."""
    if os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        return Path(os.environ["GEMINI_CLI_TRUSTED_FOLDERS_PATH"])
    return Path(os.environ.get("GEMINI_CLI_HOME") or home) / ".gemini" / "trustedFolders.json"


def _distrusting() -> str:
    """The variable set to make Gemini CLI trust no folder at all, whatever it stored ('' when none is)."""
    for name, value in (("GEMINI_RESTRICTED_MODE", "true"), ("GEMINI_CLI_TRUST_WORKSPACE", "false")):
        if os.environ.get(name) == value:
            return f"{name}={value}"
    return ""


def trusted(root: Path, home: Path) -> bool | None:
    """Whether Gemini CLI trusts `root`, as its checkPathTrust decides: the environment first, then the longest rule
    covering it (a TRUST_PARENT rule covers its parent); None when nothing says (Gemini asks) or it refuses the file."""
    if _distrusting():
        return False
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    try:
        settings_file = Path(os.environ.get("GEMINI_CLI_HOME") or home) / ".gemini" / "settings.json"
        settings = jsonc.load(settings_file.read_text(encoding="utf-8"))
        if settings["security"]["folderTrust"]["enabled"] is False:
            return True
    except (OSError, ValueError, KeyError, TypeError):
        pass
    folders = Folders.read(folders_file(home))
    here, best, level = Path(os.path.realpath(root)), -1, None
    for rule, answer in ({} if folders.refused else folders.rules or {}).items():
        covered = Path(os.path.realpath(Path(rule).parent if answer == "TRUST_PARENT" else rule))
        if (here == covered or covered in here.parents) and len(rule) > best:
            best, level = len(rule), answer
    return None if level is None else level != "DO_NOT_TRUST"


def trust_folder(root: Path, home: Path, trust: bool, dry_run: bool) -> list[str]:
    """Say whether Gemini CLI will start repo-memory here; with `trust`, store TRUST_FOLDER for `root` as Gemini's
    dialog does, noting what it replaced for an undo."""
    state = trusted(root, home)
    if state:
        return []
    disabled = f"{UNTRUSTED} (it starts no server and runs no hook here)"
    if distrusting := _distrusting():
        again = ", then run `repo-memory setup gemini --trust` if it still says Disabled" if trust else ""
        return [f"{disabled}: {distrusting} in this environment makes it trust no folder, whatever it stored; unset it "
                f"where you start gemini{again}"]
    folders = Folders.read(folders_file(home))
    if folders.refused:
        return [f"{REFUSED}: {folders.path} {folders.refused}, so gemini stops at start with \"Error in "
                f"{folders.path}\" and starts no server anywhere; nothing was written to it. Fix that file, then run "
                "`repo-memory setup gemini --trust`"]
    if not trust:
        why = (f": you told it not to trust this folder ({folders.path}); " if state is False else
               " until you trust this folder: run `gemini` here once and choose to trust it, or ")
        return [f"{disabled}{why}run `repo-memory setup gemini --trust` to store that answer for you"]
    if found := foreign.committed(root, "gemini"):
        return [foreign.withheld(root, "gemini", found)]
    lost = ""
    if not dry_run:
        rules = folders.rules or {}
        was = {"was": rules[str(root)]} if str(root) in rules else {}
        note = {"file": str(folders.path), "folder": str(root), "made": folders.text is None, **was}
        lost = folders.write(str(root), "TRUST_FOLDER")
        disk.write_atomic(Config.load(root).state_dir / NOTE, (json.dumps(note, indent=2) + "\n").encode())
    return [f"{folders.path}: trusted {root}, as choosing to trust the folder in Gemini CLI's dialog stores it (Gemini then "
            "warns once about the project's hooks, and runs them)" + lost + (" (dry run, not written)" if dry_run else "")]


def untrust_folder(root: Path, dry_run: bool) -> list[str]:
    """Take back the trust `trust_folder` stored (its note names the file and the folder): the answer it replaced comes
    back, or the rule goes, and the file too when setup made it and nothing else is left in it. A trust the person
    gave stays: setup stored none, so there is no note. A file that holds no JSON object now keeps it, and the note."""
    note = Config.load(root).state_dir / NOTE
    try:
        stored = json.loads(note.read_text(encoding="utf-8"))
        path, folder = Path(stored["file"]), str(stored["folder"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    folders = Folders.read(path)
    if folders.rules is None:  # setup's note stays: once the file is fixed, the next undo takes the trust back
        return [f"{path}: the trust of {folder} that `setup gemini --trust` stored is not taken back: the file "
                f"{folders.refused}. Fix it, then run this again"]
    taken = folders.rules.get(folder) == "TRUST_FOLDER"  # else already taken back, by hand or in Gemini CLI
    lost = ""
    if not dry_run:
        if taken and (len(folders.rules) > 1 or "was" in stored or not stored.get("made") or folders.commented):
            lost = folders.write(folder, stored.get("was"))
        elif taken:  # setup made it, and nothing else is in it
            path.unlink()
        note.unlink(missing_ok=True)
    return [f"{path}: took back the trust of {folder} that `setup gemini --trust` stored (`gemini` asks again there)"
            + lost + (" (dry run, not written)" if dry_run else "")] if taken else []
