"""The runner tests' toy project: calc.py with a sign bug, check.py that catches it, a loop spec to fix it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repo_memory.core.store import Store

PY = sys.executable
BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


def spec_text(name: str = "fix-add", *, verify: str | None = None, stop: str = "{max_iterations: 4, no_progress_after: 2}",
              level: int = 4, status: str = "active", extra: str = "") -> str:
    verify = verify or f'  - {{level: 4, run: "{PY} check.py", expect: {{exit: 0}}, timeout: 30}}'
    return (f"---\nname: {name}\nstatus: {status}\ntrigger: {{on: manual}}\ngoal: Make check.py pass without editing it.\n"
            f"verify:\n{verify}\nstop: {stop}\nsuccess_requires_level: {level}\nmemory: {{skills: [running-checks]}}\n{extra}---\n"
            "Fix calc.py; check.py is the specification.\n")


@pytest.fixture
def toy(repo: Path, store: Store) -> Path:
    (repo / "calc.py").write_text(BUGGY, encoding="utf-8")
    (repo / "check.py").write_text("from calc import add\nassert add(2, 2) == 4, f'add(2, 2) returned {add(2, 2)}'\nprint('ok')\n", encoding="utf-8")
    (repo / ".agents/loops/fix-add.md").write_text(spec_text(), encoding="utf-8")
    skill = repo / ".agents/skills/running-checks/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: running-checks\ndescription: Run check.py to verify calc.\n---\nRun `python check.py`.\n", encoding="utf-8")
    store.refresh()
    return repo


def agent_script(repo: Path, body: str) -> str:
    path = repo.parent / "agent.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return f"{PY} {path}"


def hook(repo: Path, payload: dict) -> dict:
    proc = subprocess.run([PY, "-m", "repo_memory", "hook", "stop"], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=60, cwd=repo, env={**os.environ})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
