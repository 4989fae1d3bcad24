"""The console script. Two commands take a short path: hooks (they run on every tool call) and `serve`, whose front
answers the handshake before anything heavy is imported; everything else goes through click."""

from __future__ import annotations

import json
import sys


def _serve_root(args: list[str]) -> tuple[bool, str | None]:
    """Whether `args` is exactly `serve` with at most a `--root PATH` (or `--root=PATH`) before or after it, and the
    root it names: client configs put options after the command, the group's usage before it."""
    rest = [a for a in args if a != "serve"]
    if len(rest) == len(args) - 1 and args.index("serve") in (0, len(args) - 1):
        if not rest:
            return True, None
        if len(rest) == 2 and rest[0] == "--root":
            return True, rest[1]
        if len(rest) == 1 and rest[0].startswith("--root="):
            return True, rest[0].split("=", 1)[1]
    return False, None


def main() -> None:
    """Run `repo-memory`."""
    args = sys.argv[1:]
    serving, root = _serve_root(args)
    if serving:
        from repo_memory.shells import front, shipped

        wire = front.Front.on_stdio(shipped.load()).start()
        from repo_memory.shells import serve

        serve.run(root, wire)  # ends the process
    if args == ["hook", "pre-tool"]:  # before every file and shell call: the lightest path there is
        from repo_memory.shells import pretool
        from repo_memory.shells.hookcalls import payload_of

        print(json.dumps(pretool.handle(payload_of(sys.stdin.buffer.read()))))
        return
    if len(args) == 2 and args[0] == "hook" and args[1] not in ("-h", "--help"):
        from repo_memory.shells import hooks
        from repo_memory.shells.hookcalls import payload_of

        if args[1] in hooks.HANDLERS:
            print(json.dumps(hooks.handle(args[1], payload_of(sys.stdin.buffer.read()))))
            return
    from repo_memory.shells.cli import main as cli_main

    cli_main()
