"""Finding the past Claude Code and Codex sessions of a repository, for `log import --claude/--codex` (core/importing.py
imports them)."""

from __future__ import annotations

import os
from pathlib import Path

from repo_memory.formats import harness_logs


def claude_transcripts(root: Path, claude_dir: Path) -> list[Path]:
    """Claude Code transcripts of sessions that ran in `root` or a folder inside it (`claude_dir` is ~/.claude or
    $CLAUDE_CONFIG_DIR). Folder names are lossy (every character but A-Z a-z 0-9 becomes '-'), so each candidate's
    recorded cwd decides."""
    prefix = harness_logs.project_dir(str(root))
    projects = claude_dir / "projects"
    folders = [p for p in sorted(projects.iterdir()) if p.name == prefix or p.name.startswith(prefix + "-")] if projects.is_dir() else []
    return [path for folder in folders for path in sorted(folder.rglob("*.jsonl")) if _inside(_claude_cwd(path), root)]


def codex_rollouts(root: Path, codex_dir: Path) -> list[Path]:
    """Codex rollouts whose session ran in `root` or a folder inside it (`codex_dir` is ~/.codex or $CODEX_HOME); the
    first line (session_meta) names the cwd."""
    found = []
    for folder in (codex_dir / "sessions", codex_dir / "archived_sessions"):
        for path in sorted(folder.rglob("rollout-*.jsonl")) if folder.is_dir() else []:
            with path.open("rb") as handle:
                meta = harness_logs.codex(iter([handle.readline()]), path.stem)
            if _inside(meta.cwd, root):
                found.append(path)
    return found


def _claude_cwd(path: Path) -> str:
    """The folder the session ran in, from the first line that names it (of any type: hooks' lines come first)."""
    with path.open("rb") as handle:
        for number, raw in enumerate(handle):
            if b'"cwd"' in raw and (cwd := harness_logs.claude_code([raw]).cwd):
                return cwd
            if number > 200:
                break
    return ""


def _inside(cwd: str, root: Path) -> bool:
    if not cwd:
        return False
    here, top = os.path.realpath(cwd), os.path.realpath(root)
    return here == top or here.startswith(top.rstrip(os.sep) + os.sep)
