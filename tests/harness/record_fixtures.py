"""Record the import fixtures: a short session of the real Claude Code and Codex CLIs, as each wrote it to disk.

    .venv/bin/python -m tests.harness.record_fixtures           # refresh tests/fixtures/harness/
    .venv/bin/python -m tests.harness.record_fixtures --keep    # and keep the temporary repositories and HOMEs

Each CLI installed by `./install.sh --test` (.tools/node_modules/.bin, else PATH) runs one headless session in a
temporary git repository with a temporary HOME (nothing of the developer's configuration is read or written), its
model the scripted endpoint of tests/harness/ on loopback, after `repo-memory setup` attached repo-memory as a user
attaches it, so the file holds the lines repo-memory's hooks add:

- Claude Code (`setup claude-code`, then `claude -p PROMPT`): the model says a word and runs Bash `echo hello`, runs
  Bash `ls no-such-file` (which fails), then answers.
- Codex (`setup codex --trust`, then `codex exec PROMPT`): the model reasons (a summary), calls repo-memory's `recall`
  over MCP, runs exec_command `echo hello`, adds a file with apply_patch, then answers.

The file each CLI wrote (~/.claude/projects/<folder>/<session id>.jsonl, ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)
is copied to tests/fixtures/harness/claude-code-<version>.jsonl and codex-<version>.jsonl with only this machine's
paths replaced by placeholders (REPO, HOME, SOURCE, TEMP below; a test puts its own repository's path back for REPO);
every other byte is as the CLI wrote it. manifest.json records the versions, the sessions, the date and this command.
tests/core/test_import.py imports the fixtures: run this after updating a CLI, then that module; a failure there is
the import code meeting what the new version writes.

Size: a default session writes the CLI's whole system prompt and tool schemas into the file (Claude Code 2.1.332:
prompt_snapshot and api-request-* lines; Codex 0.171.0: base_instructions, twice), 100-160 KB of text no import
reads. So the sessions run with a one-line system prompt (Claude Code `--system-prompt`, Codex
`model_instructions_file`) and Claude Code with the built-in tools cut to those whose listings a default session
writes (`--tools Bash,Skill,ToolSearch,Agent`: the skill, agent and deferred-tool attachments stay); the kinds of
lines are those of a default session. `--full` records with the CLIs' defaults.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.harness import fake_anthropic, fake_responses
from tests.harness.clis import CODEX_NAMESPACE, TOOLS, base_env, codex_home, run
from tests.harness.fake_anthropic import FakeAnthropic, tool_results, tool_use
from tests.harness.fake_responses import FakeResponses, function_call, function_outputs

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "harness"
COMMAND = ".venv/bin/python -m tests.harness.record_fixtures"
# What this machine's paths become in the fixtures (none is a prefix of another, so each can be put back alone).
REPO, HOME, SOURCE, TEMP = "/fixture/repo", "/fixture/home", "/fixture/src", "/fixture/tmp"
PROMPT = "Say hello from the shell."
INSTRUCTIONS = "You are a coding agent in a scripted session that records import fixtures."
HELLO, MISSING = "echo hello", "ls no-such-file"
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n"
ANSWER = "The shell said hello."
REASONING = "First what memory says, then the shell."  # Codex: a reasoning summary, which an import leaves out
GIT = {"GIT_AUTHOR_NAME": "Fixture Person", "GIT_AUTHOR_EMAIL": "fixture@example.com",
       "GIT_COMMITTER_NAME": "Fixture Person", "GIT_COMMITTER_EMAIL": "fixture@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


class RecordingError(Exception):
    """A step of the recording failed; the message says which, with what the CLI printed."""


def find_cli(name: str) -> str:
    found = TOOLS / name
    if found.exists():
        return str(found)
    if shutil.which(name):
        return str(shutil.which(name))
    raise RecordingError(f"the {name} CLI is not installed: ./install.sh --test installs it into {TOOLS} with npm")


def version_of(cli: str) -> str:
    out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=60, check=False).stdout
    match = re.search(r"\d+\.\d+\.\d+[0-9A-Za-z.+-]*", out)
    if not match:
        raise RecordingError(f"cannot tell the version of {cli} from {out!r}")
    return match.group()


def checked(what: str, done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    if done.returncode != 0:
        raise RecordingError(f"{what} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
    return done


def env_for(base: Path) -> dict[str, str]:
    """base/home as HOME, git with a config of its own; lexical recall only, as in the test suite (the hooks and the
    MCP server must not load an embedding model: offline, and slow)."""
    return {**base_env(base / "home"), **GIT, "GIT_CONFIG_GLOBAL": str(base / "gitconfig"), "REPO_MEMORY_SEMANTIC": "false"}


def attach(base: Path, *setup: str) -> Path:
    """base/repo, a git repository with one commit, and base/home; then `repo-memory setup SETUP...` with that HOME."""
    repo, env = base / "repo", env_for(base)
    repo.mkdir()
    (base / "home").mkdir(exist_ok=True)
    checked("git init", run(["git", "init", "-q", "-b", "main"], repo, env, 60))
    (repo / "README.md").write_text("A repository for recording import fixtures.\n", encoding="utf-8")
    checked("git add", run(["git", "add", "-A"], repo, env, 60))
    checked("git commit", run(["git", "commit", "-q", "-m", "init"], repo, env, 60))
    repo_memory = Path(sys.executable).parent / "repo-memory"
    if not repo_memory.exists():
        raise RecordingError(f"{repo_memory} is missing: install the project into this venv (./install.sh --test)")
    checked(f"repo-memory setup {' '.join(setup)}", run([str(repo_memory), "--root", str(repo), "setup", *setup], repo, env, 120))
    return repo


def record_claude(base: Path, full: bool) -> tuple[Path, list[str]]:
    """One `claude -p` session in base/repo; the transcript Claude Code wrote, and the flags it ran with."""
    cli = find_cli("claude")
    repo = attach(base, "claude-code")
    turns: list[fake_anthropic.Turn] = [
        ["Running it.", tool_use("Bash", {"command": HELLO, "description": "Print hello"})],
        tool_use("Bash", {"command": MISSING, "description": "List a file that is not there"}), ANSWER]
    # `claude -p` has nobody to answer a permission prompt, and setup allows only repo-memory's own tools, so a Bash
    # call is refused unless the command line allows it. This recorder (not a product test) allows exactly the two
    # commands the script runs, nothing else, the way the README tells a headless user to; a Read call would need no grant, but a Bash call is what an import
    # meets most (its result line carries a stdout/stderr toolUseResult, a failure is_error), so the fixture has them.
    flags = ["--allowedTools", f"Bash({HELLO})", f"Bash({MISSING})"]
    flags += [] if full else ["--system-prompt", INSTRUCTIONS, "--tools", "Bash,Skill,ToolSearch,Agent"]
    with FakeAnthropic(turns) as api:
        env = {**env_for(base), "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test", "DISABLE_AUTOUPDATER": "1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        done = checked("claude -p", run([cli, "-p", PROMPT, *flags], repo, env, 240))
        results = [(r["text"], bool(r.get("is_error"))) for body in api.main_requests()[-1:] for r in tool_results(body)]
    if [(text.strip() == "hello", error) for text, error in results] != [(True, False), (False, True)] or "no-such-file" not in results[1][0]:
        raise RecordingError(f"the Bash calls did not run as scripted (tool results: {results!r})\n{done.stdout[-2000:]}")
    found = sorted((base / "home" / ".claude" / "projects").glob("*/*.jsonl"))
    if len(found) != 1:
        raise RecordingError(f"expected one transcript under {base}/home/.claude/projects, found {found}")
    return found[0], ["claude", "-p", PROMPT, *flags]


def record_codex(base: Path, full: bool) -> tuple[Path, list[str]]:
    """One `codex exec` session in base/repo; the rollout Codex wrote, and the flags it ran with."""
    cli = find_cli("codex")
    patch = {"type": "custom_tool_call", "id": "ctc_fake0001", "call_id": "call_patch0001", "name": "apply_patch", "input": PATCH}
    thinking = {"type": "reasoning", "id": "rs_fake0001", "summary": [{"type": "summary_text", "text": REASONING}]}
    # exec_command and apply_patch are called by name, as the live test in tests/core/test_import.py calls exec_command:
    # the default model's requests offer Codex's tools through code mode's `exec`, and Codex runs the direct calls too.
    turns: list[fake_responses.Turn] = [
        [thinking, function_call("recall", {"query": "shell greeting"}, namespace=CODEX_NAMESPACE)],
        function_call("exec_command", {"cmd": HELLO}), patch, ANSWER]
    with FakeResponses(turns) as api:
        (base / "home").mkdir()
        codex_home(base / "home", api)  # before setup, which appends the MCP server to the same config.toml
        repo = attach(base, "codex", "--trust")  # --trust: what answering Codex's "Hooks need review" with "Trust all" stores
        flags: list[str] = []
        if not full:
            (base / "instructions.md").write_text(INSTRUCTIONS + "\n", encoding="utf-8")
            flags = ["-c", f"model_instructions_file={json.dumps(str(base / 'instructions.md'))}"]
        done = checked("codex exec", run([cli, "exec", *flags, PROMPT], repo, {**env_for(base), "FAKE_OPENAI_API_KEY": "sk-test"}, 240))
        outputs = [o["text"] for o in function_outputs(api.main_requests()[-1])]
    if len(outputs) != 3 or '"hits"' not in outputs[0] or "hello" not in outputs[1] or not (repo / "hello.txt").is_file():
        raise RecordingError(f"the calls did not run as scripted (outputs: {outputs!r})\n{done.stderr[-2000:]}")
    found = sorted((base / "home" / ".codex" / "sessions").glob("*/*/*/rollout-*.jsonl"))
    if len(found) != 1:
        raise RecordingError(f"expected one rollout under {base}/home/.codex/sessions, found {found}")
    return found[0], ["codex", "exec", *flags, PROMPT]


def placeholders(base: Path) -> list[tuple[bytes, bytes]]:
    """(this machine's path, placeholder) pairs, the longest first, each also as Claude Code names a folder after a
    path (every character but A-Z a-z 0-9 as '-')."""
    pairs: dict[str, str] = {}
    for real, fake in ((base / "repo", REPO), (base / "home", HOME), (ROOT, SOURCE), (base, TEMP)):
        for variant in {str(real), os.path.realpath(real)}:
            pairs[variant] = fake
            pairs[re.sub(r"[^A-Za-z0-9]", "-", variant)] = re.sub(r"[^A-Za-z0-9]", "-", fake)
    return [(k.encode(), v.encode()) for k, v in sorted(pairs.items(), key=lambda kv: -len(kv[0]))]


def scrub(raw: bytes, pairs: list[tuple[bytes, bytes]]) -> bytes:
    for real, fake in pairs:
        raw = raw.replace(real, fake)
    return raw


def session_of(harness: str, data: bytes) -> str:
    for raw in data.splitlines():
        obj = json.loads(raw)
        if harness == "codex" and obj.get("type") == "session_meta":
            return str(obj["payload"]["id"])
        if harness == "claude-code" and obj.get("sessionId"):
            return str(obj["sessionId"])
    raise RecordingError(f"no session id in the {harness} file")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.record_fixtures", description=__doc__.split("\n\n")[0],
                                     epilog="Writes claude-code-<version>.jsonl, codex-<version>.jsonl and manifest.json "
                                            "into --out, removing the files of earlier versions. Exits 1, saying why, "
                                            "when a CLI is missing or a session does not run as scripted.")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the fixtures go (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--full", action="store_true",
                        help="record with the CLIs' own system prompt and tool set (files of 100+ KB)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary repositories and HOMEs (the path is printed)")
    args = parser.parse_args(argv)
    temp = Path(tempfile.mkdtemp(prefix="repo-memory-fixtures-"))
    try:
        versions = {"claude-code": version_of(find_cli("claude")), "codex": version_of(find_cli("codex"))}
        recorders = {"claude-code": record_claude, "codex": record_codex}
        fixtures: dict[str, Any] = {}
        written: dict[str, bytes] = {}
        for harness, record in recorders.items():
            base = temp / harness
            base.mkdir()
            path, command = record(base, args.full)
            pairs = placeholders(base)
            data = scrub(path.read_bytes(), pairs)
            if str(temp).encode() in data or str(ROOT).encode() in data:
                raise RecordingError(f"a path of this machine is left in the {harness} file")
            name = f"{harness}-{versions[harness]}.jsonl"
            written[name] = data
            fixtures[harness] = {"file": name, "version": versions[harness], "session": session_of(harness, data),
                                 "written_as": scrub(str(path).encode(), pairs).decode(), "bytes": len(data),
                                 "lines": data.count(b"\n"), "command": [scrub(c.encode(), pairs).decode() for c in command]}
        args.out.mkdir(parents=True, exist_ok=True)
        for old in [*args.out.glob("claude-code-*.jsonl"), *args.out.glob("codex-*.jsonl")]:
            old.unlink()
        for name, data in written.items():
            (args.out / name).write_bytes(data)
        manifest = {
            "about": "Sessions the real CLIs wrote against tests/harness/'s scripted endpoints; only the placeholders "
                     "replace this machine's paths. Regenerate with the command below; tests/core/test_import.py reads them.",
            "regenerate": COMMAND + (" --full" if args.full else ""),
            "recorded": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "placeholders": {REPO: "the session's repository (its cwd)", HOME: "HOME", SOURCE: "the repo-memory checkout",
                             TEMP: "the recorder's temporary folder"},
            "prompt": PROMPT, "answer": ANSWER, "fixtures": fixtures}
        (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        for harness, entry in fixtures.items():
            print(f"{args.out / entry['file']}: {entry['bytes']} bytes, {entry['lines']} lines "
                  f"({harness} {entry['version']}, session {entry['session']})")
    except RecordingError as exc:
        print(f"record_fixtures: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"kept {temp}", file=sys.stderr)
        else:
            shutil.rmtree(temp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
