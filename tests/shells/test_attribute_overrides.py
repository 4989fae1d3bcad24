"""A line that overrides repo-memory's .gitattributes rules is found by what git applies, not by its text: through a
macro (a team's own `[attr]` line, git's `binary`), a negation or `text=auto`; in the rules' file (init moves the
rules past it) or in a file that outranks it (.git/info/attributes, a .gitattributes in a folder: it must go)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory import layout

from tests.conftest import git, initialised

LOG = ".agents/experience/2000-01/2000-01-01-000000.jsonl"


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True)


def found(repo: Path) -> list[dict[str, str]]:
    return [f for f in json.loads(cli(repo, "doctor", "--json").stdout) if "rules" in f["message"]]


def team(tmp_path: Path, *lines: str) -> Path:
    """A repository set up by init whose team then committed `lines` after its rules."""
    repo = initialised(tmp_path)
    with (repo / ".gitattributes").open("a", encoding="utf-8") as out:
        out.write("".join(f"{line}\n" for line in lines))
    git(repo, "commit", "-q", "-am", "team: our own attributes")
    return repo


@pytest.mark.parametrize("lines, named, change", [
    (["[attr]windows text eol=crlf", "* windows"], "* windows", "eol=crlf for experience logs"),
    (["*.jsonl binary"], "*.jsonl binary", "-diff for experience logs"),
    (["* !eol -merge"], "* !eol -merge", "!eol for experience logs"),
    (["* text=auto"], "* text=auto", "text=auto for experience logs"),
    (["[attr]plain -text", "* plain", "# a comment", "*.md -merge"], "*.md -merge", "-merge for skills"),
])
def test_an_override_written_any_way_git_reads_it_is_named_and_doctor_fix_puts_the_rules_last(
        tmp_path: Path, lines: list[str], named: str, change: str):
    """`[attr]windows text eol=crlf` then `* windows` made logs CRLF: doctor said no line of .gitattributes did it,
    .git/info/attributes or a folder's .gitattributes did (false), and `doctor --fix` changed nothing. Now the line
    git applies is named, whichever way it says it, and --fix moves the rules past it."""
    repo = team(tmp_path, *lines)
    at = (repo / ".gitattributes").read_text(encoding="utf-8").splitlines().index(named) + 1
    said = " | ".join(f"{f['message']} {f['fix']}" for f in found(repo))
    assert f"line {at} of .gitattributes, `{named}`, comes after repo-memory's rules" in said, said
    assert change in said and "repo-memory init" in said and "no line after" not in said, said
    done = cli(repo, "doctor", "--fix")
    assert "moved repo-memory's rules to the end of .gitattributes" in done.stderr, done.stderr
    assert (repo / ".gitattributes").read_text(encoding="utf-8").splitlines()[-len(layout.RULES):] == layout.RULES
    assert git(repo, "check-attr", "eol", "diff", "merge", "--", LOG).splitlines() == [
        f"{LOG}: eol: lf", f"{LOG}: diff: repo-memory", f"{LOG}: merge: union"]
    assert not found(repo) and not git(repo, "status", "--porcelain", "--", ".gitattributes")


def test_a_line_in_a_file_that_outranks_the_rules_is_named_with_its_own_fix_and_the_rules_stay_put(tmp_path: Path):
    """.git/info/attributes and a .gitattributes in a folder outrank the top-level file whatever its order: doctor named
    no line of either, and init could not help. Now it names each line and says to take it out."""
    repo = initialised(tmp_path)
    (repo / ".git/info/attributes").write_text("[attr]windows text eol=crlf\n*.jsonl windows\n", encoding="utf-8")
    (repo / ".agents/skills/.gitattributes").write_text("# ours\n*.md merge=text\n", encoding="utf-8")
    before = (repo / ".gitattributes").read_text(encoding="utf-8")
    said = {f["path"]: f for f in found(repo)}
    info, skills = said[".git/info/attributes"], said[".agents/skills/.gitattributes"]
    assert "line 2 of .git/info/attributes, `*.jsonl windows`, overrides repo-memory's rules" in info["message"], info
    assert "eol=crlf for experience logs" in info["message"] and "git reads .git/info/attributes" in info["message"], info
    assert "ake that line out of .git/info/attributes" in info["fix"] and "nothing to commit" in info["fix"], info
    assert "line 2 of .agents/skills/.gitattributes, `*.md merge=text`" in skills["message"], skills
    assert "ake that line out of .agents/skills/.gitattributes" in skills["fix"] and "commit" in skills["fix"], skills
    assert "moved" not in cli(repo, "doctor", "--fix").stderr
    assert (repo / ".gitattributes").read_text(encoding="utf-8") == before


def test_a_global_attributes_file_cannot_override_the_rules_but_its_macro_used_after_them_does(tmp_path: Path):
    """core.attributesFile ranks below every .gitattributes: its `* eol=crlf` changes nothing (no finding). A macro it
    defines, used by a line after the rules, does: that line is named and moved past."""
    repo = initialised(tmp_path)
    mine = tmp_path / "attributes"
    mine.write_text("[attr]windows text eol=crlf\n* eol=crlf\n", encoding="utf-8")
    git(repo, "config", "core.attributesFile", str(mine))
    assert not found(repo)
    with (repo / ".gitattributes").open("a", encoding="utf-8") as out:
        out.write("*.jsonl windows\n")
    git(repo, "commit", "-q", "-am", "team: our own attributes")
    said = found(repo)
    assert said and "`*.jsonl windows`, comes after repo-memory's rules" in said[0]["message"], said
    assert "moved repo-memory's rules" in cli(repo, "doctor", "--fix").stderr
    assert git(repo, "check-attr", "eol", "--", LOG) == f"{LOG}: eol: lf\n"
