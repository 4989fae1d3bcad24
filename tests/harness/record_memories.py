"""Record the memory fixtures: the auto-memory folder the real Claude Code CLI writes, and the folder name it gives a
long path.

    .venv/bin/python -m tests.harness.record_memories           # refresh tests/fixtures/memory/claude-code/
    .venv/bin/python -m tests.harness.record_memories --keep    # and keep the temporary repository and HOME

Claude Code (installed by `./install.sh --test`, else on PATH) runs headless sessions in a temporary git repository
with a temporary HOME, its model the scripted endpoint of tests/harness/fake_anthropic.py. Auto memory is on by
default and `claude -p` writes to the memory folder without asking, as it does for a user:

1. "Remember how we work here": the model writes three memories with the Write tool, in the format its system prompt
   gives (a feedback memory with Why/How to apply lines, a project memory of numbered release steps, a user
   memory), then the MEMORY.md index. Claude Code stamps each memory's frontmatter with `node_type`,
   `originSessionId` and `modified` as it writes it.
2. "The db fixture moved": the model reads the feedback memory and edits one line (Claude Code updates `modified`
   and keeps the `originSessionId` of the session that first wrote it).
3. A session in a linked worktree of that repository: the system prompt names the same memory folder (Claude Code
   keys the folder by the canonical git root, the main checkout).
4. A session in a repository whose path is over 200 characters (with a non-ASCII letter and an emoji): the system
   prompt names the memory folder Claude Code derives from it.

The memory folder after session 1 is copied to tests/fixtures/memory/claude-code/memory/, the edited memory after
session 2 to .../later/, byte for byte; manifest.json records the CLI version, the sessions, the date, the long path
and the folder name Claude Code gave it. The scripted memories name no path of this machine; the recorder checks.
tests/core/test_native_memory.py reads them: run this after updating Claude Code, then that module.

Codex is not recorded: its memories come from a background pass over interactive (cli, vscode) sessions only
(`INTERACTIVE_SESSION_SOURCES`), which `codex exec` against a scripted endpoint does not make; that test writes
Codex's files by hand in the formats its sources give.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.harness.fake_anthropic import FakeAnthropic, Turn, tool_use
from tests.harness.record_fixtures import RecordingError, checked, env_for, find_cli, version_of
from tests.harness.clis import run

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "memory" / "claude-code"
COMMAND = ".venv/bin/python -m tests.harness.record_memories"
FEEDBACK = """---
name: db-fixture
description: Tests that touch the database need the db fixture
metadata:
  type: feedback
---

Tests that touch the database take the `db` fixture from tests/conftest.py.

**Why:** without it they reach the developer's own database.
**How to apply:** add `db` to the test's arguments and run `pytest -q tests/db`.
"""
RELEASE = """---
name: release-steps
description: How a release is cut in this repository
metadata:
  type: project
---

The team cuts releases by hand from main:

1. Bump the version in pyproject.toml.
2. Run `pytest -q` and `ruff check`; both must pass.
3. Tag `vX.Y.Z`, push the tag, and let CI publish.

**Why:** the publish job runs only on tags.
"""
USER = """---
name: user-role
description: The user maintains the data pipeline and prefers small commits
metadata:
  type: user
---

