"""What the post-tool hook records of a call, driven as a harness drives it (`repo-memory hook post-tool`, a real
process, the harnesses' real response shapes: tests/fixtures/harness/), and what recall then finds of it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from repo_memory.formats import experience

from tests.conftest import git
from tests.shells.stdio_server import StdioServer

EXE = str(Path(sys.executable).parent / "repo-memory")
FIXTURES = Path(__file__).parent.parent / "fixtures" / "harness"


@pytest.fixture
def repo(repo: Path) -> Path:
    """The repository, its memory folders committed (only what the hooks write is left to commit)."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def hook(repo: Path, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([EXE, "hook", event], input=json.dumps({"cwd": str(repo), **payload}), capture_output=True,
                          text=True, cwd=repo, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def cli(repo: Path, *args: str) -> str:
    done = subprocess.run([EXE, *args], capture_output=True, text=True, cwd=repo, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def call(repo: Path, session: str, n: int, tool: str, tool_input: Any, response: Any) -> None:
    hook(repo, "post-tool", {"session_id": session, "hook_event_name": "PostToolUse", "tool_name": tool, "tool_use_id": f"t{n}",
                             "tool_input": tool_input, "tool_response": response})


def tool_records(repo: Path, session: str) -> list[dict[str, Any]]:
    logs = (repo / experience.EXPERIENCE_DIR).rglob(f"{session}*.jsonl")
    return [r for log in logs for line in log.read_text(encoding="utf-8").splitlines() if (r := json.loads(line))["kind"] == "tool"]


def claude_bash_response() -> dict[str, Any]:
    """The toolUseResult of the Bash call in Claude Code's recorded session: what its PostToolUse hook receives."""
    for line in (FIXTURES / "claude-code-2.1.332.jsonl").read_text(encoding="utf-8").splitlines():
        found = json.loads(line).get("toolUseResult")
        if isinstance(found, dict) and "stdout" in found:
            return found
    raise AssertionError("no Bash result in the Claude Code fixture")


def test_the_field_names_of_a_harness_response_are_no_words_a_tool_record_is_found_by(repo: Path):
    """A Claude Code Bash response is {"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"}, a Read's
    {"type": "text", "file": {...}}: its JSON was indexed whole, so `image size` found every `ls` call (`isImage`) and
    `text` every Read. The words of a tool record are now its content: the strings the call was given and returned."""
    cli(repo, "log", "add", "Decision: thumbnails are WebP; the original image is never resized", "-k", "decision")
    bash = {**claude_bash_response(), "stdout": "main.py"}
    assert set(bash) >= {"stdout", "stderr", "interrupted", "isImage", "noOutputExpected"}
    read = {"type": "text", "file": {"filePath": str(repo / "notes.txt"), "content": "plain words\n", "numLines": 1,
                                     "startLine": 1, "totalLines": 1}}
    call(repo, "claude1", 1, "Bash", {"command": "ls src", "description": "List the sources"}, bash)
    call(repo, "claude1", 2, "Read", {"file_path": str(repo / "notes.txt")}, read)
    call(repo, "codex1", 3, "Bash", {"command": "ls src"}, "main.py\n")  # Codex hands its hooks the output as text
    for query in ("image size", "isImage", "interrupted", "no output expected", "stdout stderr", "type text", "numLines",
                  "filePath", "startLine"):
        hits = json.loads(cli(repo, "search", "--json", *query.split()))["hits"]
        assert [h["id"] for h in hits if h["kind"] == "tool"] == [], (query, hits)
    found = json.loads(cli(repo, "search", "--json", "main.py"))["hits"]
    own = [h for h in found if h["kind"] == "tool" and not h.get("matched")]  # not through a neighbour's words
    assert sorted(h["id"].split(".")[0] for h in own) == ["claude1", "codex1"], found  # what the calls returned finds them
    [shown] = [h["snippet"] for h in own if h["id"].startswith("claude1")]
    assert shown.replace("**", "").count("ls src") == 1, shown  # the input is shown once, not as text and again as data
    [bash_record, read_record] = tool_records(repo, "claude1")
    assert bash_record["data"]["output_text"] == "main.py" and read_record["data"]["output_text"].startswith(str(repo))


def test_a_read_of_a_file_as_head_holds_it_points_at_git_and_other_long_output_goes_to_a_blob(repo: Path):
    """The whole output of a call over 2,000 characters was committed as a blob, a Read of a committed file too (a
    29 KB file: 29 KB more history per read). A file read as HEAD holds it is named with its git blob id instead."""
    big = "".join(f"def f{n}(x):\n    return x + {n}\n" for n in range(1000))
    (repo / "big.py").write_text(big, encoding="utf-8")
    git(repo, "add", "big.py")
    git(repo, "commit", "-q", "-m", "big")
    read = {"type": "text", "file": {"filePath": str(repo / "big.py"), "content": big, "numLines": 2000, "startLine": 1,
                                     "totalLines": 2000}}
    call(repo, "s1", 1, "Read", {"file_path": str(repo / "big.py")}, read)
    (repo / "big.py").write_text(big + "# changed\n", encoding="utf-8")
    call(repo, "s1", 2, "Read", {"file_path": str(repo / "big.py")}, {**read, "file": {**read["file"], "content": big + "# changed\n"}})
    call(repo, "s1", 3, "Bash", {"command": "pytest -v"}, {**claude_bash_response(), "stdout": "test_x PASSED\n" * 400})
    committed, changed, shell = tool_records(repo, "s1")
    assert committed["data"]["output_file"] == {"path": "big.py", "git_blob": git(repo, "rev-parse", "HEAD:big.py").strip()}
    assert "output_blob" not in committed["data"] and committed["data"]["output_chars"] > 2000
    assert "output_blob" in changed["data"] and "output_blob" in shell["data"]  # not what HEAD holds: kept in a blob
    assert len(list((repo / experience.BLOB_DIR).iterdir())) == 2
    git(repo, "cat-file", "-e", committed["data"]["output_file"]["git_blob"])


def test_read_of_a_tool_record_gives_the_output_it_kept_whole_from_its_blob_or_from_git(repo: Path):
    """`read` of a record whose whole output was kept gave only `output_blob`'s hash or `output_file`'s git blob id: an
    agent reading its own earlier evidence had to run git itself. It now gets the output (the first 10,000 characters,
    saying where the rest is)."""
    big = "".join(f"def f{n}(x):\n    return x + {n}\n" for n in range(1000))
    (repo / "big.py").write_text(big, encoding="utf-8")
    git(repo, "add", "big.py")
    git(repo, "commit", "-q", "-m", "big")
    read = {"type": "text", "file": {"filePath": str(repo / "big.py"), "content": big, "numLines": 2000, "startLine": 1,
                                     "totalLines": 2000}}
    call(repo, "s3", 1, "Read", {"file_path": str(repo / "big.py")}, read)
    call(repo, "s3", 2, "Bash", {"command": "pytest -v"}, {**claude_bash_response(), "stdout": "test_x PASSED\n" * 400})
    file_record, shell_record = tool_records(repo, "s3")
    gid = file_record["data"]["output_file"]["git_blob"]
    answers, code = StdioServer(repo).session(("read", {"ref": file_record["id"]}), ("read", {"ref": shell_record["id"]}))
    assert code == 0 and not any(a.get("isError") for a in answers), answers
    [file_view], [shell_view] = (a["structuredContent"]["records"] for a in answers)
    assert file_view["output"] == big[:10_000], file_view.get("output_note")
    assert f"the first 10,000 of {len(big):,} characters" in file_view["output_note"] and f"`git cat-file -p {gid}`" in file_view["output_note"]
    assert shell_view["output"] == "test_x PASSED\n" * 400, shell_view
    assert shell_view["output_note"].startswith("the whole output of the call (5,600 characters), from the blob .agents/")


def read_of(repo: Path, big: str, n: int) -> dict[str, Any]:
    """A Read call of `big`, committed as `big{n}.py`: the file's read as HEAD holds it."""
    path = repo / f"big{n}.py"
    path.write_text(big, encoding="utf-8")
    git(repo, "add", path.name)
    git(repo, "commit", "-q", "-m", path.name)
    return {"type": "text", "file": {"filePath": str(path), "content": big, "numLines": 2000, "startLine": 1, "totalLines": 2000}}


def test_read_of_a_tool_record_in_a_partial_clone_that_lacks_its_output_never_fetches_it(repo: Path, tmp_path: Path):
    """In a clone made with `--filter=blob:none`, `git cat-file` of a file's older version fetches it from the remote:
    `read` of the record of a Read of it waited on the network (10 s, then a bare "Error executing tool read" with
    the remote down). It reads the record at once now, and the note says the output is not in this clone and how
    to get it."""
    big = "".join(f"def f{n}(x):\n    return x + {n}\n" for n in range(1000))
    call(repo, "p1", 1, "Read", {"file_path": str(repo / "big1.py")}, read_of(repo, big, 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")
    (repo / "big1.py").write_text("changed\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "change big1.py")  # its version the record names is no longer HEAD's
    git(repo, "config", "uploadpack.allowFilter", "true")
    clone, fetched = tmp_path / "clone", tmp_path / "fetched"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{repo}", str(clone))
    git(clone, "remote", "set-url", "origin", "ssh://unreachable.example/repo.git")
    git(clone, "config", "core.sshCommand", f"sh -c 'touch {fetched}; exit 1' ssh")  # a remote down (the VPN is off)
    [record] = tool_records(clone, "p1")
    gid = record["data"]["output_file"]["git_blob"]
    answers, code = StdioServer(clone).session(("read", {"ref": record["id"]}))
    assert code == 0 and not answers[0].get("isError"), answers
    [view] = answers[0]["structuredContent"]["records"]
    assert not fetched.exists(), "read asked the remote for the output"
    assert "output" not in view and view["verified"], view
    assert "not in this clone" in view["output_note"] and f"`git cat-file -p {gid}`" in view["output_note"], view


def test_read_of_a_session_gives_each_tool_record_a_note_and_read_of_its_id_the_output(repo: Path, tmp_path: Path):
    """`read` of a range inlined 10,000 characters of every tool call's output against a page of 16,000: one record
    a page, four times the calls to page through a session, and a `git cat-file` per record. A range now gives each
    a note of how long the output is and the id to read for it; `read` of that one id gives the output."""
    bigs = ["".join(f"def f{n}_{k}(x):\n    return x + {n}\n" for n in range(500)) for k in range(4)]
    for k, big in enumerate(bigs, 1):
        call(repo, "r1", k, "Read", {"file_path": str(repo / f"big{k}.py")}, read_of(repo, big, k))
    records = tool_records(repo, "r1")
    bin_dir, log = tmp_path / "bin", tmp_path / "git.log"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("git")} "$@"\n', encoding="utf-8")
    (bin_dir / "git").chmod(0o755)
    server = StdioServer(repo, env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    answers, code = server.session(("read", {"ref": records[0]["id"] + "-4"}), ("read", {"ref": records[1]["id"]}))
    assert code == 0 and not any(a.get("isError") for a in answers), answers
    ranged, one = (a["structuredContent"] for a in answers)
    assert [v["id"] for v in ranged["records"]] == [r["id"] for r in records] and "next_cursor" not in ranged, ranged
    for view, record in zip(ranged["records"], records):
        chars = f"{record['data']['output_chars']:,} characters"
        assert "output" not in view and chars in view["output_note"] and f"read {view['id']}" in view["output_note"], view
    assert len(json.dumps(ranged)) < 20_000
    [view] = one["records"]
    assert view["output"] == bigs[1][:10_000], view.get("output_note")
    called = log.read_text(encoding="utf-8")
    assert [r["data"]["output_file"]["git_blob"] in called for r in records] == [False, True, False, False]


def test_tool_output_blobs_false_keeps_no_blob_and_the_record_says_how_long_the_output_was(repo: Path):
    (repo / ".agents/repo-memory.toml").write_text("tool_output_blobs = false\n", encoding="utf-8")
    call(repo, "s2", 1, "Bash", {"command": "pytest -v"}, {**claude_bash_response(), "stdout": "test_x PASSED\n" * 400})
    [shell] = tool_records(repo, "s2")
    assert "output_blob" not in shell["data"] and shell["data"]["output_chars"] == 14 * 400
    assert len(shell["data"]["output_text"]) == 2000 and not list((repo / experience.BLOB_DIR).glob("*"))


@pytest.mark.parametrize("harness", ["claude-code", "codex"])
def test_a_sessions_commit_names_the_skill_an_agent_changed_beside_its_records(repo: Path, harness: str, monkeypatch):
    """A commit of a skill an agent edited and the session's records was subjected `memory: 2 changes`, hiding the
    skill change from `git log --oneline`; it names both now. The session's end record is kept (lifecycle records stay
    in the log, out of default recall)."""
    monkeypatch.setenv("REPO_MEMORY_HARNESS", harness)
    skill = repo / ".agents/skills/deploy/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: How we deploy; use when deploying\n---\n1. Ship it.\n", encoding="utf-8")
    call(repo, "e1", 1, "Write", {"file_path": str(skill), "content": skill.read_text(encoding="utf-8")}, {"type": "create"})
    hook(repo, "session-end", {"session_id": "e1", "hook_event_name": "SessionEnd", "reason": "other"})
    logs = list((repo / experience.EXPERIENCE_DIR).rglob("e1*.jsonl"))
    kinds = [json.loads(line)["kind"] for log in logs for line in log.read_text(encoding="utf-8").splitlines()]
    assert kinds == ["tool", "observation"], kinds
    subject = git(repo, "log", "-1", "--format=%s").strip()
    assert subject.startswith("memory(skill): deploy") and "; experience e1" in subject, subject
