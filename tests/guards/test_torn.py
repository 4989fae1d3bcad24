"""A log's torn tail moved aside: only bytes after the last newline, never bytes git holds, nothing lost."""

from __future__ import annotations

import os
from pathlib import Path

from repo_memory.guards import torn


def cut(path: Path, state: Path, keep: int = 0) -> Path | None:
    fd = os.open(path, os.O_RDWR)
    try:
        return torn.set_aside(fd, path, state, keep)
    finally:
        os.close(fd)


def test_the_bytes_after_the_last_newline_go_to_the_state_folder_and_the_log_ends_at_its_newline(tmp_path: Path):
    log, state = tmp_path / "s.jsonl", tmp_path / "state"
    log.write_bytes(b'{"a":1}\n{"b":')
    moved = cut(log, state)
    assert moved == state / "torn" / "s.jsonl.8" and moved.read_bytes() == b'{"b":' and log.read_bytes() == b'{"a":1}\n'
    assert cut(log, state) is None and log.read_bytes() == b'{"a":1}\n'  # a clean end: nothing to do
    log.write_bytes(b'{"a":1}\n{"c":')  # another fragment cut at the same byte: both are kept
    second = cut(log, state)
    assert second == state / "torn" / "s.jsonl.8.2" and second.read_bytes() == b'{"c":' and moved.read_bytes() == b'{"b":'
    assert torn.found(state) == [moved, second]
    log.write_bytes(b"no newline at all")
    assert cut(log, state).read_bytes() == b"no newline at all" and log.read_bytes() == b""


def test_bytes_git_holds_are_never_cut(tmp_path: Path):
    log, state = tmp_path / "s.jsonl", tmp_path / "state"
    log.write_bytes(b'{"a":1}\n{"b":2')
    assert cut(log, state, keep=10) is None and log.read_bytes() == b'{"a":1}\n{"b":2'
    assert cut(log, state, keep=8) is not None and log.read_bytes() == b'{"a":1}\n'
