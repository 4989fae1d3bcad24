"""Folding the lines of one record two clones redacted differently (`log redact ID`, core/versions.py) when one of
them redacted more of it than the other: `--all-text` against `--text`, or a secret inside a word."""

from __future__ import annotations

import json
from pathlib import Path

from repo_memory.core import versions

from repo_memory.guards.shellwords import quoted
from tests.conftest import git, initialised
from tests.shells.test_redact import SECOND, SECRET, cli, lines_of, log_bytes, logged
from tests.shells.test_redact_outputs import SECRET as IN_OUTPUT
from tests.shells.test_redact_outputs import bash_call, deploy_log, hook


def two_clones(tmp_path: Path, rid_of, first: list[str], second: list[str]) -> tuple[Path, str]:
    """The origin and a clone of it each redact the record `rid_of(origin)` names (`first`, `second`: log redact's
    arguments), then the clone pulls (git union-merges the log); the clone and the record's id."""
    origin = initialised(tmp_path)
    rid = rid_of(origin)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    assert cli(other, "init").returncode == 0
    for repo, args in ((origin, first), (other, second)):
        done = cli(repo, "log", "redact", rid, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    git(other, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert len(lines_of(other, rid)) == 2  # what git's union merge made
    return other, rid


def test_all_text_in_one_clone_and_a_string_in_another_fold_into_the_record_redacted_whole(tmp_path: Path):
    """The fold said the lines were "not versions a redaction made" (the words beside the `[REDACTED]` both held were
    taken for an edit), and doctor said to keep the line a person wrote: keeping the clone's `--text` line brought
    back the secret the other's `--all-text` took out, and verify passed."""
    other, rid = two_clones(tmp_path, lambda repo: logged(repo, f"door {SECRET} alarm {SECOND} ok")[0],
                            ["--all-text"], ["--text", SECOND])
    doctor = json.loads(cli(other, "doctor", "--json").stdout)
    [finding] = [f for f in doctor if f["level"] == "error" and f["path"] == rid]
    assert "keep the one" not in finding["fix"] and f"log redact {quoted(rid)} --all-text" in finding["fix"], finding
    done = cli(other, "log", "redact", rid)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 occurrence(s)" not in done.stdout and "folded into one" in done.stdout, done.stdout
    [line] = lines_of(other, rid)
    assert line["text"] == "[REDACTED]", line
    assert SECRET.encode() not in log_bytes(other) and SECOND.encode() not in log_bytes(other)
    assert git(other, "status", "--porcelain", "--", ".agents") == ""
    assert cli(other, "verify").returncode == 0


def test_secrets_inside_words_redacted_in_two_clones_fold():
    original = {"id": "s#1", "sha256": "0" * 64, "text": f"token={SECRET}, pw={SECOND}; deploy ok"}
    first = {**original, "text": "token=[REDACTED], pw=" + SECOND + "; deploy ok"}
    second = {**original, "text": f"token={SECRET}, pw=[REDACTED]; deploy ok"}
    folded = versions.fold([first, second])
    assert folded is not None and folded[1] == ["text"], folded
    assert SECRET not in folded[0]["text"] and SECOND not in folded[0]["text"] and folded[0]["text"].endswith(" deploy ok")
    edited = {**original, "text": f"token={SECRET}, pw=[REDACTED]; deploy FAILED"}
    assert versions.fold([first, edited]) is None  # a difference no marker stands beside: an edit, never folded


def test_an_unfoldable_pair_is_redacted_whole_as_the_refusal_says(tmp_path: Path):
    """One clone redacted a string of a tool record's output (a new output blob), another a string of its input (the
    old blob): the lines cite two blobs, which are not folded. The refusal never says to keep one line as it stands;
    `--all-text`, which it names, folds them and drops the blobs."""
    def tool_record(repo: Path) -> str:
        rid = bash_call(repo, deploy_log())
        hook(repo, "session-end", {"hook_event_name": "SessionEnd"})
        return rid

    other, rid = two_clones(tmp_path, tool_record, ["--text", IN_OUTPUT], ["--text", "./deploy.sh"])
    refused = cli(other, "log", "redact", rid)
    assert refused.returncode == 1 and f"log redact {quoted(rid)} --all-text" in refused.stderr, refused.stderr
    assert "keep the one" not in refused.stderr.lower(), refused.stderr
    done = cli(other, "log", "redact", rid, "--all-text")
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = lines_of(other, rid)
    assert line["text"] == "[REDACTED]" and line["data"] == "[REDACTED]", line
    assert IN_OUTPUT.encode() not in log_bytes(other) and b"./deploy.sh" not in log_bytes(other)
    assert git(other, "status", "--porcelain", "--", ".agents") == "" and cli(other, "verify").returncode == 0
