"""A secret that a record's cut copy splits: a tool record keeps the opening of its output (`output_text`, the first
2,000 characters; the whole output is a blob) and of its input (the record's text, 300 characters of it), so a secret
straddling a cut leaves its first part in the record. `log redact` takes that part out too; the scanner, at write
time, redacts the secret before anything is cut."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import git, initialised
from tests.shells.test_redact_outputs import hook, memory_bytes, read, records, run

SECRET = "Zebra-Quartz-991"  # no rule of the scanner matches it: a secret it missed
CUT = 2000  # characters of a call's output text its record keeps (shells/tool_records.py)


def parts(secret: str) -> list[str]:
    """The secret's openings a cut may leave, from four characters on: what must not remain."""
    return [secret[:n] for n in range(4, len(secret) + 1)]


def held(repo: Path, secret: str) -> list[str]:
    """The openings of `secret` a file of the logs or their blobs holds."""
    found = memory_bytes(repo)
    return [p for p in parts(secret) if p.encode() in found]


def straddling(secret: str, at: int = CUT, shift: int = 7) -> str:
    """A long output whose text holds `secret` across character `at` (its first `shift` characters before it)."""
    head = "".join(f"step {i} ok\n" for i in range(400))[: at - shift]
    return head + secret + "\n" + "".join(f"tail {i} ok\n" for i in range(200))


def bash(repo: Path, stdout: str, command: str = "./deploy.sh") -> dict[str, Any]:
    hook(repo, "post-tool", {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t1",
                             "tool_input": {"command": command},
                             "tool_response": {"stdout": stdout, "stderr": "", "interrupted": False}})
    return next(r for r in records(repo) if r["kind"] == "tool")


def test_a_secret_the_output_text_cut_splits_leaves_no_part_in_the_record_nor_its_blob(tmp_path: Path):
    """The blob was redacted and the record's `output_text` kept the secret's first seven characters: the redaction
    matched the whole secret, which the cut copy no longer held whole."""
    repo = initialised(tmp_path)
    record = bash(repo, straddling(SECRET))
    assert record["data"]["output_text"].endswith(SECRET[:7]), record["data"]["output_text"][-20:]
    done = run(repo, "log", "redact", record["id"], "--text", SECRET)
    assert done.returncode == 0, done.stdout + done.stderr
    assert held(repo, SECRET) == [], "a part of the secret remains in the logs or their blobs"
    [line] = [r for r in records(repo) if r["id"] == record["id"]]
    data = line["data"]
    assert len(data["output_text"]) == CUT and data["output_text"].endswith("[REDACT"), data["output_text"][-30:]  # cut again
    view = read(repo, record["id"])
    assert view["verified"] and view["output"].startswith(data["output_text"]), view["output_note"]
    assert not [p for p in parts(SECRET) if p in view["output"]]
    assert data["output_chars"] == len(view["output"])  # the whole output as it now is
    assert run(repo, "verify").returncode == 0 and git(repo, "status", "--porcelain", "--", ".agents") == ""


def test_with_no_whole_output_kept_the_part_a_cut_leaves_is_redacted(tmp_path: Path):
    """`tool_output_blobs = false`: the record alone holds the output's opening, and its text the opening of the input
    (300 characters); a secret either cut splits was 'not held' by the record, and its part stayed."""
    repo = initialised(tmp_path)
    (repo / ".agents/repo-memory.toml").write_text("tool_output_blobs = false\n", encoding="utf-8")
    git(repo, "add", ".agents/repo-memory.toml")
    git(repo, "commit", "-qm", "no output blobs")
    command = "./deploy.sh " + "x" * 261 + f" --lab {SECRET} " + "y" * 2000
    cut = json.dumps({"command": command})[:300]
    assert SECRET not in cut and SECRET[:4] in cut  # the record's text holds only its opening
    record = bash(repo, straddling(SECRET), command)
    assert "output_blob" not in record["data"] and not list((repo / ".agents/experience/blobs").glob("*"))
    done = run(repo, "log", "redact", record["id"], "--text", SECRET)
    assert done.returncode == 0, done.stdout + done.stderr
    assert held(repo, SECRET) == [], "a part of the secret remains in the record"
    [line] = [r for r in records(repo) if r["id"] == record["id"]]
    assert line["data"]["output_text"].endswith("[REDACTED]") and "[REDACTED]" in line["text"], line
    assert run(repo, "verify").returncode == 0


def test_the_scanner_redacts_a_secret_a_cut_splits_before_the_cut_in_the_record_and_the_blob(tmp_path: Path):
    """A credential the scanner knows, across the output's cut: it is redacted in the response before the record's
    opening and the blob are taken from it, so neither holds a part of it."""
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    repo = initialised(tmp_path)
    record = bash(repo, straddling(token, shift=12))
    data = record["data"]
    assert data["redacted"] == ["github-token"] and "output_blob" in data, data.get("redacted")
    assert not [p for p in parts(token) if p in data["output_text"]], data["output_text"][-30:]
    assert held(repo, token) == []
