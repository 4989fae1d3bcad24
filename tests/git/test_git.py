"""Memory commits beside the user's work: never their index, never during a git operation, never lost under load."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.errors import GitError, NotFoundError
from repo_memory.git import commit as commits
from repo_memory.shells.cli import cli
from repo_memory.config import Config
from repo_memory.git.committer import Committer, Policy
from repo_memory.git.repo import Git
from repo_memory.core.store import Store

from tests.conftest import conflicted, git, index_snapshot, kept, write_skill_file


def commit_file(repo: Path, name: str, text: str, message: str) -> None:
    (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def work(repo: Path) -> Path:
    """A repository with history, a staged change and an untracked file of the user's."""
    commit_file(repo, "app.py", "print('v1')\n", "app v1")
    (repo / "app.py").write_text("print('v2, staged')\n", encoding="utf-8")
    git(repo, "add", "app.py")
    (repo / "notes.txt").write_text("untracked scratch\n", encoding="utf-8")
    return repo


def test_a_skill_write_becomes_one_structured_commit_and_leaves_the_users_work_alone(work: Path):
    store = Store(Config.load(work), session="s-test")
    store.write_skill("release-checklist", "How we release.", "1. Tag", actor="human")
    store.write_skill("release-checklist", "How we release, updated.", "1. Tag\n2. Push", actor="human")
    store.close()
    log = git(work, "log", "--format=%s|%an|%cn", "-n", "2").splitlines()
    assert log[0] == "memory: 2 changes|Test Person|repo-memory" or log[0].startswith("memory(skill): ")
    body = git(work, "log", "-1", "--format=%B")
    assert f"Memory-Session: {kept(work, 's-test')}" in body
    assert "Memory-Harness:" not in body  # no harness ran this process: the trailer names none rather than "unknown"
    changed = git(work, "show", "--name-only", "--format=", "HEAD").split()
    assert changed == [".agents/skills/release-checklist/SKILL.md"]
    assert git(work, "diff", "--cached", "--name-only").split() == ["app.py"]  # still staged, in no memory commit
    assert (work / "notes.txt").read_text(encoding="utf-8") == "untracked scratch\n"
    status = git(work, "status", "--porcelain").splitlines()
    assert not [line for line in status if "release-checklist" in line], status


def test_a_path_that_changed_kind_is_committed_as_it_is_now(work: Path):
    """A folder now a link (and a link now a folder): git refuses the old entries beside the new one in one update
    ("appears as both a file and as a directory", "beyond a symbolic link") unless they are taken out first."""
    folder = work / ".agents/skills/tool/agents"
    folder.mkdir(parents=True)
    (folder / "openai.yaml").write_text("policy: {}\n", encoding="utf-8")
    (work / "shared").mkdir()
    git(work, "add", ".agents", "shared")
    git(work, "commit", "-q", "-m", "a folder")
    (folder / "openai.yaml").unlink()
    folder.rmdir()
    folder.symlink_to(work / "shared")
    store = Store(Config.load(work))
    assert store.commit_files([".agents/skills/tool/agents/openai.yaml", ".agents/skills/tool/agents"], "memory: a link now") is not None
    assert git(work, "ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD", ".agents/skills/tool").splitlines() == ["120000 .agents/skills/tool/agents"]
    folder.unlink()
    folder.mkdir()
    (folder / "openai.yaml").write_text("policy: {}\n", encoding="utf-8")
    store.commit_files([".agents/skills/tool/agents", ".agents/skills/tool/agents/openai.yaml"], "memory: a folder again")
    store.close()
    assert git(work, "ls-tree", "-r", "--format=%(objectmode) %(path)", "HEAD", ".agents/skills/tool").splitlines() == ["100644 .agents/skills/tool/agents/openai.yaml"]
    assert git(work, "status", "--porcelain", "--", ".agents") == ""


def test_writes_coalesce_into_one_commit(work: Path):
    store = Store(Config.load(work))
    before = int(git(work, "rev-list", "--count", "HEAD"))
    for i in range(10):
        store.write_skill(f"skill-{i}", "Coalesced.", "Steps", actor="human")
        store.remember(f"note {i}")
    store.close()
    assert int(git(work, "rev-list", "--count", "HEAD")) == before + 1
    assert len(git(work, "show", "--name-only", "--format=", "HEAD").split()) == 11


def test_a_checkpoint_commits_at_once(work: Path):
    store = Store(Config.load(work), session="s1")
    store.remember("found the cause")
    store.checkpoint("summary", [f"{store.session}#1"])
    assert ".agents/experience" in git(work, "show", "--name-only", "--format=", "HEAD")
    store.close()


