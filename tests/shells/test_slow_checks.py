"""Inside the real Claude Code and Codex: a loop check longer than a minute runs to its verdict at the agent's stop.

setup gave the Stop hook 60 s, and the hook runs the checks itself: the harness killed it mid-check, the agent was let
go and the run stayed `running` with no iteration and no word said. See also tests/runner/test_loop_stop.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory import layout
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.runner.engine import Engine
from repo_memory.shells.cli import cli
from tests.conftest import git
from tests.harness.clis import CODEX_NAMESPACE, TOOLS, claude, codex, codex_home
from tests.harness.fake_anthropic import FakeAnthropic, tool_use
from tests.harness.fake_responses import FakeResponses, function_call

pytestmark = pytest.mark.slow
PY = sys.executable
CHECK_SECONDS = 65  # longer than the 60 s an older setup gave the Stop hook


def new_repo(path: Path) -> Path:
    """A repository as the `repo` fixture makes one."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    layout.init(path)
    return path


def slow_loop(repo: Path) -> Path:
    """`repo` with an accepted loop whose one check passes after CHECK_SECONDS (its timeout allows 900)."""
    (repo / "check.py").write_text("print('ok')\n", encoding="utf-8")
    (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
    (repo / ".agents/loops/slow.md").write_text(
        "---\nname: slow\nstatus: active\ntrigger: {on: manual}\ngoal: Keep check.py passing.\n"
        f'verify:\n  - {{level: 4, name: tests, run: "sleep {CHECK_SECONDS}; {PY} check.py", expect: {{exit: 0}}, timeout: 900}}\n'
        "stop: {max_iterations: 2}\nsuccess_requires_level: 4\n---\nThe suite is slow.\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    store = Store(Config.load(repo))
    store.refresh()
    Engine(store).accept("slow")
    store.close()
    return repo


def only_run(repo: Path) -> dict:
    store = Store(Config.load(repo))
    try:
        (run,) = Engine(store).status()
    finally:
        store.close()
    return run


def claude_session(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    assert CliRunner().invoke(cli, ["--root", str(repo), "setup", "claude-code"], catch_exceptions=False).exit_code == 0
    turns = [tool_use("mcp__repo-memory__loop_start", {"name": "slow"}), "Done: the goal is met."] + ["Still done."] * 3
    with FakeAnthropic(turns) as api:
        return claude(repo, home, api, "Run the slow loop.", timeout=CHECK_SECONDS + 240)


def codex_session(repo: Path, home: Path) -> subprocess.CompletedProcess[str]:
    turns = [function_call("loop_start", {"name": "slow"}, namespace=CODEX_NAMESPACE)] + ["Done."] * 4
    with FakeResponses(turns, limit=20) as api:
        codex_home(home, api)
        assert CliRunner().invoke(cli, ["--root", str(repo), "setup", "codex", "--trust"], catch_exceptions=False).exit_code == 0
        return codex(repo, home, "Run the slow loop.", timeout=CHECK_SECONDS + 240)


def test_a_check_longer_than_a_minute_ends_the_run_at_claude_codes_and_at_codexs_stop(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    """One repository per harness, both sessions at once (each waits out the same minute-long check)."""
    home = tmp_path / "home"  # one HOME for both: ~/.claude and ~/.codex
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("REPO_MEMORY_KEY_DIR", raising=False)  # keys in that HOME, as for a user: the harness's processes use them too
    monkeypatch.setenv("PATH", f"{TOOLS}{os.pathsep}{os.environ['PATH']}")
    repos = {name: slow_loop(new_repo(tmp_path / name)) for name in ("claude", "codex")}
    with ThreadPoolExecutor(2) as pool:
        sessions = {name: pool.submit(session, repos[name], home)
                    for name, session in (("claude", claude_session), ("codex", codex_session))}
        done = {name: future.result() for name, future in sessions.items()}
    for name, proc in done.items():
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        run = only_run(repos[name])
        assert run["state"] == "succeeded" and run["iterations"] == 1, (name, run, proc.stdout[-1000:], proc.stderr[-1000:])
