"""Benchmark: what repo-memory's hooks cost per tool call inside a real `claude -p` session.

A scripted model (tests/harness/fake_anthropic.py, on loopback) asks for the same cheap tool call again and again; the
time between its consecutive requests is one round trip of Claude Code: the tool, the hooks around it, Claude Code's
own work. Run with no repo-memory hooks (the baseline, measured in the same run), with command hooks (a `repo-memory
hook` process per call) and with `mcp_tool` hooks (Claude Code 2.1.118+ calls the running server); the difference from
the baseline is the hooks' cost per call.

    python bench/hooks.py                 # Read (PostToolUse only) and Write (PreToolUse + PostToolUse), 3 sessions each
    python bench/hooks.py --calls 8 --sessions 1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.harness.clis import TOOLS, base_env, cli_tool  # noqa: E402
from tests.harness.fake_anthropic import FakeAnthropic, tool_use  # noqa: E402

EXE = str(Path(sys.executable).parent / "repo-memory")
VARIANTS = ("none", "command", "mcp")


def project(base: Path, variant: str) -> tuple[Path, Path]:
    """A repository attached by `repo-memory setup claude-code` (hooks of `variant`, or none), and a HOME for it."""
    repo, home = base / "repo", base / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    env = {**base_env(home), "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    subprocess.run([EXE, "init"], cwd=repo, env=env, check=True, capture_output=True)
    (repo / "notes.txt").write_text("hello\n", encoding="utf-8")
    kind = "command" if variant == "none" else variant
    subprocess.run([EXE, "setup", "claude-code", "--trust", "--hooks", kind], cwd=repo, env=env, check=True, capture_output=True)
    if variant == "none":
        settings = repo / ".claude/settings.local.json"
        data = json.loads(settings.read_text(encoding="utf-8"))
        data.pop("hooks", None)
        settings.write_text(json.dumps(data), encoding="utf-8")
    return repo, home


def gaps(repo: Path, home: Path, tool: str, calls: int) -> list[float]:
    """Seconds between consecutive model requests while the model asks for `calls` calls of `tool`."""
    if tool == "Read":
        turns = [tool_use("Read", {"file_path": str(repo / "notes.txt")}) for _ in range(calls)]
    else:
        turns = [tool_use("Write", {"file_path": str(repo / f"out{n}.txt"), "content": f"{n}\n"}) for n in range(calls)]
    env = {**base_env(home), "ANTHROPIC_API_KEY": "sk-ant-bench", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    with FakeAnthropic([*turns, "Done."]) as api:
        env["ANTHROPIC_BASE_URL"] = api.url
        done = subprocess.run([cli_tool("claude"), "-p", "Work.", "--permission-mode", "acceptEdits"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            raise SystemExit(f"claude -p failed: {done.stderr[-2000:]}")
        times = [r["ts"] for r in api.requests if r["path"].startswith("/v1/messages") and isinstance(r["body"], dict)
                 and r["body"] in api.main_requests()]
    return [b - a for a, b in zip(times[1:], times[2:])]  # the first gap includes start-up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=12, help="tool calls per session")
    parser.add_argument("--sessions", type=int, default=3, help="sessions per variant and tool")
    args = parser.parse_args()
    if not (TOOLS / "claude").exists():
        raise SystemExit("the claude CLI is not installed: ./install.sh --test installs it into .tools/")
    version = subprocess.run([cli_tool("claude"), "--version"], capture_output=True, text=True).stdout.strip()
    print(f"Claude Code {version}; {args.sessions} session(s) x {args.calls} calls per variant; median seconds between requests")
    for tool in ("Read", "Write"):
        medians = {}
        for variant in VARIANTS:
            found: list[float] = []
            for _ in range(args.sessions):  # interleaving variants would be fairer still; sessions are short
                with tempfile.TemporaryDirectory() as tmp:
                    found += gaps(*project(Path(tmp), variant), tool, args.calls)
            medians[variant] = statistics.median(found)
        base = medians["none"]
        hooks = "PostToolUse" if tool == "Read" else "PreToolUse + PostToolUse"
        print(f"\n{tool} ({hooks}):")
        for variant in VARIANTS:
            extra = "" if variant == "none" else f"  hooks cost {1000 * (medians[variant] - base):7.1f} ms per call"
            print(f"  {variant:8s} {1000 * medians[variant]:8.1f} ms per round trip{extra}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
