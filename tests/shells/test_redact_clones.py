"""Two clones that each run `log redact` on one tool record whose whole output is a blob, then push and pull through a
bare remote. A redaction stores the redacted output as a new blob (named by its hash) and takes the old one out; git's
rename detection paired the old blob with each clone's new one, so a pull stopped on a rename/rename or rename/delete
conflict in the blobs as soon as the two redactions differed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from repo_memory.guards.shellwords import quoted
from tests.conftest import git, initialised
from tests.shells.test_redact_outputs import hook, memory_bytes, records, run

SECRET = "Zebra-Quartz-991"  # no rule of the scanner matches them: secrets it missed
SECOND = "Mango-Pluto-4431"


def output() -> str:
    """A long output, as a harness giving text (not JSON) hands it over: git compares its blobs line by line."""
    return (f"deploy: connecting as {SECOND} with {SECRET}\n" + "".join(f"step {i} ok\n" for i in range(600))
            + f"retry with {SECRET}\n")


def two_clones(tmp_path: Path) -> tuple[Path, Path, str]:
    """A tool record with its output blob, committed and pushed to a bare remote; two clones of it, and its id."""
    origin = initialised(tmp_path)
    hook(origin, "post-tool", {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t1",
                               "tool_input": {"command": "./deploy.sh"}, "tool_response": output()})
    hook(origin, "session-end", {"hook_event_name": "SessionEnd"})
    rid = next(r["id"] for r in records(origin) if r["kind"] == "tool")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(remote))
    clones = tmp_path / "a", tmp_path / "b"
    for clone in clones:
        git(tmp_path, "clone", "-q", str(remote), str(clone))
        assert run(clone, "init").returncode == 0
    return *clones, rid


def pull(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "pull", "--no-rebase", "--no-edit", "origin", "main"], cwd=repo, capture_output=True,
                          text=True)


@pytest.mark.parametrize("second", [["--text", SECRET], ["--text", SECRET, "--text", SECOND], ["--all-text"]],
                         ids=["the-same-string", "one-more-string", "all-text"])
def test_two_clones_redacting_one_output_blob_pull_without_a_conflict_and_converge(tmp_path: Path, second: list[str]):
    a, b, rid = two_clones(tmp_path)
    for clone, args in ((a, ["--text", SECRET]), (b, second)):
        done = run(clone, "log", "redact", rid, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    git(a, "push", "-q", "origin", "main")
    pulled = pull(b)
    assert pulled.returncode == 0 and "CONFLICT" not in pulled.stdout, pulled.stdout + pulled.stderr
    verify = run(b, "verify")
    if verify.returncode:  # the two lines of the record the merge kept: verify names the command that folds them
        assert f"repo-memory log redact {quoted(rid)}" in verify.stdout, verify.stdout
        folded = run(b, "log", "redact", rid)
        assert folded.returncode == 0, folded.stdout + folded.stderr
    git(b, "push", "-q", "origin", "main")
    assert pull(a).returncode == 0
    for clone in (a, b):
        assert SECRET.encode() not in memory_bytes(clone)
        assert git(clone, "status", "--porcelain") == "" and run(clone, "verify").returncode == 0
        assert subprocess.run(["git", "grep", "-l", "-e", SECRET, "HEAD", "--", ".agents"], cwd=clone,
                              capture_output=True, text=True).stdout == ""
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD")
    if second != ["--text", SECRET]:
        assert SECOND.encode() not in memory_bytes(b)
    if SECOND in second:  # the two output blobs folded into one, redacting what each redacts: no --all-text needed
        [line] = [r for r in records(b) if r["id"] == rid]
        blob = (b / ".agents/experience/blobs" / line["data"]["output_blob"]).read_bytes()
        assert blob.count(b"[REDACTED]") == 3, blob[:200]


def test_a_record_of_another_clone_citing_a_blob_a_redaction_emptied_is_told_and_redacted(tmp_path: Path):
    """A blob is named by its content, so a record the other clone wrote with the same long text cites it too; the
    redaction, not knowing that record, empties the blob. After the pull, verify names that record and the command that
    redacts it (a checkout would not bring the blob back: it held the secret), and that command leaves no secret."""
    origin = initialised(tmp_path)
    (origin / ".agents/repo-memory.toml").write_text("inline_max_bytes = 1024\n", encoding="utf-8")
    git(origin, "add", ".agents/repo-memory.toml")
    git(origin, "commit", "-qm", "small blobs")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(remote))
    a, b = tmp_path / "a", tmp_path / "b"
    for clone in (a, b):
        git(tmp_path, "clone", "-q", str(remote), str(clone))
        assert run(clone, "init").returncode == 0
    text = "x" * 3000 + f" then {SECRET}"
    mine = run(a, "log", "add", text, "-s", "ops").stdout.strip()
    git(a, "push", "-q", "origin", "main")
    assert pull(b).returncode == 0
    theirs = run(b, "log", "add", text, "-s", "ops2").stdout.strip()
    assert run(a, "log", "redact", mine, "--all-text").returncode == 0
    git(a, "push", "-q", "origin", "main")
    pulled = pull(b)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    verify = run(b, "verify")
    assert verify.returncode == 1 and f"{theirs}: blob" in verify.stdout and "emptied" in verify.stdout, verify.stdout
    doctor = run(b, "doctor")
    assert f"repo-memory log redact {quoted(theirs)} --all-text" in doctor.stdout, doctor.stdout
    done = run(b, "log", "redact", theirs, "--all-text")
    assert done.returncode == 0, done.stdout + done.stderr
    assert SECRET.encode() not in memory_bytes(b) and run(b, "verify").returncode == 0
