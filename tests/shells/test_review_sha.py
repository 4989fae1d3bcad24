"""What a skill folder's review sha counts and how it is computed, driven as a harness and a person drive them: files
git ignores are no part of a skill, and one commit's skill has one sha in every clone of it (core/skill_files.py,
core/review_sha.py); the hooks' own check of what a call changed reads no file whole (core/skill_changes.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.core import skill_files

from tests.conftest import git
from tests.shells.test_pretool import EXE, active_deploy, hook, shell_call
from tests.shells.test_skill_links import cli, shown

IMPORT_HELPER = f"env -u PYTHONDONTWRITEBYTECODE {sys.executable} -c \"import sys; sys.path.insert(0, '.agents/skills/deploy'); import helper\""


def deploy_with_helper(repo: Path) -> Path:
    skill = active_deploy(repo)
    (skill.parent / "helper.py").write_text("print('deploying')\n", encoding="utf-8")
    (repo / ".gitignore").write_text("__pycache__/\n*.pyc\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "deploy helper")
    return skill


def test_running_a_skills_helper_leaves_the_skill_active_and_its_ignored_bytecode_out_of_it(repo: Path):
    """The __pycache__ that importing helper.py left (ignored by .gitignore) counted as part of the skill: the active
    skill went back to draft, the .pyc was committed past .gitignore, and `skill show` listed it."""
    skill = deploy_with_helper(repo)
    answer = shell_call(repo, IMPORT_HELPER)
    assert list(skill.parent.glob("__pycache__/*.pyc")), "the helper's import wrote no bytecode"
    assert "status: active" in skill.read_text(encoding="utf-8") and "draft" not in json.dumps(answer), answer
    hook(repo, "session-end", {"session_id": "s9", "hook_event_name": "SessionEnd", "reason": "exit"})
    assert ".pyc" not in git(repo, "log", "--all", "--name-only", "--format=")
    assert shown(repo)["files"] == ["SKILL.md", "helper.py"]


def test_a_tracked_file_counts_though_gitignore_matches_it_and_outside_git_nothing_is_left_out(repo: Path, tmp_path: Path):
    """Ignore rules leave untracked files out; a file a person committed anyway (`git add -f`) is part of the skill."""
    skill = deploy_with_helper(repo)
    (skill.parent / "vendored.pyc").write_bytes(b"\x00bytecode")
    git(repo, "add", "-f", ".agents/skills/deploy/vendored.pyc")
    git(repo, "commit", "-q", "-m", "vendored bytecode")
    (skill.parent / "stray.pyc").write_bytes(b"\x00stray")
    assert [e.rel for e in skill_files.walk(skill.parent)] == ["SKILL.md", "helper.py", "vendored.pyc"]
    before = shown(repo)["review_sha"]
    (skill.parent / "vendored.pyc").write_bytes(b"\x00changed")
    assert shown(repo)["review_sha"] != before
    outside = tmp_path / "elsewhere" / "deploy"
    outside.mkdir(parents=True)
    (outside / ".gitignore").write_text("*.pyc\n", encoding="utf-8")
    (outside / "x.pyc").write_bytes(b"\x00")
    assert [e.rel for e in skill_files.walk(outside)] == [".gitignore", "x.pyc"]


def committed_draft_with_a_link(repo: Path) -> Path:
    skill = active_deploy(repo, status="draft", origin="agent")
    (repo / "README.md").write_text("hi\n", encoding="utf-8")
    (skill.parent / "readme.md").symlink_to("../../../README.md")
    (skill.parent / "run.sh").write_text("make deploy\nmake check\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "draft with a link")
    return skill


@pytest.mark.parametrize("setting", ["core.symlinks=false", "core.autocrlf=true"])
def test_one_commits_skill_has_one_review_sha_in_every_clone_and_accepts_there(repo: Path, tmp_path: Path, setting: str):
    """A clone with core.symlinks=false (a link checked out as a file) or core.autocrlf=true (CRLF on disk) got another
    sha for the same commit, so the `accept --sha` printed in one clone was refused in another as a change."""
    committed_draft_with_a_link(repo)
    sha = shown(repo)["review_sha"]
    git(tmp_path, "clone", "-q", "-c", setting, str(repo), "clone")
    clone = tmp_path / "clone"
    assert git(clone, "status", "--porcelain") == ""
    assert shown(clone)["review_sha"] == sha
    done = cli(clone, "accept", "deploy", "--sha", sha[:12])
    assert done.returncode == 0 and "accepted" in done.stdout, done.stdout + done.stderr


def previous_release_sha(folder: Path) -> str:
    """The review sha as the release before this one printed it: sha256 over each path, length and bytes (a link's:
    'link:' and its target), in path order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_symlink() or p.is_file()):
        data = b"link:" + os.fsencode(os.readlink(path)) if path.is_symlink() else path.read_bytes()
        digest.update(os.fsencode(path.relative_to(folder).as_posix()) + f"\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def test_a_sha_the_previous_release_printed_still_accepts_that_very_version_and_no_other(repo: Path):
    skill = committed_draft_with_a_link(repo)
    old = previous_release_sha(skill.parent)
    assert shown(repo)["review_sha"] != old  # the formula changed: blob ids, not the bytes of this checkout
    (skill.parent / "run.sh").write_text("make deploy --force\n", encoding="utf-8")
    refused = cli(repo, "accept", "deploy", "--sha", old[:12])
    assert refused.returncode != 0 and "status: draft" in skill.read_text(encoding="utf-8"), refused.stdout
    (skill.parent / "run.sh").write_text("make deploy\nmake check\n", encoding="utf-8")
    done = cli(repo, "accept", "deploy", "--sha", old[:12])
    assert done.returncode == 0 and "status: active" in skill.read_text(encoding="utf-8"), done.stdout + done.stderr


def test_the_pre_tool_hook_reads_no_file_beside_a_skill_whole(repo: Path):
    """A 300 MB file beside SKILL.md took 1.2 s and 600 MB of memory in the pre-tool hook of a plain `cat SKILL.md`:
    the check of what a call changed read each file whole, to hash it."""
    skill = active_deploy(repo)
    with open(skill.parent / "model.bin", "wb") as big:
        big.truncate(512 << 20)  # sparse: no disk taken, half a gigabyte to read
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "model")
    payload = {"tool_name": "Bash", "session_id": "s9", "tool_use_id": "toolu_1", "cwd": str(repo),
               "tool_input": {"command": "cat .agents/skills/deploy/SKILL.md"}}
    measured = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:], input=sys.stdin.read(), text=True, "
                "capture_output=True); print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
                "done.stdout.strip())")
    done = subprocess.run([sys.executable, "-c", measured, EXE, "hook", "pre-tool"], input=json.dumps(payload),
                          capture_output=True, text=True, cwd=repo, timeout=120)
    code, kilobytes, out = done.stdout.strip().split(maxsplit=2)
    assert code == "0" and out == "{}" and int(kilobytes) < 200_000, done.stdout + done.stderr
    answer = hook(repo, "post-tool", {**payload, "hook_event_name": "PostToolUse", "tool_response": {"stdout": ""}})
    assert "status: active" in skill.read_text(encoding="utf-8") and "draft" not in json.dumps(answer), answer


