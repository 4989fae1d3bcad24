"""install.sh as a new user runs it: what its output ends with, and what it leaves behind.

The script runs for real in a copy of the checkout whose `.venv` is already there: its `python` is this test run's
interpreter (pip installs nothing: the package is this checkout's, on PYTHONPATH) and its `repo-memory` runs
`python -m repo_memory`, so no package index is asked and the project's own venv is left alone.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    step = f'mkdir -p ~/.local/bin && ln -sf "{here}/.venv/bin/repo-memory" ~/.local/bin/'
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


def run_install(here: Path, tmp_path: Path, path: str = "/usr/bin:/bin", *args: str, shell: str = "bash",
                **env: str) -> subprocess.CompletedProcess[str]:
    """install.sh run as `install` runs it, whatever it exits with; `env` adds variables (PYTHON="" unsets it)."""
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "tmp").mkdir(exist_ok=True)
    full = {**os.environ, "PATH": path, "HOME": str(tmp_path / "home"), "TMPDIR": str(tmp_path / "tmp"),
            "PYTHON": sys.executable, "PYTHONPATH": str(ROOT / "server"), **env}
    full = {k: v for k, v in full.items() if v != "" and not k.startswith(("UV_", "PIP_", "VIRTUAL_ENV"))} | \
        {k: v for k, v in env.items() if v != ""}
    return subprocess.run([shell, str(here / "install.sh"), *args], cwd=tmp_path, env=full, capture_output=True, text=True,
                          timeout=300)


def test_install_writes_every_modules_bytecode_where_python_itself_may_not(tmp_path: Path):
    """An editable install left bytecode to the first import; under PYTHONDONTWRITEBYTECODE (set in some sandboxes and
    CI images) nothing wrote it, and every hook and command compiled the whole package as it started (~0.4 s each)."""
    here = checkout(tmp_path)
    package = shutil.copytree(ROOT / "server" / "repo_memory", tmp_path / "server" / "repo_memory",
                              ignore=shutil.ignore_patterns("__pycache__"))
    done = run_install(here, tmp_path, PYTHONPATH=str(package.parent), PYTHONDONTWRITEBYTECODE="1")
    assert done.returncode == 0, done.stdout + done.stderr
    tag = sys.implementation.cache_tag
    missing = [str(p.relative_to(package)) for p in package.rglob("*.py") if not (p.parent / "__pycache__" / f"{p.stem}.{tag}.pyc").is_file()]
    assert missing == [], missing


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_install_stops_when_pip_fails(tmp_path: Path):
    """pip's exit status was lost in `| grep -v … || true`: an upgrade pip could not finish said "installed" and exited 0."""
    here = checkout(tmp_path)
    script(here / ".venv" / "bin" / "python", f'[ "$1 $2 $3" = "-m pip install" ] && {{ echo "ERROR: No matching distribution found for '
           f'tomlkit" >&2; exit 1; }}\nexec "{sys.executable}" "$@"')
    proc = run_install(here, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tomlkit" in proc.stdout + proc.stderr and "pip" in proc.stderr and "installed at" not in proc.stdout, proc.stderr


def test_install_stops_when_a_requirement_of_the_installed_version_is_missing(tmp_path: Path):
    """An old .venv passed the only check (`import repo_memory`) while a dependency the new version needs was absent."""
    here = checkout(tmp_path)
    meta = tmp_path / "shadow" / "repo_memory-0.1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: repo-memory\nVersion: 0.1.0\n"
                                   "Requires-Dist: tomlkit-not-installed-here>=0.13\nRequires-Dist: click>=8.1\n"
                                   'Requires-Dist: test-tool-not-installed; extra == "test"\n', encoding="utf-8")
    proc = run_install(here, tmp_path, PYTHONPATH=f"{tmp_path / 'shadow'}:{ROOT / 'server'}")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tomlkit-not-installed-here" in proc.stderr and "click" not in proc.stderr, proc.stderr
    assert "test-tool-not-installed" not in proc.stderr and "installed at" not in proc.stdout, proc.stderr


@pytest.mark.parametrize("broken", ["its python is gone", "it has no pip"])
def test_install_makes_a_new_venv_when_the_old_one_cannot_work(tmp_path: Path, broken: str):
    """A .venv whose Python was uninstalled stopped with a bare "[Errno 2] …/.venv/bin/python3"; one without pip, a traceback."""
    here = checkout(tmp_path)
    python = here / ".venv" / "bin" / "python"
    if broken == "its python is gone":
        python.unlink()
        python.symlink_to(tmp_path / "uninstalled" / "python3.11")
    else:
        script(python, f'[ "$1 $2" = "-m pip" ] && {{ echo "No module named pip" >&2; exit 1; }}\nexec "{sys.executable}" "$@"')
    proc = run_install(here, tmp_path)  # the new .venv's pip then finds no project to install here: only install.sh is copied
    out = proc.stdout + proc.stderr
    assert "Errno 2" not in out and "Traceback" not in out.split("==> Python environment")[1].split("pip")[0], out
    assert "new .venv" in proc.stdout, out
    assert subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode == 0


