"""The real Claude Code and Codex CLIs, run offline against scripted model endpoints on loopback.

Every run is bounded: its own process group, killed (with the MCP servers and hooks it started) on timeout.
HOME is a temporary folder, so nothing of the developer's configuration leaks in or out.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.fake_anthropic import FakeAnthropic
from tests.harness.fake_responses import FakeResponses

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools" / "node_modules" / ".bin"
CODEX_NAMESPACE = "mcp__repo_memory"  # server "repo-memory" in Codex: "-" becomes "_", the call is namespace + tool name


def cli_tool(name: str) -> str:
    """The path of a CLI installed by `./install.sh --test` (or on PATH); the test skips, saying why, without it."""
    found = TOOLS / name
    if found.exists():
        return str(found)
    if shutil.which(name):
        return str(shutil.which(name))
    pytest.skip(f"the {name} CLI is not installed (./install.sh --test installs it into .tools/ with npm)")


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 120, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run in its own process group; on timeout, or when it returns, the whole group goes (no stray MCP server)."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, text=True, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"timed out after {timeout} s: {args}\n{out[-2000:]}\n{err[-2000:]}") from None
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def base_env(home: Path) -> dict[str, str]:
    """A minimal environment with repo-memory and the CLIs on PATH; nothing of the real HOME or API keys."""
    path = os.pathsep.join([str(TOOLS), str(Path(sys.executable).parent), os.environ.get("PATH", "/usr/bin:/bin")])
    keep = {k: v for k, v in os.environ.items() if k.startswith(("GIT_", "LANG", "LC_"))}
    return {**keep, "PATH": path, "HOME": str(home), "LANG": "C.UTF-8"}


def claude(repo: Path, home: Path, api: FakeAnthropic, prompt: str, *extra: str, timeout: float = 180,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`claude -p PROMPT` in `repo`, its model the scripted `api`; nothing else set: the tools run because `repo-memory
    setup claude-code` allowed them, and Claude Code's default model and MCP start-up wait apply."""
    full = {**base_env(home), "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test", "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", **(env or {})}
    return run([cli_tool("claude"), "-p", prompt, *extra], repo, full, timeout)


def codex_home(home: Path, api: FakeResponses) -> None:
    """~/.codex/config.toml pointing Codex at the scripted `api` (written before `repo-memory setup codex` appends to it)."""
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'model_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
                      f'base_url = "{api.url}/v1"\nwire_api = "responses"\nenv_key = "FAKE_OPENAI_API_KEY"\n', encoding="utf-8")


def trust_project(home: Path, repo: Path) -> None:
    """Trust `repo` in Codex (an untrusted project's .codex/ layer, hooks.json included, is ignored)."""
    with (home / ".codex" / "config.toml").open("a", encoding="utf-8") as config:
        config.write(f'\n[projects."{repo}"]\ntrust_level = "trusted"\n')


def codex(repo: Path, home: Path, prompt: str, *extra: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`codex exec PROMPT` in `repo` with the default model, its provider the one `codex_home` configured; nothing else
    set (hooks run only once trusted, as `repo-memory setup codex --trust` or Codex's own prompt stores it)."""
    args = [cli_tool("codex"), "exec", *extra, prompt]
    return run(args, repo, {**base_env(home), "FAKE_OPENAI_API_KEY": "sk-test"}, timeout)


def records(repo: Path) -> list[dict]:
    """Every experience record in the repository, with the log it came from under `_log`."""
    out = []
    for path in sorted(repo.glob(".agents/experience/*/*.jsonl")):
        out += [{**json.loads(line), "_log": path.stem} for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out
