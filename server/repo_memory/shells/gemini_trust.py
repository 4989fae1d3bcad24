"""Gemini CLI's trust of a folder, which `setup gemini --trust` stores for the person and an undo takes back.

Gemini CLI starts a project's MCP servers, and runs its hooks, only in a folder the person trusted (`gemini mcp list`
says Disabled until then). It keeps the answers of its "Do you trust this folder?" dialog in
~/.gemini/trustedFolders.json (or $GEMINI_CLI_TRUSTED_FOLDERS_PATH): a JSON object of folder → TRUST_FOLDER,
TRUST_PARENT (the folder's parent) or DO_NOT_TRUST, the longest rule covering a folder deciding. Setup stores
TRUST_FOLDER for the repository and notes it in this checkout's state folder, so an undo takes back only that trust
(putting back the answer it replaced); a folder the person trusted themselves stays trusted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from repo_memory.config import Config
from repo_memory.guards import disk

NOTE = "gemini-trust.json"  # in the checkout's state folder: the trust `setup gemini --trust` stored
UNTRUSTED = "note: Gemini CLI lists repo-memory as Disabled"  # how setup says it (its check line looks for it)
LEVELS = ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")


def folders_file(home: Path) -> Path:
    """Where Gemini CLI keeps the trusted folders: $GEMINI_CLI_TRUSTED_FOLDERS_PATH, else its home's .gemini."""
    if os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        return Path(os.environ["GEMINI_CLI_TRUSTED_FOLDERS_PATH"])
    return Path(os.environ.get("GEMINI_CLI_HOME") or home) / ".gemini" / "trustedFolders.json"


def _rules(path: Path) -> dict[str, Any] | None:
    """The rules in `path` ({} when there is no file), None when it holds no JSON object (Gemini CLI refuses it too)."""
    try:
        rules = json.loads(path.read_text(encoding="utf-8") or "{}") if path.exists() else {}
    except (OSError, ValueError):
        return None
    return rules if isinstance(rules, dict) else None


def trusted(root: Path, home: Path) -> bool | None:
    """Whether Gemini CLI trusts `root`, as it decides: the environment first, then the longest rule covering it (a
    TRUST_PARENT rule covers its parent); None when nothing says (Gemini asks)."""
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") in ("true", "false"):
        return os.environ["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    try:
        settings = json.loads((Path(os.environ.get("GEMINI_CLI_HOME") or home) / ".gemini" / "settings.json").read_text(encoding="utf-8"))
        if settings["security"]["folderTrust"]["enabled"] is False:
            return True
    except (OSError, ValueError, KeyError, TypeError):
        pass
    here, best, level = Path(os.path.realpath(root)), -1, None
    for rule, answer in (_rules(folders_file(home)) or {}).items():
        covered = Path(os.path.realpath(Path(rule).parent if answer == "TRUST_PARENT" else rule))
        if answer in LEVELS and (here == covered or covered in here.parents) and len(rule) > best:
            best, level = len(rule), answer
    return None if level is None else level != "DO_NOT_TRUST"


def trust_folder(root: Path, home: Path, trust: bool, dry_run: bool) -> list[str]:
    """Say whether Gemini CLI will start repo-memory here; with `trust`, store TRUST_FOLDER for `root` as Gemini's
    dialog does, noting what it replaced for an undo."""
    state = trusted(root, home)
    if state:
        return []
    path = folders_file(home)
    rules = _rules(path)
    if rules is None:
        return [f"{UNTRUSTED} (it starts no server and runs no hook here): {path}, where it keeps the folders you trust, "
                "is not a JSON object (Gemini CLI refuses it too): fix it, then run `repo-memory setup gemini --trust`"]
    if not trust:
        why = (f": you told it not to trust this folder ({path}); " if state is False else
               " until you trust this folder: run `gemini` here once and choose to trust it, or ")
        return [f"{UNTRUSTED} (it starts no server and runs no hook here){why}run `repo-memory setup gemini --trust` to "
                "store that answer for you"]
    if not dry_run:
        was = {"was": rules[str(root)]} if str(root) in rules else {}
        note = {"file": str(path), "folder": str(root), "made": not path.exists(), **was}
        rules[str(root)] = "TRUST_FOLDER"
        path.parent.mkdir(parents=True, exist_ok=True)
        disk.write_atomic(path, (json.dumps(rules, indent=2) + "\n").encode())
        path.chmod(0o600)  # as Gemini CLI writes it: the owner's only
        disk.write_atomic(Config.load(root).state_dir / NOTE, (json.dumps(note, indent=2) + "\n").encode())
    return [f"{path}: trusted {root}, as choosing to trust the folder in Gemini CLI's dialog stores it (Gemini then warns "
            "once about the project's hooks, and runs them)" + (" (dry run, not written)" if dry_run else "")]


def untrust_folder(root: Path, dry_run: bool) -> list[str]:
    """Take back the trust `trust_folder` stored (its note names the file and the folder): the answer it replaced comes
    back, or the rule goes, and the file too when setup made it and nothing else is left in it. A trust the person
    gave stays: setup stored none, so there is no note."""
    note = Config.load(root).state_dir / NOTE
    try:
        stored = json.loads(note.read_text(encoding="utf-8"))
        path, folder = Path(stored["file"]), str(stored["folder"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    rules = _rules(path) or {}
    taken = rules.get(folder) == "TRUST_FOLDER"  # else already taken back, by hand or in Gemini CLI
    if not dry_run:
        if taken:
            if "was" in stored:
                rules[folder] = stored["was"]
            else:
                del rules[folder]
            if rules or not stored.get("made"):
                disk.write_atomic(path, (json.dumps(rules, indent=2) + "\n").encode())
            else:
                path.unlink()
        note.unlink(missing_ok=True)
    return [f"{path}: took back the trust of {folder} that `setup gemini --trust` stored (`gemini` asks again there)"
            + (" (dry run, not written)" if dry_run else "")] if taken else []
