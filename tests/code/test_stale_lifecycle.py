"""A stale memory has a way out: a record is settled by a correction citing it, by feedback that it is outdated or
misled, or by a person's `stale --pin ID`; a move of the cited files is summarised, named, and followed by
`stale --follow-renames`. All through the CLI, on real git repositories with real edits and renames."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.formats import experience
from repo_memory.shells.cli import cli

from repo_memory.guards.shellwords import quoted
from tests.conftest import git

SAVE = "pkg/store.py::Store.save"
CODE = "class Store:\n    def save(self, rows):\n        return list(rows)\n\n    def load(self, key):\n        return key\n"


def cli_run(repo: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(repo), *args])
    return result.exit_code, result.output


def _stale_record(store: Store, repo: Path, meanwhile: Callable[[str], object] | None = None) -> str:
    """A record citing Store.save, then (after `meanwhile(record)`) a commit that changes Store.save: the record is stale."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    record = store.remember("Store.save keeps the rows in order", refs=[SAVE])[0]["id"]
    store.flush("all")
    if meanwhile is not None:
        meanwhile(record)
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows)"), encoding="utf-8")
    git(repo, "commit", "-qam", "save sorts the rows")
    code, out = cli_run(repo, "stale")
    assert code == 1 and record in out
    return record


def test_a_correction_citing_the_stale_record_and_the_new_code_settles_it(store: Store, repo: Path):
    """doctor said "remember a correction that cites the new code"; doing so (citing the old record too) changed
    nothing: `stale` exited 1 and doctor warned about the record for good."""
    record = _stale_record(store, repo)
    code, correction = cli_run(repo, "log", "add", "Store.save now sorts the rows", "-r", SAVE, "-r", record)
    assert code == 0, correction
    code, out = cli_run(repo, "stale")
    assert code == 0, out
    assert f"{record}  " not in out and "1 stale record(s) settled" in out
    listed = json.loads(cli_run(repo, "stale", "--json")[1])
    assert [(i["memory"], i["settled"]) for i in listed] == [(record, f"corrected by {correction.strip()}")]
    doctor = json.loads(cli_run(repo, "doctor", "--json")[1])
    assert not [f for f in doctor if f["level"] == "warning" and record in f["path"] + f["message"]]
    assert [f["level"] for f in doctor if "settled" in f["message"]] == ["info"]


def test_an_agents_note_citing_only_the_stale_record_settles_nothing(store: Store, repo: Path):
    """Any later record naming a stale one in its refs settled it, so an agent's plain `remember(text, refs=[ID])`
    (a checkpoint-like note, no code, no correction) took it out of `stale`'s exit code and doctor's warnings."""
    record = _stale_record(store, repo)
    store.remember("Looked at the save path again, see the earlier note", refs=[record])
    store.flush("all")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{record}  {SAVE}" in out and "settled" not in out
    doctor = json.loads(cli_run(repo, "doctor", "--json")[1])
    assert [f for f in doctor if f["level"] == "warning" and record in f["path"] + f["message"]]


