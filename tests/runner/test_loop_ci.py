"""`loop due --event ci-failure` in a CI checkout, a new clone where no person accepted anything: the job names the commit
whose loop specs it trusts, and without that it fails saying so instead of passing having run nothing."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from repo_memory.guards import reserved
from repo_memory.runner.engine import Engine
from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

from tests.conftest import git
from tests.runner.conftest import FIXED, agent_script
from tests.runner.test_loop_triggers import triggered


def ci_checkout(toy: Path, store: Store, runner: CliRunner, tmp_path: Path) -> tuple[Path, str]:
    """The developer accepts the ci loop (committed); CI clones the repository: the clone and the commit it checked out."""
    triggered(toy, "trigger: {on: ci}")
    git(toy, "add", "-A")
    git(toy, "commit", "-q", "-m", "the ci loop")
    accepted = runner.invoke(cli, ["--root", str(toy), "loop", "accept", "fix-add", "--sha", Engine(store).spec("fix-add").sha256])
    assert accepted.exit_code == 0, accepted.output
    clone = tmp_path / "ci-checkout"
    git(tmp_path, "clone", "-q", str(toy), str(clone))
    return clone, git(clone, "rev-parse", "HEAD").strip()


def test_the_documented_ci_step_fails_saying_what_the_job_must_do_instead_of_running_nothing(
        toy: Path, store: Store, runner: CliRunner, tmp_path: Path):
    """It said "waiting for a person's accept", ran nothing and exited 0: every CI checkout is a new clone."""
    clone, _ = ci_checkout(toy, store, runner, tmp_path)
    fixer = agent_script(tmp_path, f"open('calc.py', 'w').write({FIXED!r})\n")
    step = runner.invoke(cli, ["--root", str(clone), "loop", "due", "--run", "--event", "ci-failure", "--agent", fixer])
    assert step.exit_code == 1, step.output
    assert "--trust-specs-at COMMIT" in step.output and "waiting for a person's accept" not in step.output, step.output
    assert (clone / "calc.py").read_text(encoding="utf-8") != FIXED


def test_a_ci_job_that_names_the_commit_it_trusts_runs_the_loop_as_that_commit_holds_it(
        toy: Path, store: Store, runner: CliRunner, tmp_path: Path):
    clone, head = ci_checkout(toy, store, runner, tmp_path)
    fixer = agent_script(tmp_path, f"open('calc.py', 'w').write({FIXED!r})\n")
    step = runner.invoke(cli, ["--root", str(clone), "loop", "due", "--run", "--event", "ci-failure", "--trust-specs-at", head,
                               "--agent", fixer])
    assert step.exit_code == 0, step.output
    assert f"fix-add: due (CI failed); its spec as commit {head[:12]} holds it" in step.output, step.output
    assert "ended succeeded" in step.output, step.output
    spec = clone / ".agents/loops/fix-add.md"  # a spec changed since the trusted commit (a pushed edit no one reviewed)
    spec.write_text(spec.read_text(encoding="utf-8").replace("Fix calc.py", "Fix calc.py now"), encoding="utf-8")
    again = runner.invoke(cli, ["--root", str(clone), "loop", "due", "--run", "--event", "ci-failure", "--trust-specs-at", head,
                                "--agent", fixer])
    assert again.exit_code == 1 and "changed since that commit" in again.output and "due (" not in again.output, again.output


def test_an_agents_shell_may_not_trust_committed_specs_for_itself(tmp_path: Path):
    """On a developer's machine the option would run a spec an agent committed, unaccepted: the PreToolUse hook refuses it."""
    places = reserved.Places(tmp_path, tmp_path / ".git", tmp_path / "keys")
    refused = places.command("repo-memory loop due --run --trust-specs-at HEAD --agent 'claude -p'")
    assert "loop due --trust-specs-at" in refused and "person" in refused, refused
    assert places.command("repo-memory loop due --run --event post-commit") == ""
