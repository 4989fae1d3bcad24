"""`Git.holds`, asked by every hook that appends to a log (a file HEAD holds is never appended to), and HEAD, entries and
blobs, which the SessionEnd hook reads to tell what is committed: in a process that has not loaded gitpython (a hook's),
git itself answers; in one that has (a server's), gitpython does. Both say the same of every kind of path, and neither a
PostToolUse nor a SessionEnd hook's process loads gitpython (~60-90 ms of their ~300-400)."""

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
    assert not Git(work, work / ".git").holds("a.txt") and Git(work, work / ".git").head() is None  # an unborn branch holds nothing
    (work / "dir" / "sub").mkdir(parents=True)
    (work / "a.txt").write_text("a\n", encoding="utf-8")
    (work / "dir" / "sub" / "b:c d.txt").write_text("b\n", encoding="utf-8")
    (work / "link").symlink_to("a.txt")
    (work / "run.sh").write_text("echo\n", encoding="utf-8")
    (work / "run.sh").chmod(0o755)
    (work / "bytes.bin").write_bytes(b"\xff\xfe\x00a\r\nb\n\x80")  # no UTF-8, a NUL, CRLF
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "files")
    (work / "new.txt").write_text("new\n", encoding="utf-8")
    git(work, "add", "new.txt")  # staged, not committed
    (work / "a.txt").unlink()  # deleted in the work tree, still in HEAD
    paths = {"a.txt": True, "dir/sub/b:c d.txt": True, "link": True, "run.sh": True, "new.txt": False, "dir": False,
             "dir/sub": False, "missing.txt": False, "dir/missing": False, "dir/a blob": False}  # git: `…:dir/a blob missing`
    seen = []
    for loaded in (False, True):  # without gitpython, a Git of its own per read: each answers its first reads (LIGHT_READS) by git
        opened = Git(work, work / ".git")
        assert opened.repo is not None  # gitpython opened, as in a server
        ask = (lambda: opened) if loaded else (lambda: Git(work, work / ".git"))
        assert {path: ask().holds(path) for path in paths} == paths, f"gitpython loaded: {loaded}"
        head = str(ask().head())
        seen.append((head, ask().common_dir, {path: ask().entry(head, path) for path in [*paths, "bytes.bin"]},
                     [ask().blob(head, path) for path in ("bytes.bin", "dir/sub/b:c d.txt", "link")]))
        opened.close()
    assert seen[0] == seen[1] and seen[0][3][0] == b"\xff\xfe\x00a\r\nb\n\x80", seen
    git(work, "checkout", "-q", "--detach")
    plain, opened = Git(work, work / ".git"), Git(work, work / ".git")
    assert opened.repo is not None and plain.head() == opened.head() == seen[0][0]


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


def test_a_session_end_hook_that_commits_its_sessions_log_loads_no_gitpython(repo: Path):
    """Claude Code gives SessionEnd 3 s (a plugin's 1.5 s) counted from the hook process's start, and on a busy machine
    that start is what overruns it: the hook paid gitpython's import (~60 ms of its ~300 ms of CPU) to ask whether
    HEAD was born before reading its session's log, and again to commit."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    probe = ("import json, sys, runpy; sys.argv = ['repo_memory', 'hook', sys.argv[1]]\n"
             "try:\n    runpy.run_module('repo_memory', run_name='__main__')\n"
             "finally:\n    sys.stderr.write(json.dumps({'gitpython': 'git' in sys.modules}))\n")
    calls = [("post-tool", {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_0",
                            "tool_input": {"command": "ls"}, "tool_response": {"stdout": "ok\n", "stderr": ""}}),
             ("session-end", {"hook_event_name": "SessionEnd", "reason": "other"})]
    for event, payload in calls:
        done = subprocess.run([sys.executable, "-c", probe, event], cwd=repo, input=json.dumps({"session_id": "s1", **payload}),
                              capture_output=True, text=True, env={**os.environ, "CLAUDECODE": "1"}, timeout=60)
        assert done.returncode == 0, done.stderr
        assert done.stderr.strip().endswith('{"gitpython": false}'), (event, done.stderr)
    assert [r["data"]["call_id"] for r in records(repo) if r["kind"] == "tool"] == ["toolu_0"]
    assert "Memory-Session: s1" in git(repo, "log", "-1", "--format=%B")
    assert not git(repo, "status", "--porcelain", "--", ".agents")
