"""JSON nested deeper than repo-memory reads is refused as invalid, by readers and writers alike, at any depth."""

from __future__ import annotations

from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import InvalidRecordError
from repo_memory.formats import experience, nesting


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [nesting.DEPTH + 1, 5_000, 1_000_000])
def test_a_log_line_nested_deeper_than_the_bound_is_an_invalid_line(depth: int):
    line = experience.parse_line(('{"id": "s#1", "data": ' + nested(depth) + "}").encode(), 0)
    assert line.record is None and "nested deeper than" in line.problem, line.problem
    line = experience.parse_line(nested(depth).encode(), 0)
    assert line.record is None and "nested deeper than" in line.problem, line.problem


def test_json_as_deep_as_the_bound_is_read_and_one_level_more_is_refused_as_a_value_error():
    assert nesting.loads(nested(nesting.DEPTH)) is not None
    assert nesting.loads(b'{"a": [1, {"b": "[[[[[[["}]}' * 1) == {"a": [1, {"b": "[[[[[[["}]}
    with pytest.raises(ValueError, match="nested deeper than"):
        nesting.loads(nested(nesting.DEPTH + 1))
    assert not nesting.deeper({"a": [[]]}, 3) and nesting.deeper({"a": [[{}]]}, 3)


def test_a_record_whose_data_nests_deeper_than_readers_take_is_refused_when_written(store: Store):
    """What repo-memory writes it reads back: data nested 150 deep was written, then read as a broken line."""
    deep: list = []
    for _ in range(150):
        deep = [deep]
    with pytest.raises(InvalidRecordError, match="nested deeper than"):
        store.remember("deep data", data={"input": deep})
    assert store.verify() == []


def test_a_tool_call_whose_input_nests_deeper_than_readers_take_is_recorded_with_its_input_as_text(repo: Path):
    from repo_memory.shells import tool_records

    store = Store(Config.load(repo))
    try:
        payload = {"tool_name": "Bash", "tool_input": {"command": "ls", "x": json_deep(150)}, "tool_response": {"stdout": "a"}}
        found = tool_records.made(store, payload)
        assert found is not None and isinstance(found[2]["input"], str), found
    finally:
        store.close()


def json_deep(depth: int) -> list:
    out: list = []
    for _ in range(depth - 1):
        out = [out]
    return out