def test_rejecting_a_never_accepted_draft_deletes_the_bytecode_its_helper_left(repo: Path):
    """Rejecting a draft no one ever accepted deletes its folder, but never a file beside it no commit holds (it may be a
    person's). The `__pycache__` a run of the draft's own helper left, which git ignores, counted as such a file: reject
    was refused until the person found and deleted it. Python writes it again whenever the script runs: it goes with the draft."""
    (repo / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "ignore bytecode")
    folder = repo / ".agents/skills/deploy"
    shell_call(repo, "mkdir -p .agents/skills/deploy && printf -- '---\\nname: deploy\\ndescription: How we deploy.\\n---\\n"
               "1. python helper.py\\n' > .agents/skills/deploy/SKILL.md && echo \"print('deploying')\" > .agents/skills/deploy/helper.py")
    shell_call(repo, IMPORT_HELPER, call="toolu_10")
    hook(repo, "session-end", {"session_id": "s9", "hook_event_name": "SessionEnd", "reason": "exit"})
    assert list(folder.glob("__pycache__/*.pyc")) and "status: draft" in (folder / "SKILL.md").read_text(encoding="utf-8")
    (folder / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    (folder / ".env").write_text("TOKEN=a person's\n", encoding="utf-8")  # no cache: still keeps the folder
    refused = cli(repo, "reject", "deploy")
    assert refused.returncode == 1 and ".env" in refused.stderr and "pyc" not in refused.stderr and "DS_Store" not in refused.stderr, refused.stderr
    (folder / ".env").unlink()
    (folder / "data").mkdir()  # a folder some tool tagged as a cache may hold a person's file: not taken on trust
    (folder / "data/CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n", encoding="utf-8")
    (folder / "data/inventory.csv").write_text("the person's, in no commit\n", encoding="utf-8")
    refused = cli(repo, "reject", "deploy")
    assert refused.returncode == 1 and "inventory.csv" in refused.stderr and (folder / "data/inventory.csv").is_file(), refused.stderr
    shutil.rmtree(folder / "data")
    done = cli(repo, "reject", "deploy")
    assert done.returncode == 0 and "deleted" in done.stdout and not folder.exists(), done.stdout + done.stderr
    assert git(repo, "status", "--porcelain") == "" and ".pyc" not in git(repo, "log", "--all", "--name-only", "--format=")
