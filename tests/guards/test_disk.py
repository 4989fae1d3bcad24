"""Atomic writes' temporary files: what is one, and that a write leaves none behind."""

from __future__ import annotations

from pathlib import Path

from repo_memory.guards import disk


def test_only_the_names_an_atomic_write_gives_its_temporary_file_count_as_one(tmp_path: Path):
    target = tmp_path / "SKILL.md"
    disk.write_atomic(target, b"content")
    assert target.read_bytes() == b"content" and [p.name for p in tmp_path.iterdir()] == ["SKILL.md"]
    assert disk.is_temp(".SKILL.md.k2j3h4x9.tmp") and disk.is_temp(".a.b.c.q8w7e6r5.tmp")
    # A person's files that merely look alike are never swept: a line break after the name, no leading dot, seven
    # characters, capitals.
    for name in (".SKILL.md.k2j3h4x9.tmp\n", "SKILL.md.k2j3h4x9.tmp", ".SKILL.md.k2j3h4x.tmp", ".SKILL.md.K2J3H4X9.tmp", ".SKILL.md.k2j3h4x9.tmp.bak"):
        assert not disk.is_temp(name), repr(name)
