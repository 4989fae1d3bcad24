"""The harnesses `repo-memory setup` attaches to, whether this machine has each one's CLI, and how to get it."""

from __future__ import annotations

import shutil

# (setup's subcommand, the harness, its CLI, the npm package that installs it)
HARNESSES = (("claude-code", "Claude Code", "claude", "@anthropic-ai/claude-code"),
             ("codex", "Codex CLI", "codex", "@openai/codex"),
             ("gemini", "Gemini CLI", "gemini", "@google/gemini-cli"))


def missing(cli: str) -> str:
    """How to say that `cli` is not on PATH, with the command that installs it; "" when it is there."""
    package = next(p for _, _, name, p in HARNESSES if name == cli)
    return "" if shutil.which(cli) else f"`{cli}` is not on your PATH: install it with `npm install -g {package}` (Node.js 20+)"


def check(cli: str, line: str, after: str = "") -> str:
    """Setup's last line, `Check it: LINE`, saying first when the harness's CLI that runs LINE is not installed
    (`after`: what else must happen before the check says what LINE promises)."""
    if lacking := missing(cli):
        return f"Check it once it is installed ({lacking}){f' and {after}' if after else ''}: {line}"
    return f"Check it once {after}: {line}" if after else f"Check it: {line}"


def overview() -> str:
    """`repo-memory setup` alone: each harness, whether its CLI is installed, and the command that attaches it."""
    lines = ["Attach repo-memory to a coding agent: run one of these in the repository whose memory it should use", ""]
    for sub, harness, cli, package in HARNESSES:
        found = shutil.which(cli)
        where = f"installed: {found}" if found else f"`{cli}` is not on your PATH (npm install -g {package})"
        lines.append(f"  repo-memory setup {sub:<12} {harness:<12} {where}")
    lines += ["", "--trust answers the harness's \"do you trust this folder\" for you, --remove undoes a setup; "
              "`repo-memory setup NAME --help` says more. Other MCP clients (VS Code, Cursor, Windsurf, Zed): docs/clients.md"]
    return "\n".join(lines)
