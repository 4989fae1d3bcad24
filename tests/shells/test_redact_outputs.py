"""`repo-memory log redact` of a tool record whose whole output lives outside its line: in a blob of the response the
hook stored (`data.output_blob`), which `read` serves as the record's `output`, or in git (`data.output_file`, a file
of the person's read as HEAD held it)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import git, initialised
from tests.shells.stdio_server import StdioServer
from tests.shells.test_session_end import committed_soon

SECRET = "Zebra-Quartz-991"  # no rule of the scanner matches it: a secret it missed


def run(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True, input=stdin,
                          timeout=120)


# Stands for the harness (Claude Code) at a session's end: it starts the SessionEnd hook, waits for it and ends. A hook
# slow to start (a busy machine) leaves the commit to its finisher, which commits once the harness is gone: with pytest
# as the harness it never was, and a clone made then lacked the log (seen once in a full run; a hook started 2.6 s late
# shows it every time). Other hooks run while the harness lives on (pytest), as in a session.
HARNESS = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def hook(repo: Path, event: str, payload: dict[str, Any]) -> None:
    ending = (sys.executable, "-c", HARNESS) if event == "session-end" else ()
    done = subprocess.run([*ending, sys.executable, "-m", "repo_memory", "hook", event], cwd=repo, capture_output=True,
                          text=True, timeout=120, input=json.dumps({"cwd": str(repo), "session_id": "s-red", **payload}))
    assert done.returncode == 0, done.stderr
    if event == "session-end":  # committed by the hook, or by its finisher once the harness is gone
        assert committed_soon(repo), git(repo, "status", "--porcelain", "--", ".agents")


def bash_call(repo: Path, stdout: str) -> str:
    """A Bash call the post-tool hook records, its output longer than a record keeps; the record's id."""
    hook(repo, "post-tool", {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t1",
                             "tool_input": {"command": "./deploy.sh"},
                             "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False}})
    return next(r["id"] for r in records(repo) if r["kind"] == "tool")


def records(repo: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for p in sorted((repo / ".agents/experience").rglob("*.jsonl")) for line in p.read_bytes().splitlines()]


def memory_bytes(repo: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((repo / ".agents/experience").rglob("*")) if p.is_file())


def deploy_log() -> str:
    """A long output holding the secret at its start (in the record's excerpt too) and past the excerpt (in the blob only)."""
    return (f"deploy log: connecting with password {SECRET}\n" + "".join(f"step {i} ok\n" for i in range(600))
            + f"retry with {SECRET}\n")


def committed_with_secret(repo: Path) -> str:
    """The files of HEAD's memory holding the secret."""
    return subprocess.run(["git", "grep", "-l", "-e", SECRET, "HEAD", "--", ".agents"], cwd=repo, capture_output=True,
                          text=True).stdout


def read(repo: Path, rid: str) -> dict[str, Any]:
    answers, code = StdioServer(repo).session(("read", {"ref": rid}))
    assert code == 0 and not answers[0].get("isError"), answers
    return dict(answers[0]["structuredContent"]["records"][0])


def test_redact_takes_the_secret_out_of_the_output_blob_read_serves_and_a_later_commit_holds_none(tmp_path: Path):
    """The record's line was redacted but its `output_blob` was not: `read` served the secret as the record's `output`
    (verified), the blob was committed at session end, and redact had said no commit holds the secret."""
    repo = initialised(tmp_path)
    rid = bash_call(repo, deploy_log())
    old = next(r for r in records(repo) if r["id"] == rid)["data"]["output_blob"]
    assert SECRET.encode() in (repo / ".agents/experience/blobs" / old).read_bytes()
    done = run(repo, "log", "redact", rid, "--text", SECRET)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "output_blob" in done.stdout and "no commit holds" in done.stdout.lower(), done.stdout
    assert SECRET.encode() not in memory_bytes(repo), "a file of the logs or their blobs still holds the secret"
    record = next(r for r in records(repo) if r["id"] == rid)
    new = record["data"]["output_blob"]
    blob = (repo / ".agents/experience/blobs" / new).read_bytes()
    assert new != old and hashlib.sha256(blob).hexdigest() == new and blob.count(b"[REDACTED]") == 2
    assert (repo / ".agents/experience/blobs" / old).read_bytes() == b""  # emptied, its path kept: see test_redact_clones
    assert git(repo, "status", "--porcelain", "--", ".agents") == ""  # the new blob is committed with the line
    view = read(repo, rid)
    assert SECRET not in view["output"] and "[REDACTED]" in view["output"] and view["verified"], view
    assert "does not match its hash" not in view["output_note"], view["output_note"]
    assert run(repo, "verify").returncode == 0
    hook(repo, "session-end", {"hook_event_name": "SessionEnd"})
    assert committed_with_secret(repo) == ""


def test_redact_of_an_output_blob_a_commit_holds_says_history_holds_it(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = bash_call(repo, deploy_log())
    hook(repo, "session-end", {"hook_event_name": "SessionEnd"})  # the record and its blob are committed
    old = next(r for r in records(repo) if r["id"] == rid)["data"]["output_blob"]
    git(repo, "cat-file", "-e", f"HEAD:.agents/experience/blobs/{old}")
    done = run(repo, "log", "redact", rid, "--text", SECRET)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no commit holds" not in done.stdout.lower() and "filter-repo" in done.stdout, done.stdout
    assert committed_with_secret(repo) == ""  # the old blob's deletion is committed
    assert SECRET.encode() not in memory_bytes(repo)


def test_redact_all_text_drops_the_output_blob_and_a_dry_run_writes_no_blob(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = bash_call(repo, deploy_log())
    blobs = sorted((repo / ".agents/experience/blobs").iterdir())
    dry = run(repo, "log", "redact", rid, "--text", SECRET, "--dry-run")
    assert dry.returncode == 0 and "output_blob" in dry.stdout, dry.stdout
    assert sorted((repo / ".agents/experience/blobs").iterdir()) == blobs  # a dry run writes nothing, no blob either
    done = run(repo, "log", "redact", rid, "--all-text")
    assert done.returncode == 0, done.stdout + done.stderr
    assert SECRET.encode() not in memory_bytes(repo)
    assert [p.read_bytes() for p in (repo / ".agents/experience/blobs").iterdir()] == [b""]  # the output blob, emptied
    assert git(repo, "status", "--porcelain", "--", ".agents") == "" and run(repo, "verify").returncode == 0


def test_an_output_blob_another_record_cites_is_kept_and_said_to_hold_the_secret(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = bash_call(repo, deploy_log())
    hook(repo, "post-tool", {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t2",
                             "tool_input": {"command": "./deploy.sh --again"},
                             "tool_response": {"stdout": deploy_log(), "stderr": "", "interrupted": False}})
    old = next(r for r in records(repo) if r["id"] == rid)["data"]["output_blob"]
    done = run(repo, "log", "redact", rid, "--text", SECRET)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"blob {old} still holds it" in done.stderr, done.stderr
    assert (repo / ".agents/experience/blobs" / old).exists()


def test_redact_says_when_a_file_of_yours_the_record_cites_in_git_holds_the_string(tmp_path: Path):
    """A file tool's record cites the file as HEAD held it (`output_file`): `read` serves it from git. redact rewrites
    no file of the person's, and says the file holds the string."""
    repo = initialised(tmp_path)
    body = f"# the lab door code: {SECRET}\n" + "".join(f"X{n} = {n}\n" for n in range(600))
    (repo / "settings.py").write_text(body, encoding="utf-8")
    git(repo, "add", "settings.py")
    git(repo, "commit", "-qm", "settings")
    hook(repo, "post-tool", {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "t1",
                             "tool_input": {"file_path": str(repo / "settings.py")},
                             "tool_response": {"type": "text", "file": {"filePath": str(repo / "settings.py"), "content": body}}})
    record = next(r for r in records(repo) if r["kind"] == "tool")
    assert record["data"]["output_file"]["path"] == "settings.py", record["data"]
    done = run(repo, "log", "redact", record["id"], "--text", SECRET)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "settings.py" in done.stderr and "your file" in done.stderr, done.stderr
    assert (repo / "settings.py").read_text(encoding="utf-8") == body
    assert SECRET.encode() not in memory_bytes(repo)

