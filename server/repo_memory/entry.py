"""The console script: hooks take a short path (they run on every tool call); everything else goes through click."""

from __future__ import annotations

import json
import sys


def main() -> None:
    """Run `repo-memory`."""
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "hook" and args[1] not in ("-h", "--help"):
        from repo_memory.shells import hooks

        if args[1] in hooks.HANDLERS:
            raw = sys.stdin.read()
            try:
                payload = json.loads(raw) if raw.strip() else {}
            except ValueError:
                payload = {}
            print(json.dumps(hooks.handle(args[1], payload if isinstance(payload, dict) else {})))
            return
    from repo_memory.shells.cli import main as cli_main

    cli_main()
