"""A commit of a log holds the output blobs its records cite: a log committed for one writer whose records another,
still running, wrote too (its tool output kept in a blob) left that blob uncommitted, so HEAD held a record citing a file
it lacked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import git
from tests.shells.test_session_end import committed_soon

HARNESS = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"  # starts the hook, waits, ends
SLOW_START = ("sh", "-c", 'sleep 2.6; exec "$0" "$@"')  # a busy machine: the hook has no time left to commit itself


def hook(repo: Path, event: str, payload: dict[str, object], wrapper: tuple[str, ...] = ()) -> None:
    done = subprocess.run([*wrapper, sys.executable, "-m", "repo_memory", "hook", event], cwd=repo, capture_output=True,
                          text=True, timeout=120, input=json.dumps({"cwd": str(repo), "session_id": "s-out", **payload}))
    assert done.returncode == 0, done.stderr


def test_a_log_committed_by_the_finisher_of_one_harness_takes_the_blob_anothers_record_in_it_cites(repo: Path):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    output = "deploy log\n" + "".join(f"step {i} ok\n" for i in range(600))  # longer than a record keeps: a blob
    hook(repo, "post-tool", {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t1",
                             "tool_input": {"command": "./deploy.sh"}, "tool_response": {"stdout": output, "stderr": ""}})
    blobs = list((repo / ".agents/experience/blobs").glob("*"))
    assert len(blobs) == 1  # written by a process whose harness (pytest) lives on
    hook(repo, "session-end", {"hook_event_name": "SessionEnd"}, (sys.executable, "-c", HARNESS, *SLOW_START))
    assert committed_soon(repo), git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".agents")
    held = git(repo, "ls-tree", "-r", "--name-only", "HEAD", "--", ".agents/experience")
    assert blobs[0].relative_to(repo).as_posix() in held, held