def test_an_agents_record_citing_other_code_or_the_old_code_settles_nothing(store: Store, repo: Path):
    """A record citing the stale one and code that is not its code as it is now corrects nothing: another symbol of
    the same file (unchanged), or code pinned before the change (written against the old code)."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    record = store.remember("Store.save keeps the rows in order", refs=[SAVE])[0]["id"]
    old = store.remember("load is the other half", refs=["pkg/store.py::Store.load", record])[0]["id"]
    store.flush("all")
    changed = CODE.replace("list(rows)", "sorted(rows)").replace("return key", "return str(key)")
    (repo / "pkg/store.py").write_text(changed, encoding="utf-8")
    git(repo, "commit", "-qam", "save sorts the rows, load returns a string")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{record}  {SAVE}" in out and f"{old}  " in out and "settled" not in out
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows)"), encoding="utf-8")
    git(repo, "commit", "-qam", "load as it was")  # load is as `old` pinned it again: only the record is stale
    other = store.remember("Store.load is unchanged", refs=["pkg/store.py::Store.load", record])[0]["id"]
    store.flush("all")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{record}  {SAVE}" in out and other not in out and "settled" not in out


def test_an_agents_correction_citing_the_same_symbol_as_it_is_now_settles_it_while_that_code_holds(store: Store, repo: Path):
    record = _stale_record(store, repo)
    correction = store.remember("Store.save now sorts the rows", refs=[record, SAVE])[0]["id"]
    store.flush("all")
    code, out = cli_run(repo, "stale")
    assert code == 0 and "1 stale record(s) settled" in out, out
    assert json.loads(cli_run(repo, "stale", "--json")[1])[0]["settled"] == f"corrected by {correction}"
    # the code changes again: the correction no longer describes it, so it settles nothing and is stale itself
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows, reverse=True)"), encoding="utf-8")
    git(repo, "commit", "-qam", "save sorts the rows backwards")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{record}  {SAVE}" in out and f"{correction}  {SAVE}" in out


def test_a_correction_of_a_symbol_that_is_gone_cites_its_file_as_it_is_now(store: Store, repo: Path):
    record = _stale_record(store, repo)
    (repo / "pkg/store.py").write_text(CODE.replace("def save", "def persist"), encoding="utf-8")
    git(repo, "commit", "-qam", "save is persist now")
    assert cli_run(repo, "stale")[0] == 1
    correction = store.remember("Store.save became Store.persist", refs=[record, "pkg/store.py::Store.persist"])[0]["id"]
    store.flush("all")
    code, out = cli_run(repo, "stale")
    assert code == 0 and json.loads(cli_run(repo, "stale", "--json")[1])[0]["settled"] == f"corrected by {correction}"


def test_a_persons_note_citing_the_stale_record_settles_it_and_a_forged_one_does_not(store: Store, repo: Path):
    """`repo-memory log add TEXT -r ID` is a person's word (an agent's shell is refused the command, its tools write
    as an agent); a line claiming to be one, appended by a file tool, carries no mark and settles nothing."""
    record = _stale_record(store, repo)
    log = next(p for p in (repo / experience.EXPERIENCE_DIR).rglob("*.jsonl") if record in p.read_text(encoding="utf-8"))
    last = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    forged = experience.seal({"id": f"{last['session']}#{last['seq'] + 1}", "ts": experience.now(), "session": last["session"],
                              "seq": last["seq"] + 1, "kind": "note", "text": "checked it", "refs": [record],
                              "prev": last["sha256"], "source": {"actor": "human", "harness": "generic", "tool": "cli"}})
    with log.open("a", encoding="utf-8") as f:
        f.write(json.dumps(forged, sort_keys=True, separators=(",", ":")) + "\n")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{record}  {SAVE}" in out and "settled" not in out
    log.write_text("".join(log.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    code, note = cli_run(repo, "log", "add", "Checked: the order does not matter to any caller", "-r", record)
    assert code == 0, note
    code, out = cli_run(repo, "stale")
    assert code == 0 and "1 stale record(s) settled" in out, out
    assert json.loads(cli_run(repo, "stale", "--json")[1])[0]["settled"] == f"checked by a person in {note.strip()}"


def test_a_persons_follow_up_written_against_the_old_code_settles_nothing(store: Store, repo: Path):
    record = _stale_record(store, repo, lambda record: cli_run(repo, "log", "add", "and callers rely on it", "-r", record, "-r", SAVE))
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{record}  {SAVE}" in out and "settled" not in out


def test_feedback_outdated_or_misled_settles_a_stale_record_and_helped_does_not(store: Store, repo: Path):
    record = _stale_record(store, repo)
    assert cli_run(repo, "feedback", record, "helped")[0] == 0
    assert cli_run(repo, "stale")[0] == 1, "feedback that it helped is no reason to stop checking it"
    assert cli_run(repo, "feedback", record, "outdated", "--note", "save sorts now")[0] == 0
    code, out = cli_run(repo, "stale")
    assert code == 0 and "1 stale record(s) settled" in out
    assert json.loads(cli_run(repo, "stale", "--json")[1])[0]["settled"].startswith("reported outdated in ")


def test_a_follow_up_written_against_the_same_old_code_does_not_settle_the_record(store: Store, repo: Path):
    """A record citing an earlier one about the same code, both written before the code changed, corrects nothing."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    first = store.remember("Store.save keeps the rows in order", refs=[SAVE])[0]["id"]
    second = store.remember("and it copies them", refs=[SAVE, first])[0]["id"]
    store.flush("all")
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows)"), encoding="utf-8")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{first}  " in out and f"{second}  " in out


