"""Code anchors in every supported language: a changed body makes the memories citing it stale, an untouched sibling
does not; formatting and comment edits change nothing; rename or delete says "symbol not found"."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from repo_memory.code import anchors, fingerprint
from repo_memory.shells.cli import cli
from repo_memory.errors import InvalidRecordError
from repo_memory.core.store import Store

from tests.conftest import git, write_skill_file

# language -> (file, source, alpha, beta, comment marker, "alpha's body" as it appears in the source)
FIXTURES = {
    "python": ("src/calc.py", "class Calc:\n    def alpha(self, x):\n        return x + 1\n\n    def beta(self, x):\n        return x * 2\n",
               "Calc.alpha", "Calc.beta", "#", "return x + 1"),
    "javascript": ("web/calc.js", "class Calc {\n  alpha(x) {\n    return x + 1;\n  }\n  beta(x) {\n    return x * 2;\n  }\n}\n",
                   "Calc.alpha", "Calc.beta", "//", "return x + 1;"),
    "typescript": ("web/calc.ts", "export class Calc {\n  alpha(x: number): number {\n    return x + 1;\n  }\n"
                   "  beta(x: number): number {\n    return x * 2;\n  }\n}\n", "Calc.alpha", "Calc.beta", "//", "return x + 1;"),
    "go": ("calc/calc.go", "package calc\n\ntype Calc struct{}\n\nfunc (c *Calc) Alpha(x int) int {\n\treturn x + 1\n}\n\n"
           "func (c *Calc) Beta(x int) int {\n\treturn x * 2\n}\n", "Calc.Alpha", "Calc.Beta", "//", "return x + 1"),
    "rust": ("src/calc.rs", "struct Calc;\n\nimpl Calc {\n    fn alpha(&self, x: i32) -> i32 {\n        x + 1\n    }\n"
             "    fn beta(&self, x: i32) -> i32 {\n        x * 2\n    }\n}\n", "Calc.alpha", "Calc.beta", "//", "x + 1"),
    "java": ("src/Calc.java", "class Calc {\n    int alpha(int x) {\n        return x + 1;\n    }\n    int beta(int x) {\n"
             "        return x * 2;\n    }\n}\n", "Calc.alpha", "Calc.beta", "//", "return x + 1;"),
}


def _setup(store: Store, repo: Path, language: str) -> tuple[Path, str, str]:
    rel, source, alpha, beta, _, _ = FIXTURES[language]
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    git(repo, "add", rel)
    git(repo, "commit", "-q", "-m", f"add {rel}")
    a, b = f"{rel}::{alpha}", f"{rel}::{beta}"
    store.write_skill("about-alpha", "What alpha does and why.", "Alpha adds one.", anchors=[a], actor="human")
    store.write_skill("about-beta", "What beta does and why.", "Beta doubles.", anchors=[b], actor="human")
    store.remember("alpha must stay cheap: it runs per request", refs=[a])
    store.refresh()
    return path, a, b


def _stale(store: Store) -> dict[str, str]:
    store.refresh()
    out: dict[str, str] = {}
    for hit in store.recall("alpha beta cheap does why", limit=20).hits:
        out[hit.id if hit.kind == "skill" else "record"] = hit.stale_reason
    return out


@pytest.mark.parametrize("language", sorted(FIXTURES))
def test_a_changed_body_makes_its_memories_stale_and_leaves_the_sibling_alone(store: Store, repo: Path, language: str):
    path, a, _ = _setup(store, repo, language)
    _, _, _, _, comment, body = FIXTURES[language]
    assert _stale(store) == {"skill:about-alpha": "", "skill:about-beta": "", "record": ""}
    source = path.read_text(encoding="utf-8")
    indent = " " * (len(source.split(body)[0]) - len(source.split(body)[0].rstrip(" \t")))
    cosmetic = source.replace(body, f"{comment} a comment about the sum\n{indent}{body.replace(' + ', '+')}")
    path.write_text(cosmetic, encoding="utf-8")
    assert _stale(store) == {"skill:about-alpha": "", "skill:about-beta": "", "record": ""}, "formatting and comments are not changes"
    path.write_text(cosmetic.replace("x+1", "x+2"), encoding="utf-8")
    stale = _stale(store)
    assert stale["skill:about-beta"] == ""
    assert stale["skill:about-alpha"].startswith(f"{a}: the code changed") and stale["record"].startswith(f"{a}: the code changed")
    alpha_name = a.split("::")[1].split(".")[-1]
    path.write_text(source.replace(alpha_name, "gamma"), encoding="utf-8")
    assert "symbol not found" in _stale(store)["skill:about-alpha"]


def test_recall_by_symbol_doctor_and_the_stale_command(store: Store, repo: Path, runner: CliRunner):
    path, a, b = _setup(store, repo, "python")
    found = store.recall("", symbol="Calc.alpha")
    assert {h.id for h in found.hits} >= {"skill:about-alpha"} and len(found.hits) == 2 and all("Calc.alpha" in h.snippet for h in found.hits)
    assert [h.id for h in store.recall("", symbol=b).hits] == ["skill:about-beta"]
    path.write_text(path.read_text(encoding="utf-8").replace("x + 1", "x + 3"), encoding="utf-8")
    git(repo, "commit", "-qam", "make alpha add three")
    out = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "about-alpha" in out and "make alpha add three" in out and "about-beta" not in out
    result = runner.invoke(cli, ["--root", str(repo), "stale"])
    assert result.exit_code == 1 and "skill:about-alpha" in result.output and "code changed" in result.output
    pinned = runner.invoke(cli, ["--root", str(repo), "stale", "--pin", "about-alpha"])
    assert "pinned src/calc.py::Calc.alpha for skill:about-alpha" in pinned.output
    assert "skill:about-alpha" not in pinned.output.split("\n", 1)[1]  # re-pinned: current again
    assert pinned.exit_code == 1 and "code changed" in pinned.output  # the record written against the old code stays stale


def test_unparseable_or_unknown_anchors_are_reported_not_crashes(store: Store, repo: Path):
    (repo / "notes.txt").write_text("hello\n", encoding="utf-8")
    (repo / "broken.py").write_bytes(b"def ok():\n    return 1\n\xff\xfe def (((\n")
    with pytest.raises(InvalidRecordError, match="symbol not found|not parsed|does not exist"):
        store.write_skill("bad-anchor", "An anchor to nowhere.", "Steps.", anchors=["notes.txt::hello"])
    with pytest.raises(InvalidRecordError, match="does not exist"):
        store.remember("see it", refs=["missing.py::gone"])
    assert anchors.Code(repo).resolve("broken.py::ok").hash  # tree-sitter recovers what it can
    write_skill_file(repo, "hand-anchored", "A person anchored it by hand.", "Steps.",
                     extra="metadata:\n  anchors: [\"notes.txt::hello\", \"broken.py::nothing\"]\n")
    store.refresh()
    stale = {s.anchor: s.reason for s in store.stale() + store.stale(checkable=False)}
    assert "not parsed" in stale["notes.txt::hello"] and "symbol not found" in stale["broken.py::nothing"]


def test_an_anchor_that_cannot_be_checked_is_said_so_and_not_flagged_stale(store: Store, repo: Path, runner: CliRunner):
    """An anchor into a language that is not parsed, or a file over 2 MiB, was 'stale' for good, with the commit that
    last changed the file, and kept `repo-memory stale` failing."""
    (repo / "src").mkdir()
    (repo / "src/lib.c").write_text("int add(void) { return 1; }\n", encoding="utf-8")
    (repo / "src/big.py").write_text("def f():\n    return 1\n" + "X = 1\n" * 400_000, encoding="utf-8")
    (repo / "src/ok.py").write_text("def ok():\n    return 1\n", encoding="utf-8")
    write_skill_file(repo, "notes", "Notes on the C and Python code.", "Read it.",
                     extra="metadata:\n  anchors: [src/lib.c::add, src/big.py::f, src/ok.py::ok]\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code and notes")
    store.refresh()
    assert store.stale() == []
    assert {u.anchor: u.reason.split(": ", 1)[1].split(":")[0] for u in store.stale(checkable=False)} == {
        "src/lib.c::add": "cannot be checked", "src/big.py::f": "cannot be checked"}
    assert [h.stale for h in store.recall("Notes on the C and Python code").hits if h.id == "skill:notes"] == [False]
    result = runner.invoke(cli, ["--root", str(repo), "stale"])
    assert result.exit_code == 0 and "src/lib.c::add: cannot be checked: .c files are not parsed" in result.output
    doctor = runner.invoke(cli, ["--root", str(repo), "doctor"]).output
    assert "src/big.py::f: cannot be checked: the file is over 2 MiB" in doctor and "code and notes" not in doctor


def test_plain_text_mentions_are_suggested_as_anchors():
    assert anchors.suggest("See `parse_config` in src/config.py and `Store.read()` in `server/store.py`.") == [
        "src/config.py::parse_config", "server/store.py::Store.read"]
    assert anchors.suggest("`App` in src/app.tsx renders `Row` in web/row.jsx.") == ["src/app.tsx::App", "web/row.jsx::Row"]


def test_a_loop_spec_citing_code_goes_stale_and_a_person_can_re_pin_it(store: Store, repo: Path, runner: CliRunner):
    path, a, _ = _setup(store, repo, "python")
    (repo / ".agents/loops/tune-alpha.md").write_text(
        "---\nname: tune-alpha\nstatus: active\ntrigger: {on: manual}\ngoal: Keep alpha fast.\nverify:\n"
        "  - {level: 4, run: \"true\", expect: {exit: 0}}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n"
        f"memory: {{anchors: [\"{a}\"]}}\n---\nTune it.\n", encoding="utf-8")
    store.refresh()
    assert "loop:tune-alpha" not in runner.invoke(cli, ["--root", str(repo), "stale"]).output
    path.write_text(path.read_text(encoding="utf-8").replace("x + 1", "x + 5"), encoding="utf-8")
    assert "loop:tune-alpha" in runner.invoke(cli, ["--root", str(repo), "stale"]).output
    pinned = runner.invoke(cli, ["--root", str(repo), "stale", "--pin", "loop:tune-alpha"])
    assert f"pinned {a} for loop:tune-alpha" in pinned.output and "loop:tune-alpha " not in pinned.output.split("\n", 1)[1]


def test_a_skill_that_mentions_code_in_plain_text_gets_anchors_suggested(store: Store, repo: Path):
    _setup(store, repo, "python")
    result = store.write_skill("mentions", "Tuning notes.", "See `Calc.alpha` in src/calc.py and `nothing` in src/calc.py.", actor="human")
    assert any("anchors=['src/calc.py::Calc.alpha']" in w for w in result.warnings)


# (file, source, anchor, the decorator, annotation or signature edited, what it becomes)
DECORATED = {
    "python-function": ("app/views.py", "@login_required\ndef account(request):\n    return render(request)\n", "account",
                        "@login_required\n", ""),
    "python-method": ("app/conf.py", "class Settings:\n    @property\n    def debug(self):\n        return False\n", "Settings.debug",
                      "@property", "@functools.cached_property"),
    "python-class": ("app/point.py", "@dataclass(frozen=True)\nclass Point:\n    x: int\n", "Point", "frozen=True", "frozen=False"),
    "typescript-method": ("web/api.ts", 'class Api {\n  @Authorized("admin")\n  deleteUser(id: string): void {\n    this.db.delete(id);\n  }\n}\n',
                          "Api.deleteUser", '"admin"', '"user"'),
    "typescript-overload": ("web/parse.ts", "function parse(a: string): string;\nfunction parse(a: any) {\n  return a;\n}\n", "parse",
                            "(a: string)", "(a: number)"),
    "rust-struct": ("src/token.rs", "#[derive(Clone, Copy)]\npub struct Token {\n    id: u64,\n}\n", "Token", "Clone, Copy", "Clone"),
    "rust-method": ("src/token.rs", "struct T;\n\nimpl T {\n    #[inline]\n    fn f(&self) {}\n\n    fn g(&self) {}\n}\n", "T.f",
                    "#[inline]", "#[cold]"),
}


@pytest.mark.parametrize("case", sorted(DECORATED))
def test_a_changed_decorator_attribute_or_overload_signature_makes_its_memories_stale(store: Store, repo: Path, case: str):
    """A decorator is part of the definition, and often the part that matters (auth, caching, static or not)."""
    rel, source, symbol, before, after = DECORATED[case]
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    store.write_skill("about-it", "What it does and why.", "Read it.", anchors=[f"{rel}::{symbol}"], actor="human")
    store.refresh()
    assert store.stale() == []
    path.write_text(source.replace(before, after), encoding="utf-8")
    assert [s.reason.split(" (")[0] for s in store.stale()] == [f"{rel}::{symbol}: the code changed since the memory was written"]


def test_a_hash_pinned_before_decorators_counted_still_matches_and_a_later_decorator_change_is_seen(store: Store, repo: Path):
    """Releases before this one hashed a decorated definition without its decorators: such pins (and first-seen
    baselines) are taken as the code they were pinned against, not flagged on upgrade; from then on decorators count."""
    (repo / "app").mkdir()
    (repo / "app/views.py").write_text("@login_required\ndef account(request):\n    return render(request)\n", encoding="utf-8")
    (repo / "src").mkdir()
    (repo / "src/token.rs").write_text("#[derive(Clone, Copy)]\npub struct Token {\n    id: u64,\n}\n", encoding="utf-8")
    write_skill_file(repo, "auth-notes", "Which views need a login.", "The account view needs one.", extra=(
        "metadata:\n  anchors: [app/views.py::account, src/token.rs::Token]\n"
        "  anchor_hashes: {app/views.py::account: a6b81f12115d3f25, src/token.rs::Token: 1161b7a95bee36c9}\n"))  # an older release's
    store.refresh()
    assert store.stale() == []
    (repo / "app/views.py").write_text("def account(request):\n    return render(request)\n", encoding="utf-8")
    assert [s.anchor for s in store.stale()] == ["app/views.py::account"]
    (repo / "src/token.rs").write_text("#[derive(Clone)]\npub struct Token {\n    id: u64,\n}\n", encoding="utf-8")
    assert [s.anchor for s in store.stale()] == ["app/views.py::account", "src/token.rs::Token"]


def test_commonjs_typescript_files_are_parsed_like_their_es_module_twins(repo: Path):
    for suffix in ("ts", "mts", "cts"):
        (repo / f"lib.{suffix}").write_text("export function add(a: number): number {\n  return a + 1;\n}\n", encoding="utf-8")
    code = anchors.Code(repo)
    assert code.resolve("lib.cts::add").hash == code.resolve("lib.mts::add").hash == code.resolve("lib.ts::add").hash
    assert anchors.suggest("See `add` in src/lib.cts.") == ["src/lib.cts::add"]


def test_moving_a_python_statement_out_of_its_block_is_a_change_and_re_indenting_the_whole_is_not(store: Store, repo: Path):
    """Python says with indentation alone which statements an `if` guards: a statement dedented out of the block
    changes what the code does, while re-indenting the whole definition (two spaces for four) does not."""
    source = 'def deploy(env):\n    if env == "prod":\n        backup()\n        migrate()\n    restart()\n'
    (repo / "deploy.py").write_text(source, encoding="utf-8")
    store.remember("deploy only migrates in prod", refs=["deploy.py::deploy"])
    store.refresh()
    assert store.stale() == []
    (repo / "deploy.py").write_text(source.replace("    ", "  "), encoding="utf-8")
    assert store.stale() == [], "re-indenting is not a change"
    (repo / "deploy.py").write_text(source.replace("        migrate()", "    migrate()"), encoding="utf-8")
    assert [s.reason.split(" (")[0] for s in store.stale()] == ["deploy.py::deploy: the code changed since the memory was written"]


def test_a_python_hash_pinned_before_blocks_counted_still_matches_and_a_later_dedent_is_seen(store: Store, repo: Path):
    """Releases before this one hashed a Python definition's tokens only: such a pin is taken as the code it was
    pinned against on upgrade, and from then on a statement moved out of a block is seen."""
    source = 'def deploy(env):\n    if env == "prod":\n        backup()\n        migrate()\n    restart()\n'
    (repo / "deploy.py").write_text(source, encoding="utf-8")
    old = fingerprint.body_hash(anchors.definitions(source.encode(), ".py")["deploy"], structure=False)
    write_skill_file(repo, "deploying", "How deploy works.", "Read it.",
                     extra=f"metadata:\n  anchors: [deploy.py::deploy]\n  anchor_hashes: {{deploy.py::deploy: {old}}}\n")
    store.refresh()
    assert store.stale() == []
    (repo / "deploy.py").write_text(source.replace("        migrate()", "    migrate()"), encoding="utf-8")
    assert [s.anchor for s in store.stale()] == ["deploy.py::deploy"]


def test_a_python_backslash_continuation_changes_nothing_and_a_hash_pinned_over_one_still_matches(store: Store, repo: Path):
    """tree-sitter keeps Python's `\\` line continuation as a token: re-wrapping a call with one made the memory stale
    although the code is the same. Hashes older releases pinned over such code (given as they computed them) still
    match it on upgrade, and a later change to the code is seen."""
    source = 'def deploy(env, target):\n    if env == "prod":\n        migrate(target,\n                dry=False)\n    push(target, env)\n'
    backslashed = source.replace("target,\n", "target, \\\n")
    (repo / "deploy.py").write_text(source, encoding="utf-8")
    store.remember("deploy migrates in prod", refs=["deploy.py::deploy"])
    store.refresh()
    (repo / "deploy.py").write_text(backslashed, encoding="utf-8")
    assert store.stale() == [], "a backslash re-wrap is not a change"
    (repo / "ops.py").write_text(backslashed, encoding="utf-8")
    pinned = {"before-blocks": "20d62fd006413203", "before-continuations": "74803a78cc0d6435"}  # older releases' hashes
    for name, old in pinned.items():
        write_skill_file(repo, name, "How deploy works.", "Read it.",
                         extra=f"metadata:\n  anchors: [ops.py::deploy]\n  anchor_hashes: {{ops.py::deploy: {old}}}\n")
    store.refresh()
    assert store.stale() == []
    (repo / "ops.py").write_text(backslashed.replace("dry=False", "dry=True"), encoding="utf-8")
    assert sorted(s.memory for s in store.stale()) == ["skill:before-blocks", "skill:before-continuations"]


def test_an_anchor_into_a_file_without_an_extension_cannot_be_checked_and_leaves_its_memory_valid(store: Store, repo: Path,
                                                                                                   runner: CliRunner):
    """`Makefile::all` made the whole skill (or loop) invalid: the anchor's pattern wanted an extension. It is code a
    person may cite like a `.c` file's: reported "cannot be checked", the skill served."""
    (repo / "bin").mkdir()
    (repo / "Makefile").write_text("all:\n\techo hi\n", encoding="utf-8")
    (repo / "bin/deploy").write_text("#!/bin/sh\necho deploy\n", encoding="utf-8")
    write_skill_file(repo, "building", "How we build with make.", "Run the build.",
                     extra="metadata:\n  anchors: [Makefile::all, bin/deploy::main]\n")
    (repo / ".agents/loops").mkdir(parents=True, exist_ok=True)
    (repo / ".agents/loops/build.md").write_text(
        "---\nname: build\nstatus: active\ntrigger: {on: manual}\ngoal: Keep the build green.\nverify:\n"
        "  - {level: 4, run: \"true\", expect: {exit: 0}}\nstop: {max_iterations: 2}\nsuccess_requires_level: 4\n"
        "memory: {anchors: [\"Makefile::all\"]}\n---\nBuild it.\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "build notes")
    store.refresh()
    assert store.stale() == []
    assert {(u.memory, u.anchor, u.reason.partition(": ")[2].split(" (")[0]) for u in store.stale(checkable=False)} == {
        (m, a, "cannot be checked: files without an extension are not parsed") for m, a in
        (("skill:building", "Makefile::all"), ("skill:building", "bin/deploy::main"), ("loop:build", "Makefile::all"))}
    assert [h.id for h in store.recall("How we build with make").hits][:1] == ["skill:building"]
    result = runner.invoke(cli, ["--root", str(repo), "stale"])
    assert result.exit_code == 0 and "Makefile::all: cannot be checked" in result.output
    assert "invalid" not in runner.invoke(cli, ["--root", str(repo), "doctor"]).output