The user maintains the data pipeline and prefers small commits with one purpose each.
"""
INDEX = ("- [DB fixture](feedback_db.md) — tests touching the database need the db fixture\n"
         "- [Release steps](project_release.md) — how a release is cut here\n"
         "- [User role](user_role.md) — maintains the data pipeline; small commits\n")
FILES = {"feedback_db.md": FEEDBACK, "project_release.md": RELEASE, "user_role.md": USER, "MEMORY.md": INDEX}
MOVED = ("from tests/conftest.py", "from tests/db/conftest.py")


def session(repo: Path, base: Path, prompt: str, turns: list[Turn]) -> tuple[str, str]:
    """One `claude -p` session; (the memory folder its system prompt names, the session id)."""
    with FakeAnthropic(turns) as api:
        env = {**env_for(base), "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test", "DISABLE_AUTOUPDATER": "1",
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        done = checked("claude -p", run([find_cli("claude"), "-p", prompt], repo, env, 240))
        first = api.main_requests()[0]
    said = re.search(r"persistent file-based memory at `([^`]+)`", json.dumps(first, ensure_ascii=False))
    if said is None:
        raise RecordingError(f"the system prompt names no auto-memory folder (is auto memory off?)\n{done.stdout[-2000:]}")
    return said.group(1), str(json.loads(first["metadata"]["user_id"])["session_id"])


def repository(path: Path, base: Path) -> Path:
    path.mkdir(parents=True)
    checked("git init", run(["git", "init", "-q", "-b", "main"], path, env_for(base), 60))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.record_memories", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"where the fixtures go (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--keep", action="store_true", help="keep the temporary repository and HOME (the path is printed)")
    args = parser.parse_args(argv)
    temp = Path(tempfile.mkdtemp(prefix="repo-memory-memories-"))
    long_base = Path(tempfile.gettempdir()) / "repo-memory-key-fixture"
    try:
        version = version_of(find_cli("claude"))
        (temp / "home").mkdir()
        repo = repository(temp / "repo", temp)
        folder, _ = session(repo, temp, "Hello.", ["Hello."])  # learns the folder as Claude Code names it to the model
        memory = Path(folder)
        writes: list[Turn] = [tool_use("Write", {"file_path": str(memory / name), "content": text}) for name, text in FILES.items()]
        _, first = session(repo, temp, "Remember how we work here.", [["Saving that.", writes[0]], *writes[1:], "Saved."])
        wrote = {p.name: p.read_bytes() for p in sorted(memory.iterdir()) if p.is_file()}
        if set(wrote) != set(FILES) or b"originSessionId: " + first.encode() not in wrote["feedback_db.md"]:
            raise RecordingError(f"the memories were not written as scripted: {sorted(wrote)}")
        _, second = session(repo, temp, "The db fixture moved to tests/db/conftest.py.", [
            tool_use("Read", {"file_path": str(memory / "feedback_db.md")}),
            tool_use("Edit", {"file_path": str(memory / "feedback_db.md"), "old_string": MOVED[0], "new_string": MOVED[1]}),
            "Updated."])
        later = (memory / "feedback_db.md").read_bytes()
        stamp = re.compile(rb"modified: (\S+)")
        if MOVED[1].encode() not in later or stamp.findall(later) == stamp.findall(wrote["feedback_db.md"]):
            raise RecordingError(f"the edit of feedback_db.md was not made as scripted:\n{later.decode()}")
        env = env_for(temp)
        (repo / "README.md").write_text("A repository for recording memory fixtures.\n", encoding="utf-8")
        checked("git add", run(["git", "add", "-A"], repo, env, 60))
        checked("git commit", run(["git", "commit", "-q", "-m", "init"], repo, env, 60))
        checked("git worktree add", run(["git", "worktree", "add", "-q", "-b", "side", str(temp / "linked")], repo, env, 60))
        linked_folder, _ = session(temp / "linked", temp, "Hello.", ["Hello."])
        shutil.rmtree(long_base, ignore_errors=True)
        long_repo = repository(long_base / ("a-very-long-folder-name_with.dots" * 4) / ("ünïcode-😀-" + "x" * 60) / "repo", temp)
        long_folder, _ = session(long_repo, temp, "Hello.", ["Hello."])
        for raw in [*wrote.values(), later]:
            if str(temp).encode() in raw or str(ROOT).encode() in raw:
                raise RecordingError("a path of this machine is in a memory file")
        shutil.rmtree(args.out, ignore_errors=True)
        (args.out / "memory").mkdir(parents=True)
        (args.out / "later").mkdir()
        for name, raw in wrote.items():
            (args.out / "memory" / name).write_bytes(raw)
        (args.out / "later" / "feedback_db.md").write_bytes(later)
        manifest = {
            "about": "Claude Code's auto-memory folder as the real CLI wrote it against tests/harness/fake_anthropic.py; "
                     "every byte as written. tests/core/test_native_memory.py reads it.",
            "regenerate": COMMAND, "version": version,
            "recorded": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "sessions": {"wrote": first, "edited": second}, "edit": {"file": "feedback_db.md", "from": MOVED[0], "to": MOVED[1]},
            "linked_worktree_shares_the_folder": linked_folder == folder,
            "long_path": {"repository": str(long_repo), "folder_name": Path(long_folder).parent.name}}
        (args.out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{args.out}: {len(wrote)} files by Claude Code {version} (sessions {first}, {second})")
    except (RecordingError, subprocess.SubprocessError) as exc:
        print(f"record_memories: {exc}", file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print(f"kept {temp}", file=sys.stderr)
        else:
            shutil.rmtree(temp, ignore_errors=True)
            shutil.rmtree(long_base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
