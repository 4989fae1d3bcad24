"""A server's writes reach git however its harness ends it: closing stdin, a signal, or kill -9 at any moment.

Every test drives real `repo-memory serve` processes over stdio and checks git itself afterwards.
"""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import git
from tests.shells.stdio_server import SERVE, StdioServer

pytestmark = pytest.mark.slow


def in_head(repo: Path, folder: str = ".agents/skills") -> set[str]:
    out = subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD", "--", folder], cwd=repo, capture_output=True, text=True).stdout
    return set(out.split())


def leftovers(repo: Path) -> list[str]:
    state = repo / ".git" / "repo-memory"
    found = [p.name for p in state.glob("commit-index-*")] + [p.name for p in (repo / ".git").glob("*.lock")]
    return found + [p.name for p in (repo / ".git" / "refs" / "heads").glob("*.lock")]


def wait_until(check, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


# The git subcommand ($sub) and its first argument ($arg) as a wrapper sees them past one `-c key=value` (repo-memory
# runs every git with `-c safe.bareRepository=explicit`, git/repo.py SAFE).
SUBCOMMAND = 'sub=$1; arg=$2; if [ "$1" = -c ]; then sub=$3; arg=$4; fi\n'


def slow_git(tmp_path: Path, command: str, seconds: float) -> dict[str, str]:
    """PATH with a `git` that takes `seconds` longer for `command`, as on a busy machine or in a large repository."""
    real_git = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    wrapper = tmp_path / "slow-bin" / "git"
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\n{SUBCOMMAND}[ "$sub" = {command} ] && sleep {seconds}\nexec {real_git} "$@"\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{wrapper.parent}:{os.environ['PATH']}"}


def test_eight_servers_closed_as_harnesses_close_them_commit_all_their_writes(repo: Path, tmp_path: Path):
    """Eight sessions end at once; each commit takes half a second, so committing one by one overruns the 2 s a client waits."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    env = slow_git(tmp_path, "commit-tree", 0.5)

    done = 0
    everyone_wrote = anyio.Event()

    async def session(n: int) -> None:
        nonlocal done
        params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=str(repo), env=env)
        async with Client(params) as client:
            for i in range(25):
                result = await client.call_tool("skill_write", {"name": f"s{n}-skill-{i}", "description": f"Skill {i} of session {n}.",
                                                                "body": f"Step {i}.", "new": True})
                assert not result.is_error, result.content
            done += 1
            if done == 8:
                everyone_wrote.set()
            await everyone_wrote.wait()  # the harness exits: all eight close at once

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for n in range(8):
                group.start_soon(session, n)

    anyio.run(main)
    closed = time.monotonic()
    wanted = {f".agents/skills/s{n}-skill-{i}/SKILL.md" for n in range(8) for i in range(25)}
    assert wait_until(lambda: wanted <= in_head(repo), 10), f"{len(wanted - in_head(repo))} of 200 skills not in HEAD"
    assert time.monotonic() - closed < 10
    # the person's index follows HEAD: a server ended between its commit and its index refresh (index.lock held by
    # another) leaves the refresh to its finisher, which settles it once the server is gone (git/commit.py: settle);
    # 219 staged deletions were seen as the last skill reached HEAD (a CI-exact run), none a moment later
    changed = lambda: [line for line in git(repo, "status", "--porcelain").splitlines() if "-skill-" in line]  # noqa: E731
    assert wait_until(lambda: changed() == [], 10), changed()[:5]
    assert subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True).returncode == 0
    # a server killed mid-commit leaves its private index to the finisher that opens the Store once it is gone: one
    # was still there as the last skill reached HEAD (a -n 4 run), gone a moment later
    assert wait_until(lambda: leftovers(repo) == [], 10), leftovers(repo)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_ends_the_server_promptly_and_its_writes_are_committed(repo: Path, sig: int):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    server = StdioServer(repo)
    server.initialize()
    assert not server.call("skill_write", {"name": "signalled", "description": "Written before a signal.", "body": "1. Go."}).get("isError")
    assert not server.call("remember", {"text": "A record written before the signal."}).get("isError")
    started = time.monotonic()
    server.kill(sig)
    assert server.wait(5) is not None, f"{signal.Signals(sig).name} did not end the server within 5 s"
    assert time.monotonic() - started < 5
    assert ".agents/skills/signalled/SKILL.md" in in_head(repo)
    assert in_head(repo, ".agents/experience")  # its own experience too: the process ended, so did its session
    assert leftovers(repo) == []
    assert b"Traceback" not in server.stderr and b"Event loop is closed" not in server.stderr, server.stderr.decode()[-2000:]


def test_kill_9_at_random_moments_never_loses_an_acknowledged_write(repo: Path):
    """30 trials: a server writes skills and records, is killed with SIGKILL at a random moment; the next one starts."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    rng = random.Random(20261203)
    acknowledged: set[str] = set()
    for trial in range(30):
        server = StdioServer(repo)
        server.initialize()  # answered by the front before the store opens: the landing comes within a bound, not before
        assert wait_until(lambda: acknowledged <= in_head(repo, ".agents"), 10), f"trial {trial}: the new server did not land the last one's writes"
        deadline = time.monotonic() + rng.uniform(0.05, 0.6)
        n = 0
        while time.monotonic() < deadline:
            name = f"t{trial}-w{n}"
            result = server.call("skill_write", {"name": name, "description": f"Write {n} of trial {trial}.", "body": "1. Survive.",
                                                 "new": True})
            if not result.get("isError"):
                acknowledged.add(f".agents/skills/{name}/SKILL.md")
            n += 1
        server.kill(signal.SIGKILL)
        server.wait(10)
    last = StdioServer(repo)
    last.initialize()
    last.close_input()
    last.wait(10)
    assert acknowledged <= in_head(repo, ".agents"), f"{len(acknowledged - in_head(repo, '.agents'))} acknowledged writes lost"
    assert subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True).returncode == 0
    assert leftovers(repo) == []
    assert [line for line in git(repo, "status", "--porcelain").splitlines() if "/t" in line and "-w" in line] == []


