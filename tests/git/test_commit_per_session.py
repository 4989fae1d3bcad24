"""What several sessions (and a person) leave pending at once is committed as one commit per session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.errors import ConflictError
from tests.conftest import git, kept


def agent(repo: Path, harness: str, session: str) -> Store:
    return Store(Config.load(repo, env={**os.environ, "REPO_MEMORY_HARNESS": harness}), session=session)


def trailers(repo: Path, commit: str, key: str) -> list[str]:
    return [line.split(": ", 1)[1] for line in git(repo, "log", "-1", "--format=%B", commit).splitlines() if line.startswith(f"{key}: ")]


def test_two_agents_changes_due_at_once_are_a_commit_each_and_the_skills_names_the_session_and_harness_that_wrote_it(repo: Path):
    """Claude Code and Codex in one clone both remembered, then both created skill deploy-steps (Codex's won): the
    `git commit` of one of them flushed everything into one commit with both sessions' records, two Memory-Session
    trailers and `Memory-Harness: claude-code, codex`, so git could not tell who wrote the skill."""
    (repo / ".agents").mkdir(exist_ok=True)
    (repo / ".agents/repo-memory.toml").write_text("commit_window_seconds = 600\n", encoding="utf-8")  # no timer's commit between
    git(repo, "add", ".agents")
    git(repo, "commit", "-q", "-m", "init")
    claude, codex = agent(repo, "claude-code", "claude-s"), agent(repo, "codex", "codex-s")
    try:
        for i in range(3):
            claude.remember(f"Claude note {i}: the calc module adds")
            codex.remember(f"Codex note {i}: the readme is short")
        codex.write_skill("deploy-steps", "How to deploy; use when deploying.", "1. Run ./deploy.sh", actor="agent")
        with pytest.raises(ConflictError) as refused:
            claude.write_skill("deploy-steps", "How to deploy; use when deploying.", "1. Run make deploy", actor="agent")
        said = str(refused.value)
        assert f"another session ({codex.session}, codex) created skill:deploy-steps" in said, said
        assert "read it" in said and "another name" in said, said
        claude.flush("all")  # what an agent's `git commit` does first (shells/pretool.py)
        made = git(repo, "rev-list", "--reverse", "HEAD~2..HEAD").split()
        assert git(repo, "rev-parse", "HEAD~2").strip() == git(repo, "rev-parse", "HEAD~1^").strip()
        assert git(repo, "log", "-1", "--format=%s", "HEAD~2").strip() == "init"  # two commits, chained on the last one
        by = {trailers(repo, c, "Memory-Session")[0]: c for c in made}
        assert all(len(trailers(repo, c, "Memory-Session")) == 1 for c in made) and set(by) == {claude.session, codex.session}
        skill = by[codex.session]
        assert trailers(repo, skill, "Memory-Harness") == ["codex"]
        assert ".agents/skills/deploy-steps/SKILL.md" in git(repo, "show", "--name-only", "--format=", skill).split()
        assert git(repo, "log", "-1", "--format=%s", skill).startswith("memory(skill): add deploy-steps; experience ")
        assert trailers(repo, by[claude.session], "Memory-Harness") == ["claude-code"]
        assert git(repo, "show", "--name-only", "--format=", by[claude.session]).split() == [
            p for p in git(repo, "show", "--name-only", "--format=", by[claude.session]).split() if claude.session in p]
        assert git(repo, "log", "-1", "--format=%s", by[claude.session]).startswith(f"memory(experience): {claude.session}#1-3")
        assert git(repo, "status", "--porcelain", "--", ".agents") == ""
    finally:
        claude.close()
        codex.close()


def test_a_change_of_no_session_due_beside_a_sessions_is_a_commit_of_its_own(repo: Path):
    """A change no session made (init's scaffolding, a person's command) was folded into the session's commit."""
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    store = agent(repo, "codex", "codex-s")
    try:
        store.write_skill("deploy", "How we deploy; use when shipping.", "1. Ship.", actor="agent")
        (repo / "tool.txt").write_text("made by a command\n", encoding="utf-8")
        store.commit_files(["tool.txt"], "memory: add tool.txt")
        assert git(repo, "log", "--format=%s", "-2").splitlines() == ["memory: add tool.txt", "memory(skill): add deploy"]
        assert trailers(repo, "HEAD", "Memory-Session") == [] and trailers(repo, "HEAD~1", "Memory-Session") == [kept(store, "codex-s")]
        assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["tool.txt"]
    finally:
        store.close()


def windowed(repo: Path) -> str:
    """A window long enough that no timer commits between the writes and the flush the test makes; the commit made."""
    (repo / ".agents").mkdir(exist_ok=True)
    (repo / ".agents/repo-memory.toml").write_text("commit_window_seconds = 600\n", encoding="utf-8")
    git(repo, "add", ".agents")
    git(repo, "commit", "-q", "-m", "init")
    return git(repo, "rev-parse", "HEAD").strip()


def files(repo: Path, commit: str) -> list[str]:
    return git(repo, "show", "--name-only", "--format=", commit).split()


def test_sessions_that_changed_one_skill_are_one_commit_naming_both_and_a_session_apart_is_its_own(repo: Path):
    """Claude Code created skill deploy-steps and Codex read and updated it before a flush: the creation's commit held
    only agents/openai.yaml, Codex's said "add deploy-steps" with Codex's trailers and held SKILL.md, and the update's
    message was gone (a path went to its last writer, the change's other file stayed behind, the first message won)."""
    base = windowed(repo)
    claude, codex, other = agent(repo, "claude-code", "sA"), agent(repo, "codex", "sB"), agent(repo, "codex", "sC")
    try:
        claude.remember("Claude: deploy with the script")
        claude.write_skill("deploy-steps", "How to deploy; use when deploying.", "1. Run ./deploy.sh", actor="agent")
        codex.remember("Codex: the logs tell whether it worked")
        codex.read("skill:deploy-steps")
        codex.write_skill("deploy-steps", None, "1. Run ./deploy.sh\n2. Check the logs", actor="agent")
        other.remember("Another Codex: the readme is short")
        claude.flush("all")
        by = {tuple(trailers(repo, c, "Memory-Session")): c for c in git(repo, "rev-list", f"{base}..HEAD").split()}
        assert set(by) == {(claude.session, codex.session), (other.session,)}, by
        joint, apart = by[(claude.session, codex.session)], by[(other.session,)]
        assert trailers(repo, joint, "Memory-Harness") == ["claude-code, codex"]
        assert {".agents/skills/deploy-steps/SKILL.md", ".agents/skills/deploy-steps/agents/openai.yaml"} <= set(files(repo, joint))
        assert git(repo, "log", "-1", "--format=%s", joint).startswith(
            "memory(skill): add deploy-steps; update deploy-steps; experience 2 changes"), git(repo, "log", "-1", "--format=%B", joint)
        assert all(other.session not in p for p in files(repo, joint))
        assert files(repo, apart) == [p for p in files(repo, apart) if other.session in p] and trailers(repo, apart, "Memory-Harness") == ["codex"]
        assert git(repo, "status", "--porcelain", "--", ".agents") == ""
    finally:
        claude.close()
        codex.close()
        other.close()


def test_an_import_beside_a_live_sessions_pending_skill_and_records_names_only_what_it_imported(repo: Path, tmp_path: Path):
    """`log import` while a live Codex session had a record and a new skill pending made one commit of both sessions
    with `Memory-Harness: claude-code`, the import's: the import took every pending entry as its own."""
    base = windowed(repo)
    codex = agent(repo, "codex", "live-codex")
    try:
        codex.remember("codex: the parser needs a rewrite")
        codex.write_skill("deploy-steps", "How to deploy; use when deploying.", "1. Run ./deploy.sh", actor="agent")
        transcript = tmp_path / "cc-1.jsonl"
        lines = [{"type": "user", "message": {"role": "user", "content": "how do we build?"}, "uuid": "u1", "sessionId": "cc-1",
                  "timestamp": "2026-12-01T10:00:00Z", "cwd": str(repo)},
                 {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Run make build."}]},
                  "uuid": "u2", "sessionId": "cc-1", "timestamp": "2026-12-01T10:00:05Z", "cwd": str(repo)}]
        transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "repo_memory", "log", "import", str(transcript)], cwd=repo,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        made = git(repo, "rev-list", f"{base}..HEAD").split()
        assert len(made) == 2, git(repo, "log", f"{base}..HEAD")
        imported, skill = sorted(made, key=lambda c: codex.session in trailers(repo, c, "Memory-Session"))
        assert [s.split(".")[0] for s in trailers(repo, imported, "Memory-Session")] == ["claude-cc-1"]
        assert trailers(repo, imported, "Memory-Harness") == ["claude-code"]
        assert all("claude-cc-1" in p for p in files(repo, imported)), files(repo, imported)
        assert trailers(repo, skill, "Memory-Session") == [codex.session] and trailers(repo, skill, "Memory-Harness") == ["codex"]
        assert ".agents/skills/deploy-steps/SKILL.md" in files(repo, skill)
        assert all(codex.session not in p for p in files(repo, skill))  # the live session's record: for its own checkpoint
        codex.close()
        assert trailers(repo, "HEAD", "Memory-Session") == [codex.session] and trailers(repo, "HEAD", "Memory-Harness") == ["codex"]
        assert git(repo, "status", "--porcelain", "--", ".agents") == ""
    finally:
        codex.close()
