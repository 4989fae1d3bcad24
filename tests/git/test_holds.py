"""`Git.holds`, asked by every hook that appends to a log (a file HEAD holds is never appended to): in a process that
has not loaded gitpython (a hook's), git itself answers; in one that has (a server's), gitpython does. Both say the same
of every kind of path, and a PostToolUse hook's process loads no gitpython (~90 ms of its ~400)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from repo_memory.git.repo import Git

from tests.conftest import git
from tests.harness.clis import records


def test_holds_says_the_same_with_and_without_gitpython_of_every_kind_of_path(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    assert not Git(work, work / ".git").holds("a.txt")  # an unborn branch holds nothing
    (work / "dir" / "sub").mkdir(parents=True)
    (work / "a.txt").write_text("a\n", encoding="utf-8")
    (work / "dir" / "sub" / "b:c d.txt").write_text("b\n", encoding="utf-8")
    (work / "link").symlink_to("a.txt")
    (work / "run.sh").write_text("echo\n", encoding="utf-8")
    (work / "run.sh").chmod(0o755)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "files")
    (work / "new.txt").write_text("new\n", encoding="utf-8")
    git(work, "add", "new.txt")  # staged, not committed
    (work / "a.txt").unlink()  # deleted in the work tree, still in HEAD
    paths = {"a.txt": True, "dir/sub/b:c d.txt": True, "link": True, "run.sh": True, "new.txt": False, "dir": False,
             "dir/sub": False, "missing.txt": False, "dir/missing": False}
    for loaded in (False, True):
        repo = Git(work, work / ".git")
        if loaded:
            assert repo.repo is not None  # gitpython opened, as in a server
        assert {path: repo.holds(path) for path in paths} == paths, f"gitpython loaded: {loaded}"
        repo.close()


def test_a_post_tool_hook_appending_to_its_sessions_log_loads_no_gitpython(repo: Path):
    """`holds` opened gitpython to resolve HEAD: every PostToolUse after a session's first paid its import."""
    probe = ("import json, sys, runpy; sys.argv = ['repo_memory', 'hook', 'post-tool']\n"
             "try:\n    runpy.run_module('repo_memory', run_name='__main__')\n"
             "finally:\n    sys.stderr.write(json.dumps({'gitpython': 'git' in sys.modules}))\n")
    for n in range(2):  # the first call begins the session's log, the second appends to it
        payload = {"session_id": "s1", "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": f"toolu_{n}",
                   "tool_input": {"command": f"ls {n}"}, "tool_response": {"stdout": "ok\n", "stderr": ""}}
        done = subprocess.run([sys.executable, "-c", probe], cwd=repo, input=json.dumps(payload), capture_output=True, text=True,
                              env={**os.environ, "CLAUDECODE": "1"}, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stderr.strip().endswith('{"gitpython": false}'), done.stderr
    assert [r["data"]["call_id"] for r in records(repo) if r["kind"] == "tool"] == ["toolu_0", "toolu_1"]
