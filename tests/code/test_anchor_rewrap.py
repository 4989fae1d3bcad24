"""Re-wrapping by a formatter is not a change to the code an anchor cites: the brackets black and prettier add
around a whole value are formatting, brackets that are code still count."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

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


@pytest.mark.parametrize("rel, symbol, before, after", [("src/price.py", "total", PRICE, PRICE_BLACK),
                                                        ("src/price.py", "total", PRICE_BLACK, PRICE),
                                                        ("web/api.ts", "ready", READY, READY_PRETTIER),
                                                        ("web/api.js", "ready", READY.replace(": Job): boolean", ")"),
                                                         READY_PRETTIER.replace(": Job): boolean", ")"))])
def test_brackets_a_formatter_puts_around_a_whole_value_leave_the_skill_fresh(store: Store, repo: Path, rel: str,
                                                                            symbol: str, before: str, after: str):
    _skill_over(store, repo, rel, symbol, before)
    (repo / rel).write_text(after, encoding="utf-8")
    git(repo, "commit", "-qam", "re-wrapped")
    code, out = _stale(repo)
    assert code == 0 and "skill:about-it" not in out, f"re-wrapping is not a change: {out}"


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


def test_a_hash_pinned_over_black_brackets_by_the_release_before_still_matches(store: Store, repo: Path):
    """The release before this one hashed the brackets around a whole value: its pin over black's output is taken as
    this code, and the brackets dropped after the upgrade change nothing."""
    (repo / "src").mkdir()
    (repo / "src/price.py").write_text(PRICE_BLACK, encoding="utf-8")
    old = "2c6776642bda59a9"  # src/price.py::total over PRICE_BLACK, as the release before this one hashed it
    write_skill_file(repo, "pricing", "How total works.", "Read it.",
                     extra=f"metadata:\n  anchors: [src/price.py::total]\n  anchor_hashes: {{src/price.py::total: {old}}}\n")
    store.refresh()
    assert store.stale() == []
    (repo / "src/price.py").write_text(PRICE, encoding="utf-8")
    assert store.stale() == [], "re-wrapped after the upgrade"
    (repo / "src/price.py").write_text(PRICE.replace("x = 1,", "x = 2,"), encoding="utf-8")
    assert [s.anchor for s in store.stale()] == ["src/price.py::total"]
