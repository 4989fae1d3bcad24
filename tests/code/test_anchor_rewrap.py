"""Brackets are code, also those a formatter puts around a whole value (leaving them out made a real change fresh);
and a pin an older release wrote is checked alike in every clone, also one that never ran that release."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.code import lineage
from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

from tests.code.test_anchor_formatting import BLACKENED, COMPACT
from tests.conftest import git, write_skill_file

PRICE = '''def total(order, job, xs):
    amount = order.subtotal * order.tax_rate + order.shipping_fee - order.discount_amount + order.handling
    order.total += order.subtotal * order.tax_rate + order.shipping_fee - order.discount_amount
    if job.built and job.tested and job.signed_off_by_release_manager and not job.blocked_by_incident:
        pass
    for item in job.built_items + job.tested_items + job.signed_off_by_release_manager_items:
        pass
    x = 1,
    y = yield job.built and job.tested and job.signed_off_by_release_manager and not job.blocked_by_incident
    del job.built_items_very_long_name, job.tested_items_long_name, job.signed_off_by_release_manager_items
    assert job.built and job.tested and job.signed_off_by_release_manager, "not ready for release yet at all"
    return job.built and job.tested and job.signed_off_by_release_manager and not job.blocked_by_incident
'''
# black -l 60 of PRICE: each long value wrapped in brackets of its own, `x = 1,` written `x = (1,)`.
PRICE_BLACK = '''def total(order, job, xs):
    amount = (
        order.subtotal * order.tax_rate
        + order.shipping_fee
        - order.discount_amount
        + order.handling
    )
    order.total += (
        order.subtotal * order.tax_rate
        + order.shipping_fee
        - order.discount_amount
    )
    if (
        job.built
        and job.tested
        and job.signed_off_by_release_manager
        and not job.blocked_by_incident
    ):
        pass
    for item in (
        job.built_items
        + job.tested_items
        + job.signed_off_by_release_manager_items
    ):
        pass
    x = (1,)
    y = (
        yield job.built
        and job.tested
        and job.signed_off_by_release_manager
        and not job.blocked_by_incident
    )
    del (
        job.built_items_very_long_name,
        job.tested_items_long_name,
        job.signed_off_by_release_manager_items,
    )
    assert (
        job.built
        and job.tested
        and job.signed_off_by_release_manager
    ), "not ready for release yet at all"
    return (
        job.built
        and job.tested
        and job.signed_off_by_release_manager
        and not job.blocked_by_incident
    )
'''
READY = '''export function ready(job: Job): boolean {
  const done = job.built && job.tested;
  return job.built && job.tested && job.signedOffByReleaseManager && !job.blockedByIncident && job.region === "eu";
}
'''
# prettier --print-width 50 of READY, the declared value in brackets too (prettier takes those out again; a person may
# write them, and the meaning is the same).
READY_PRETTIER = '''export function ready(job: Job): boolean {
  const done = (job.built && job.tested);
  return (
    job.built &&
    job.tested &&
    job.signedOffByReleaseManager &&
    !job.blockedByIncident &&
    job.region === "eu"
  );
}
'''


def _stale(repo: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(repo), "stale"])
    return result.exit_code, result.output


def _skill_over(store: Store, repo: Path, rel: str, symbol: str, source: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    git(repo, "add", rel)
    git(repo, "commit", "-qm", "code")
    store.write_skill("about-it", "What it does.", "Read it.", anchors=[f"{rel}::{symbol}"], actor="human")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a skill about it")
    assert _stale(repo)[0] == 0


SPLIT = "def f(a, b):\n    x = (a\n         - b)\n    return x\n"


def test_brackets_around_a_value_split_over_lines_are_code(store: Store, repo: Path):
    """Leaving out of the hash the brackets a formatter puts around a whole value (black's `x = (a\n - b)`) made their
    removal fresh too, though `x = a` then `- b` on a line of its own is another program (f(5, 3) gives 5, not 2): the
    hash has no statement boundaries, so such brackets are code. A formatter adding them reads as a change."""
    _skill_over(store, repo, "src/calc.py", "f", SPLIT)
    (repo / "src/calc.py").write_text(SPLIT.replace("(a\n         - b)", "a\n    - b"), encoding="utf-8")
    git(repo, "commit", "-qam", "brackets dropped")
    code, out = _stale(repo)
    assert code == 1 and "skill:about-it" in out, out


CHANGES = {  # brackets that are code: (file, source, before, after)
    "python-precedence": ("src/price.py", PRICE_BLACK, "order.subtotal * order.tax_rate\n        + order.shipping_fee",
                          "order.subtotal * (order.tax_rate\n        + order.shipping_fee)"),
    "python-one-tuple-to-value": ("src/price.py", PRICE_BLACK, "x = (1,)", "x = (1)"),
    "python-bare-one-tuple-to-value": ("src/price.py", PRICE, "x = 1,", "x = 1"),
    "python-assert-tuple": ("src/price.py", PRICE, 'signed_off_by_release_manager, "not ready',
                            '(job.signed_off_by_release_manager, "not ready'),
    "python-call-argument": ("src/price.py", PRICE, "    return job.built and", "    return print(job.built) and"),
    "typescript-sequence": ("web/api.ts", READY_PRETTIER, "const done = (job.built && job.tested);",
                            "const done = (job.built, job.tested);"),
}


@pytest.mark.parametrize("case", sorted(CHANGES))
def test_brackets_that_are_code_still_count(store: Store, repo: Path, case: str):
    rel, source, before, after = CHANGES[case]
    _skill_over(store, repo, rel, "total" if rel.endswith(".py") else "ready", source)
    assert before in source
    (repo / rel).write_text(source.replace(before, after + ")" * (case == "python-assert-tuple")), encoding="utf-8")
    git(repo, "commit", "-qam", "a real change")
    code, out = _stale(repo)
    assert code == 1 and "skill:about-it" in out, out


def test_a_js_sequence_is_not_the_assignment_it_reads_like_without_brackets(store: Store, repo: Path):
    """`x = (a, b)` assigns b; `x = a, b` assigns a: the same tokens once the brackets are gone, other code."""
    source = "function f(a, b) {\n  let x;\n  x = (a, b);\n  return x;\n}\n"
    _skill_over(store, repo, "web/f.js", "f", source)
    (repo / "web/f.js").write_text(source.replace("(a, b)", "a, b"), encoding="utf-8")
    git(repo, "commit", "-qam", "a real change")
    assert _stale(repo)[0] == 1


def test_a_pin_an_older_release_wrote_is_fresh_in_a_teammates_clone_after_a_re_wrap(repo: Path, tmp_path: Path):
    """A skill pinned by an older release over black's trailing commas; the commas dropped after the upgrade in one
    clone (fresh there, its translation kept in its git dir). A teammate's fresh clone of the same commit is told the
    same: the pin is translated from the code as the skill's commit holds it."""
    (repo / "deploy.py").write_text(BLACKENED, encoding="utf-8")
    git(repo, "add", "deploy.py")
    git(repo, "commit", "-qm", "add deploy")
    old = "04a60f53184ac5f6"  # deploy.py::deploy over BLACKENED, as the release that kept trailing commas hashed it
    write_skill_file(repo, "deploying", "How deploy works.", "Read it.",
                     extra=f"metadata:\n  anchors: [deploy.py::deploy]\n  anchor_hashes: {{deploy.py::deploy: {old}}}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a skill about deploy")
    assert _stale(repo)[0] == 0
    (repo / "deploy.py").write_text(COMPACT, encoding="utf-8")
    git(repo, "commit", "-qam", "black --skip-magic-trailing-comma")
    assert _stale(repo)[0] == 0
    mate = tmp_path / "mate"
    git(tmp_path, "clone", "-q", str(repo), str(mate))
    code, out = _stale(mate)
    assert code == 0 and "skill:deploying" not in out, f"the same commit, another clone: {out}"
    (mate / "deploy.py").write_text(COMPACT.replace("retries=3", "retries=4"), encoding="utf-8")
    git(mate, "commit", "-qam", "four retries")
    code, out = _stale(mate)
    assert code == 1 and "skill:deploying" in out and "four retries" in out, out


def test_lineage_names_the_commit_where_the_code_stopped_matching_an_older_pin():
    """A pin in an older release's form (trailing commas counted) is compared in that form too: the commit dropping
    the commas is where the code moved away from it, not the commit that first added the code."""
    old = "04a60f53184ac5f6"
    versions = [("c3 black --skip-magic-trailing-comma", COMPACT.encode()), ("c2 a skill", BLACKENED.encode()),
                ("c1 add deploy", BLACKENED.encode())]
    assert lineage.changed_in("deploy.py", ["deploy"], versions, whole=True) == {"deploy": "last changed in c1 add deploy"}
    found = lineage.changed_in("deploy.py", ["deploy"], versions, whole=True, pins={"deploy": [old]})
    assert found == {"deploy": "last changed in c3 black --skip-magic-trailing-comma"}


def test_translating_older_pins_renders_no_log_and_asks_git_once_per_pin(repo: Path, tmp_path: Path):
    """After an upgrade the first `stale` (and the server's first call, the post-commit and session-start hooks) ran
    `git log -S<pin>` once per memory citing the code, with the logs' textconv driver: a `repo-memory textconv` process
    per version of every log, per memory — 42 s for 8 records, over 30 minutes for 300, past every hook's timeout. The
    pickaxe reads the bytes git holds, and one pin is looked up once."""
    (repo / "deploy.py").write_text(BLACKENED, encoding="utf-8")
    git(repo, "add", "deploy.py")
    git(repo, "commit", "-qm", "add deploy")
    old = "04a60f53184ac5f6"  # deploy.py::deploy over BLACKENED, as the release that kept trailing commas hashed it
    assert CliRunner().invoke(cli, ["--root", str(repo), "init"]).exit_code == 0
    for n in range(6):
        write_skill_file(repo, f"deploying-{n}", f"How deploy works, part {n}.", "Read it.",
                         extra=f"metadata:\n  anchors: [deploy.py::deploy]\n  anchor_hashes: {{deploy.py::deploy: {old}}}\n")
        assert CliRunner().invoke(cli, ["--root", str(repo), "log", "add", f"note {n} on deploy"]).exit_code == 0
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", f"skill {n}")
    (repo / "deploy.py").write_text(COMPACT, encoding="utf-8")
    git(repo, "commit", "-qam", "black --skip-magic-trailing-comma")
    mate = tmp_path / "mate"
    git(tmp_path, "clone", "-q", str(repo), str(mate))
    counted = tmp_path / "textconv.count"
    git(mate, "config", "diff.repo-memory.textconv", f"f() {{ echo x >> {counted}; cat \"$1\"; }}; f")  # an older init's: no cache
    code, out = _stale(mate)
    assert code == 0 and "deploying" not in out, out
    assert not counted.exists(), f"{len(counted.read_text().split())} textconv processes"
