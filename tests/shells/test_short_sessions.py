"""Sessions of a few seconds (`claude -p`, `codex exec`, a loop's rounds) leave their records with vectors, however the
harness ends the server: the job starts soon, saves within seconds, and what is left is embedded once the server is gone.

Every test drives real `repo-memory serve` processes (or hook processes) and reads the vectors back as doctor does.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.guards import disk
from repo_memory.shells import embedder
from repo_memory.shells.cli import cli

from tests.shells.stdio_server import StdioServer
from tests.shells.test_serve_lifetime import wait_until

pytestmark = pytest.mark.slow
SEMANTIC = {"REPO_MEMORY_SEMANTIC": "true"}


@pytest.fixture
def semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPO_MEMORY_SEMANTIC", "true")


def coverage(repo: Path) -> tuple[int, int]:
    """(texts with a saved vector, texts recall can return), read from disk as doctor reads them."""
    store = Store(Config.load(repo))
    try:
        found = store.index_health()[2]
    finally:
        store.close(commit=False)
    assert found is not None
    return found


def session(repo: Path, n: int, records: int = 3) -> StdioServer:
    server = StdioServer(repo, env=SEMANTIC)
    server.initialize()
    for i in range(records):
        said = server.call("remember", {"text": f"Run {n}, finding {i}: the invoice exporter retries three times on a 503."})
        assert not said.get("isError"), said
    return server


def test_records_of_sessions_closed_as_the_sdk_closes_them_right_after_writing_all_get_vectors(repo: Path, semantic: None):
    """Five sessions, each ended as soon as it wrote (stdin closed): the server's job never began its first pass
    (it waited 5 s), so 0 of 15 records had a vector and recall by meaning found none of them."""
    for n in range(5):
        server = session(repo, n)
        server.close_input()
        assert server.wait(15) is not None
    assert wait_until(lambda: coverage(repo) == (15, 15), 90), coverage(repo)


def test_a_server_saves_its_vectors_within_seconds_so_a_kill_9_keeps_them(repo: Path, semantic: None):
    """The job wrote the vector file every 30 s or at a clean stop: a harness that kills its server lost them all."""
    server = session(repo, 0)
    try:
        assert wait_until(lambda: coverage(repo) == (3, 3), 15), coverage(repo)
    finally:
        os.killpg(server.proc.pid, signal.SIGKILL)
        server.wait(5)
    assert coverage(repo) == (3, 3)


def test_ended_as_codex_ends_it_a_server_leaves_its_records_to_an_embedder_that_gives_them_vectors(repo: Path, semantic: None):
    """Codex: SIGTERM to the server's process group with the end of input, SIGKILL 50 ms later."""
    server = session(repo, 0, records=4)
    os.killpg(server.proc.pid, signal.SIGTERM)
    server.close_input()
    time.sleep(0.05)
    server.kill(signal.SIGKILL)
    server.wait(5)
    assert wait_until(lambda: coverage(repo) == (4, 4), 90), coverage(repo)


def test_the_session_end_hook_has_what_its_session_wrote_embedded_and_returns_at_once(repo: Path, semantic: None):
    """Records written by hooks, with no server running or one gone before it embedded them, stayed without vectors."""
    store = Store(Config.load(repo))
    for n in range(3):
        store.remember(f"Tool call {n}: the build cache was cold and took four minutes.", session="hooked", kind="observation")
    store.close()
    hook = {"session_id": "hooked", "cwd": str(repo), "hook_event_name": "SessionEnd", "reason": "other"}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "repo_memory", "hook", "session-end"], cwd=repo, input=json.dumps(hook),
                          capture_output=True, text=True, env={**os.environ, **SEMANTIC}, timeout=60)
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert took < 3, took  # the embedder is detached: the hook never waits for the model
    assert wait_until(lambda: coverage(repo)[0] == coverage(repo)[1], 90), coverage(repo)