def test_no_commit_moves_a_ref_during_a_rebase_and_the_deferred_one_lands_after(work: Path):
    git(work, "stash", "-q")  # a rebase needs a clean index; the user's change comes back at the end
    commit_file(work, "b.txt", "b\n", "b")
    commit_file(work, "c.txt", "c\n", "c")
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": "sed -i 's/^pick/edit/'"}
    subprocess.run(["git", "rebase", "-q", "-i", "HEAD~2"], cwd=work, env=env, check=True, capture_output=True)
    refs_before = git(work, "for-each-ref", "--format=%(refname) %(objectname)")
    store = Store(Config.load(work))
    store.write_skill("during-rebase", "Written mid-rebase.", "Steps", actor="human")
    result = store.flush()
    assert result is not None and "rebase" in result.deferred
    assert git(work, "for-each-ref", "--format=%(refname) %(objectname)") == refs_before
    for _ in range(2):
        subprocess.run(["git", "rebase", "--continue"], cwd=work, env={**os.environ, "GIT_EDITOR": "true"}, check=True, capture_output=True)
    assert store.flush().sha is not None
    store.close()
    assert git(work, "log", "-1", "--format=%s") == "memory(skill): add during-rebase\n"
    assert git(work, "log", "--format=%s", "-n", "3").splitlines()[1:] == ["c", "b"]
    git(work, "stash", "pop", "-q")


def test_a_detached_head_defers_and_creates_no_unreachable_commit(work: Path):
    git(work, "checkout", "-q", "--detach")
    store = Store(Config.load(work))
    store.write_skill("detached", "Written detached.", "Steps", actor="human")
    result = store.flush()
    assert result is not None and "HEAD is detached" in result.deferred
    store.close()
    assert git(work, "fsck", "--unreachable", "--no-reflogs").strip() == ""
    git(work, "checkout", "-q", "main")
    later = Store(Config.load(work))  # another process finds the deferred paths and lands them
    assert later.flush().sha is not None
    later.close()
    assert "detached" in git(work, "show", "--name-only", "--format=", "HEAD")


@pytest.mark.slow
def test_a_foreign_index_lock_is_waited_for_never_deleted(work: Path):
    lock = work / ".git/index.lock"
    lock.write_text("someone else's", encoding="utf-8")
    store = Store(Config.load(work))
    store.write_skill("locked-out", "Waits.", "Steps", actor="human")
    started = time.monotonic()
    result = store.flush()
    assert result is not None and "index.lock" in result.deferred and time.monotonic() - started < 15
    assert lock.read_text(encoding="utf-8") == "someone else's"
    lock.unlink()
    store.flush()  # (the coalescing timer may have landed it already)
    store.close()
    assert "locked-out" in git(work, "show", "--name-only", "--format=", "HEAD")


@pytest.mark.slow
def test_signing_that_hangs_is_bounded_and_the_persons_sign_never_opts_out(work: Path, monkeypatch: pytest.MonkeyPatch):
    fake_gpg = work.parent / "gpg-hangs"
    fake_gpg.write_text("#!/bin/sh\nsleep 60\n", encoding="utf-8")
    fake_gpg.chmod(0o755)
    git(work, "config", "commit.gpgSign", "true")
    git(work, "config", "gpg.program", str(fake_gpg))
    monkeypatch.setattr(commits, "SIGN_TIMEOUT", 2.0)
    store = Store(Config.load(work))
    store.write_skill("signed", "Needs a signature.", "Steps", actor="human")
    result = store.flush()
    assert result is not None and result.sha is None and "repo-memory.sign never" in result.deferred  # the write stays pending
    store.close(commit=False)  # this store cannot commit; the pending paths stay recorded for the next one
    git(work, "config", "repo-memory.sign", "never")  # the person's own opt-out (a file's `sign = "never"` is not followed)
    unsigned = Store(Config.load(work))
    unsigned.flush()
    unsigned.close()
    assert "signed/SKILL.md" in git(work, "show", "--name-only", "--format=", "HEAD")  # committed, unsigned
    assert "gpgsig" not in git(work, "cat-file", "-p", "HEAD")


