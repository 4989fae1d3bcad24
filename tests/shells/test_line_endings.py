"""A clone checked out with core.autocrlf=true: git must hand back a log's bytes as committed, and where an older
.gitattributes lets it convert them, verify and doctor say that, with the fix, not that records were changed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from repo_memory import layout

from tests.conftest import git, initialised


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True)


def remember(repo: Path, session: str, *texts: str) -> None:
    for text in texts:
        assert cli(repo, "log", "add", text, "-s", session).returncode == 0


def origin(tmp_path: Path, rules: list[str] | None = None) -> Path:
    """A repository with memory committed; `rules`: the .gitattributes it commits instead of init's."""
    repo = initialised(tmp_path)
    if rules is not None:
        (repo / ".gitattributes").write_text("".join(f"{r}\n" for r in rules), encoding="utf-8")
        git(repo, "commit", "-q", "--allow-empty", "-am", "the rules an older init wrote")
    remember(repo, "ops", "deploys need a green main", "staging is read-only on Fridays")
    assert cli(repo, "commit").returncode == 0 or not git(repo, "status", "--porcelain")
    assert not git(repo, "status", "--porcelain", "--", ".agents"), git(repo, "status", "--porcelain")
    return repo


def clone(repo: Path, name: str) -> Path:
    there = repo.parent / name
    git(repo.parent, "-c", "core.autocrlf=true", "clone", "-q", str(repo), str(there))
    for key, value in (("core.autocrlf", "true"), ("user.email", "t@example.com"), ("user.name", "T")):
        git(there, "config", key, value)
    assert cli(there, "init").returncode == 0
    return there


def logs(repo: Path) -> list[Path]:
    return sorted((repo / ".agents/experience").rglob("*.jsonl"))


def test_a_clone_with_autocrlf_gets_the_logs_as_committed_and_two_clones_appends_union_merge(tmp_path: Path):
    """init wrote no eol rule for logs: a clone with core.autocrlf=true checked them out with CRLF, and verify called
    every committed log changed. Now they check out as committed, and a merge of two such clones' appends is clean."""
    repo = origin(tmp_path)
    alice, bob = clone(repo, "alice"), clone(repo, "bob")
    assert all(b"\r\n" not in log.read_bytes() for log in logs(alice)), [log.read_bytes()[:80] for log in logs(alice)]
    assert cli(alice, "verify").returncode == 0, cli(alice, "verify").stdout
    shared = logs(alice)[0].relative_to(alice)
    lines = (alice / shared).read_bytes().count(b"\n")
    for there in (alice, bob):  # two clones append to one log: union merge joins them
        with (there / shared).open("a", encoding="utf-8", newline="") as out:
            out.write(json.dumps({"appended by": there.name}) + "\n")
        git(there, "commit", "-q", "-am", f"{there.name} appends")
    git(bob, "pull", "-q", "--no-rebase", "--no-edit", str(alice), "main")
    merged = (bob / shared).read_bytes()
    assert merged.count(b"\n") == lines + 2 and b"\r" not in merged and b"<<<<<<<" not in merged, merged
    assert b'"appended by": "alice"' in merged and b'"appended by": "bob"' in merged, merged
    assert not git(bob, "status", "--porcelain"), git(bob, "status", "--porcelain")

def test_a_clone_without_the_eol_rule_is_told_its_logs_differ_only_by_line_endings_and_the_fix_given_works(tmp_path: Path):
    """In a clone whose .gitattributes (an older init's) lets git convert logs, verify said "its committed records were
    changed… restore it with `git checkout HEAD -- LOG`", and that checkout made the CRLF again: the finding never went."""
    older = [layout.UNION_LINE, layout.DIFF_LINE, ".agents/skills/*/SKILL.md merge=repo-memory-skill"]
    repo = origin(tmp_path, older)
    there = tmp_path / "there"
    git(tmp_path, "-c", "core.autocrlf=true", "clone", "-q", str(repo), str(there))
    git(there, "config", "core.autocrlf", "true")
    log = logs(there)[0]
    rel = log.relative_to(there).as_posix()
    assert b"\r\n" in log.read_bytes()  # what git does here without the rule
    said = cli(there, "verify").stdout
    assert "records were changed" not in said and "CRLF" in said and "repo-memory init" in said, said
    fix = f"git add {rel} && rm {rel} && git checkout -- {rel}"
    assert fix in said, said
    doctor = json.loads(cli(there, "doctor", "--json").stdout)
    missing = [f for f in doctor if f["path"] == ".gitattributes"]
    assert missing and "eol=lf" in missing[0]["message"] and "repo-memory init" in missing[0]["fix"], doctor
    assert all("records were changed" not in f["message"] for f in doctor), doctor
    # the fix verify gives
    done = cli(there, "init")
    assert done.returncode == 0 and "the rules it lacked" in done.stdout and "eol=lf" in done.stdout, done.stdout
    assert "merge=union" not in done.stdout, done.stdout  # it names what it added, not what was there already
    assert "text eol=lf" in (there / ".gitattributes").read_text(encoding="utf-8")
    again = cli(there, "verify").stdout  # the rule is there now: verify no longer sends the person back to init
    assert fix in again and "repo-memory init" not in again, again
    for each in logs(there):  # every log git converted, as verify names each
        name = each.relative_to(there).as_posix()
        assert subprocess.run(fix.replace(rel, name), shell=True, cwd=there).returncode == 0
        assert b"\r\n" not in each.read_bytes()
    assert cli(there, "verify").returncode == 0, cli(there, "verify").stdout
    assert not [f for f in json.loads(cli(there, "doctor", "--json").stdout) if f["path"] == ".gitattributes"]


