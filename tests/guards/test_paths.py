"""A corpus of traversal and look-alike inputs against every name-bearing tool argument: all refused, nothing written."""

from __future__ import annotations

import os
import time
import unicodedata
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from repo_memory.errors import UnsafePathError
from repo_memory.guards import paths
from repo_memory.shells import mcp as server
from repo_memory.core.store import Store

from tests.conftest import write_skill_file

HOSTILE = [
    "..", "../..", "../../etc/passwd", "..\\..\\windows", "/etc/passwd", "/tmp/x", "~", "~/x", "~root",
    "%2e%2e", "%2e%2e%2fetc", "..%2f..%2f", "%252e%252e", "．．", "．．/．．", "\u2024\u2024", "a/../../b",
    "x\x00y", "\x00", "nul", "NUL", "con", "CON", "prn", "aux", "com1", "lpt9", "con.txt", ".git", ".GIT", ".Git/config",
    "git~1", "GIT~1", ".g\u200bit", "\u200b.git", ".git\u200b", ".git.", ".git ", "x/.git/hooks", "a" * 65, "a" * 300,
    "UPPER", "with space", "tab\there", "new\nline", "semi;colon", "$(touch pwned)", "`touch pwned`", "-rf", "--help",
]
CORPUS = HOSTILE + [f"{h}/SKILL.md" for h in HOSTILE[:10]]
LEGAL_SESSION_IDS = {"a" * 65, "UPPER"}  # session ids may be up to 128 characters and mixed case (harness ids are)


def snapshot(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if ".git" not in p.relative_to(root).parts[:1]}


def calls(value: str) -> list[tuple[str, dict[str, Any]]]:
    if value in LEGAL_SESSION_IDS:
        return [("skill_write", {"name": value, "description": "d", "body": "b"}), ("loop_start", {"name": value}),
                ("history", {"ref": f"loop:{value}"}), ("read", {"ref": f"existing/{value}"})]
    return [
        ("skill_write", {"name": value, "description": "d", "body": "b"}),
        ("skill_write", {"name": "fine-name", "description": "d", "body": "b", "related": [value]}),
        ("read", {"ref": f"existing/{value}"}),
        ("read", {"ref": f"{value}#1"}),
        ("remember", {"text": "t", "session": value}),
        ("checkpoint", {"summary": "s", "covers": [f"{value}#1"], "session": value}),
        ("loop_start", {"name": value}),
        ("loop_step", {"run": value, "report": "r"}),
        ("history", {"ref": f"loop:{value}"}),
        ("read", {"ref": f"{value}", "as_of": "HEAD"}),
    ]


def test_every_hostile_name_is_an_error_result_and_nothing_is_written(store: Store, repo: Path, tmp_path: Path):
    write_skill_file(repo, "existing", "An existing skill.")
    store.refresh()
    outside = tmp_path / "outside-canary"
    outside.write_text("untouched", encoding="utf-8")
    before_repo, before_tmp = snapshot(repo), sorted(os.listdir(tmp_path))
    outcomes: list[tuple[str, str, bool]] = []
    bare: list[tuple[str, str]] = []

    async def run_all() -> None:
        async with Client(server.build(store)) as client:
            for value in CORPUS:
                for tool, args in calls(value):
                    result = await client.call_tool(tool, args)
                    outcomes.append((tool, value, result.is_error))
                    text = " ".join(getattr(c, "text", "") for c in result.content)
                    if result.is_error and text.strip() == f"Error executing tool {tool}":
                        bare.append((tool, value))  # a crash, not an answer that says what to do

    anyio.run(run_all)
    store.flush()
    accepted = [(tool, value) for tool, value, is_error in outcomes if not is_error]
    assert len(outcomes) >= 560 and accepted == [], accepted[:10]
    assert bare == [], bare[:10]
    assert snapshot(repo) == before_repo
    assert sorted(os.listdir(tmp_path)) == before_tmp and outside.read_text(encoding="utf-8") == "untouched"
    assert not Path("pwned").exists()


@pytest.mark.parametrize("uri", [f"skill://{v}" for v in ["..", "%2e%2e", "con", ".git", "a" * 65]] + ["loop://..", "loop://CON"])
def test_hostile_resource_uris_are_errors(store: Store, uri: str):
    async def read() -> Exception | None:
        async with Client(server.build(store)) as client:
            try:
                await client.read_resource(uri)
            except Exception as exc:  # noqa: BLE001 - the client raises the server's error; any error is the expected outcome
                return exc
        return None

    assert anyio.run(read) is not None


