"""The HTML report, rendered by headless Chromium: it loads with no network, shows the expected counts, and
memory content stays text (a <script> in a description does not run)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.shells.cli import cli
from repo_memory.runner.engine import Engine
from repo_memory.core.store import Store

from tests.conftest import write_skill_file

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed: `apt-get install chromium` (./install.sh --test does it when it can)")
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args], capture_output=True, text=True, timeout=120)


def seeded(store: Store, repo: Path) -> None:
    write_skill_file(repo, "release-checklist", "Cut a release: bump, changelog, tag.", "Steps.")
    write_skill_file(repo, "old-deploy", "The deploy we stopped using.", "Steps.", extra="metadata:\n  status: deprecated\n")
    write_skill_file(repo, "sneaky", "<script>document.title='pwned'</script> <img src=x onerror=alert(1)>", "Steps.")
    store.refresh()
    store.write_skill("flaky-tests", "How to find a flaky test.", "Loop it with a fixed seed.")  # an agent's draft
    for day in ("2026-11-30", "2026-12-01", "2026-12-01"):
        store.remember(f"a note from {day}", ts=f"{day}T10:00:00Z")
    store.feedback("skill:release-checklist", "helped")
    (repo / ".agents/loops/ship.md").write_text(
        "---\nname: ship\nstatus: active\ntrigger: {on: manual}\ngoal: Ship it.\nverify:\n"
        f"  - {{level: 4, run: \"{sys.executable} -c 'import sys; sys.exit(0)'\", expect: {{exit: 0}}}}\n"
        "stop: {max_iterations: 1}\nsuccess_requires_level: 4\n---\nShip.\n", encoding="utf-8")
    engine = Engine(store)
    engine.accept("ship")
    for _ in range(2):
        run = engine.start("ship")["run"]
        engine.step(run, "shipped", "done", None, ["release-checklist"])


@pytest.mark.slow
def test_the_report_renders_in_chromium_with_the_expected_counts_and_no_live_content(store: Store, repo: Path, tmp_path: Path,
                                                                                   runner: CliRunner):
    seeded(store, repo)
    out = tmp_path / "report.html"
    result = runner.invoke(cli, ["--root", str(repo), "report", "-o", str(out)])
    assert result.exit_code == 0 and result.output.strip() == str(out)
    page = out.read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page) and "<script" not in page  # nothing to fetch, nothing to run
    rendered = chromium(tmp_path, "--dump-dom", out.as_uri())
    assert rendered.returncode == 0, rendered.stderr[-2000:]
    dom = rendered.stdout
    counts = dict(re.findall(r'data-(\w+)="(\d+)"', dom))
    assert counts == {"skills": "4", "drafts": "1", "stale": "0", "runs": "2", "records": str(int(counts["records"])), "sessions": counts["sessions"],
                      "days": counts["days"]}
    assert int(counts["records"]) >= 3 + 1 and int(counts["days"]) >= 2
    assert re.search(r'id="count-drafts">1<', dom) and "repo-memory accept flaky-tests" in dom
    assert dom.count("succeeded (1)") == 2 and "<title>pwned</title>" not in dom and "&lt;script&gt;" in dom
    assert "<title>repo-memory report" in dom
    shot = tmp_path / "report.png"
    taken = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1200,1400", out.as_uri())
    assert taken.returncode == 0 and shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("target", ["/proc/version", "missing/dir/r.html", "a-folder"])
def test_report_refuses_a_target_that_is_not_a_regular_file_in_an_existing_folder(repo: Path, target: str):
    (repo / "a-folder").mkdir()
    path = target if target.startswith("/") else str(repo / target)
    result = CliRunner().invoke(cli, ["--root", str(repo), "report", "-o", path])
    assert result.exit_code != 0 and result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output and "Error:" in result.output
    assert not (repo / "missing").exists()  # no folder made for a mistyped path


def test_the_report_counts_a_settled_stale_record_apart_from_the_stale_ones(store: Store, repo: Path, tmp_path: Path, runner: CliRunner):
    """A record whose code changed, then reported outdated, is settled: `stale` and doctor count it apart, and the
    report listed it among the stale memories as if nothing had been done."""
    from tests.conftest import git

    (repo / "pkg").mkdir()
    (repo / "pkg/store.py").write_text("class Store:\n    def save(self, rows):\n        return list(rows)\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the store")
    record = store.remember("Store.save keeps the rows in order", refs=["pkg/store.py::Store.save"])[0]["id"]
    store.flush("all")
    (repo / "pkg/store.py").write_text("class Store:\n    def save(self, rows):\n        return sorted(rows)\n", encoding="utf-8")
    git(repo, "commit", "-qam", "save sorts the rows")
    out = tmp_path / "report.html"

    def counted() -> tuple[str, str]:
        assert runner.invoke(cli, ["--root", str(repo), "report", "-o", str(out)]).exit_code == 0
        page = out.read_text(encoding="utf-8")
        return re.findall(r'data-stale="(\d+)"', page)[0], page

    assert counted()[0] == "1"
    assert runner.invoke(cli, ["--root", str(repo), "feedback", record, "outdated"]).exit_code == 0
    stale, page = counted()
    assert stale == "0" and record in page and "Settled" in page