def test_a_person_pins_a_stale_record_with_a_committed_note_that_cites_the_code_as_it_is_now(store: Store, repo: Path):
    """`stale --pin <record id>` was refused with a hint to use a skill slug ('…-1')."""
    record = _stale_record(store, repo)
    code, out = cli_run(repo, "stale", "--pin", record)
    assert code == 0, out
    assert f"pinned {SAVE} for {record}" in out and "skill name" not in out
    listed = json.loads(cli_run(repo, "stale", "--json")[1])
    assert [i["settled"].startswith("checked by a person in ") for i in listed] == [True]
    note = listed[0]["settled"].rsplit(" ", 1)[1]
    assert record in git(repo, "log", "-p", "-1", "--format=%s", "--", ".agents/experience")  # committed, as memory is
    # the person's check holds for the code as it was then: when it changes again, the note is what goes stale
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows, reverse=True)"), encoding="utf-8")
    code, out = cli_run(repo, "stale")
    assert code == 1 and f"{note}  {SAVE}" in out and f"{record}  " not in out
    code, out = cli_run(repo, "stale", "--pin", f"{record.split('#')[0]}#99")
    assert code == 1 and "does not exist" in out and "skill name" not in out


def test_doctors_fix_for_a_stale_record_names_the_commands_that_settle_it(store: Store, repo: Path):
    record = _stale_record(store, repo)
    finding = next(f for f in json.loads(cli_run(repo, "doctor", "--json")[1]) if record in f["path"] + f["message"])
    assert f"repo-memory stale --pin {quoted(record)}" in finding["fix"] and f"repo-memory feedback {quoted(record)} outdated" in finding["fix"]
    assert f"-r {quoted(record)}" in finding["fix"]  # a correction that cites it: `repo-memory log add TEXT -r ID -r PATH::SYMBOL`


def _moved(store: Store, repo: Path, files: int = 12) -> None:
    """Files pkg/mod*.py each cited by a record, and by two skills, then `git mv pkg lib` committed."""
    (repo / "pkg").mkdir()
    for i in range(files):
        (repo / f"pkg/mod{i}.py").write_text(f"def func{i}(x):\n    return x + {i}\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the modules")
    for i in range(files):
        store.remember(f"func{i} adds {i}", refs=[f"pkg/mod{i}.py::func{i}"])
    for k in range(2):
        store.write_skill(f"area-{k}", f"Notes on area {k} helpers", "1. read them",
                          anchors=[f"pkg/mod{i}.py::func{i}" for i in range(k, files, 2)], actor="human")
    store.flush("all")
    git(repo, "mv", "pkg", "lib")
    git(repo, "commit", "-qm", "move pkg to lib")


def test_doctor_sums_up_a_directory_move_in_one_warning_with_one_fix(store: Store, repo: Path):
    """60 moved files made doctor print 184 lines: one warning per anchor, the same fix line 60 times."""
    _moved(store, repo)
    out = cli_run(repo, "doctor")[1]
    stale = [line for line in out.splitlines() if "stale:" in line]
    assert len(stale) == 1, out
    assert "24 anchors of 14 memories" in stale[0] and "pkg/ moved to lib/" in stale[0] and "move pkg to lib" in stale[0]
    assert "and 9 more" in stale[0]
    assert out.count("--follow-renames") == 1 and "append-only" not in out


def test_stale_says_where_a_moved_file_went(store: Store, repo: Path):
    _moved(store, repo, files=3)
    code, out = cli_run(repo, "stale")
    assert code == 1
    assert "pkg/mod0.py::func0: its file moved to lib/mod0.py, where its code is unchanged" in out, out
    assert "(moved in " in out and "move pkg to lib)" in out and "the file does not exist" not in out, out
    assert "--follow-renames" in out


def test_pin_of_a_skill_whose_file_moved_names_the_new_path(store: Store, repo: Path):
    _moved(store, repo, files=3)
    code, out = cli_run(repo, "stale", "--pin", "area-0")
    assert code == 1
    assert "pkg/mod0.py::func0 moved to lib/mod0.py" in out and "--follow-renames" in out


