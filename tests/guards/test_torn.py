"""A log's torn tail moved aside: only bytes after the last newline, never bytes git holds, nothing lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repo_memory.errors import UnsafePathError
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


def hangs_not(seconds: int = 5):  # a read that blocks (a FIFO) fails the test instead of hanging it
    import signal

    def fired(*_: object) -> None:
        raise TimeoutError("set_aside blocked")

    signal.signal(signal.SIGALRM, fired)
    signal.alarm(seconds)


def test_a_fifo_or_link_where_the_copy_goes_is_a_name_taken_never_read_through(tmp_path: Path):
    """A FIFO at the copy's name blocked the read that compares it (under the log's lock: every append hung); a link
    there to /dev/zero would read without end. Only a plain file is compared; anything else is a name already taken."""
    import signal

    log, state = tmp_path / "s.jsonl", tmp_path / "state"
    (state / "torn").mkdir(parents=True)
    os.mkfifo(state / "torn" / "s.jsonl.8")
    (state / "torn" / "s.jsonl.8.2").symlink_to("/dev/zero")
    log.write_bytes(b'{"a":1}\n{"b":')
    hangs_not()
    try:
        moved = cut(log, state)
    finally:
        signal.alarm(0)
    assert moved == state / "torn" / "s.jsonl.8.3" and moved.read_bytes() == b'{"b":' and log.read_bytes() == b'{"a":1}\n'


@pytest.mark.parametrize("planted", ["link", "file"])
def test_a_torn_folder_that_is_no_real_folder_is_refused_and_the_log_stays_as_it_is(tmp_path: Path, planted: str):
    log, state, outside = tmp_path / "s.jsonl", tmp_path / "state", tmp_path / "outside"
    state.mkdir()
    outside.mkdir()
    if planted == "link":
        (state / "torn").symlink_to(outside)
    else:
        (state / "torn").write_bytes(b"")
    log.write_bytes(b'{"a":1}\n{"b":')
    with pytest.raises(UnsafePathError):
        cut(log, state)
    assert log.read_bytes() == b'{"a":1}\n{"b":' and os.listdir(outside) == []


def test_fragments_cut_at_one_byte_are_compared_a_bounded_number_of_times(tmp_path: Path):
    """Each fragment cut at the same byte re-read every earlier one there: the names tried are bounded."""
    log, state = tmp_path / "s.jsonl", tmp_path / "state"
    folder = state / "torn"
    folder.mkdir(parents=True)
    for n in range(1, torn.NAMES + 1):
        (folder / ("s.jsonl.8" if n == 1 else f"s.jsonl.8.{n}")).write_bytes(b"other")
    log.write_bytes(b'{"a":1}\n{"b":')
    with pytest.raises(OSError):
        cut(log, state)
    assert log.read_bytes() == b'{"a":1}\n{"b":'