def test_commit_off_writes_files_only_and_stage_stages_them(work: Path):
    (work / ".agents/repo-memory.toml").write_text('commit = "off"\n', encoding="utf-8")
    head = git(work, "rev-parse", "HEAD")
    store = Store(Config.load(work))
    store.write_skill("not-committed", "Off.", "Steps", actor="human")
    store.close()
    assert git(work, "rev-parse", "HEAD") == head and "?? .agents/skills/not-committed/SKILL.md" in git(work, "status", "--porcelain", "--untracked-files=all")
    (work / ".agents/repo-memory.toml").write_text('commit = "stage"\n', encoding="utf-8")
    store = Store(Config.load(work))
    store.write_skill("staged-only", "Stage.", "Steps", actor="human")
    store.close()
    assert git(work, "rev-parse", "HEAD") == head
    assert ".agents/skills/staged-only/SKILL.md" in git(work, "diff", "--cached", "--name-only")


WRITER = """
import sys
from repo_memory.config import Config
from repo_memory.core.store import Store
store = Store(Config.load(sys.argv[1]), session=f"proc-{sys.argv[2]}")
for i in range(25):
    store.write_skill(f"p{sys.argv[2]}-s{i}", f"Written by process {sys.argv[2]}.", f"Step {i}", actor="human")
    if i % 5 == 4:
        store.flush()
store.close()
"""