def test_doctor_warns_when_many_texts_have_no_vector_and_no_process_embeds_them(repo: Path, semantic: None):
    """A month of short sessions left 3 of 811 texts with a vector, and doctor said "Nothing to fix"."""
    store = Store(Config.load(repo))
    for n in range(30):
        store.remember(f"Fact {n}: the staging cluster number {n} restarts nightly.", session="month")
    store.close()
    out = CliRunner().invoke(cli, ["--root", str(repo), "doctor"]).output
    line = next((x for x in out.splitlines() if "semantic recall:" in x), "")
    assert "only 0 of 30 texts have a vector and no process is embedding them" in line, out
    assert "Nothing to fix; `repo-memory reindex`" not in out and "Embed them now: `repo-memory reindex`" in out, out


def test_a_repository_deleted_while_its_embedder_runs_stays_deleted_and_the_embedder_ends(repo: Path, tmp_path: Path):
    """`rm -rf repo` while the detached embedder of its last session ran left `repo/.git/repo-memory/vectors.*`: its
    save made the folders again, so a `git clone URL repo` into that name failed, and it went on embedding for a
    repository that was gone for up to two minutes."""
    lines = "".join(json.dumps({"kind": "note", "text": f"Finding {i}: the invoice exporter {i} retries on a 503 from the ledger."})
                    + "\n" for i in range(1500))
    imported = subprocess.run([sys.executable, "-m", "repo_memory", "log", "import", "-"], input=lines, cwd=repo, text=True,
                              capture_output=True, timeout=300, env={**os.environ, "REPO_MEMORY_SEMANTIC": "false"})
    assert imported.returncode == 0, imported.stderr
    embedder = subprocess.Popen([sys.executable, "-m", "repo_memory.shells.embedder", str(repo)], env={**os.environ, **SEMANTIC})
    try:
        wait_until(lambda: (repo / ".git/repo-memory/vectors.usearch").exists(), 120)  # embedding, and saved once
        subprocess.run(["rm", "-rf", str(repo)], check=True)
        assert embedder.wait(timeout=60) == 0
    finally:
        embedder.kill()
        embedder.wait()
    assert not repo.exists(), sorted(str(p) for p in repo.rglob("*"))


def embedders_of(repo: Path) -> list[str]:
    """The command lines of the embedders running for `repo`, as `pgrep` finds them."""
    found = subprocess.run(["pgrep", "-af", f"repo_memory.shells.embedder {repo}"], capture_output=True, text=True)
    return [line for line in found.stdout.splitlines() if "pgrep" not in line]


def test_uninstall_stops_the_running_embedder_of_the_clone_and_says_so(repo: Path, tmp_path: Path, semantic: None):
    """uninstall neither stopped nor named the detached embedder of the last session: for up to two minutes it went on
    writing vectors into .git/repo-memory of a clone repo-memory had been detached from."""
    lines = "".join(json.dumps({"kind": "note", "text": f"Finding {i}: the invoice exporter {i} retries on a 503 from the ledger."})
                    + "\n" for i in range(1500))
    imported = subprocess.run([sys.executable, "-m", "repo_memory", "log", "import", "-"], input=lines, cwd=repo, text=True,
                              capture_output=True, timeout=300, env={**os.environ, "REPO_MEMORY_SEMANTIC": "false"})
    assert imported.returncode == 0, imported.stderr
    state = repo / ".git/repo-memory"
    embedder.start(repo)  # as the SessionEnd hook, the finisher and an ending server start it
    try:
        assert wait_until(lambda: (state / "vectors.usearch").exists(), 120)  # embedding, and saved once
        assert embedders_of(repo)
        (tmp_path / "home").mkdir()
        done = subprocess.run([sys.executable, "-m", "repo_memory", "uninstall"], cwd=repo, capture_output=True, text=True,
                              timeout=120, env={**os.environ, "HOME": str(tmp_path / "home")})
        assert done.returncode == 0, done.stderr
        assert "stopped the embedder (process" in done.stdout, done.stdout
        assert embedders_of(repo) == []
        with disk.try_lock(state, "embed.lock") as free:
            assert free  # nothing embeds for this clone any more
        assert not list(state.glob("*.tmp")), sorted(state.iterdir())  # it saved what it had, whole
    finally:
        for line in embedders_of(repo):
            os.kill(int(line.split()[0]), signal.SIGKILL)