def test_hard_links_and_last_step_symlinks_are_refused_and_canaries_stay_unchanged(store: Store, repo: Path, tmp_path: Path):
    """A file in the memory tree that shares its inode with a file outside (a hard link) or is a link itself would let
    writes land outside the repository and reads leak what is there; every path refuses it, and nothing outside changes."""
    canary = tmp_path / "canary"
    canary.write_text("canary-4f1c outside the repository\n", encoding="utf-8")
    linked = write_skill_file(repo, "linked", "A skill whose file is a hard link.")
    linked.unlink()
    os.link(canary, linked)
    log = repo / ".agents/experience" / time.strftime("%Y-%m", time.gmtime()) / "hardlinked-session.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    os.link(canary, log)
    symlinked = write_skill_file(repo, "symlinked", "A skill whose file is a symbolic link.")
    symlinked.unlink()
    symlinked.symlink_to(canary)
    store.refresh()

    async def agent() -> list[tuple[str, bool, str]]:
        async with Client(server.build(store)) as client:
            out = []
            for tool, args in (
                ("read", {"ref": "linked"}),
                ("skill_write", {"name": "linked", "description": "Overwritten.", "body": "pwned"}),
                ("remember", {"text": "pwned", "session": "hardlinked-session"}),
                ("read", {"ref": "symlinked"}),
                ("skill_write", {"name": "symlinked", "description": "Overwritten.", "body": "pwned"}),
            ):
                result = await client.call_tool(tool, args)
                out.append((tool, result.is_error, result.content[0].text))  # type: ignore[union-attr]
            return out

    results = anyio.run(agent)
    assert all(is_error for _, is_error, _ in results), results
    assert all("canary-4f1c" not in text for _, _, text in results), results  # nothing read through the links
    assert any("hard-linked" in text for _, _, text in results) and any("symbolic link" in text for _, _, text in results)
    assert canary.read_text(encoding="utf-8") == "canary-4f1c outside the repository\n"
    assert os.stat(canary).st_nlink == 3  # still linked: we refuse, we do not silently break a person's links
    problems = {row["name"]: row["problems"] for row in store.skills()}
    assert "hard-linked" in problems["linked"]
    assert any("hard-linked" in what for _, what in store.verify())


@pytest.mark.parametrize("typed, suggested", [
    ("café-checklist", "cafe-checklist"),
    (unicodedata.normalize("NFD", "café-checklist"), "cafe-checklist"),  # as macOS hands a typed name over: the same
    ("übersetzung-prüfen", "ubersetzung-prufen"),
    ("straße-prüfen", "strasse-prufen"),  # ß has no decomposition; its case folding is ss
    ("Smørrebrød Notes", "smorrebrod-notes"),  # ø has none either: the few Latin letters without one are spelt out
    ("ﬁnal-check", "final-check"),
])
def test_a_refused_latin_name_is_shown_as_typed_with_the_ascii_rule_and_a_transliteration(typed: str, suggested: str):
    """A name with letters outside ASCII was shown as escapes ('caf\\xe9-checklist'), the rule said "only lowercase
    letters" (ü is one), and the suggestion dropped letters ('bersetzung-pr-fen'); now the name is shown as typed, the
    rule says ASCII, and the suggestion spells each letter without its accent."""
    with pytest.raises(UnsafePathError) as refused:
        paths.check_name(typed, "skill name")
    said = str(refused.value)
    assert f"'{typed}'" in said and "\\x" not in said and "\\u" not in said, said
    assert "ASCII lowercase letters a-z, digits 0-9" in said, said
    assert said.endswith(f"Try '{suggested}'."), said
    assert paths.check_name(suggested) == suggested


@pytest.mark.parametrize("typed", ["发布流程", "发布-checklist", "проверка-релиза", "リリース手順"])
def test_a_name_in_a_script_with_no_latin_spelling_gets_no_mangled_fragment_but_says_how_to_name_it(typed: str):
    """'发布-checklist' was offered 'checklist': a fragment that drops the words that mattered. A script with no Latin
    spelling gets no suggestion, and the message says to name it in ASCII while the text inside may be any language."""
    with pytest.raises(UnsafePathError) as refused:
        paths.check_name(typed, "skill name")
    said = str(refused.value)
    assert f"'{typed}'" in said and "Try '" not in said, said
    assert "ASCII" in said and "any language" in said, said


@pytest.mark.parametrize("typed, escaped", [("abc\u202edef", "abc\\u202edef"), ("tab\there", "tab\\there"),
                                            ("zero\u200bwidth", "zero\\u200bwidth")])
def test_a_refused_name_escapes_what_a_terminal_would_not_show_as_itself(typed: str, escaped: str):
    """Shown as typed, but a control, bidi or zero-width character would reorder or hide the name in the message."""
    with pytest.raises(UnsafePathError) as refused:
        paths.check_name(typed, "skill name")
    assert f"'{escaped}'" in str(refused.value) and typed not in str(refused.value), str(refused.value)


def test_a_name_with_a_trailing_newline_is_refused_by_the_name_rule_itself():
    """The slug pattern ended in `$`, which also matches before a final newline: 'release\\n' passed as a name."""
    with pytest.raises(UnsafePathError) as refused:
        paths.check_name("release\n", "skill name")
    assert "'release\\n'" in str(refused.value) and "Try 'release'" in str(refused.value)