def crlf_team(tmp_path: Path) -> Path:
    """A clone of a repository whose team appended `* text=auto eol=crlf` after init's rules."""
    repo = origin(tmp_path)
    with (repo / ".gitattributes").open("a", encoding="utf-8") as out:
        out.write("* text=auto eol=crlf\n")
    git(repo, "commit", "-q", "-am", "chore: crlf everywhere")
    there = tmp_path / "there"
    git(tmp_path, "clone", "-q", str(repo), str(there))
    for key, value in (("user.email", "t@example.com"), ("user.name", "T")):
        git(there, "config", key, value)
    return there


def test_a_later_line_overriding_the_eol_rule_is_named_and_init_puts_the_rules_last(tmp_path: Path):
    """A team appended `* text=auto eol=crlf` after init's rules: git applies the last line that matches, so every clone
    checked logs out with CRLF; verify and doctor blamed a missing rule and sent the person to an init that changed
    nothing, and search called committed records uncommitted. Now the line is named, init puts its rules last (and
    commits that), the git commands verify gives end the finding, and a committed record reads as committed."""
    there = crlf_team(tmp_path)
    assert all(b"\r\n" in log.read_bytes() for log in logs(there))  # what git applies here: the team's line
    found = cli(there, "search", "deploys green")
    assert "deploys need a green main" in found.stdout and "uncommitted" not in found.stdout, found.stdout
    said = cli(there, "verify")
    assert said.returncode == 1 and "line 6 of .gitattributes, `* text=auto eol=crlf`" in said.stdout, said.stdout
    assert "moves repo-memory's rules to the end" in said.stdout, said.stdout
    doctor = [f for f in json.loads(cli(there, "doctor", "--json").stdout) if f["path"] == ".gitattributes"]
    assert doctor and "`* text=auto eol=crlf`" in doctor[0]["message"] and "repo-memory init" in doctor[0]["fix"], doctor
    done = cli(there, "init")
    assert done.returncode == 0 and "moved repo-memory's rules to the end of .gitattributes" in done.stdout, done.stdout
    rules = (there / ".gitattributes").read_text(encoding="utf-8").splitlines()
    assert rules[-len(layout.RULES):] == layout.RULES and rules.count(layout.EOL_LINE) == 1, rules
    assert not git(there, "status", "--porcelain", "--", ".gitattributes")  # committed, for the whole team
    assert git(there, "check-attr", "eol", "--", logs(there)[0].relative_to(there).as_posix()).endswith("eol: lf\n")
    assert not [f for f in json.loads(cli(there, "doctor", "--json").stdout) if f["path"] == ".gitattributes"]
    for each in logs(there):  # the git commands verify gives for each log
        rel = each.relative_to(there).as_posix()
        assert f"git add {rel} && rm {rel} && git checkout -- {rel}" in cli(there, "verify").stdout
        subprocess.run(f"git add {rel} && rm {rel} && git checkout -- {rel}", shell=True, cwd=there, check=True)
    assert cli(there, "verify").returncode == 0, cli(there, "verify").stdout


def test_doctor_fix_puts_the_rules_last_when_a_later_line_overrides_them(tmp_path: Path):
    there = crlf_team(tmp_path)
    done = cli(there, "doctor", "--fix")
    assert "moved repo-memory's rules to the end of .gitattributes" in done.stderr, done.stderr
    assert (there / ".gitattributes").read_text(encoding="utf-8").splitlines()[-len(layout.RULES):] == layout.RULES
    assert not git(there, "status", "--porcelain", "--", ".gitattributes")
