"""install.sh as a new user runs it: what its output ends with, and what it leaves behind.

The script runs for real in a copy of the checkout whose `.venv` is already there: its `python` is this test run's
interpreter (pip installs nothing: the package is this checkout's, on PYTHONPATH) and its `repo-memory` runs
`python -m repo_memory`, so no package index is asked and the project's own venv is left alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout(tmp_path: Path) -> Path:
    """A copy of install.sh beside a ready `.venv` (python, repo-memory) that runs this checkout's code."""
    here = tmp_path / "repo-memory"
    bin_dir = here / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    shutil.copy(ROOT / "install.sh", here / "install.sh")
    (bin_dir / "python").write_text(f'#!/bin/sh\n[ "$1 $2" = "-m pip" ] && exit 0\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    (bin_dir / "repo-memory").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m repo_memory "$@"\n', encoding="utf-8")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return here


def install(here: Path, tmp_path: Path, path: str = "/usr/bin:/bin") -> subprocess.CompletedProcess[str]:
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "PATH": path, "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp"),
           "PYTHON": sys.executable, "PYTHONPATH": str(ROOT / "server")}
    proc = subprocess.run(["bash", str(here / "install.sh")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_install_ends_with_the_path_step_when_repo_memory_is_not_on_path(tmp_path: Path):
    """install.sh ended with "Start here: `repo-memory init`", and `repo-memory` was not on PATH: "command not found"."""
    here = checkout(tmp_path)
    tail = install(here, tmp_path).stdout.strip().splitlines()[-4:]
    step = f'mkdir -p ~/.local/bin && ln -s "{here}/.venv/bin/repo-memory" ~/.local/bin/'
    assert any(line.strip() == step for line in tail), tail
    assert any("~/.local/bin" in line and "PATH" in line and line.strip() != step for line in tail), tail  # not on PATH either


def test_install_says_no_path_step_when_repo_memory_is_on_path(tmp_path: Path):
    here = checkout(tmp_path)
    out = install(here, tmp_path, path=f"{here / '.venv' / 'bin'}:/usr/bin:/bin").stdout
    assert "ln -s" not in out and out.strip().splitlines()[-1].startswith("repo-memory is installed at"), out


def test_install_removes_the_demos_throwaway_repository(tmp_path: Path):
    """Every run left a /tmp/repo-memory-demo-* repository behind."""
    out = install(checkout(tmp_path), tmp_path).stdout
    assert "→ recall(" in out  # the demo ran
    assert list((tmp_path / "tmp").iterdir()) == []


def test_install_points_at_no_demo_repository_it_removes(tmp_path: Path):
    """install.sh printed the demo's "look inside: git -C /tmp/repo-memory-demo-…" for a folder it removed when it ended."""
    out = install(checkout(tmp_path), tmp_path).stdout
    assert "→ recall(" in out and "repo-memory-demo-" not in out and "look inside" not in out, out
    assert "repo-memory demo" in out  # how to build one that stays
