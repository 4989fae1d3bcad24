"""`repo-memory log redact`: a person takes a secret the scanner missed out of a record, and the change is attested by a
record of theirs, so verify, doctor and read call the record redacted, not tampered with. An edit without one still
breaks, as before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from repo_memory.guards.shellwords import quoted
from tests.conftest import git, initialised

SECRET = "zq7-door-code-Kumquat-4417"  # no rule of the scanner matches it: a secret it missed


def cli(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repo_memory", *args], cwd=repo, capture_output=True, text=True, input=stdin)


def logged(repo: Path, *texts: str, session: str = "ops") -> list[str]:
    """Records a person added with `log add`, committed; their ids."""
    ids = []
    for text in texts:
        done = cli(repo, "log", "add", text, "-s", session)
        assert done.returncode == 0, done.stderr
        ids.append(done.stdout.strip())
    return ids


def log_bytes(repo: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((repo / ".agents/experience").rglob("*")) if p.is_file())


def holding(repo: Path) -> Path:
    """The log file holding the secret (the session went on in a `+2` file after its first commit)."""
    return next(p for p in (repo / ".agents/experience").rglob("ops.*.jsonl") if SECRET.encode() in p.read_bytes())


def index_bytes(repo: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (repo / ".git/repo-memory").glob("index.sqlite*") if p.is_file())


def test_a_hand_edit_with_no_attestation_still_breaks_verify_doctor_and_read(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = logged(repo, f"the lab door code is {SECRET}", "deploys need a green main")[0]
    path = holding(repo)
    path.write_bytes(path.read_bytes().replace(SECRET.encode(), b"[REDACTED]"))
    git(repo, "commit", "-qam", "redact by hand")
    verify = cli(repo, "verify")
    assert verify.returncode == 1 and f"{rid}: its content does not match its sha256" in verify.stdout, verify.stdout
    assert "redacted on" not in verify.stdout
    doctor = json.loads(cli(repo, "doctor", "--json").stdout)
    assert any(f["level"] == "error" and f["path"] == rid for f in doctor), doctor


def test_log_redact_takes_the_string_out_of_the_record_and_the_index_attests_it_and_commits_it(tmp_path: Path):
    repo = initialised(tmp_path)
    rid, later = logged(repo, f"the lab door code is {SECRET}", "deploys need a green main")
    assert SECRET.encode() in index_bytes(repo)
    done = cli(repo, "log", "redact", rid, "--text", SECRET)
    assert done.returncode == 0, done.stderr
    assert "rotate" in done.stdout.lower() and "filter-repo" in done.stdout and "force-push" in done.stdout, done.stdout
    assert SECRET.encode() not in log_bytes(repo) and b"[REDACTED]" in log_bytes(repo)
    assert SECRET.encode() not in index_bytes(repo), "the search index kept the secret's bytes"
    assert git(repo, "status", "--porcelain", "--", ".agents") == ""  # committed
    subject = git(repo, "log", "-1", "--format=%s")
    assert subject.startswith("memory(redaction):") and rid in subject, subject
    # the attestation: a record of the person's, in the same session, naming the record
    records = [json.loads(line) for line in cli(repo, "log", "tail", "ops", "--json", "-n", "10").stdout.splitlines()]
    attest = records[-1]
    assert attest["kind"] == "redaction" and attest["source"]["actor"] == "human" and attest["refs"] == [rid], attest
    verify = cli(repo, "verify")
    assert verify.returncode == 0, verify.stdout
    assert f"{rid}: redacted on " in verify.stdout and "by the person" in verify.stdout, verify.stdout
    doctor = json.loads(cli(repo, "doctor", "--json").stdout)
    assert not [f for f in doctor if f["level"] == "error"], doctor
    read = cli(repo, "log", "tail", "ops", "-n", "5").stdout
    assert "verification failed" not in read and "redacted by the person" in read, read
    # the session goes on and verifies
    logged(repo, "after the redaction")
    assert cli(repo, "verify").returncode == 0
    assert later  # the record after the redacted one still links to it


def test_a_redaction_is_shown_by_read_and_recall_not_as_a_broken_hash(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = logged(repo, f"the lab door code is {SECRET} for the kumquat lab")[0]
    assert cli(repo, "log", "redact", rid, "--text", SECRET).returncode == 0
    from repo_memory.config import Config
    from repo_memory.core.store import Store

    store = Store(Config.load(repo))
    try:
        item = store.read(rid)
        view = item.records[0]
        assert view.verified and "redacted on" in (view.recorded or item.recorded), (view, item.recorded)
        hits = store.recall("kumquat lab door").hits
        hit = next(h for h in hits if h.id == rid)
        assert "does not match its hash" not in hit.recorded and "redacted on" in hit.recorded, hit.recorded
        assert not store.recall("zq7").hits and all(SECRET not in h.snippet for h in store.recall(SECRET).hits)
    finally:
        store.close()


def test_all_text_redacts_a_record_kept_in_a_blob_and_its_old_blob_is_emptied(tmp_path: Path):
    repo = initialised(tmp_path)
    (repo / ".agents/repo-memory.toml").write_text("inline_max_bytes = 1024\n", encoding="utf-8")
    git(repo, "add", ".agents/repo-memory.toml")
    git(repo, "commit", "-qm", "small blobs")
    rid = logged(repo, "x" * 3000 + f" then {SECRET}")[0]
    blobs = list((repo / ".agents/experience/blobs").iterdir())
    assert len(blobs) == 1 and SECRET.encode() in blobs[0].read_bytes()
    dry = cli(repo, "log", "redact", rid, "--all-text", "--dry-run")
    assert dry.returncode == 0 and blobs[0].exists() and "would" in dry.stdout.lower(), dry.stdout
    done = cli(repo, "log", "redact", rid, "--all-text")
    assert done.returncode == 0, done.stderr
    assert SECRET.encode() not in log_bytes(repo)
    assert blobs[0].read_bytes() == b"" and git(repo, "status", "--porcelain") == ""  # emptied, kept: see test_redact_clones
    assert cli(repo, "verify").returncode == 0


def test_a_string_the_record_does_not_hold_is_refused_and_others_holding_it_are_named(tmp_path: Path):
    repo = initialised(tmp_path)
    first, second = logged(repo, f"code {SECRET}", f"again: {SECRET}")
    missing = cli(repo, "log", "redact", first, "--text", "not-in-it")
    assert missing.returncode == 1 and "does not hold" in missing.stderr, missing.stderr
    done = cli(repo, "log", "redact", first, "--text", "-", stdin=SECRET + "\n")  # kept out of the shell's history
    assert done.returncode == 0 and second in done.stdout + done.stderr, done.stdout + done.stderr
    assert cli(repo, "log", "redact", second, "--text", SECRET).returncode == 0
    assert SECRET.encode() not in log_bytes(repo) and cli(repo, "verify").returncode == 0


def test_an_agent_cannot_write_a_redaction_record_nor_does_a_forged_one_count(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = logged(repo, f"the lab door code is {SECRET}", "deploys need a green main")[0]
    from repo_memory.config import Config
    from repo_memory.core.store import Store
    from repo_memory.errors import InvalidArgumentError
    from repo_memory.formats import experience

    store = Store(Config.load(repo))
    try:
        try:
            store.remember("redacted", "redaction", session="ops")
            raise AssertionError("an agent wrote a redaction record")
        except InvalidArgumentError:
            pass
    finally:
        store.close()
    # a hand edit and a hand-made, re-chained attestation (what a file tool would write): still a break
    path = holding(repo)
    first = json.loads(path.read_bytes().splitlines()[0])
    edited = {**first, "text": first["text"].replace(SECRET, "[REDACTED]")}
    path.write_bytes(experience.canonical(edited) + b"\n")
    tip = max((repo / ".agents/experience").rglob("ops.*.jsonl"), key=lambda p: p.name)
    last = json.loads(tip.read_bytes().splitlines()[-1])
    body = {k: v for k, v in edited.items() if k not in ("sha256", "mac")}
    forged = experience.seal({"id": f"{last['session']}#3", "seq": 3, "session": last["session"], "ts": last["ts"],
                              "kind": "redaction", "text": "redacted", "refs": [rid], "prev": last["sha256"],
                              "source": {"actor": "human", "tool": "redact"},
                              "data": {"id": rid, "sha256": first["sha256"], "content": experience.seal(body)["sha256"]}})
    with tip.open("ab") as handle:
        handle.write(experience.canonical(forged) + b"\n")
    verify = cli(repo, "verify")
    assert verify.returncode == 1 and f"{rid}: its content does not match its sha256" in verify.stdout, verify.stdout


def test_a_redaction_in_one_clone_merges_with_records_another_clone_added(tmp_path: Path):
    origin = initialised(tmp_path)
    rid = logged(origin, f"the lab door code is {SECRET}", "deploys need a green main", session="2026-12-06-abc123")[0]
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    assert cli(other, "init").returncode == 0
    logged(other, "a record the other clone adds", session="2026-12-06-abc123")
    assert cli(origin, "log", "redact", rid, "--text", SECRET).returncode == 0
    git(other, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert SECRET.encode() not in log_bytes(other)
    verify = cli(other, "verify")
    assert verify.returncode == 0 and "redacted on" in verify.stdout, verify.stdout


SECOND = "pz9-alarm-code-Quince-8812"  # another secret the scanner misses


def redacted_in_two_clones(tmp_path: Path, first: str, second: str) -> tuple[Path, str]:
    """A record holding SECRET and SECOND, committed; one clone redacts `first`, a clone of it `second`, then the second
    clone pulls the first (git union-merges the log); the second clone and the record's id."""
    origin = initialised(tmp_path)
    rid = logged(origin, f"door {SECRET} alarm {SECOND}", "deploys need a green main")[0]
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    assert cli(other, "init").returncode == 0
    assert cli(origin, "log", "redact", rid, "--text", first).returncode == 0
    assert cli(other, "log", "redact", rid, "--text", second).returncode == 0
    git(other, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    return other, rid


def lines_of(repo: Path, rid: str) -> list[dict]:
    logs = (p for p in (repo / ".agents/experience").rglob("*.jsonl"))
    return [r for p in logs for r in map(json.loads, p.read_bytes().splitlines()) if r["id"] == rid]


def test_two_clones_redacting_different_strings_of_a_record_merge_into_versions_log_redact_folds(tmp_path: Path):
    """A union merge kept both versions of the line, each holding the secret the other clone took out, and verify
    passed; now verify and doctor call it an error naming `log redact ID`, which folds them into one line redacting both."""
    other, rid = redacted_in_two_clones(tmp_path, SECRET, SECOND)
    assert len(lines_of(other, rid)) == 2  # what git's union merge made
    verify = cli(other, "verify")
    assert verify.returncode == 1 and f"repo-memory log redact {quoted(rid)}" in verify.stdout, verify.stdout
    doctor = json.loads(cli(other, "doctor", "--json").stdout)
    assert any(f["level"] == "error" and f["path"] == rid and f"repo-memory log redact {quoted(rid)}" in f["fix"] for f in doctor), doctor
    done = cli(other, "log", "redact", rid)
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = lines_of(other, rid)
    assert line["text"] == "door [REDACTED] alarm [REDACTED]", line
    assert SECRET.encode() not in log_bytes(other) and SECOND.encode() not in log_bytes(other)
    assert git(other, "status", "--porcelain", "--", ".agents") == ""  # committed
    verify = cli(other, "verify")
    assert verify.returncode == 0 and f"{rid}: redacted on" in verify.stdout, verify.stdout
    shown = cli(other, "log", "tail", rid.partition("#")[0], "-n", "10").stdout
    assert SECRET not in shown and SECOND not in shown, shown


def test_log_redact_with_a_string_fixes_every_version_of_the_record(tmp_path: Path):
    other, rid = redacted_in_two_clones(tmp_path, SECRET, SECOND)
    done = cli(other, "log", "redact", rid, "--text", SECOND)
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = lines_of(other, rid)
    assert SECRET not in line["text"] and SECOND not in line["text"], line
    assert SECRET.encode() not in log_bytes(other) and SECOND.encode() not in log_bytes(other)
    assert cli(other, "verify").returncode == 0


def test_the_same_string_redacted_in_two_clones_merges_into_one_line(tmp_path: Path):
    other, rid = redacted_in_two_clones(tmp_path, SECRET, SECRET)
    assert len(lines_of(other, rid)) == 1
    verify = cli(other, "verify")
    assert verify.returncode == 0 and "versions" not in verify.stdout, verify.stdout


def test_a_version_differing_by_more_than_redactions_is_flagged_and_never_folded(tmp_path: Path):
    """A second line of the record's id whose text differs elsewhere (an agent's edit, attested by nothing) is no version
    a redaction made: verify flags it, and `log redact ID` refuses to fold it, changing nothing."""
    other, rid = redacted_in_two_clones(tmp_path, SECRET, SECOND)
    path = next(p for p in (other / ".agents/experience").rglob("*.jsonl") if b"door [REDACTED] alarm" in p.read_bytes())
    path.write_bytes(path.read_bytes().replace(b"door [REDACTED] alarm", b"deploy ok [REDACTED] alarm"))
    git(other, "commit", "-qam", "an agent's edit")
    before = log_bytes(other)
    verify = cli(other, "verify")
    assert verify.returncode == 1 and "does not match its sha256" in verify.stdout, verify.stdout
    refused = cli(other, "log", "redact", rid)
    assert refused.returncode == 1 and "not versions" in refused.stderr, refused.stderr
    assert log_bytes(other) == before


def test_an_export_holding_a_redacted_record_is_refused_by_import_naming_it(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = logged(repo, f"the lab door code is {SECRET}", "deploys need a green main")[0]
    assert cli(repo, "log", "redact", rid, "--text", SECRET).returncode == 0
    export = cli(repo, "log", "tail", "ops", "--json", "-n", "10").stdout
    target = initialised(tmp_path, "target")
    refused = cli(target, "log", "import", "-", stdin=export)
    assert refused.returncode == 1 and "stdin:1:" in refused.stderr and "stdin:3:" in refused.stderr, refused.stderr
    said = refused.stderr  # why, and what to do: the message said "kind 'redaction' is not one of note, …" and "edited"
    assert "redacted by a person's `log redact`" in said and "a redaction record attests" in said, said
    assert "drop id, seq, sha256, mac, prev and source" in said and "docs/security.md" in said, said
    skipped = cli(target, "log", "import", "-", "--skip-invalid", stdin=export)
    assert skipped.returncode == 0 and "Imported 1 record" in skipped.stdout, skipped.stdout
    assert SECRET.encode() not in log_bytes(target) and cli(target, "verify").returncode == 0
    # the documented way in: the redacted record as a new record, the redaction record left out
    fixed = subprocess.run(["jq", "-c", JQ_AS_NEW], input=export, capture_output=True, text=True, check=True).stdout
    brought = cli(target, "log", "import", "-", stdin=fixed)
    assert brought.returncode == 0, brought.stderr
    assert b"door code is [REDACTED]" in log_bytes(target) and cli(target, "verify").returncode == 0


JQ_AS_NEW = ('if .kind == "redaction" then empty elif (.text // "" | contains("[REDACTED]")) '
             'then del(.id, .seq, .sha256, .mac, .prev, .source) else . end')  # docs/security.md gives it


def forge(repo: Path, target: str) -> str:
    """What an agent's script could do: edit committed record `target` and append an unmarked `redaction` record
    attesting the edit to its session's last log; the forged record's id."""
    from repo_memory.formats import experience

    logs = sorted((repo / ".agents/experience").rglob("ops.*.jsonl"), key=lambda p: (len(p.name), p.name))
    for path in logs:
        lines = path.read_bytes().splitlines()
        for n, raw in enumerate(lines):
            if json.loads(raw)["id"] == target:
                record = json.loads(raw)
                edited = {**record, "text": "deploy ok, all checks passed"}
                lines[n] = experience.canonical(edited)
                path.write_bytes(b"\n".join(lines) + b"\n")
    last = json.loads(logs[-1].read_bytes().splitlines()[-1])
    body = {k: v for k, v in edited.items() if k not in ("sha256", "mac")}
    seq = last["seq"] + 1
    forged = experience.seal({"id": f"{last['session']}#{seq}", "seq": seq, "session": last["session"], "ts": last["ts"],
                              "kind": "redaction", "text": "redacted", "refs": [target], "prev": last["sha256"],
                              "source": {"actor": "human", "clone": record["source"].get("clone", ""), "tool": "redact"},
                              "data": {"id": target, "sha256": record["sha256"], "content": experience.seal(body)["sha256"],
                                       "fields": ["text"]}})
    with logs[-1].open("ab") as handle:
        handle.write(experience.canonical(forged) + b"\n")
    return str(forged["id"])


def test_redact_refuses_while_another_line_of_the_session_is_edited_or_unmarked_and_commits_nothing(tmp_path: Path):
    repo = initialised(tmp_path)
    tampered, rid = logged(repo, "deploy FAILED: rollback needed, do not ship", f"the staging password is {SECRET}")
    forged = forge(repo, tampered)
    before, head = log_bytes(repo), git(repo, "rev-parse", "HEAD")
    done = cli(repo, "log", "redact", rid, "--text", SECRET)
    assert done.returncode == 1, done.stdout + done.stderr
    assert tampered in done.stderr and forged in done.stderr and "git checkout HEAD --" in done.stderr, done.stderr
    assert log_bytes(repo) == before and git(repo, "rev-parse", "HEAD") == head  # nothing written, nothing committed
    verify = cli(repo, "verify")
    assert verify.returncode == 1 and "redacted on" not in verify.stdout, verify.stdout


def test_a_redaction_record_cannot_be_redacted(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = logged(repo, f"the door code is {SECRET}")[0]
    assert cli(repo, "log", "redact", rid, "--text", SECRET).returncode == 0
    attestation = json.loads(cli(repo, "log", "tail", "ops", "--json", "-n", "1").stdout.splitlines()[-1])["id"]
    refused = cli(repo, "log", "redact", attestation, "--all-text")
    assert refused.returncode == 1 and "redaction record" in refused.stderr, refused.stderr
    assert cli(repo, "verify").returncode == 0


def test_redact_drops_the_textconv_cache_and_the_documented_rewrite_leaves_no_copy(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = logged(repo, f"the door code is {SECRET}", "deploys need a green main")[0]
    git(repo, "log", "-p", "--", ".agents")  # git fills its textconv cache with the rendered logs
    assert git(repo, "for-each-ref", "refs/notes/textconv/repo-memory") != ""
    done = cli(repo, "log", "redact", rid, "--text", SECRET)
    assert done.returncode == 0 and "refs/notes/textconv" in done.stdout, done.stdout
    assert git(repo, "for-each-ref", "refs/notes/textconv/repo-memory") == ""
    env = {"FILTER_BRANCH_SQUELCH_WARNING": "1"}
    rewrite = f"find . -path ./.git -prune -o -name '*.jsonl' -exec sed -i 's/{SECRET}/[REDACTED]/g' {{}} +"
    subprocess.run(["git", "filter-branch", "--tree-filter", rewrite, "--", "--all"], cwd=repo, capture_output=True,
                   check=True, env={**__import__("os").environ, **env})
    subprocess.run("rm -rf .git/refs/original && git reflog expire --expire=now --all && git gc -q --prune=now",
                   shell=True, cwd=repo, check=True)
    objects = subprocess.run("git cat-file --batch-all-objects --batch", shell=True, cwd=repo, capture_output=True).stdout
    assert SECRET.encode() not in objects


def test_stage_mode_stages_the_redaction_and_says_no_commit_holds_a_secret_never_committed(tmp_path: Path):
    repo = initialised(tmp_path)
    (repo / ".agents/repo-memory.toml").write_text('commit = "stage"\n')
    git(repo, "add", ".agents/repo-memory.toml")
    git(repo, "commit", "-qm", "stage")
    rid = logged(repo, f"the door code is {SECRET}")[0]
    done = cli(repo, "log", "redact", rid, "--text", SECRET)
    assert done.returncode == 0, done.stderr
    assert "filter-repo" not in done.stdout and "no commit holds" in done.stdout.lower(), done.stdout
    staged = git(repo, "diff", "--cached")
    assert SECRET not in staged and "[REDACTED]" in staged, staged
    assert git(repo, "diff", "--", ".agents") == ""  # the redacted bytes are what is staged
    git(repo, "commit", "-qm", "my work")
    assert SECRET.encode() not in subprocess.run("git log -p --no-textconv", shell=True, cwd=repo, capture_output=True).stdout
    assert cli(repo, "verify").returncode == 0


def test_redact_names_records_of_other_sessions_holding_the_string(tmp_path: Path):
    repo = initialised(tmp_path)
    rid = logged(repo, f"the door code is {SECRET}")[0]
    other = logged(repo, f"agent echoed: door code {SECRET}", session="work")[0]
    done = cli(repo, "log", "redact", rid, "--text", SECRET)
    assert done.returncode == 0 and other in done.stderr, done.stderr


def test_a_redaction_not_committed_yet_is_said_so_never_to_be_undone_by_a_checkout(tmp_path: Path):
    """With commit = "stage" (or "off") a redaction waits for the person's commit; meanwhile verify said the committed
    record was edited and to restore it with `git checkout HEAD -- <log>`, doctor called it an error to fix that way —
    which brings the secret back — and a second redact in that session was refused as a broken log."""
    repo = initialised(tmp_path)
    (repo / ".agents/repo-memory.toml").write_text('commit = "stage"\n')
    rids = logged(repo, f"the door code is {SECRET}", f"the alarm code is {SECRET}")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "my work, the memory staged with it")  # HEAD holds the secret now
    assert cli(repo, "log", "redact", rids[0], "--text", SECRET).returncode == 0
    verify = cli(repo, "verify")
    assert verify.returncode == 0 and "checkout HEAD" not in verify.stdout and "not committed yet" in verify.stdout, verify.stdout
    doctor = json.loads(cli(repo, "doctor", "--json").stdout)
    assert not [f for f in doctor if f["level"] == "error"] and "checkout HEAD" not in json.dumps(doctor), doctor
    second = cli(repo, "log", "redact", rids[1], "--text", SECRET)
    assert second.returncode == 0, second.stdout + second.stderr
    assert cli(repo, "verify").returncode == 0
