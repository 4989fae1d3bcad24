"""Skills on disk: validation, bad input, sources, shadowing and links."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repo_memory.formats import skills
from repo_memory.errors import InvalidRecordError, UnsafePathError
from repo_memory.core.store import Store

from tests.conftest import git, skill_names, write_skill_file


def parse_text(text: str, name: str = "my-skill") -> skills.Skill:
    return skills.parse(text.encode(), f".agents/skills/{name}/SKILL.md", ".agents/skills")


def test_a_valid_skill_exposes_its_fields():
    skill = parse_text("---\nname: my-skill\ndescription: Does X.\nmetadata:\n  status: draft\n  tags: [a, b]\n  related: other-one\n---\nBody\n")
    assert skill.valid and skill.status == "draft" and skill.tags == ("a", "b") and skill.related == ("other-one",)
    assert skill.body == "Body\n"


@pytest.mark.parametrize(
    ("text", "field", "line"),
    [
        ("---\nname: my-skill\n---\n", None, None),  # description missing
        ("---\nname: my-skill\ndescription: ''\n---\n", "description", 3),
        ("---\nname: other\ndescription: x\n---\n", "name", 2),
        ("---\nname: my-skill\ndescription: x\nmetadata:\n  status: live\n---\n", "metadata.status", 5),
        ("---\nname: my-skill\ndescription: " + "d" * 1025 + "\n---\n", "description", 3),
    ],
)
def test_schema_violations_name_the_field_and_line(text, field, line):
    skill = parse_text(text)
    assert not skill.valid
    problem = skill.problems[0]
    assert problem.field == field
    assert problem.line == line


QUOTES = "not text: put it in quotes"


@pytest.mark.parametrize(("tags", "field", "said"), [
    ("[ci, 3]", "metadata.tags.1", f"YAML read this as a number (3), {QUOTES}"),
    ("[ci, true]", "metadata.tags.1", f"YAML read this as a yes/no value (true), {QUOTES}"),
    ("3", "metadata.tags", f"YAML read this as a number (3), {QUOTES}"),
    ("[ci, ~]", "metadata.tags.1", "it is empty (YAML read nothing here): write the text"),
])
def test_a_tag_yaml_reads_as_a_number_or_yes_no_is_named_with_the_fix_not_as_matching_no_schema(tags, field, said):
    # It said "['ci', 3] is not valid under any of the given schemas" of the whole list (a scale run found 21 such skills).
    # An empty one is told it is empty: quotes around nothing are still nothing.
    skill = parse_text(f"---\nname: my-skill\ndescription: x\nmetadata:\n  tags: {tags}\n---\n")
    assert [(p.field, p.line, p.message) for p in skill.problems] == [(field, 5, said)]


def test_non_utf8_and_binary_files_are_invalid_not_crashes():
    assert "UTF-8" in skills.parse(b"---\nname: x\ndescription: caf\xe9\n---\n", ".agents/skills/x/SKILL.md", "s").problems[0].message
    assert "binary" in skills.parse(b"\x00\x01\x02", ".agents/skills/x/SKILL.md", "s").problems[0].message


@pytest.mark.parametrize("bad", ["../evil", "a/b", "a\\b", "nul\x00", ".git", "x.git", "Upper", "a" * 65, "", "-lead", "double--dash", "sp ace"])
def test_unsafe_names_are_refused_on_write_and_nothing_is_written(store: Store, repo: Path, bad: str):
    before = sorted(p.relative_to(repo) for p in repo.rglob("*") if ".git" not in p.parts)
    with pytest.raises(UnsafePathError):
        store.write_skill(bad, "Description.", "Body")
    after = sorted(p.relative_to(repo) for p in repo.rglob("*") if ".git" not in p.parts)
    assert before == after


def test_invalid_write_names_the_field_and_writes_nothing(store: Store, repo: Path):
    with pytest.raises(InvalidRecordError, match="description"):
        store.write_skill("good-name", "d" * 2000, "Body")
    assert not (repo / ".agents/skills/good-name").exists()


def test_skills_are_read_from_agents_claude_and_codex_folders(store: Store, repo: Path):
    write_skill_file(repo, "from-agents", "Agents folder skill.")
    write_skill_file(repo, "from-claude", "Claude folder skill.", folder=".claude/skills")
    write_skill_file(repo, "from-codex", "Codex folder skill.", folder=".codex/skills")
    store.refresh()
    assert skill_names(store) == ["from-agents", "from-claude", "from-codex"]


def test_agents_folder_wins_over_a_same_named_skill_elsewhere_and_the_other_returns_when_it_goes(store: Store, repo: Path):
    winner = write_skill_file(repo, "dup", "From agents.")
    write_skill_file(repo, "dup", "From claude.", folder=".claude/skills")
    store.refresh()
    assert store.read("dup").path == ".agents/skills/dup/SKILL.md"
    winner.unlink()
    winner.parent.rmdir()
    store.refresh()
    assert store.read("dup").path == ".claude/skills/dup/SKILL.md"


def test_a_skill_folder_linked_outside_the_repo_is_refused(store: Store, repo: Path, tmp_path: Path):
    outside = tmp_path / "outside" / "evil"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text("---\nname: evil\ndescription: secret stuff\n---\nsecret\n", encoding="utf-8")
    os.symlink(outside, repo / ".agents/skills/evil")
    store.refresh()
    assert store.recall("secret stuff").hits == []
    row = next(r for r in store.skills() if r["path"] == ".agents/skills/evil/SKILL.md")
    assert not row["valid"] and "outside the repository" in json.loads(row["problems"])[0]["message"]


def test_a_skill_file_looked_at_alone_is_read_as_the_whole_scan_reads_it_or_left_to_the_scan(repo: Path, tmp_path: Path):
    """The watcher reads a hand-edited SKILL.md alone (skills.find); for every path it must say what scan says of it —
    read or skipped, a file beside a skill never indexed — and leave to a scan a folder of skills, anything outside
    them, and any link (what a link shows changes under another path), on the way or at the file."""
    sources = (".agents/skills", ".claude/skills", ".codex/skills")
    outside = tmp_path / "outside"
    (outside / "evil").mkdir(parents=True)
    (outside / "evil" / "SKILL.md").write_text("---\nname: evil\ndescription: x\n---\n", encoding="utf-8")
    write_skill_file(repo, "plain")
    write_skill_file(repo, "mirrored", folder=".claude/skills")
    (repo / ".claude/skills/mirrored" / skills.MIRROR_MARKER).write_text("", encoding="utf-8")
    write_skill_file(repo, "shadow", folder=".claude/skills")
    os.symlink(outside / "evil", repo / ".agents/skills/evil")
    (repo / ".agents/skills/linkfile").mkdir()
    os.symlink(outside / "evil" / "SKILL.md", repo / ".agents/skills/linkfile/SKILL.md")
    (repo / ".agents/skills/linkin").mkdir()
    os.symlink(repo / ".agents/skills/plain/SKILL.md", repo / ".agents/skills/linkin/SKILL.md")
    os.symlink(repo / ".agents/skills/plain", repo / ".agents/skills/inside")
    (repo / ".agents/skills/empty").mkdir()
    scanned = {f.path: f for f in skills.scan(repo, sources)}
    assert {Path(f.path).parent.name for f in scanned.values() if f.linked} == {"evil", "linkfile", "linkin", "inside"}
    for folder in (".agents/skills", ".claude/skills"):
        for name in (n for n in os.listdir(repo / folder) if not n.startswith(".")):
            path = str(repo / folder / name / skills.SKILL_FILE)
            linked = name in ("evil", "linkfile", "linkin", "inside")
            assert skills.find(repo, sources, path) == ((False, None) if linked else (True, scanned.get(path))), path
    for beside in (".agents/skills/gone/SKILL.md", ".agents/skills/plain/notes.md", ".agents/skills/plain/sedAbC123", ".agents/skills/a/b/SKILL.md",
                   ".agents/skills/.hidden/SKILL.md"):
        assert skills.find(repo, sources, str(repo / beside)) == (True, None), beside
    for other in (".agents/skills/plain", ".agents/skills/README.md", ".agents/loops/ship.yaml", ".agents/skills/inside/notes.md", "src/SKILL.md"):
        assert skills.find(repo, sources, str(repo / other)) == (False, None), other
    (repo / ".codex").mkdir()
    os.symlink(repo / ".agents/skills", repo / ".codex/skills")  # two folders, one set of files: only a scan can tell
    assert skills.find(repo, sources, str(repo / ".agents/skills/plain/SKILL.md")) == (False, None)


def test_writes_refuse_to_follow_a_symlinked_skill_folder(store: Store, repo: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo / ".agents/skills/linked")
    with pytest.raises(UnsafePathError, match="symbolic link"):
        store.write_skill("linked", "Description.", "Body")
    assert list(outside.iterdir()) == []


def test_bundled_skills_are_valid_agent_skills():
    root = Path(__file__).resolve().parents[2] / "plugin" / "skills"
    names = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert {"using-repo-memory", "writing-skills"} <= set(names)
    for name in names:
        skill = skills.parse((root / name / "SKILL.md").read_bytes(), f"skills/{name}/SKILL.md", "skills")
        assert skill.valid, skill.problems


def test_a_frontmatter_value_of_any_yaml_type_is_reported_with_its_line_never_fails_the_sync(store: Store, repo: Path):
    """`tags: 3` made parse raise (a number is not iterable), and with it every sync of the repository: no skill edited
    since was found again. Every field given every kind of YAML value parses, and each problem names its line."""
    import itertools

    values = ["3", "true", "~", "[1, 2]", "{a: 1}", "[[x]]", "'text'", "[a, {b: 2}]", "2024-01-01", "1.5", "{anchors: 3}"]
    fields = ["license", "compatibility", "allowed-tools", "metadata", "metadata.status", "metadata.origin", "metadata.tags",
              "metadata.related", "metadata.anchors", "metadata.anchor_hashes"]
    for field, value in itertools.product(fields, values):
        top, _, sub = field.partition(".")
        text = f"---\nname: my-skill\ndescription: d\n{top}:{f'{chr(10)}  {sub}:' if sub else ''} {value}\n---\nbody\n"
        skill = skills.parse(text.encode(), ".agents/skills/my-skill/SKILL.md", ".agents/skills")
        assert all(p.line for p in skill.problems), (field, value, skill.problems)
    write_skill_file(repo, "numbered", "The numbered wombat skill.", extra="metadata:\n  tags: 3\n")
    write_skill_file(repo, "nested", "The nested wombat skill.", extra="metadata:\n  anchors: [[src/a.py]]\n")
    write_skill_file(repo, "fine", "The fine wombat skill.")
    store.refresh()
    assert [h.id for h in store.recall("wombat skill").hits] == ["skill:fine"]
    assert {r["name"]: bool(r["valid"]) for r in store.skills()} == {"fine": True, "nested": False, "numbered": False}


def test_a_skill_file_that_is_a_link_to_itself_is_refused_and_the_rest_still_indexed(store: Store, repo: Path):
    """A SKILL.md linked to itself (or in any link loop) made every refresh raise "Symlink loop": no skill edited after
    it was found again (found by a review)."""
    (repo / ".agents/skills/looping").mkdir(parents=True)
    os.symlink("SKILL.md", repo / ".agents/skills/looping/SKILL.md")
    os.symlink(repo / ".agents/skills/loop-b", repo / ".agents/skills/loop-a")
    os.symlink(repo / ".agents/skills/loop-a", repo / ".agents/skills/loop-b")
    write_skill_file(repo, "fine", "The fine wombat skill.")
    store.refresh()
    assert [h.id for h in store.recall("wombat skill").hits] == ["skill:fine"]
    assert "looping" not in skill_names(store)


def test_an_edit_keeps_a_byte_order_mark_and_windows_line_endings_as_the_person_saved_them(store: Store, repo: Path):
    """A SKILL.md saved by a Windows editor (a BOM, CRLF): `accept` and an agent's tags update dropped the BOM and
    wrote both fences with LF, leaving the file's line endings mixed; only the edited value may change."""
    folder = repo / ".agents/skills/win-notes"
    folder.mkdir(parents=True)
    original = ("\ufeff---\r\nname: win-notes\r\ndescription: Saved on Windows.\r\nmetadata:\r\n  status: draft\r\n---\r\n\r\n"
                "1. Build.\r\n2. Ship.\r\n").encode("utf-8")
    (folder / "SKILL.md").write_bytes(original)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a skill saved on Windows")
    store.refresh()
    assert "accepted" in store.review("win-notes", accept=True)
    assert (folder / "SKILL.md").read_bytes() == original.replace(b"status: draft", b"status: active")
    store.flush()
    store.write_skill("win-notes", None, "1. Build.\n2. Test.\n3. Ship.", tags=["release"], actor="human")
    text = (folder / "SKILL.md").read_bytes()
    assert text.startswith("\ufeff---\r\n".encode()) and b"\n" not in text.replace(b"\r\n", b""), text
    assert b"tags: release\r\n" in text and text.endswith(b"\r\n1. Build.\r\n2. Test.\r\n3. Ship.\r\n"), text


@pytest.mark.parametrize("text", [
    "---\nname: my-skill\ndescription: x\nmetadata:\n  status: draft\n---\n\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> topic\n",
    "---\nname: my-skill\ndescription: [unclosed\n---\n",  # the YAML does not load
    "no frontmatter at all\n",
])
def test_a_file_whose_status_cannot_be_read_says_invalid_not_active(text):
    """A SKILL.md in a merge conflict (or whose frontmatter does not load) was parsed as status 'active', and review
    took it for an accepted skill: 'already active', with the --sha never checked."""
    skill = parse_text(text)
    assert not skill.valid and skill.status == "invalid"


def test_an_invalid_file_whose_frontmatter_loads_gives_the_status_it_says():
    skill = parse_text("---\nname: my-skill\ndescription: x\nmetadata:\n  status: draft\n  tags: 3\n---\nBody\n")
    assert not skill.valid and skill.status == "draft"
