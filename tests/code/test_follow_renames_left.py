"""`stale --follow-renames` names every memory citing a moved file that it did not follow, and why: a skill whose
symbol is not defined in the moved file was skipped without a word (docs/reference.md: it "names each skill it left
to you"), and so was a record whose symbol was renamed in the move. Through the CLI, on real git repositories."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

from repo_memory.guards.shellwords import quoted
from tests.conftest import git, write_skill_file

CODE = "class Store:\n    def load(self):\n        return 1\n\n    def save(self, rows):\n        return list(rows)\n"


def cli_run(repo: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(repo), *args])
    return result.exit_code, result.output


def _left(out: str, memory: str) -> str:
    said = [line for line in out.splitlines() if line.startswith(f"left to you: {memory}: ")]
    assert len(said) == 1, out
    return said[0]


def test_follow_renames_names_a_skill_and_a_record_whose_symbol_the_moved_file_does_not_define(store: Store, repo: Path):
    (repo / "lib").mkdir()
    (repo / "lib/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    record = store.remember("Store.save keeps the rows in order", refs=["lib/store.py::Store.save"])[0]["id"]
    store.flush("all")
    write_skill_file(repo, "good", "Loading the store", extra="metadata:\n  anchors: [lib/store.py::Store.load]\n")
    write_skill_file(repo, "typo", "Loading the store, misspelled", extra="metadata:\n  anchors: [lib/store.py::Store.lod]\n")
    write_skill_file(repo, "both", "Loading and a typo",
                     extra="metadata:\n  anchors: [lib/store.py::Store.load, lib/store.py::Store.lod]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "skills by a person")
    assert cli_run(repo, "stale")[0] == 1  # the misspelled anchors: never defined
    git(repo, "mv", "lib", "src")
    path = repo / "src/store.py"  # save renamed to store in the same commit: git still sees the move
    path.write_text(path.read_text(encoding="utf-8").replace("def save", "def store"), encoding="utf-8")
    git(repo, "commit", "-qam", "move lib to src")
    code, out = cli_run(repo, "stale", "--follow-renames")
    assert code == 1, out
    assert "re-anchored skill:good" in out and "re-anchored skill:both" in out
    typo = _left(out, "skill:typo")
    assert "lib/store.py::Store.lod" in typo and "src/store.py" in typo and "Store.load" in typo, typo  # what it may have meant
    assert "metadata.anchors in .agents/skills/typo/SKILL.md" in typo, typo
    assert "lib/store.py::Store.lod" in _left(out, "skill:both")  # its other anchor was followed: this one was not
    said = _left(out, record)
    assert "lib/store.py::Store.save" in said and "src/store.py" in said and f"repo-memory log add TEXT -r {quoted(record)}" in said
    assert "src/store.py::Store.load" in (repo / ".agents/skills/both/SKILL.md").read_text(encoding="utf-8")
    assert "lib/store.py::Store.lod" in (repo / ".agents/skills/typo/SKILL.md").read_text(encoding="utf-8")
    code, out = cli_run(repo, "stale")
    assert "--follow-renames" not in out, "it cannot follow them: they are not in the moved file"
    doctor = cli_run(repo, "doctor")[1]
    assert "Edit metadata.anchors in .agents/skills/typo/SKILL.md" in doctor and "--follow-renames" not in doctor, doctor
