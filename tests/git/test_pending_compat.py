"""The release before this one and this one run side by side on one clone (a server started before `git pull &&
./install.sh` goes on running while hooks start new processes): neither drops what the other left pending."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.git.pending import Journal, Pending
from tests.conftest import git

OLD_RELEASE = "fb57d28"  # the release whose Journal skipped lines with keys it did not know, and rewrote the file without them
SOURCE = Path(__file__).resolve().parents[2]

OLD_PROCESS = """
import sys
from pathlib import Path
from repo_memory.config import Config
from repo_memory.core.store import Store
store = Store(Config.load(Path(sys.argv[1])), session="old-s")
store.write_skill("old-skill", "An old release's skill; use when testing.", "1. Old", actor="human")
assert store.flush() is not None  # its commit rewrites the pending list it reads
store.remember("old note: still pending when this process ends")
store.close(commit=False)
"""


@pytest.fixture(scope="module")
def old_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The previous release's server package, taken from this repository's history."""
    into = tmp_path_factory.mktemp("old-release")
    archive = subprocess.run(["git", "-C", str(SOURCE), "archive", OLD_RELEASE, "server"], capture_output=True, check=False)
    if archive.returncode:
        pytest.skip(f"no commit {OLD_RELEASE} in {SOURCE} ({archive.stderr.decode(errors='replace').strip()})")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "server"


def test_a_process_of_the_release_before_commits_beside_this_ones_pending_entries_and_neither_loses_any(repo: Path, old_release: Path):
    """A Codex hook of this release noted a record and a skill change (lines with a harness, a change id, sha256s); the
    old release's server then committed its own skill: it rewrote pending.jsonl from the lines it could parse, and this
    release's lines were gone, their files left uncommitted with nothing pending (doctor: written outside repo-memory)."""
    (repo / ".agents/repo-memory.toml").write_text("commit_window_seconds = 600\n", encoding="utf-8")  # no timer's commit
    git(repo, "add", ".agents")
    git(repo, "commit", "-q", "-m", "init")
    writer = Store(Config.load(repo, env={**os.environ, "REPO_MEMORY_HARNESS": "codex"}), session="new-s")
    writer.remember("new note: the calc module adds")
    writer.write_skill("new-skill", "This release's skill; use when testing.", "1. New", actor="agent")
    writer.close(commit=False)  # what a hook leaves for its harness to commit
    env = {**os.environ, "PYTHONPATH": str(old_release)}
    old = subprocess.run([sys.executable, "-c", OLD_PROCESS, str(repo)], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert old.returncode == 0, old.stderr
    assert ".agents/skills/old-skill/SKILL.md" in git(repo, "show", "--name-only", "--format=", "HEAD").split()
    later = Store(Config.load(repo), session="later")
    try:
        later.flush("all")  # a new process commits what both left
    finally:
        later.close()
    assert git(repo, "status", "--porcelain", "--untracked-files=all", "--", ".agents") == ""
    committed = git(repo, "log", "--name-only", "--format=").split()
    assert ".agents/skills/new-skill/SKILL.md" in committed
    assert sum("/new-s." in p for p in committed) == 1 and sum("/old-s." in p for p in committed) == 1, committed
    assert Journal(Config.load(repo).state_dir).read() == []


def test_a_line_this_release_cannot_read_is_kept_as_it_is_when_the_list_is_rewritten(tmp_path: Path):
    """A later release's line (a key this one does not know) is neither committed nor dropped by this one."""
    journal = Journal(tmp_path)
    mine = Pending(".agents/skills/a/SKILL.md", "memory(skill): update a", "doc", owner=1)
    later = json.dumps({"path": ".agents/skills/b/SKILL.md", "message": "m", "kind": "doc", "due": "later"}) + "\n"
    journal.add([mine])
    with journal.path.open("a", encoding="utf-8") as out:
        out.write(later)
    journal.add([Pending("x", "m", "doc", owner=2)])
    journal.reown([(mine, Pending(mine.path, mine.message, "doc", owner=3))])
    assert later in journal.path.read_text(encoding="utf-8")
    journal.remove([Pending(mine.path, mine.message, "doc", owner=3), Pending("x", "m", "doc", owner=2)])
    assert journal.read() == [] and journal.path.read_text(encoding="utf-8") == later