def test_install_keeps_a_working_venv_when_python3_is_too_old(tmp_path: Path):
    """A .venv made with PYTHON=python3.11 was refused on every re-run because python3 was 3.10."""
    here = checkout(tmp_path)
    old = script(tmp_path / "bin" / "python3", "echo 3.10.13; exit 1").parent  # a python3 older than 3.11
    proc = run_install(here, tmp_path, f"{old}:/usr/bin:/bin", PYTHON="")
    assert proc.returncode == 0 and "installed at" in proc.stdout, proc.stdout + proc.stderr


def test_install_says_it_keeps_the_venvs_python_when_python_names_another(tmp_path: Path):
    """PYTHON=python3.12 on a re-run was ignored without a word: .venv kept the Python it was made with."""
    here = checkout(tmp_path)
    newer = script(tmp_path / "bin" / "python3.99", "echo 3.99.0")
    proc = run_install(here, tmp_path, PYTHON=str(newer))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = next(line for line in proc.stdout.splitlines() if "3.99.0" in line)
    assert ".".join(map(str, sys.version_info[:3])) in said and "rm -rf .venv" in proc.stdout, proc.stdout


def test_install_passes_pips_index_on_to_uv(tmp_path: Path):
    """With uv on PATH, PIP_INDEX_URL (a company mirror) was ignored: uv reads UV_INDEX_URL."""
    here = checkout(tmp_path)
    seen = tmp_path / "uv-env"
    uv = script(tmp_path / "bin" / "uv", f'env | grep -E "^UV_(EXTRA_)?INDEX_URL=" > "{seen}"; exit 0').parent
    proc = run_install(here, tmp_path, f"{uv}:/usr/bin:/bin", PIP_INDEX_URL="https://mirror.example/simple",
                       PIP_EXTRA_INDEX_URL="https://extra.example/simple")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(seen.read_text(encoding="utf-8").split()) == ["UV_EXTRA_INDEX_URL=https://extra.example/simple",
                                                               "UV_INDEX_URL=https://mirror.example/simple"]


def advice(out: str) -> str:
    return next(line.strip() for line in out.splitlines() if "ln -s" in line)


def test_install_replaces_a_dangling_link_left_on_path(tmp_path: Path):
    """~/.local/bin/repo-memory left from a moved checkout: "not on your PATH yet", then the `ln -s` given failed "File exists"."""
    here = checkout(tmp_path)
    link = tmp_path / "home" / ".local" / "bin" / "repo-memory"
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "moved-away" / ".venv" / "bin" / "repo-memory")
    proc = run_install(here, tmp_path, f"{link.parent}:/usr/bin:/bin")
    assert proc.returncode == 0 and "moved-away" in proc.stdout, proc.stdout + proc.stderr
    subprocess.run(["bash", "-c", advice(proc.stdout)], env={**os.environ, "HOME": str(tmp_path / "home")}, check=True)
    assert link.resolve() == here / ".venv" / "bin" / "repo-memory"


def test_install_says_when_the_repo_memory_on_path_is_another_install(tmp_path: Path):
    """A link to another checkout's repo-memory on PATH: install.sh said nothing, and the hooks ran the other one."""
    here = checkout(tmp_path)
    other = script(tmp_path / "other" / ".venv" / "bin" / "repo-memory", "echo other")
    link = tmp_path / "home" / ".local" / "bin" / "repo-memory"
    link.parent.mkdir(parents=True)
    link.symlink_to(other)
    proc = run_install(here, tmp_path, f"{link.parent}:/usr/bin:/bin")
    assert proc.returncode == 0 and str(other) in proc.stdout, proc.stdout + proc.stderr
    subprocess.run(["bash", "-c", advice(proc.stdout)], env={**os.environ, "HOME": str(tmp_path / "home")}, check=True)
    assert link.resolve() == here / ".venv" / "bin" / "repo-memory"


def test_attach_lines_quote_a_path_with_a_space(tmp_path: Path):
    """A checkout in "my tools" printed `/…/my tools/.venv/bin/repo-memory setup claude-code --trust` unquoted."""
    venv = tmp_path / "my tools" / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    exe = script(venv / "bin" / "repo-memory", "exit 0")
    text = subprocess.run([venv / "bin" / "python", "-c", "from repo_memory.shells import attach; print(attach.instructions())"],
                          env={**os.environ, "PYTHONPATH": str(ROOT / "server")}, capture_output=True, text=True, check=True).stdout
    lines = [shlex.split(line) for line in text.splitlines() if "setup claude-code --trust" in line or "mcp add" in line]
    assert lines == [[str(exe), "setup", "claude-code", "--trust"], ["claude", "mcp", "add", "repo-memory", "--", str(exe), "serve"]]


def test_install_runs_under_sh(tmp_path: Path):
    """`sh install.sh` stopped at once: "set: Illegal option -o pipefail" (dash)."""
    proc = run_install(checkout(tmp_path), tmp_path, shell="sh")
    assert proc.returncode == 0 and "installed at" in proc.stdout, proc.stdout + proc.stderr