def test_a_kill_between_the_commit_and_the_index_refresh_is_repaired_before_the_user_can_commit_a_deletion(repo: Path, tmp_path: Path):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    real_git = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    # Kill the server exactly when it refreshes the user's index after moving the branch (no GIT_INDEX_FILE: the user's index).
    wrapper.write_text(f'#!/bin/sh\n{SUBCOMMAND}if [ "$sub" = update-index ] && [ "$arg" = -q ] && [ -z "$GIT_INDEX_FILE" ]; then kill -9 $PPID; exit 1; fi\n'
                       f'exec {real_git} "$@"\n', encoding="utf-8")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    server = StdioServer(repo, env={"PATH": f"{wrapper.parent}:{os.environ['PATH']}"})
    server.initialize()
    server.call("skill_write", {"name": "half-committed", "description": "Committed, index not refreshed.", "body": "1. Step."})
    assert server.wait(15) is not None  # killed by the wrapper during its commit
    # The index it left (`D  .agents/skills/half-committed/SKILL.md`) a plain `git commit` turns into a deletion: the next
    # repo-memory process repairs it, the finisher the server started at its write (shells/finish.py) or else doctor.
    doctor = subprocess.run([sys.executable, "-m", "repo_memory", "doctor"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert wait_until(lambda: "half-committed" not in git(repo, "status", "--porcelain"), 20), doctor.stdout
    git(repo, "commit", "-q", "--allow-empty", "-m", "the user's next commit")
    assert ".agents/skills/half-committed/SKILL.md" in in_head(repo)


def test_a_git_stash_after_a_session_no_longer_removes_uncommitted_memory(repo: Path):
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    server = StdioServer(repo)
    server.initialize()
    server.call("skill_write", {"name": "stashed", "description": "Written right before a stash.", "body": "1. Keep me."})
    server.close_input()
    assert server.wait(5) is not None
    assert b"Traceback" not in server.stderr, server.stderr.decode()[-2000:]  # the watcher stops before the event loop closes
    git(repo, "stash", "-u")
    assert (repo / ".agents/skills/stashed/SKILL.md").is_file()  # it was committed, so the stash did not take it


def test_ended_as_codex_ends_it_a_server_still_commits_what_it_wrote(repo: Path):
    """Codex: SIGTERM to the server's process group (its git children too) with the end of input, SIGKILL 50 ms later."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    server = StdioServer(repo)
    server.initialize()
    assert not server.call("remember", {"text": "Written just before Codex ended the session."}).get("isError")
    assert not server.call("skill_write", {"name": "late-skill", "description": "Written just before the end.", "body": "1. Go."}).get("isError")
    os.killpg(server.proc.pid, signal.SIGTERM)
    server.close_input()
    time.sleep(0.05)
    server.kill(signal.SIGKILL)
    server.wait(5)
    assert wait_until(lambda: bool(in_head(repo, ".agents/experience")) and ".agents/skills/late-skill/SKILL.md" in in_head(repo), 20)
    written = (".agents/experience", ".agents/skills/late-skill")
    assert wait_until(lambda: git(repo, "status", "--porcelain", "--untracked-files=no", "--", *written).strip() == "", 5), git(repo, "status", "--porcelain")


def test_ended_as_codex_ends_it_and_left_a_zombie_for_a_while_a_server_still_commits_what_it_remembered(repo: Path):
    """Codex reaps the server it killed only a while later: the exited, unreaped server must count as gone to the
    finisher and to the commit policy alike, or neither commits what it remembered."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    server = StdioServer(repo, env={"REPO_MEMORY_HARNESS": "codex"})
    server.initialize()
    assert not server.call("remember", {"text": "Written just before Codex ended the session."}).get("isError")
    os.killpg(server.proc.pid, signal.SIGTERM)
    server.close_input()
    time.sleep(0.05)
    os.killpg(server.proc.pid, signal.SIGKILL)
    time.sleep(2)  # the parent (Codex) reaps its killed server late: until then it is a zombie
    assert server.wait(5) is not None
    assert wait_until(lambda: bool(in_head(repo, ".agents/experience")), 20), git(repo, "status", "--porcelain")
    assert git(repo, "status", "--porcelain", "--untracked-files=no", "--", ".agents/experience").strip() == ""


def test_killed_before_it_hears_any_signal_a_server_still_commits_what_it_remembered(repo: Path):
    """Codex's SIGTERM can land while the server's main thread is in C code (a garbage collection as the MCP SDK imports),
    where no Python signal handler runs, and its SIGKILL 50 ms later ends the server unheard: what it remembered must
    be committed within seconds all the same, with no other repo-memory process to come."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    server = StdioServer(repo, env={"REPO_MEMORY_HARNESS": "codex"})
    server.initialize()
    assert not server.call("remember", {"text": "Written just before the server was killed."}).get("isError")
    server.kill(signal.SIGKILL)
    assert server.wait(5) is not None
    logs = lambda: {p for p in in_head(repo, ".agents/experience") if p.endswith(".jsonl")}  # noqa: E731
    assert wait_until(lambda: bool(logs()), 20), git(repo, "status", "--porcelain")
    assert git(repo, "status", "--porcelain", "--", *logs()).strip() == ""  # committed as written


def slow_loop(repo: Path, marker: Path) -> None:
    """An accepted loop `slow` whose verification writes its process id to `marker`, then sleeps for two minutes."""
    from repo_memory.config import Config
    from repo_memory.core.store import Store
    from repo_memory.runner.engine import Engine

    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
    sleep = f"import os, pathlib, time; pathlib.Path(\\\"{marker}\\\").write_text(str(os.getpid())); time.sleep(120)"
    (repo / ".agents/loops/slow.md").write_text(
        "---\nname: slow\nstatus: active\ntrigger: {on: manual}\ngoal: Wait.\n"
        f'verify:\n  - {{level: 4, run: "{sys.executable} -c \'{sleep}\'", expect: {{exit: 0}}, timeout: 300}}\n'
        "stop: {max_iterations: 2}\nsuccess_requires_level: 4\n---\nWait.\n", encoding="utf-8")
    store = Store(Config.load(repo))
    store.refresh()
    Engine(store).accept("slow")
    store.close()


def test_a_server_whose_input_closes_during_a_long_call_exits_within_its_bound(repo: Path, tmp_path: Path):
    # A harness closing stdin expects the process to go; a verification step still running (here a 120 s sleep) kept
    # the MCP loop waiting for its handler, so the server outlived its session.
    slow_loop(repo, tmp_path / "started")
    server = StdioServer(repo)
    server.initialize()
    run = server.call("loop_start", {"name": "slow"})
    assert not run.get("isError"), run
    run_id = run["structuredContent"]["run"]
    server.send("tools/call", {"name": "loop_step", "arguments": {"run": run_id, "report": "waited", "status": "done"}})
    time.sleep(2)  # the verification step is running
    started = time.monotonic()
    server.close_input()
    code = server.wait(30)
    assert code is not None, "the server was still running 30 s after its input closed"
    assert time.monotonic() - started < 15 and code == 0, (code, server.stderr.decode()[-1500:])


def test_input_closed_during_a_loop_step_the_sdk_runs_ends_the_step_and_the_server_promptly(repo: Path, tmp_path: Path):
    """After the hand-over to the SDK, the server stayed until the step's verification ended by itself, and the step got
    no answer while its run was recorded as judged; before it, the front stops the step and says so."""
    marker = tmp_path / "started"
    slow_loop(repo, marker)
    server = StdioServer(repo)
    server.initialize()
    paged = server.send("tools/list", {"cursor": "x"})  # the front never answers a page: once answered, the SDK serves every request
    assert server.answer()["id"] == paged
    run = server.call("loop_start", {"name": "slow"})["structuredContent"]["run"]
    step = server.send("tools/call", {"name": "loop_step", "arguments": {"run": run, "report": "waited", "status": "done"}})
    assert wait_until(marker.exists, 30)  # the verification step is running
    started = time.monotonic()
    server.close_input()
    code = server.wait(30)
    assert code == 0 and time.monotonic() - started < 15, (code, server.stderr.decode()[-1500:])
    answer = server.answer(5)
    assert answer["id"] == step and answer["result"]["isError"], answer
    assert "stopped and judged nothing" in answer["result"]["content"][0]["text"]
    status = subprocess.run([*SERVE[:-1], "loop", "status", run, "--json"], cwd=repo, capture_output=True, text=True, timeout=60)
    assert [(r["state"], r["iterations"]) for r in json.loads(status.stdout)] == [("running", 0)]  # judged nothing, still live


def test_a_skill_changed_as_the_input_closes_ends_the_server_without_a_traceback(repo: Path):
    """The watcher's re-index of a skill edited just before the client went away told listeners of the change after the
    event loop had closed: `RuntimeError: Event loop is closed` and a coroutine never awaited, on stderr. The edit lands
    a little before the end of input, at a few spacings around the watcher's debounce, so its sync runs while the
    server ends, which starts a finisher for the note it remembered (most runs hit the window before the fix)."""
    skill = repo / ".agents/skills/edited/SKILL.md"
    skill.parent.mkdir(parents=True)
    for run in range(6):
        skill.write_text(f"---\nname: edited\ndescription: Edited as the server ends\n---\nversion {run}\n", encoding="utf-8")
        server = StdioServer(repo)
        try:
            server.initialize()
            server.send("skills/list", {})  # the MCP SDK answers it: its loop runs, and listeners hear changes
            server.answer(60)
            server.call("remember", {"text": f"note {run}", "session": "ending"})  # owned at the end: a finisher starts
            skill.write_text(f"---\nname: edited\ndescription: Edited as the server ends\n---\nversion {run}b\n", encoding="utf-8")
            time.sleep(0.02 + 0.006 * run)
            server.close_input()
            assert server.wait(30) == 0
        finally:
            server.kill()
        time.sleep(0.2)  # stderr drained
        said = server.stderr.decode("utf-8", "replace")
        assert "Traceback" not in said and "never awaited" not in said, said
