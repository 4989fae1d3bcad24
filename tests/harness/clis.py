"""The real Claude Code, Codex and Gemini CLIs, run offline against scripted model endpoints on loopback.

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
import time
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


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 120, stdin: str | None = None,
        linger: float = 0.0) -> subprocess.CompletedProcess[str]:
    """Run in its own process group; on timeout, or when it returns, the whole group goes (no stray MCP server).
    `linger`: seconds the group's other processes (an MCP server the CLI closed) have to end by themselves first, as
    they would for a user, whose servers nobody kills."""
    proc = subprocess.Popen(args, cwd=cwd, env=env, text=True, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        deadline = time.monotonic() + linger
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
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
    # PYTHONPATH: the servers and hooks the CLIs start run the repo-memory under test (a worktree's), not the installed one
    keep = {k: v for k, v in os.environ.items() if k.startswith(("GIT_", "LANG", "LC_")) or k == "PYTHONPATH"}
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


def codex_serves_code_under_test(home: Path) -> None:
    """Pass PYTHONPATH to the server `repo-memory setup codex` configured: Codex hands an MCP server only a few
    variables of its own environment, so without it a worktree's test would talk to the installed repo-memory.
    (A user needs nothing of the kind: the installed repo-memory is the one under use.)"""
    config = home / ".codex" / "config.toml"
    text = config.read_text(encoding="utf-8")
    assert "[mcp_servers.repo-memory]\n" in text, text
    config.write_text(text.replace("[mcp_servers.repo-memory]\n", '[mcp_servers.repo-memory]\nenv_vars = ["PYTHONPATH"]\n', 1),
                      encoding="utf-8")


def codex(repo: Path, home: Path, prompt: str, *extra: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`codex exec PROMPT` in `repo` with the default model, its provider the one `codex_home` configured; nothing else
    set (hooks run only once trusted, as `repo-memory setup codex --trust` or Codex's own prompt stores it)."""
    args = [cli_tool("codex"), "exec", *extra, prompt]
    return run(args, repo, {**base_env(home), "FAKE_OPENAI_API_KEY": "sk-test"}, timeout)


def gemini_home(home: Path, repo: Path) -> None:
    """~/.gemini as a Gemini CLI user's is once they trusted `repo` (what the "Trust folder" dialog stores) and chose
    an API key to sign in with (the key itself, and the scripted endpoint, are in `gemini`'s environment)."""
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(repo): "TRUST_FOLDER"}), encoding="utf-8")
    (home / ".gemini" / "settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8")


def gemini(repo: Path, home: Path, api_url: str, prompt: str, timeout: float = 180,
           args: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """`gemini -p PROMPT [ARGS]` in `repo` with its default model, served by the scripted endpoint at `api_url`. The
    servers it started are given a few seconds to end by themselves when it exits, as for a user (they commit on the way
    out)."""
    env = {**base_env(home), "GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": api_url}
    return run([cli_tool("gemini"), "-p", prompt, *args], repo, env, timeout, linger=10.0)


def records(repo: Path) -> list[dict]:
    """Every experience record in the repository, with the log it came from under `_log`."""
    out = []
    for path in sorted(repo.glob(".agents/experience/*/*.jsonl")):
        out += [{**json.loads(line), "_log": path.stem} for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out