def test_follow_renames_re_anchors_skills_and_settles_records_whose_code_moved_unchanged(store: Store, repo: Path):
    _moved(store, repo, files=6)
    # one module also changed in the move: its skill is re-anchored but stays stale, its record is left to a person
    (repo / "lib/mod1.py").write_text("def func1(x):\n    return x + 100\n", encoding="utf-8")
    git(repo, "commit", "-qam", "func1 adds 100")
    code, out = cli_run(repo, "stale", "--follow-renames")
    assert code == 1, out
    skill = (repo / ".agents/skills/area-0/SKILL.md").read_text(encoding="utf-8")
    assert "pkg/" not in skill and "lib/mod0.py::func0" in skill and "lib/mod4.py::func4" in skill
    assert git(repo, "show", "HEAD:.agents/skills/area-0/SKILL.md") == skill  # committed like any skill edit
    listed = json.loads(cli_run(repo, "stale", "--json")[1])
    counted = {(i["memory"], i["anchor"]) for i in listed if not i["settled"]}
    func1 = next(memory for memory, anchor in counted if anchor == "pkg/mod1.py::func1")  # its record: left to a person
    assert counted == {("skill:area-1", "lib/mod1.py::func1"), (func1, "pkg/mod1.py::func1")}, "the code changed: baseline kept"
    assert sum(1 for i in listed if i["settled"]) == 5
    assert cli_run(repo, "stale", "--pin", "area-1")[0] == 1  # the record of func1 still waits for a person
    code, out = cli_run(repo, "stale", "--pin", func1)
    assert code == 0 and f"pinned lib/mod1.py::func1 for {func1}" in out, out


def test_follow_renames_follows_a_file_moved_twice_to_where_it_is_now(store: Store, repo: Path):
    _moved(store, repo, files=2)
    git(repo, "mv", "lib", "src")
    git(repo, "commit", "-qm", "move lib to src")
    code, out = cli_run(repo, "stale", "--follow-renames")
    assert code == 0, out
    assert "src/mod0.py::func0" in (repo / ".agents/skills/area-0/SKILL.md").read_text(encoding="utf-8")


def test_follow_renames_keeps_a_persons_comments_and_layout_of_the_anchors(store: Store, repo: Path):
    """The anchors block became a flow list, and the comments on its lines were lost."""
    from repo_memory.code.anchors import Code

    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    (repo / "main.py").write_text("def main():\n    return 0\n", encoding="utf-8")
    saved, load = Code(repo).resolve(SAVE).hash, Code(repo).resolve("pkg/store.py::Store.load").hash
    texts = {
        "saving": ("---\n# Reviewed by Ana, 2026-01\nname: saving\ndescription: >-\n  How saving works here, folded\n"
                   "  over two lines.\nmetadata:\n  status: active\n  tags: [storage, io]\n  anchors:\n"
                   f"    - {SAVE}   # the entry point\n    - 'main.py::main'  # not moved\n---\nCall Store.save.\n"),
        "pinned": ("---\nname: pinned\ndescription: Saving and loading, pinned by hand.\nmetadata:\n  anchors:\n"
                   f"    - {SAVE}  # saves\n    - \"pkg/store.py::Store.load\"\n  anchor_hashes:  # checked by Ana\n"
                   f"    {SAVE}: {saved}   # as of 1.2\n    'pkg/store.py::Store.load': {load}\n---\n\nBoth.\n"),
    }
    for name, text in texts.items():
        (repo / f".agents/skills/{name}").mkdir(parents=True)
        (repo / f".agents/skills/{name}/SKILL.md").write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "skills by a person")
    assert cli_run(repo, "stale")[0] == 0  # the code as first seen: saving's baseline
    git(repo, "mv", "pkg", "lib")
    git(repo, "commit", "-qm", "move pkg to lib")
    code, out = cli_run(repo, "stale", "--follow-renames")
    assert code == 0, out
    pinned = (repo / ".agents/skills/pinned/SKILL.md").read_text(encoding="utf-8")
    assert pinned == texts["pinned"].replace("pkg/store.py", "lib/store.py")
    saving = (repo / ".agents/skills/saving/SKILL.md").read_text(encoding="utf-8").splitlines(keepends=True)
    added = [line for line in saving if "anchor_hashes" in line]  # it had no hash: the one its code was written against
    assert len(added) == 1 and saved in added[0]
    assert "".join(line for line in saving if line not in added) == texts["saving"].replace("pkg/store.py", "lib/store.py")


WIP = "WIP: a half-written paragraph the person has not reviewed\n"


