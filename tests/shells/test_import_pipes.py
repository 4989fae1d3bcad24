"""`log import` of a file that can be read only once: bash's `<(…)`, a named pipe, /dev/stdin.

The format was told from a first read of the file's lines and the lines were read again to check and to import: a pipe
gave its lines to the first read only, and the import said "Imported 0 record(s)" and exited 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from tests.conftest import records_of

CLI = f"{sys.executable} -m repo_memory"
ENTRIES = [{"kind": "decision", "text": f"Chose option {n} for the release train.", "session": "piped"} for n in range(3)]


def _entries_file(tmp_path: Path) -> Path:
    path = tmp_path / "entries.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in ENTRIES), encoding="utf-8")
    return path


def _imported(repo: Path) -> list[str]:
    store = Store(Config.load(repo))
    try:
        store.refresh()
        return [r["text"] for r in records_of(store, "piped")]
    finally:
        store.close()


@pytest.mark.parametrize("how", ["process substitution", "/dev/stdin"])
def test_a_file_read_once_through_the_shell_is_imported_whole(repo: Path, tmp_path: Path, how: str):
    entries = _entries_file(tmp_path)
    line = (f"{CLI} log import <(cat {entries})" if how == "process substitution"
            else f"cat {entries} | {CLI} log import /dev/stdin")
    done = subprocess.run(["bash", "-c", line], cwd=repo, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Imported 3 record(s) into 1 session(s)" in done.stdout, done.stdout + done.stderr
    assert _imported(repo) == [e["text"] for e in ENTRIES]


def test_a_named_pipe_is_imported_whole_and_its_format_told_from_its_first_lines(repo: Path, tmp_path: Path):
    fifo = tmp_path / "entries.fifo"
    os.mkfifo(fifo)
    content = _entries_file(tmp_path).read_bytes()

    def writer() -> None:
        with fifo.open("wb") as out:  # blocks until the import opens the pipe
            out.write(content)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    done = subprocess.run([sys.executable, "-m", "repo_memory", "log", "import", str(fifo)], cwd=repo, capture_output=True,
                          text=True, timeout=120)
    thread.join(10)
    assert done.returncode == 0, done.stderr
    assert "Imported 3 record(s) into 1 session(s)" in done.stdout, done.stdout + done.stderr
    assert _imported(repo) == [e["text"] for e in ENTRIES]
