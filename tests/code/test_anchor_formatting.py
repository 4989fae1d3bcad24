"""A formatter's trailing comma is not a change to the code an anchor cites: black, prettier, rustfmt and gofmt add
one when they break a call, a signature or a literal over lines. A comma that makes a one-element tuple is code."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.code import anchors
from repo_memory.config import Config
from repo_memory.core.store import Store
from repo_memory.shells.cli import cli

from tests.conftest import git, write_skill_file

COMPACT = '''def deploy(env, target, *, dry_run=False, retries=3):
    steps = [migrate(target, dry_run), restart(target), notify(env, target, channel="ops")]
    run(steps, retries=retries, env=env, only=(target,))
    return {"env": env, "target": target}
'''
# What black makes of it at a narrow line length: every list exploded one item a line, with a magic trailing comma.
BLACKENED = '''def deploy(
    env,
    target,
    *,
    dry_run=False,
    retries=3,
):
    steps = [
        migrate(target, dry_run),
        restart(target),
        notify(
            env,
            target,
            channel="ops",  # who hears of it
        ),
    ]
    run(
        steps,
        retries=retries,
        env=env,
        only=(target,),
    )
    return {
        "env": env,
        "target": target,
    }
'''


def _stale(repo: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(repo), "stale"])
    return result.exit_code, result.output


def test_black_exploding_a_call_a_signature_and_literals_with_trailing_commas_leaves_the_skill_fresh(store: Store, repo: Path):
    (repo / "deploy.py").write_text(COMPACT, encoding="utf-8")
    git(repo, "add", "deploy.py")
    git(repo, "commit", "-qm", "deploy")
    store.write_skill("deploying", "How deploy works.", "It migrates, restarts, notifies.", anchors=["deploy.py::deploy"],
                      actor="human")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a skill about deploy")
    assert _stale(repo)[0] == 0
    (repo / "deploy.py").write_text(BLACKENED, encoding="utf-8")
    git(repo, "commit", "-qam", "black")
    code, out = _stale(repo)
    assert code == 0 and "skill:deploying" not in out, f"re-wrapping is not a change: {out}"
    (repo / "deploy.py").write_text(BLACKENED.replace("only=(target,)", "only=(target)"), encoding="utf-8")
    git(repo, "commit", "-qam", "a one-tuple no more")
    code, out = _stale(repo)
    assert code == 1 and "skill:deploying" in out and "the code changed" in out, "(target,) is a tuple, (target) is not"


ONE_ELEMENT = {  # a comma that makes a one-element tuple (or a tuple index, a hole, a separator) is code
    "python-tuple": ("ops.py", "def f(a):\n    x = (a,)\n    return x\n", "(a,)", "(a)"),
    "python-subscript": ("ops.py", "def f(d, a):\n    return d[a,]\n", "[a,]", "[a]"),
    "python-tuple-pattern": ("ops.py", "def f(xs):\n    for (a,) in xs:\n        print(a)\n", "(a,)", "(a)"),
    "python-yield": ("ops.py", "def f(a):\n    b = (yield a,)\n    return b\n", "a,)", "a)"),
    "rust-tuple": ("src/ops.rs", "fn f(a: i32) -> (i32,) {\n    (a,)\n}\n", "    (a,)", "    (a)"),
    "rust-tuple-type": ("src/ops.rs", "fn f(a: (i32,)) -> i32 {\n    a.0\n}\n", "(i32,)", "(i32)"),
    "python-f-string": ("ops.py", 'def f(a):\n    return f"{a,}"\n', "a,}", "a}"),
    "javascript-hole": ("web/ops.js", "function f(a) {\n  return [a, ,];\n}\n", "[a, ,]", "[a,]"),
    "javascript-lone-hole": ("web/ops.js", "function f() {\n  return [,];\n}\n", "[,]", "[]"),
    "rust-macro-separator": ("src/ops.rs", "fn f() {\n    macro_rules! m { ($($x:expr,)*) => {}; }\n}\n", "expr,)", "expr)"),
}


@pytest.mark.parametrize("case", sorted(ONE_ELEMENT))
def test_dropping_a_comma_that_makes_a_one_element_tuple_a_hole_or_a_separator_is_a_change(store: Store, repo: Path, case: str):
    rel, source, before, after = ONE_ELEMENT[case]
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    store.write_skill("about-f", "What f does.", "Read it.", anchors=[f"{rel}::f"], actor="human")
    store.refresh()
    assert store.stale() == []
    path.write_text(source.replace(before, after), encoding="utf-8")
    assert [s.anchor for s in store.stale()] == [f"{rel}::f"]


WRAPPED = {  # language -> (file, symbol, compact, as its formatter breaks it over lines with trailing commas)
    "javascript": ("web/api.js", "send",
                   "function send(url, body) {\n  return fetch(url, {method: 'POST', body: [body, 1]});\n}\n",
                   "function send(\n  url,\n  body,\n) {\n  return fetch(\n    url,\n    {\n      method: 'POST',\n"
                   "      body: [\n        body,\n        1,\n      ],\n    },\n  );\n}\n"),
    "typescript": ("web/api.ts", "send",
                   "function send<T>(url: string, body: [T, number]): Promise<T> {\n  return post<T>(url, {body, tries: 1});\n}\n",
                   "function send<T,>(\n  url: string,\n  body: [\n    T,\n    number,\n  ],\n): Promise<T> {\n"
                   "  return post<T>(\n    url,\n    {\n      body,\n      tries: 1,\n    },\n  );\n}\n"),
    "go": ("api/api.go", "Send",
           "package api\n\nfunc Send(url string, n int) []int {\n\treturn post(url, []int{n, 1})\n}\n",
           "package api\n\nfunc Send(\n\turl string,\n\tn int,\n) []int {\n\treturn post(\n\t\turl,\n\t\t[]int{\n\t\t\tn,\n"
           "\t\t\t1,\n\t\t},\n\t)\n}\n"),
    "rust": ("src/api.rs", "send",
             "fn send(url: &str, n: i32) -> Vec<i32> {\n    match n {\n        0 => vec![],\n        _ => post(url, vec![n, 1])\n    }\n}\n",
             "fn send(\n    url: &str,\n    n: i32,\n) -> Vec<i32> {\n    match n {\n        0 => vec![],\n        _ => post(\n"
             "            url,\n            vec![\n                n,\n                1,\n            ],\n        ),\n    }\n}\n"),
    "java": ("src/Api.java", "Api.send",
             "class Api {\n    int[] send() {\n        return new int[] {1, 2};\n    }\n}\n",
             "class Api {\n    int[] send() {\n        return new int[] {\n            1,\n            2,\n        };\n    }\n}\n"),
}


@pytest.mark.parametrize("language", sorted(WRAPPED))
def test_a_formatters_trailing_comma_is_not_a_change_in_any_language(store: Store, repo: Path, language: str):
    rel, symbol, compact, wrapped = WRAPPED[language]
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(compact, encoding="utf-8")
    store.write_skill("about-send", "What send does.", "Read it.", anchors=[f"{rel}::{symbol}"], actor="human")
    store.refresh()
    path.write_text(wrapped, encoding="utf-8")
    assert store.stale() == [], "a trailing comma before a closing bracket is formatting"
    path.write_text(wrapped.replace("1,", "2,", 1), encoding="utf-8")
    assert [s.anchor for s in store.stale()] == [f"{rel}::{symbol}"]


def test_a_hash_pinned_over_trailing_commas_by_an_older_release_still_matches(store: Store, repo: Path):
    """The release before this one hashed a trailing comma: a pin it wrote over black's output is taken as this code,
    re-wrapping it after the upgrade changes nothing, and a real change is seen."""
    (repo / "deploy.py").write_text(BLACKENED, encoding="utf-8")
    old = "04a60f53184ac5f6"  # deploy.py::deploy over BLACKENED, as the release before this one hashed it
    write_skill_file(repo, "deploying", "How deploy works.", "Read it.",
                     extra=f"metadata:\n  anchors: [deploy.py::deploy]\n  anchor_hashes: {{deploy.py::deploy: {old}}}\n")
    store.refresh()
    assert store.stale() == []
    (repo / "deploy.py").write_text(COMPACT, encoding="utf-8")
    assert store.stale() == [], "re-wrapped after the upgrade"
    (repo / "deploy.py").write_text(COMPACT.replace("retries=3", "retries=4"), encoding="utf-8")
    assert [s.anchor for s in store.stale()] == ["deploy.py::deploy"]


def test_an_index_left_by_the_release_before_is_re_read_once_so_its_pins_survive_a_re_wrap(store: Store, repo: Path):
    """An index the release before this one wrote holds its hash of each cited definition with the stamp of the file
    it read: trusted while the file kept that stamp, so the older hash forms of the code were never worked out. A new
    skill citing that code was stale at once (its pin in the new form, the index's hash in the old), and an old pin
    went stale when the code was first re-wrapped after the upgrade."""
    (repo / "deploy.py").write_text(BLACKENED, encoding="utf-8")
    old = "04a60f53184ac5f6"  # deploy.py::deploy over BLACKENED, as the release before this one hashed it
    write_skill_file(repo, "deploying", "How deploy works.", "Read it.",
                     extra=f"metadata:\n  anchors: [deploy.py::deploy]\n  anchor_hashes: {{deploy.py::deploy: {old}}}\n")
    store.refresh()
    assert store.stale() == []
    # The index and baselines as that release left them: its hash as the code's, the file's stamp bare, no translation.
    with store._db.transaction():
        store._db.conn.execute("UPDATE anchor_state SET baseline = ?, current = ?, stamp = ?",
                               (old, old, anchors.stamp(os.stat(repo / "deploy.py"))))
    (store.config.state_dir / "anchor-baselines.json").unlink(missing_ok=True)
    store.close()
    upgraded = Store(Config.load(repo))
    try:
        assert upgraded.stale() == []
        upgraded.write_skill("deploy-again", "More on deploy.", "Read it.", anchors=["deploy.py::deploy"], actor="human")
        assert upgraded.stale() == [], "a skill pinned by this release over the same code"
        (repo / "deploy.py").write_text(COMPACT, encoding="utf-8")
        assert upgraded.stale() == [], "re-wrapped after the upgrade"
    finally:
        upgraded.close()
