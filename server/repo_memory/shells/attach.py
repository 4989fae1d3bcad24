"""How to attach the server to a harness: the exact lines a person pastes."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from repo_memory.guards.shellwords import quoted


def command() -> list[str]:
    """The command that starts the server, as an absolute path when we can find one."""
    beside = Path(sys.executable).parent / "repo-memory"
    if beside.exists():
        return [str(beside), "serve"]
    found = shutil.which("repo-memory")
    return [found, "serve"] if found else [sys.executable, "-m", "repo_memory", "serve"]


def instructions() -> str:
    """Text telling a person how to attach repo-memory to Claude Code, Codex, Gemini CLI and other MCP clients."""
    cmd = command()
    args = ", ".join(f'"{a}"' for a in cmd[1:])
    exe = quoted(cmd[0]) if cmd[-1] == "serve" and len(cmd) == 2 else "repo-memory"
    line = quoted(*cmd)  # pasted into a shell: a checkout in "my tools" stays one word
    return f"""\
Attach repo-memory to your agent, inside the repository whose memory it should use:

  One command (registers the server, installs the hooks, prints every change; --remove undoes it):
    {exe} setup claude-code --trust
    {exe} setup codex --trust
    {exe} setup gemini --trust
  (--trust answers the harness's "do you trust this folder" for you; leave it out to answer it yourself)

  Or by hand — Claude Code:
    claude mcp add repo-memory -- {line}

  Codex CLI (~/.codex/config.toml):
    [mcp_servers.repo-memory]
    command = "{cmd[0]}"
    args = [{args}]
    startup_timeout_sec = 20

  Any other MCP client (VS Code, Cursor, Windsurf, Zed): have it start `{line} --root REPOSITORY` over stdio,
  naming the repository (clients start servers in folders of their own choosing): docs/clients.md says how, per client.
  Start here: `repo-memory init` in your repository, then `repo-memory skill new NAME`.
"""
