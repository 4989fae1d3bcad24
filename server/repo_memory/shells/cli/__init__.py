"""The `repo-memory` command: each command opens the Store, calls one method and prints the result.

Commands live in one module per group (skills, logs, loops, setup, maintenance), named here and imported when run:
importing all five cost every call (each hook, each command) ~0.1 s of CPU for the four it did not run.
"""

from __future__ import annotations

from pathlib import Path

import click

from repo_memory.shells.cli.base import Group

COMMANDS = {  # name -> module of shells/cli and the command's name in it
    **{name: ("setup", name) for name in ("serve", "init", "demo", "hook", "setup", "uninstall")},
    **{name: ("skills", name) for name in ("skill", "accept", "reject", "sync", "feedback", "stats")}, "merge-skill": ("skills", "merge_skill"),
    **{name: ("logs", name) for name in ("log", "timeline", "verify", "textconv")},
    "loop": ("loops", "loop"),
    **{name: ("maintenance", name) for name in ("search", "history", "reindex", "report", "stale", "doctor")},
}


@click.group(cls=Group, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), envvar="REPO_MEMORY_ROOT",
              help="Repository to use (default: $REPO_MEMORY_ROOT, else $CLAUDE_PROJECT_DIR, else the current directory's "
                   "repository; `serve` may take the client's MCP root instead: `repo-memory serve --help`).")
@click.version_option(package_name="repo-memory")
@click.pass_context
def cli(ctx: click.Context, root: Path | None) -> None:
    """Durable memory for coding agents, kept as plain files in your git repository.

    \b
    Skills are markdown procedures in .agents/skills/<name>/SKILL.md. Agents find them through
    the MCP server (`repo-memory serve`); you edit them like any file and review them with git.

    \b
    Start:   repo-memory init                create .agents/ in this repository
             repo-memory setup claude-code   give Claude Code the tools and hooks here
             repo-memory setup codex         give Codex the tools (every repository) and hooks here
             repo-memory setup gemini        give Gemini CLI the tools and hooks here
             repo-memory skill new NAME      write your first skill
             repo-memory demo                see what an agent sees, in a throwaway repository
    """
    ctx.obj = {"root": root}


def main() -> None:
    """Entry point of the console script."""
    cli(prog_name="repo-memory")
