"""The commands doctor and verify give a person to paste name the repository's files quoted: an upstream's file named
`x$(touch PWNED)` ran `touch PWNED` when the printed fix was pasted, and a name holding a newline split it in two."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import git

HOSTILE = "x$(touch PWNED)"


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True, timeout=120)


def fixes(repo: Path) -> str:
    """Every finding and fix doctor gives, as one text."""
    done = cli(repo, "doctor", "--json")
    return "\n".join(f"{f['message']}\n{f['fix']}" for f in json.loads(done.stdout))


def pasted(shell: str, command: str, repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([shell, "-c", command], cwd=repo, capture_output=True, text=True, timeout=60)


def pwned(tmp_path: Path) -> list[Path]:
    return [p for p in tmp_path.rglob("PWNED*")]


def committed(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "upstream")


def test_doctors_fix_for_a_skill_md_link_copies_the_file_and_runs_no_command_its_folder_name_holds(repo: Path, tmp_path: Path):
    (tmp_path / "outside.md").write_text("---\nname: x\ndescription: d\n---\n\nSteps.\n", encoding="utf-8")
    folder = repo / ".agents/skills" / HOSTILE
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(tmp_path / "outside.md")
    committed(repo)
    (command,) = set(re.findall(r"`(cp --remove-destination [^`]*)`", fixes(repo)))
    done = pasted("sh", command, repo)
    assert pwned(tmp_path) == [] and done.returncode == 0, (command, done.stderr)
    skill = folder / "SKILL.md"
    assert not skill.is_symlink() and skill.read_text(encoding="utf-8").endswith("Steps.\n")


def test_the_git_checkout_verify_gives_for_an_edited_committed_log_restores_it_and_runs_nothing_else(repo: Path, tmp_path: Path):
    assert cli(repo, "log", "add", "we build with make", "-s", "notes").returncode == 0
    (made,) = (repo / ".agents/experience").rglob("notes.*.jsonl")
    log = made.with_name(f"2026-12-03-{HOSTILE}.jsonl")
    made.rename(log)
    committed(repo)
    log.write_text(log.read_text(encoding="utf-8").replace("make", "cmake"), encoding="utf-8")
    said = cli(repo, "verify").stdout + fixes(repo)
    commands = set(re.findall(r"`(git checkout HEAD -- [^`]*)`", said))
    assert commands, said
    for command in commands:
        done = pasted("sh", command, repo)
        assert pwned(tmp_path) == [] and done.returncode == 0, (command, done.stderr)
    assert git(repo, "status", "--porcelain") == ""


def test_the_git_log_doctor_gives_for_a_log_line_that_is_no_record_shows_that_log_whatever_its_name(repo: Path, tmp_path: Path):
    month = repo / ".agents/experience/2026-12"
    month.mkdir(parents=True)
    names = {f"2026-12-04-{HOSTILE}.jsonl": "sh", "2026-12-05-a\ntouch PWNED-2.jsonl": "bash"}
    for name in names:
        (month / name).write_text("garbage\n", encoding="utf-8")
    committed(repo)
    commands = re.findall(r"`(git log -p -- [^`]*)`", fixes(repo))
    assert len(commands) == 2 and not any("\n" in c for c in commands), commands
    for command in commands:
        shell = next(shell for name, shell in names.items() if name[:12] in command)
        done = pasted(shell, command, repo)
        assert pwned(tmp_path) == [] and done.returncode == 0, (command, done.stderr)
        assert "\n+garbage\n" in done.stdout, (command, done.stdout)  # that log's diff (a file of no record: as it is)
