"""Skills ranked by what their uses earned: verified loop outcomes, feedback, and decay for the unused."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
from click.testing import CliRunner
from mcp import Client

from repo_memory.core import doctor, mirror
from repo_memory.shells import mcp as server
from repo_memory.core import utility
from repo_memory.shells.cli import cli
from repo_memory.config import Config
from repo_memory.runner.engine import Engine
from repo_memory.core.store import Store

from tests.conftest import GIT_ENV, git, write_skill_file

PY = sys.executable


def loop_spec(name: str, exit_code: int, skill: str = "") -> str:
    return (f"---\nname: {name}\nstatus: active\ntrigger: {{on: manual}}\ngoal: Ship the canary.\nverify:\n"
            f'  - {{level: 4, run: "{PY} -c \'import sys; sys.exit({exit_code})\'", expect: {{exit: 0}}, timeout: 30}}\n'
            "stop: {max_iterations: 1}\nsuccess_requires_level: 4\n" + (f"memory: {{skills: [{skill}]}}\n" if skill else "")
            + "---\nShip it.\n")


def test_a_skill_whose_runs_succeeded_outranks_a_similar_one_whose_runs_failed(store: Store, repo: Path):
    write_skill_file(repo, "canary-rollout", "Deploy the canary build to the staging cluster.", "Run the canary deploy script.")
    write_skill_file(repo, "canary-push", "Deploy the canary build to the staging cluster.", "Run the canary deploy script.")
    store.refresh()
    before = [h.id for h in store.recall("deploy canary build", kinds=["skill"]).hits]
    assert before == ["skill:canary-push", "skill:canary-rollout"]  # the same words: a tie, canary-push first by name
    # Each spec binds its skill: a run credits the skills its spec binds and those read during it.
    (repo / ".agents/loops/good.md").write_text(loop_spec("good", 0, "canary-rollout"), encoding="utf-8")
    (repo / ".agents/loops/bad.md").write_text(loop_spec("bad", 1, "canary-push"), encoding="utf-8")
    engine = Engine(store)
    for name, skill, end in (("good", "canary-rollout", "succeeded"), ("bad", "canary-push", "budget_exhausted")):
        engine.accept(name)
        for _ in range(3):
            run = engine.start(name)["run"]
            assert engine.step(run, "deployed", "done", None, [skill])["state"] == end
    evidence = store.evidence()
    assert (evidence["canary-rollout"].successes, evidence["canary-push"].failures) == (3, 3)
    after = [h.id for h in store.recall("deploy canary build", kinds=["skill"]).hits]
    assert after == ["skill:canary-rollout", "skill:canary-push"]


def test_misled_feedback_lowers_rank_then_doctor_suggests_deprecation_and_deprecated_leaves_recall(store: Store, repo: Path,
                                                                                                      runner: CliRunner):
    write_skill_file(repo, "cache-flush", "Flush the CDN cache after a release.", "Call the purge endpoint.")
    write_skill_file(repo, "cache-purge", "Flush the CDN cache after a release, all regions.", "Call the purge endpoint per region.")
    store.refresh()
    assert [h.id for h in store.recall("flush CDN cache", kinds=["skill"]).hits][0] == "skill:cache-flush"

    async def agent_says_misled() -> list[bool]:
        async with Client(server.build(store)) as client:
            results = [await client.call_tool("feedback", {"ref": "skill:cache-flush", "outcome": "misled",
                                                           "note": "the endpoint needs a region"}) for _ in range(3)]
            bad = await client.call_tool("feedback", {"ref": "skill:cache-flushh", "outcome": "misled"})
            assert bad.is_error and "cache-flush" in bad.content[0].text  # type: ignore[union-attr]
            return [r.is_error for r in results]

    assert anyio.run(agent_says_misled) == [False, False, False]
    assert [h.id for h in store.recall("flush CDN cache", kinds=["skill"]).hits][0] == "skill:cache-purge"
    # one session saying it three times (or five) is not enough to propose a person's skill for deprecation
    assert not any(f.path == "skill:cache-flush" and "misled" in f.message for f in doctor.examine(store))
    other = Store(Config.load(repo), session="another-session")
    other.feedback("skill:cache-flush", "misled", "same problem here")
    other.close()
    store.refresh()
    assert any(f.path == "skill:cache-flush" and "misled 4" in f.message for f in doctor.examine(store))
    stats = runner.invoke(cli, ["--root", str(repo), "stats"]).output
    line = next(x for x in stats.splitlines() if x.startswith("cache-flush"))
    assert "deprecate?" in line and " 0.67 " in line  # 0.5 + (0 + 1) / (4 + 2)
    write_skill_file(repo, "cache-flush", "Flush the CDN cache after a release.", "Call the purge endpoint.",
                     extra="metadata:\n  status: deprecated\n")
    store.refresh()
    assert [h.id for h in store.recall("flush CDN cache", kinds=["skill"]).hits] == ["skill:cache-purge"]


def test_with_decay_an_old_unused_skill_falls_below_a_fresh_one_in_a_tie(repo: Path):
    for name in ("alpha-migrate", "beta-migrate"):
        path = write_skill_file(repo, name, "Run the schema migration for the billing database.", "Apply the migration.")
        if name == "alpha-migrate":  # untouched and unused for 400 days
            old = time.time() - 400 * 86400
            os.utime(path, (old, old))
    (repo / ".agents/repo-memory.toml").write_text("decay_half_life_days = 0\n", encoding="utf-8")
    store = Store(Config.load(repo))
    store.refresh()
    assert [h.id for h in store.recall("billing schema migration").hits] == ["skill:alpha-migrate", "skill:beta-migrate"]  # a tie
    store.close()
    (repo / ".agents/repo-memory.toml").write_text("decay_half_life_days = 30\n", encoding="utf-8")
    store = Store(Config.load(repo))
    hits = store.recall("billing schema migration").hits
    assert [h.id for h in hits] == ["skill:beta-migrate", "skill:alpha-migrate"] and hits[0].score > hits[1].score * 1.2
    store.close()


def test_a_new_skill_is_not_buried_by_an_unproven_old_one_and_the_formula_is_as_documented():
    fresh = utility.factor(None, time.time_ns(), 90)
    assert abs(fresh - 1.0) < 1e-6  # no evidence, just written: exactly neutral
    proven = utility.Utility("x", uses=3, successes=3)
    failed = utility.Utility("y", uses=3, failures=3)
    assert round(utility.factor(proven, time.time_ns(), 0), 2) == 1.3 and round(utility.factor(failed, time.time_ns(), 0), 2) == 0.7
    year_old = time.time_ns() - 365 * 86400 * 10**9
    assert 0.8 < utility.factor(None, year_old, 90) < 0.82  # at most 20% lower for age alone


def test_a_skill_ages_from_the_commit_that_last_changed_it_not_from_when_a_clone_wrote_its_file(repo: Path, tmp_path: Path):
    """git keeps no file times: a clone, a checkout or a reset writes every file with the time it ran, so by the file's
    mtime a skill nobody touched for a year ranked level with yesterday's in a teammate's fresh clone."""
    year_ago = time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(time.time() - 365 * 86400))
    text = ("Rotate the signing keys of the payment gateway.", "1. Generate the new key pair. 2. Upload it. 3. Revoke the old key.")
    write_skill_file(repo, "rotate-keys-a", *text)
    for n in range(6):  # more skills than a briefing shows, so which come first counts
        write_skill_file(repo, f"zz-other-{n}", f"Procedure {n} of the warehouse.", "1. Do it.")
    git(repo, "add", "-A")
    subprocess.run(["git", "commit", "-q", "-m", "a"], cwd=repo, check=True, env={**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": year_ago,
                                                                                "GIT_COMMITTER_DATE": year_ago})
    write_skill_file(repo, "rotate-keys-b", *text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "b")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    (clone / ".agents/repo-memory.toml").write_text("decay_half_life_days = 90\nsemantic = false\nmirror_limit = 1\n", encoding="utf-8")  # not committed
    store = Store(Config.load(clone))
    try:
        store.refresh()
        hits = store.recall("rotate the signing keys", kinds=["skill"]).hits
        assert [h.id for h in hits] == ["skill:rotate-keys-b", "skill:rotate-keys-a"] and hits[1].score < hits[0].score * 0.85, hits
        assert "rotate-keys-b" not in mirror.of(store).beyond  # past mirror_limit, those changed long ago are left out
        skills_line = next(line for line in store.briefing().splitlines() if line.startswith("- skills:"))
        assert skills_line.index("skill:rotate-keys-b") < skills_line.index("skill:rotate-keys-a")  # unused: the newer first
        write_skill_file(clone, "rotate-keys-a", text[0], text[1] + " 4. Tell the team.")  # a person's edit, not committed yet
        store.refresh()
        hits = store.recall("rotate the signing keys", kinds=["skill"]).hits
        assert hits[1].score > hits[0].score * 0.95, hits  # edited now: as fresh as the other
    finally:
        store.close()