@pytest.mark.slow
def test_eight_processes_writing_at_once_lose_nothing_and_keep_git_clean(work: Path):
    stop = work.parent / "stop-status"
    status_loop = subprocess.Popen(["sh", "-c", f"while [ ! -e {stop} ]; do git status --porcelain >/dev/null 2>&1; done"], cwd=work)
    try:
        procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(work), str(w)]) for w in range(8)]
        assert [p.wait(timeout=600) for p in procs] == [0] * 8
    finally:
        stop.touch()
        status_loop.wait(timeout=30)
    tree = git(work, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert len([p for p in tree if p.startswith(".agents/skills/p")]) == 200
    subprocess.run(["git", "fsck", "--strict"], cwd=work, check=True, capture_output=True)
    assert git(work, "diff", "--cached", "--name-only").split() == ["app.py"]
    assert git(work, "log", "--format=%H", "--", "app.py").split() == [git(work, "rev-parse", "HEAD~" + str(int(git(work, "rev-list", "--count", "HEAD")) - 1)).strip()]
    leftovers = [p.name for p in (work / ".git/repo-memory").iterdir() if p.name.startswith("commit-index") or p.suffix == ".tmp"]
    assert leftovers == [] and not (work / ".git/index.lock").exists()


def test_git_log_renders_experience_records_once_init_ran(work: Path, runner):
    from repo_memory.shells.cli import cli

    assert runner.invoke(cli, ["--root", str(work), "init"]).exit_code == 0
    assert "repo-memory" in git(work, "config", "--local", "diff.repo-memory.textconv")
    store = Store(Config.load(work), session="s1")
    store.remember("The flaky test depends on the system clock.", kind="decision")
    store.close()
    shown = git(work, "log", "-p", "-1", "--", ".agents/experience")
    assert f"{kept(work, 's1')}#1  decision  by agent" in shown and "The flaky test depends on the system clock." in shown
    assert '{"data"' not in shown and '"sha256"' not in shown


def test_git_renders_each_log_version_once_and_keeps_it(work: Path, runner, tmp_path: Path):
    """The diff driver started a Python process (about half a second) for every log version git compared: after a
    month of sessions `git log -p` took 21 s and `git log -S` 18 s (0.02 s without textconv). init turns on git's
    textconv cache, so a version is rendered once per clone; a later `git log -p` reads the cache (here: with no
    `repo-memory` on PATH, which would otherwise print the raw JSON lines)."""
    from repo_memory.shells.cli import cli

    assert runner.invoke(cli, ["--root", str(work), "init"]).exit_code == 0
    assert git(work, "config", "--local", "diff.repo-memory.cachetextconv").strip() == "true"
    store = Store(Config.load(work), session="s1")
    store.remember("The flaky test depends on the system clock.", kind="decision")
    store.close()
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    first = subprocess.run(["git", "log", "-p", "-1", "--", ".agents/experience"], cwd=work, env=env, capture_output=True, text=True)
    assert "decision  by agent" in first.stdout, first.stdout + first.stderr
    bare = {**os.environ, "PATH": "/usr/bin:/bin"}  # git, sh and cat, but no repo-memory: the driver falls back to the raw lines
    again = subprocess.run(["git", "log", "-p", "-1", "--", ".agents/experience"], cwd=work, env=bare, capture_output=True, text=True)
    assert again.stdout == first.stdout and '"sha256"' not in again.stdout, again.stdout


BARE = "/usr/bin:/bin"  # git, sh and cat, but no repo-memory: a GUI git client, a shell without the install
CACHE = "refs/notes/textconv/repo-memory"


def raw_notes(repo: Path) -> list[str]:
    """The log versions whose note in the textconv cache holds their own bytes: the driver's raw fallback, cached."""
    listed = git(repo, "notes", f"--ref={CACHE}", "list") if git(repo, "for-each-ref", CACHE) else ""
    return [annotated for note, annotated in (line.split() for line in listed.splitlines()) if note == annotated]


def shown_bare(repo: Path) -> str:
    return subprocess.run(["git", "show", "HEAD"], cwd=repo, env={**os.environ, "PATH": BARE}, capture_output=True,
                          text=True, check=True).stdout


def test_a_log_version_first_shown_without_repo_memory_on_path_renders_once_repo_memory_runs(work: Path, runner):
    """The first `git show` where repo-memory was not on PATH cached the driver's fallback, the raw JSON lines, in
    git's textconv cache (cachetextconv): that version showed raw ever after, repo-memory on PATH or not. Such a note
    holds the very bytes of its version; doctor and a server starting drop it, and the next diff renders the version."""
    assert runner.invoke(cli, ["--root", str(work), "init"]).exit_code == 0
    for round, cleaner in enumerate(("doctor", "serve")):
        store = Store(Config.load(work), session=f"s{round}")
        store.remember(f"The flaky test depends on the system clock ({round}).", kind="decision")
        store.close()
        assert '"sha256"' in shown_bare(work) and raw_notes(work) != []  # the fallback, now in the cache
        if cleaner == "doctor":
            runner.invoke(cli, ["--root", str(work), "doctor"])
        else:
            from tests.shells.stdio_server import StdioServer

            answers, code = StdioServer(work).session(("recall", {"query": "flaky"}))
            assert code == 0 and answers[0], answers
        assert raw_notes(work) == [], cleaner
        shown = git(work, "show", "HEAD")  # repo-memory on PATH (conftest), as in the person's own shell
        assert "decision  by agent" in shown and '"sha256"' not in shown, (cleaner, shown)
        assert raw_notes(work) == [] and shown_bare(work) == shown  # rendered once, kept, and shown so everywhere


def test_history_renders_logs_for_a_server_started_by_its_full_path_and_caches_no_raw_lines(work: Path, monkeypatch):
    """Codex starts the server by its full path, with no repo-memory on PATH: `history` ran `git log -p` whose driver
    fell back to the raw JSON lines, showed them, and left them in git's cache for every later diff of those versions."""
    Path(sys.executable).parent.joinpath("repo-memory").stat()  # this install has its command beside the interpreter
    store = Store(Config.load(work), session="s1")
    store.remember("The flaky test depends on the system clock.", kind="decision")
    assert store.flush("all")
    monkeypatch.setenv("PATH", BARE)
    _, changes = store.history(f"session:{kept(work, 's1')}")
    store.close()
    assert "decision  by agent" in changes[0].diff and '"sha256"' not in changes[0].diff, changes[0].diff
    assert raw_notes(work) == [] and '"sha256"' not in shown_bare(work)


def test_history_and_reading_a_skill_as_it_was(work: Path):
    import anyio
    from mcp import Client

    from repo_memory.shells import mcp as server

    store = Store(Config.load(work))
    store.write_skill("deploy", "How to deploy.", "1. Run fab deploy", actor="human")
    store.flush()
    first = git(work, "rev-parse", "HEAD").strip()
    store.write_skill("deploy", "How to deploy, now with k8s.", "1. kubectl apply", actor="human")
    store.flush()

    async def ask() -> tuple[dict, dict]:
        async with Client(server.build(store)) as client:
            hist = (await client.call_tool("history", {"ref": "deploy"})).structured_content
            old = (await client.call_tool("read", {"ref": "deploy", "as_of": first})).structured_content
            return hist, old

    hist, old = anyio.run(ask)
    store.close()
    assert [c["subject"] for c in hist["commits"]] == ["memory(skill): update deploy", "memory(skill): add deploy"]
    assert "-1. Run fab deploy" in hist["commits"][0]["diff"] and "+1. kubectl apply" in hist["commits"][0]["diff"]
    assert "fab deploy" in old["content"] and "kubectl" not in old["content"] and old["status"] == "active" and old["as_of"] == first[:12]


def test_history_shows_what_a_merge_that_settled_a_skill_brought(repo: Path, runner: CliRunner):
    """After two people edited one skill, the merge that settled it is its most telling change: `history` listed the
    merge commit with an empty diff (`git log -p` shows no patch for a merge unless asked)."""
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build.")
    commit_file(repo, "app.py", "x = 1\n", "init")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the deploy skill")
    conflicted(repo, lambda: write_skill_file(repo, "deploy", "How we deploy.", "1. Build with bazel."),
               lambda: write_skill_file(repo, "deploy", "How we deploy.", "1. Build with make."), "bob")
    write_skill_file(repo, "deploy", "How we deploy.", "1. Build with make, then bazel for the CLI.")
    git(repo, "commit", "-q", "-am", "merge: settle deploy")
    store = Store(Config.load(repo))
    _, changes = store.history("deploy", limit=1)
    store.close()
    assert changes[0].subject == "merge: settle deploy", changes
    assert "+1. Build with make, then bazel for the CLI." in changes[0].diff and "-1. Build with make." in changes[0].diff, changes
    shown = runner.invoke(cli, ["--root", str(repo), "history", "deploy", "-n", "1"]).output
    assert "then bazel for the CLI" in shown, shown


def test_two_clones_write_push_and_pull_without_conflicts(work: Path, tmp_path: Path):
    git(work, "stash", "-q")
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    (work / ".gitattributes").write_text(".agents/experience/** merge=union\n", encoding="utf-8")
    git(work, "add", ".gitattributes")
    git(work, "commit", "-q", "-m", "attributes")
    git(work, "remote", "add", "origin", str(origin))
    git(work, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    a, b = Store(Config.load(work), session="shared"), Store(Config.load(other), session="shared-b")
    for i in range(3):
        a.remember(f"from clone a {i}")
        b.remember(f"from clone b {i}")
    a.write_skill("from-a", "Written in clone a.", "Steps", actor="human")
    b.write_skill("from-b", "Written in clone b.", "Steps", actor="human")
    a.close()
    b.close()
    git(work, "push", "-q", "origin", "main")
    git(other, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    git(other, "push", "-q", "origin", "main")
    git(work, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    for clone in (work, other):
        store = Store(Config.load(clone))
        store.refresh()
        incremental = index_snapshot(store)
        assert {h.name for h in store.recall("written clone", kinds=["skill"]).hits} == {"from-a", "from-b"}
        assert len({h.id for h in store.recall("from clone", limit=20, kinds=["note"]).hits}) == 6
        store.reindex()
        assert index_snapshot(store) == incremental
        store.close()


def test_recall_as_of_answers_from_memory_as_it_stood_then(work: Path):

    store = Store(Config.load(work), session="t1")
    store.write_skill("old-deploy", "Deploy with the fabric script.", "fab deploy", actor="human")
    store.remember("deploy used fabric back then")
    store.flush()
    then = git(work, "rev-parse", "HEAD").strip()
    (work / ".agents/skills/old-deploy/SKILL.md").unlink()
    (work / ".agents/skills/old-deploy").rmdir()
    store.write_skill("new-deploy", "Deploy with kubectl.", "kubectl apply", actor="human")
    from datetime import UTC, datetime, timedelta

    later = (datetime.now(UTC) + timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # commit times have 1 s resolution
    store.remember("deploy moved to kubernetes", ts=later)
    store.refresh()
    person = Committer(Git(work, work / ".git"), work / ".git" / "repo-memory", Policy())
    person.record([".agents/skills/old-deploy/SKILL.md"], "memory(skill): remove old-deploy")
    person.flush()
    now_names = {h.name for h in store.recall("deploy", kinds=["skill"]).hits}
    then_names = {h.name for h in store.recall("deploy", as_of=then, kinds=["skill"]).hits}
    then_notes = [h.snippet for h in store.recall("deploy", as_of=then, kinds=["note"]).hits]
    store.close()
    assert now_names == {"new-deploy"} and then_names == {"old-deploy"}
    assert len(then_notes) == 1 and "fabric" in then_notes[0]


def test_recall_as_of_a_time_finds_the_records_written_by_then_though_their_session_was_committed_later(
        repo: Path, monkeypatch: pytest.MonkeyPatch):
    """A session's records are committed at its end. The cut-off was the time of the last memory commit before
    `as_of`, so a record written at 23:59:50 and committed after midnight was missing from `as_of` that day, and so
    was a whole day of work whenever nothing was committed in it."""
    for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(name, "2026-01-31T12:00:00Z")
    store = Store(Config.load(repo), session="late")
    try:
        store.write_skill("deploy", "How we deploy.", "fab deploy", actor="human")
        store.flush()  # the last memory commit before the night's work
        for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
            monkeypatch.delenv(name)
        store.remember("the deploy used fabric that night", ts="2026-01-31T23:59:50.000000Z")
        store.flush("all")  # the session's end, months later
        for as_of, found in (("2026-01-31", 1), ("2026-01-31T23:59:59Z", 1), ("2026-01-31T23:00:00Z", 0), ("2026-01-31T13:00:00Z", 0)):
            notes = [h.id for h in store.recall("fabric", as_of=as_of, kinds=["note"]).hits]
            assert len(notes) == found, (as_of, notes)
        assert [h.name for h in store.recall("deploy", as_of="2026-01-31", kinds=["skill"]).hits] == ["deploy"]
    finally:
        store.close()


def test_tool_results_say_when_a_commit_is_deferred(work: Path):
    import anyio
    from mcp import Client

    from repo_memory.shells import mcp as server

    git(work, "checkout", "-q", "--detach")
    store = Store(Config.load(work))

    async def write() -> tuple[dict, dict]:
        async with Client(server.build(store)) as client:
            first = (await client.call_tool("skill_write", {"name": "noted", "description": "d", "body": "b"})).structured_content
            store.flush()
            second = (await client.call_tool("remember", {"text": "while detached"})).structured_content
            return first, second

    first, second = anyio.run(write)
    store.close()
    assert first["commit"].startswith("deferred: HEAD is detached")  # said before a commit is tried (it said "within 2 s")
    assert second["commit"].startswith("deferred: HEAD is detached")


def test_processes_starting_together_in_a_new_clone_agree_on_its_id(tmp_path: Path):
    """A harness starts its server and its first hook at the same moment: two ids made the hook's log another clone's."""
    import concurrent.futures

    from repo_memory.git.clone import clone_id

    for trial in range(20):
        git_dir = tmp_path / f"clone{trial}" / ".git"
        (git_dir / "repo-memory").mkdir(parents=True)
        with concurrent.futures.ProcessPoolExecutor(4) as pool:
            ids = set(pool.map(clone_id, [git_dir] * 8, [git_dir / "repo-memory"] * 8))
        assert len(ids) == 1, (trial, ids)


def test_a_session_continued_after_its_commit_reads_logs_shows_and_has_history_as_one(work: Path, runner: CliRunner):
    """Past its first commit a session goes on in a second file (core/journal.py); every reader sees one session."""
    store = Store(Config.load(work), session="s-long")
    s = store.session  # s-long.<clone>: the name a person or a job chose is this clone's own log
    store.remember("first, before the checkpoint")
    store.checkpoint("the start", [f"{s}#1"])
    first = git(work, "rev-parse", "HEAD").strip()
    store.remember("third, after it")
    store.close()  # the session's end commits the rest
    store = Store(Config.load(work))
    logs = sorted(p.name for p in (work / ".agents/experience").rglob(f"{s}*.jsonl"))
    whole = [r.record["text"] for r in store.read("session:s-long").records]  # the name a person typed
    with pytest.raises(NotFoundError):  # not written yet then
        store.read(f"{s}#3", as_of=first)
    later = store.read(f"{s}#3", as_of=git(work, "rev-parse", "HEAD").strip())
    path, changes = store.history("session:s-long")
    store.close()
    assert logs == [f"{s}+2.jsonl", f"{s}.jsonl"]
    assert whole == ["first, before the checkpoint", "the start", "third, after it"]
    assert [r.record["text"] for r in later.records] == ["third, after it"]
    assert path.endswith(f"{s}.jsonl") and len(changes) == 2 and "third, after it" in changes[0].diff
    shown = runner.invoke(cli, ["--root", str(work), "log", "show", "s-long"], catch_exceptions=False).output
    assert "third, after it" in shown and "break" not in shown.lower()
    assert runner.invoke(cli, ["--root", str(work), "verify"]).exit_code == 0


def test_a_session_that_went_on_across_branches_reads_as_one_on_each_and_after_their_merge(repo: Path, runner: CliRunner):
    """Each branch holds some of the session's files (core/journal.py keeps where the session got to): each reads
    and verifies as far as it holds, the merge holds them all, and a record cut from a file still shows as a break."""
    commit_file(repo, "app.py", "x = 1\n", "init")
    git(repo, "checkout", "-q", "-b", "feature")
    store = Store(Config.load(repo), session="s-branches")
    s = store.session
    store.remember("one, on feature")
    store.checkpoint("the start", [f"{s}#1"])
    git(repo, "checkout", "-q", "main")
    store.remember("three, on main")
    store.close()
    git(repo, "checkout", "-q", "feature")  # holds the first file, not the second
    store = Store(Config.load(repo), session="s-branches")
    assert [r["id"] for r in store.remember("four, on feature again")] == [f"{s}#4"]
    store.close()

    def names() -> list[str]:
        return sorted(p.name for p in (repo / ".agents/experience").rglob(f"{s}*.jsonl"))

    def texts() -> list[str]:
        reader = Store(Config.load(repo))
        try:
            return [r.record["text"] for r in reader.read(f"session:{s}").records if r.verified]
        finally:
            reader.close()

    assert names() == [f"{s}+3.jsonl", f"{s}.jsonl"]
    assert texts() == ["one, on feature", "the start", "four, on feature again"]
    shown = runner.invoke(cli, ["--root", str(repo), "log", "show", "s-branches"], catch_exceptions=False).output
    assert "four, on feature again" in shown and "Verification failed" not in shown
    assert runner.invoke(cli, ["--root", str(repo), "verify"]).exit_code == 0

    git(repo, "merge", "-q", "--no-edit", "main")
    assert names() == [f"{s}+2.jsonl", f"{s}+3.jsonl", f"{s}.jsonl"]
    assert texts() == ["one, on feature", "the start", "three, on main", "four, on feature again"]
    assert runner.invoke(cli, ["--root", str(repo), "verify"]).exit_code == 0

    second = next((repo / ".agents/experience").rglob(f"{s}+2.jsonl"))
    second.unlink()  # a file HEAD holds, deleted: a removal, not a file on another branch
    result = runner.invoke(cli, ["--root", str(repo), "verify"])
    assert result.exit_code != 0 and f"{s}#4: its prev hash does not match" in result.output, result.output
    git(repo, "checkout", "-q", "--", str(second))
    first = next((repo / ".agents/experience").rglob(f"{s}.jsonl"))
    first.write_text(first.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")  # #2 cut by hand
    result = runner.invoke(cli, ["--root", str(repo), "verify"])
    assert result.exit_code != 0 and f"{s}#3: its prev hash does not match" in result.output, result.output


def test_records_the_user_stashed_with_their_untracked_files_come_back_beside_those_written_since(work: Path):
    """`git stash -u` takes a session's uncommitted next file; the session goes on after it, so `git stash pop` puts
    it back beside the records written meanwhile (it had refused: the session had begun that file again from its start)."""
    store = Store(Config.load(work), session="s-stashed")
    s = store.session
    store.remember("one")
    store.checkpoint("the start", [f"{s}#1"])
    store.remember("three, then stashed")
    git(work, "stash", "-q", "-u")
    assert [r["id"] for r in store.remember("four, while stashed")] == [f"{s}#4"]
    git(work, "stash", "pop", "-q")
    store.close()
    store = Store(Config.load(work))
    try:
        texts = [r.record["text"] for r in store.read(f"session:{s}").records if r.verified]
    finally:
        store.close()
    assert texts == ["one", "the start", "three, then stashed", "four, while stashed"]


def test_a_persons_note_from_a_terminal_names_no_harness_and_one_from_a_harness_names_it(repo: Path):
    """A note typed at a terminal was committed with `Memory-Harness: unknown`: no harness ran it, so the trailer is
    left out; a harness that names itself (REPO_MEMORY_HARNESS, as setup writes for Codex) is still named."""
    assert CliRunner().invoke(cli, ["--root", str(repo), "log", "add", "we build docs with tox"]).exit_code == 0
    assert "Memory-Harness" not in git(repo, "log", "-1", "--format=%B")
    result = CliRunner(env={"REPO_MEMORY_HARNESS": "codex"}).invoke(cli, ["--root", str(repo), "log", "add", "and lint with ruff"])
    assert result.exit_code == 0, result.output
    assert git(repo, "log", "-1", "--format=%B").rstrip().endswith("Memory-Harness: codex")


def test_a_commits_subject_names_the_records_it_holds_though_more_were_appended_while_it_was_made(work: Path):
    """The log is committed as the bytes checked under its lock, but the subject's span was read from the file again
    later: records appended meanwhile (calls in flight at a checkpoint or a signal) were claimed by a commit that did not
    hold them (`#1-13` for 6 lines added, the next commit `#7-17`). A clean filter appends one, as a writer would, while
    git makes the log's blob."""
    late = work / ".git" / "late"
    script = work.parent / "append-late.py"
    script.write_text("import json, os, sys\nsys.stdout.buffer.write(sys.stdin.buffer.read())\n"
                      f"if os.path.exists({str(late)!r}):\n    os.remove({str(late)!r})\n"
                      "    last = json.loads(open(sys.argv[1], 'rb').read().splitlines()[-1])\n"
                      "    with open(sys.argv[1], 'a', encoding='utf-8') as log:\n"
                      "        log.write(json.dumps({**last, 'seq': last['seq'] + 1, 'text': 'late'}) + '\\n')\n",
                      encoding="utf-8")
    git(work, "config", "filter.late.clean", f"{sys.executable} {script} %f")
    (work / ".git" / "info" / "attributes").write_text("*.jsonl filter=late\n", encoding="utf-8")
    store = Store(Config.load(work), session="s1")
    try:
        store.remember("found the cause")
        late.touch()
        store.checkpoint("summary", [f"{store.session}#1"])
        assert not late.exists()  # the filter ran, and a record came after the bytes committed
    finally:
        git(work, "config", "--unset", "filter.late.clean")
        store.close(commit=False)
    subject = git(work, "log", "-1", "--format=%s").strip()
    added = git(work, "show", "--numstat", "--format=", "HEAD").split()[0]
    assert subject == f"memory(experience): {store.session}#1-{added}", (subject, added)


def test_a_persons_deferred_note_committed_later_by_a_harness_process_names_no_harness(repo: Path):
    """A note typed at a terminal while git was busy (index.lock held) was committed later by a Codex server, and the
    commit said `Memory-Harness: codex`: the trailer fell back to the committing process's harness for records naming
    none. It names the harnesses the committed records name; the process's own only for a commit of no records."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    lock = repo / ".git" / "index.lock"
    lock.touch()
    assert CliRunner().invoke(cli, ["--root", str(repo), "log", "add", "the person's note", "-s", "pnote"]).exit_code == 0
    lock.unlink()
    assert "pnote" not in git(repo, "log", "--format=%B")
    store = Store(Config.load(repo, env={**os.environ, "REPO_MEMORY_HARNESS": "codex"}), session="codex-session")
    try:
        store.flush("all")  # the CLI ran in this process: its owner is alive, so `all` takes its note over
        body = git(repo, "log", "-1", "--format=%B")
        assert "Memory-Session: pnote" in body and "Memory-Harness" not in body, body
        store.write_skill("deploy", "How we deploy; use when shipping.", "1. Ship.", actor="agent")
        store.flush()
        assert git(repo, "log", "-1", "--format=%B").rstrip().endswith("Memory-Harness: codex")  # no records: its own
    finally:
        store.close()


def test_a_repository_with_a_submodule_at_its_top_works_as_any(tmp_path: Path, runner):
    """A submodule at the repository's top (an entry of the root tree git keeps as a commit): reading HEAD's tree asked
    gitpython for the entry's name, which a submodule entry cannot give without .gitmodules parsing, and every command
    that looked at HEAD — `log add`'s commit, doctor, the hooks — ended in a traceback."""
    from repo_memory.shells.cli import cli

    lib, app = tmp_path / "lib", tmp_path / "app"
    for folder in (lib, app):
        folder.mkdir()
        git(folder, "init", "-q", "-b", "main")
        (folder / "x").write_text("x\n", encoding="utf-8")
        git(folder, "add", "x")
        git(folder, "commit", "-qm", "x")
    git(app, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(app, "commit", "-qm", "add submodule")
    assert runner.invoke(cli, ["--root", str(app), "init"]).exit_code == 0
    added = runner.invoke(cli, ["--root", str(app), "log", "add", "Staging DB is read-only on Fridays", "-s", "ops-notes"])
    assert added.exit_code == 0, added.output
    doctor = runner.invoke(cli, ["--root", str(app), "doctor"])
    assert "Traceback" not in doctor.output and doctor.exception is None or isinstance(doctor.exception, SystemExit), doctor.output
    assert git(app, "status", "--porcelain") == ""


def test_a_cat_file_helper_that_died_is_replaced_and_later_reads_answer(work: Path):
    """gitpython keeps one `git cat-file` for every read of a process: once it died (killed, or a partial clone's fetch
    that failed), every later read of that process failed with a broken pipe until it restarted."""
    g = Git(work, work / ".git")
    assert g.repo is not None  # gitpython opened, as in a server (a process's first reads are git's own: repo.LIGHT_READS)
    head = g.head()
    assert head is not None and g.blob(head, "app.py") == b"print('v1')\n"
    helper = g.repo.git.cat_file_all
    helper.proc.kill()
    helper.proc.wait()
    assert g.blob(head, "app.py") == b"print('v1')\n"
    with pytest.raises(GitError, match="could not read object 0{12}"):  # one it lacks: said, and the next read still answers
        g.read("0" * 40)
    assert g.read(g.entry(head, "app.py")[0]) == b"print('v1')\n"  # type: ignore[index]
    g.close()