def test_follow_renames_leaves_a_skill_holding_a_persons_uncommitted_edit_to_them_and_follows_the_rest(store: Store, repo: Path):
    """Its memory commit took the person's unreviewed edit along with the re-anchoring."""
    _moved(store, repo, files=2)
    theirs = repo / ".agents/skills/area-0/SKILL.md"
    with theirs.open("a", encoding="utf-8") as file:
        file.write(WIP)
    before = theirs.read_text(encoding="utf-8")
    code, out = cli_run(repo, "stale", "--follow-renames")
    assert code == 1, out  # area-0 still cites pkg/
    assert theirs.read_text(encoding="utf-8") == before, "the person's file is theirs until they commit it"
    assert "WIP" not in git(repo, "log", "-p", "--format=%s", "--", ".agents/skills")
    said = next(line for line in out.splitlines() if line.startswith("left to you: skill:area-0: "))
    assert "git diff -- .agents/skills/area-0/SKILL.md" in said and "repo-memory stale --follow-renames` again" in said
    assert "--follow-renames` follows them" not in out, "it just did not, for this one"
    assert "lib/mod1.py::func1" in git(repo, "show", "HEAD:.agents/skills/area-1/SKILL.md")  # the other skill: followed
    git(repo, "commit", "-qam", "my edit of area-0")
    code, out = cli_run(repo, "stale", "--follow-renames")
    assert code == 0, out
    assert git(repo, "show", "HEAD:.agents/skills/area-0/SKILL.md") == before.replace("pkg/", "lib/")


def test_pin_of_a_skill_with_a_persons_uncommitted_edit_is_refused_and_commits_nothing(store: Store, repo: Path):
    """`stale --pin NAME` committed the person's edit in progress as "checked against the code"."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    store.write_skill("saving", "How saving works", "Call Store.save.", anchors=[SAVE], actor="human")
    store.flush("all")
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows)"), encoding="utf-8")
    git(repo, "commit", "-qam", "save sorts the rows")
    theirs = repo / ".agents/skills/saving/SKILL.md"
    with theirs.open("a", encoding="utf-8") as file:
        file.write(WIP)
    before, head = theirs.read_text(encoding="utf-8"), git(repo, "rev-parse", "HEAD")
    code, out = cli_run(repo, "stale", "--pin", "saving")
    assert code == 1 and "git diff -- .agents/skills/saving/SKILL.md" in out and "stale --pin saving` again" in out, out
    assert theirs.read_text(encoding="utf-8") == before and git(repo, "rev-parse", "HEAD") == head
    git(repo, "commit", "-qam", "my edit")
    code, out = cli_run(repo, "stale", "--pin", "saving")
    assert code == 0 and f"pinned {SAVE} for skill:saving" in out, out


def test_follow_renames_goes_on_past_a_skill_it_cannot_rewrite_and_names_it(store: Store, repo: Path):
    """A skill folder that is a link (repo-memory writes through none) stopped it halfway: skills after it were not
    re-anchored and no record was settled."""
    shown = repo / "docs/linked"
    shown.mkdir(parents=True)
    (shown / "SKILL.md").write_text("---\nname: linked\ndescription: A skill shown through a link.\nmetadata:\n"
                                    "  anchors: [pkg/mod0.py::func0]\n---\n\nSteps.\n", encoding="utf-8")
    (repo / ".agents/skills/linked").symlink_to(shown)
    store.refresh()
    _moved(store, repo, files=2)
    code, out = cli_run(repo, "stale", "--follow-renames")
    assert "left to you: skill:linked: " in out and "symbolic link" in out, out
    assert "re-anchored skill:area-0" in out and "re-anchored skill:area-1" in out
    assert "settled 2 record(s)" in out
    assert "pkg/mod0.py::func0" in shown.joinpath("SKILL.md").read_text(encoding="utf-8")


def test_follow_renames_follows_a_skill_the_index_had_not_seen_yet(store: Store, repo: Path):
    """A skill a person wrote by hand (or a pull brought) before the move was not followed: the command read the index
    as it was, and only the listing after it looked at the files again."""
    (repo / ".agents/skills/late").mkdir(parents=True)
    (repo / ".agents/skills/late/SKILL.md").write_text("---\nname: late\ndescription: Written by hand.\nmetadata:\n"
                                                        "  anchors: [pkg/mod0.py::func0]\n---\n\nSteps.\n", encoding="utf-8")
    _moved(store, repo, files=1)
    code, out = cli_run(repo, "stale", "--follow-renames")
    assert code == 0 and "re-anchored skill:late" in out, out
    assert "lib/mod0.py::func0" in git(repo, "show", "HEAD:.agents/skills/late/SKILL.md")


def test_stale_says_where_a_file_moved_twice_is_now(store: Store, repo: Path):
    """After pkg -> lib -> src, `stale` said the file moved to lib/mod0.py, which no longer exists."""
    _moved(store, repo, files=2)
    git(repo, "mv", "lib", "src")
    git(repo, "commit", "-qm", "move lib to src")
    code, out = cli_run(repo, "stale")
    assert code == 1
    assert "pkg/mod0.py::func0: its file moved to src/mod0.py, where its code is unchanged" in out, out
    assert "move lib to src)" in out and "the file does not exist" not in out, out


def test_stale_and_doctor_name_the_commit_that_changed_the_cited_definition_not_the_files_last(store: Store, repo: Path):
    """A commit that changed a sibling of the cited definition, after the one that changed it, is not the one to blame."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    record = store.remember("Store.save keeps the rows in order", refs=[SAVE])[0]["id"]
    store.flush("all")
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows)"), encoding="utf-8")
    git(repo, "commit", "-qam", "A: save sorts the rows")
    (repo / "pkg/store.py").write_text(CODE.replace("list(rows)", "sorted(rows)").replace("return key", "return key or 0"), encoding="utf-8")
    git(repo, "commit", "-qam", "B: load only")
    code, out = cli_run(repo, "stale")
    assert code == 1 and record in out and "A: save sorts the rows" in out and "B: load only" not in out, out
    _, said = cli_run(repo, "doctor")
    assert "A: save sorts the rows" in said and "B: load only" not in said, said


