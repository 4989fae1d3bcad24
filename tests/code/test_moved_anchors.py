"""An anchor into a file git moved is judged in the file it moved to: the code unchanged there, changed, or a symbol
that file does not define (renamed in the move, or later), with the nearest definitions. It was only ever "the file
does not exist (moved to ...)", before and after `stale --follow-renames`, and recall gave an agent "the file does not
exist" for code still there. And the note `--follow-renames` writes settles a record only while the code it cites is
as it cites it, labelled as repo-memory's. Through the CLI and a real Store, on real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

from repo_memory.guards.shellwords import quoted
from tests.conftest import git

TEXT = ("def slugify(v):\n    return v.lower()\n\n\ndef capfirst(x):\n    return x[:1].upper() + x[1:]\n\n\n"
        "def shorten(s):\n    return s[:10]\n")


def cli_run(repo: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(repo), *args])
    return result.exit_code, result.output


def _line(out: str, memory: str) -> str:
    said = [line for line in out.splitlines() if line.startswith(f"{memory}  ")]
    assert len(said) == 1, out
    return said[0]


def _reasons(repo: Path, query: str) -> dict[str, str]:
    """Recall's stale_reason of each hit, as an agent gets it (a Store of its own: another process)."""
    s = Store(Config.load(repo))
    try:
        return {h.id: h.stale_reason for h in s.recall(query, limit=20).hits}
    finally:
        s.close()


