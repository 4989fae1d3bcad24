"""A script's executable bit is part of a skill: Claude Code's copy keeps it, an agent's `chmod` of an accepted skill's
file is a change to review (its review sha counts the bit), and a sha printed before the bit counted still names the
skill it named (core/review_sha.py, core/mirror.py)."""

from __future__ import annotations

import hashlib
import json
import stat
import subprocess
from pathlib import Path

from tests.conftest import git, write_skill_file
from tests.shells.test_pretool import EXE, shell_call
from tests.shells.test_skill_links import cli, shown


def deploy_with_scripts(repo: Path, status: str = "active") -> Path:
    """Skill deploy (`status`) with an executable scripts/deploy.sh and a plain scripts/cleanup.sh, committed."""
    skill = write_skill_file(repo, "deploy", "How we deploy.", "1. run scripts/deploy.sh",
                             extra=f"metadata:\n  status: {status}\n  origin: human\n")
    (skill.parent / "scripts").mkdir()
    (skill.parent / "scripts/deploy.sh").write_text("#!/bin/sh\necho deploy\n", encoding="utf-8")
    (skill.parent / "scripts/deploy.sh").chmod(0o755)
    (skill.parent / "scripts/cleanup.sh").write_text("echo cleanup\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "deploy skill")
    return skill.parent


def executable(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IXUSR)


def sha_before_modes_counted(folder: Path) -> str:
    """The review sha as the release before this one printed it: each file's path and blob id, its mode not counted."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        blob = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout.strip()
        digest.update(b"blob\0" + path.relative_to(folder).as_posix().encode() + b"\0%d\0" % len(blob) + blob.encode())
    return digest.hexdigest()


def test_claude_codes_copy_of_a_skill_keeps_its_scripts_executable_bit(repo: Path):
    """The copy in .claude/skills was written with the default mode: `scripts/deploy.sh staging`, as SKILL.md says to
    run it, failed there with 'Permission denied'."""
    deploy_with_scripts(repo)
    done = subprocess.run([EXE, "sync"], capture_output=True, text=True, cwd=repo, timeout=60)
    assert done.returncode == 0 and "mirrored deploy" in done.stdout, done.stdout + done.stderr
    copy = repo / ".claude/skills/deploy"
    assert executable(copy / "scripts/deploy.sh") and not executable(copy / "scripts/cleanup.sh")
    assert subprocess.run(["./scripts/deploy.sh"], cwd=copy, capture_output=True, text=True).stdout == "deploy\n"


def test_a_copy_an_older_release_wrote_without_the_bit_is_made_again_not_kept_as_a_persons_edit(repo: Path):
    folder = deploy_with_scripts(repo)
    assert subprocess.run([EXE, "sync"], capture_output=True, text=True, cwd=repo, timeout=60).returncode == 0
    copy = repo / ".claude/skills/deploy"
    (copy / "scripts/deploy.sh").chmod(0o644)  # as the release before wrote it, its marker's digest counting no mode
    marker = json.loads((copy / ".repo-memory-generated").read_text(encoding="utf-8"))
    digest = hashlib.sha256()
    for path in sorted(p for p in copy.rglob("*") if p.is_file() and p.name != ".repo-memory-generated"):
        digest.update(path.relative_to(copy).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    (copy / ".repo-memory-generated").write_text(json.dumps({**marker, "sha256": digest.hexdigest()}), encoding="utf-8")
    done = subprocess.run([EXE, "sync"], capture_output=True, text=True, cwd=repo, timeout=60)
    assert done.returncode == 0 and "edit" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert executable(copy / "scripts/deploy.sh") and executable(folder / "scripts/deploy.sh")


def test_an_agents_chmod_of_an_accepted_skills_script_makes_it_a_draft_with_another_review_sha(repo: Path):
    """The review sha and the hooks' check counted paths and content only: `chmod +x` of a script a person accepted
    as plain text left the skill active, the mode change uncommitted as if a person's."""
    folder = deploy_with_scripts(repo)
    before = shown(repo)["review_sha"]
    answer = shell_call(repo, "chmod +x .agents/skills/deploy/scripts/cleanup.sh")
    assert "skill:deploy" in json.dumps(answer) and "draft" in json.dumps(answer), answer
    assert "status: draft" in (folder / "SKILL.md").read_text(encoding="utf-8")
    assert shown(repo)["review_sha"] != before
    assert not git(repo, "status", "--porcelain", "--", ".agents/skills"), "the mode change was left uncommitted"
    assert git(repo, "ls-tree", "HEAD", ".agents/skills/deploy/scripts/cleanup.sh").startswith("100755")


def test_a_skill_without_executable_files_keeps_the_review_sha_it_had(repo: Path):
    folder = deploy_with_scripts(repo)
    (folder / "scripts/deploy.sh").chmod(0o644)
    assert shown(repo)["review_sha"] == sha_before_modes_counted(folder)


def test_a_sha_shown_before_the_upgrade_still_accepts_the_draft_it_named(repo: Path):
    """A person reviewed the draft (its script executable) under the release before, whose sha counted no mode: after
    the upgrade their `accept --sha` goes ahead, and names the accepted version again; a content change is refused."""
    folder = deploy_with_scripts(repo, status="draft")
    old = sha_before_modes_counted(folder)
    assert shown(repo)["review_sha"] != old
    (folder / "scripts/cleanup.sh").write_text("echo cleanup all\n", encoding="utf-8")
    refused = cli(repo, "accept", "deploy", "--sha", old[:12])
    assert refused.returncode != 0 and "changed since" in refused.stderr, refused.stderr
    (folder / "scripts/cleanup.sh").write_text("echo cleanup\n", encoding="utf-8")
    done = cli(repo, "accept", "deploy", "--sha", old[:12])
    assert done.returncode == 0, done.stderr
    assert "status: active" in (folder / "SKILL.md").read_text(encoding="utf-8")
    again = cli(repo, "accept", "deploy", "--sha", old[:12])  # the version accepted, named again: nothing to do
    assert again.returncode == 0 and "already active" in again.stdout + again.stderr, again.stdout + again.stderr


def test_where_git_ignores_the_execute_bit_on_disk_a_skill_keeps_the_review_sha_every_clone_gives_it(repo: Path, tmp_path: Path):
    """With core.fileMode false (a clone on a FAT or NTFS mount, where every file shows as executable or none does) git
    keeps each file's mode from its index, never the disk's bits: the review sha read them from disk, so a person's
    `accept --sha` of the sha a teammate printed was refused as 'changed since', and `skill show` listed mode changes."""
    deploy_with_scripts(repo)
    printed = shown(repo)["review_sha"]
    clone = tmp_path / "mounted"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(clone, "config", "core.fileMode", "false")
    folder = clone / ".agents/skills/deploy"
    for bits in (0o755, 0o644):  # every file executable on disk, then none
        for path in folder.rglob("*"):
            if path.is_file():
                path.chmod(bits)
        assert not git(clone, "status", "--porcelain"), "git sees no change"
        seen = shown(clone)
        assert seen["review_sha"] == printed, bits
        assert "mode" not in json.dumps(seen.get("unreviewed", seen)), seen