def _typo(repo: Path) -> None:
    """A skill and a loop a person wrote with a misspelled anchor (Store.lod), after an unrelated commit to the file."""
    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text(CODE, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    (repo / "pkg/store.py").write_text(CODE + "# unrelated\n", encoding="utf-8")
    git(repo, "commit", "-qam", "an unrelated comment")
    folder = repo / ".agents/skills/typo"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: typo\ndescription: Saving the store\nmetadata:\n  status: active\n"
                                     "  anchors: [pkg/store.py::Store.sve]\n---\nbody\n", encoding="utf-8")
    (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
    (repo / ".agents/loops/fix-save.md").write_text(
        "---\nname: fix-save\ndescription: fix save\nstatus: active\ntrigger: {on: manual}\ngoal: g\nverify:\n"
        "  - {level: 4, run: \"true\", expect: {exit: 0}, timeout: 60}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n"
        "memory: {anchors: [pkg/store.py::Store.sve]}\n---\nn\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "skill and loop")


def test_an_anchor_that_never_resolved_is_reported_as_such_with_the_nearest_definitions_and_a_fix_that_works(repo: Path):
    _typo(repo)
    code, out = cli_run(repo, "stale")
    assert code == 1 and "Did you mean 'Store.save'?" in out and "unrelated comment" not in out, out
    assert "never defined" in out, out
    _, said = cli_run(repo, "doctor")
    assert "unrelated comment" not in said and "Did you mean 'Store.save'?" in said, said
    assert "--pin typo" not in said and "metadata.anchors" in said and "memory.anchors" in said, said
    code, out = cli_run(repo, "stale", "--pin", "typo")
    assert code == 1 and "Did you mean 'Store.save'?" in out and ".agents/skills/typo/SKILL.md" in out, out
    code, out = cli_run(repo, "stale", "--pin", "loop:fix-save")
    assert code == 1 and "Did you mean 'Store.save'?" in out and "memory.anchors" in out, out


def test_pin_of_a_loop_that_does_not_exist_is_an_error_with_the_names_it_may_mean(repo: Path):
    _typo(repo)
    code, out = cli_run(repo, "stale", "--pin", "loop:fix-sav")
    assert code == 1 and "pinned nothing" not in out and "fix-save" in out, out


def test_loop_lint_reports_an_anchor_that_names_no_definition(repo: Path):
    _typo(repo)
    code, out = cli_run(repo, "loop", "lint")
    assert code == 1 and ".agents/loops/fix-save.md:" in out and "Did you mean 'Store.save'?" in out and "1 problem(s)" in out, out