def _moved(store: Store, repo: Path, skill: bool = False) -> tuple[str, str, str]:
    """Records citing slugify, capfirst and shorten in pkg/text.py (and, with `skill`, skill 'shortening' citing
    shorten and loop 'caps' citing capfirst); then pkg moved to src/pkg in one commit that also renames slugify to
    to_slugify and changes shorten: capfirst alone moved unchanged."""
    (repo / "pkg").mkdir()
    (repo / "pkg/text.py").write_text(TEXT, encoding="utf-8")
    if skill:
        (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
        (repo / ".agents/loops/caps.md").write_text(
            "---\nname: caps\ndescription: caps\nstatus: active\ntrigger: {on: manual}\ngoal: g\nverify:\n  - {level: 4, "
            "run: \"true\", expect: {exit: 0}, timeout: 60}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n"
            "memory: {anchors: [pkg/text.py::capfirst]}\n---\nn\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "text helpers")
    if skill:
        store.write_skill("shortening", "How text is shortened.", "Call shorten.", anchors=["pkg/text.py::shorten"],
                          actor="human")
    ids = [store.remember(f"{name} helps with text", refs=[f"pkg/text.py::{name}"])[0]["id"]
           for name in ("slugify", "capfirst", "shorten")]
    store.flush("all")
    (repo / "src").mkdir()
    git(repo, "mv", "pkg", "src/pkg")
    moved = TEXT.replace("def slugify", "def to_slugify").replace("s[:10]", "s[:12]")
    (repo / "src/pkg/text.py").write_text(moved, encoding="utf-8")
    git(repo, "commit", "-qam", "move pkg to src, rename slugify")
    return ids[0], ids[1], ids[2]


def test_a_symbol_renamed_as_its_file_moved_is_not_found_in_the_moved_file_with_the_nearest_names(store: Store, repo: Path):
    """The nearest names are those spelled most like it, as in a file that did not move (`make_slug` is not one)."""
    slugify, capfirst, shorten = _moved(store, repo)
    for follow in ((), ("--follow-renames",)):  # after --follow-renames as before: it cannot follow it
        code, out = cli_run(repo, "stale", *follow)
        assert code == 1, out
        said = _line(out, slugify)
        assert "symbol not found" in said and "src/pkg/text.py" in said and "'to_slugify'" in said, said
        assert "the file does not exist" not in said, said
    assert "src/pkg/text.py has no definition named slugify" in out and "--follow-renames` follows" not in out
    doctor = json.loads(cli_run(repo, "doctor", "--json")[1])
    finding = next(f for f in doctor if slugify in f["path"] + f["message"])
    assert "to_slugify" in finding["message"] and "--follow-renames" not in finding["fix"], finding
    reason = _reasons(repo, "slugify helps with text")[slugify]
    assert "symbol not found" in reason and "to_slugify" in reason and "does not exist" not in reason, reason


def test_recall_says_code_moved_unchanged_or_changed_at_its_new_path(store: Store, repo: Path):
    slugify, capfirst, shorten = _moved(store, repo)
    reasons = _reasons(repo, "helps with text")
    assert "does not exist" not in reasons[capfirst], reasons[capfirst]
    assert "moved to src/pkg/text.py" in reasons[capfirst] and "unchanged" in reasons[capfirst], reasons[capfirst]
    assert "repo-memory stale --follow-renames" in reasons[capfirst], reasons[capfirst]
    assert "moved to src/pkg/text.py" in reasons[shorten] and "the code changed since" in reasons[shorten], reasons[shorten]
    assert "--follow-renames" not in reasons[shorten], "it would leave this one to a person"
    code, out = cli_run(repo, "stale")
    assert "the code changed since" in _line(out, shorten) and "unchanged" in _line(out, capfirst), out


def test_the_note_follow_renames_writes_stops_settling_the_record_when_the_code_changes_again(store: Store, repo: Path):
    slugify, capfirst, shorten = _moved(store, repo)
    code, out = cli_run(repo, "stale", "--follow-renames")
    listed = {i["memory"]: i for i in json.loads(cli_run(repo, "stale", "--json")[1])}
    settled = listed[capfirst]["settled"]
    note = settled.rsplit(" ", 1)[1]
    assert settled and "by a person" not in settled, settled
    s = Store(Config.load(repo))
    try:
        item = s.read(note)
        recorded = item.records[0].recorded or item.recorded  # said once on the item when all its records share it
    finally:
        s.close()
    assert "stale --follow-renames" in recorded and "recorded by a person" not in recorded, recorded
    (repo / "src/pkg/text.py").write_text((repo / "src/pkg/text.py").read_text(encoding="utf-8")
                                          .replace("def capfirst", "def cap_first"), encoding="utf-8")
    git(repo, "commit", "-qam", "rename capfirst")
    code, out = cli_run(repo, "stale")
    assert code == 1 and "'cap_first'" in _line(out, capfirst), out
    listed = {i["memory"]: i for i in json.loads(cli_run(repo, "stale", "--json")[1])}
    assert listed[capfirst]["settled"] == "", listed[capfirst]
    doctor = json.loads(cli_run(repo, "doctor", "--json")[1])
    assert [f for f in doctor if f["level"] == "warning" and capfirst in f["path"] + f["message"]], doctor


def test_a_persons_pin_still_settles_the_record_after_the_code_changes_again(store: Store, repo: Path):
    """What a person checked stays checked (the note is what goes stale): only the machine's note is bound to the code."""
    slugify, capfirst, shorten = _moved(store, repo)
    code, out = cli_run(repo, "stale", "--pin", capfirst)
    assert code == 1 and "pinned src/pkg/text.py::capfirst" in out, out
    (repo / "src/pkg/text.py").write_text((repo / "src/pkg/text.py").read_text(encoding="utf-8")
                                          .replace("def capfirst", "def cap_first"), encoding="utf-8")
    git(repo, "commit", "-qam", "rename capfirst")
    listed = {i["memory"]: i for i in json.loads(cli_run(repo, "stale", "--json")[1])}
    assert listed[capfirst]["settled"].startswith("checked by a person in "), listed[capfirst]


def _settled(repo: Path) -> dict[str, str]:
    return {i["memory"]: i["settled"] for i in json.loads(cli_run(repo, "stale", "--json")[1])}


def test_a_record_whose_code_moved_and_changed_is_told_to_be_checked_and_pinned_not_to_follow_renames(store: Store, repo: Path):
    """--follow-renames leaves such a record to a person, so neither `stale` nor doctor sends it there; a skill citing
    the same code is still followed (re-anchored), and the record whose code moved unchanged still is. A loop it leaves
    too: its anchors are edited by hand."""
    slugify, capfirst, shorten = _moved(store, repo, skill=True)
    code, out = cli_run(repo, "stale")
    lines = out.splitlines()
    fix = lines[lines.index(_line(out, "loop:caps")) + 1]
    assert fix.startswith("  fix: ") and "memory.anchors in .agents/loops/caps.md" in fix and "--follow-renames" not in fix
    lines = out.splitlines()
    fix = lines[lines.index(_line(out, shorten)) + 1]
    assert fix.startswith("  fix: ") and f"repo-memory stale --pin {quoted(shorten)}" in fix and "--follow-renames" not in fix, out
    assert not lines[lines.index(_line(out, capfirst)) + 1].startswith("  fix: "), out
    assert not lines[lines.index(_line(out, "skill:shortening")) + 1].startswith("  fix: "), out
    assert "(2 of them cite files git moved: `repo-memory stale --follow-renames` follows them)" in out, out
    doctor = json.loads(cli_run(repo, "doctor", "--json")[1])
    finding = next(f for f in doctor if f["level"] == "warning" and shorten in f["path"] + f["message"])
    assert f"repo-memory stale --pin {quoted(shorten)}" in finding["fix"] and "--follow-renames" not in finding["fix"], finding
    assert capfirst not in finding["message"] and "skill:shortening" not in finding["message"], finding
    loop = next(f for f in doctor if f["level"] == "warning" and "loop:caps" in f["path"] + f["message"])
    assert "memory.anchors" in loop["fix"] and "--follow-renames" not in loop["fix"], loop
    moved = next(f for f in doctor if f["level"] == "warning" and capfirst in f["path"] + f["message"])
    assert "skill:shortening" in moved["message"] and "--follow-renames" in moved["fix"], moved
    cli_run(repo, "stale", "--follow-renames")
    assert _settled(repo)[capfirst] and not _settled(repo)[shorten], "as the advice says: the one it follows is settled"


def test_an_agents_correction_citing_the_renamed_symbol_in_the_moved_file_settles_the_record(store: Store, repo: Path):
    """As a correction citing the renamed symbol in a file that did not move does; one citing other code of the moved
    file, for a record whose own symbol is defined there, settles nothing."""
    slugify, capfirst, shorten = _moved(store, repo)
    other = store.remember("shortening is capfirst now", refs=[shorten, "src/pkg/text.py::capfirst"])[0]["id"]
    correction = store.remember("it is to_slugify now", refs=[slugify, "src/pkg/text.py::to_slugify"])[0]["id"]
    store.flush("all")
    settled = _settled(repo)
    assert settled[slugify] == f"corrected by {correction}", settled
    assert settled[shorten] == "", (other, settled)
    fixed = store.remember("shorten cuts at 12 now", refs=[shorten, "src/pkg/text.py::shorten"])[0]["id"]
    store.flush("all")
    assert _settled(repo)[shorten] == f"corrected by {fixed}"
