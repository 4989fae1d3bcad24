"""The package's shape holds: layers import downward only, no import circle, SQL only in index/, modules stay small."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "repo_memory"
# Lowest first. A module may import its own layer (without a circle) and any lower one, never a higher one.
LAYERS = {"errors": 0, "guards": 1, "formats": 2, "git": 3, "index": 3, "code": 3, "config": 4, "layout": 4, "core": 5,
          "runner": 6, "shells": 7, "entry": 8, "__init__": 8, "__main__": 8}
GENERATED = {"repo_memory.formats.compiled_schemas"}
SQL = ("SELECT ", "INSERT INTO", "DELETE FROM", "UPDATE ", "CREATE TABLE", "CREATE VIRTUAL", "PRAGMA ")


def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1]] if len(parts) > 1 else LAYERS["__init__"]


def imports(module: str, path: Path, known: set[str]) -> set[str]:
    """repo_memory modules `module` imports anywhere (lazy imports inside functions count; TYPE_CHECKING ones do not)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip |= {id(n) for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("repo_memory")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("repo_memory"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                found.add(candidate if candidate in known else node.module)
    return found - {module}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def test_every_import_points_down_the_layers():
    wrong = [f"{m} (layer {layer(m)}) imports {d} (layer {layer(d)})" for m, deps in graph().items() for d in deps
             if d != "repo_memory" and layer(d) > layer(m)]
    assert wrong == []


def test_there_is_no_import_circle():
    edges = {m: {d for d in deps if d != "repo_memory"} for m, deps in graph().items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert cycles == []


def test_sql_is_written_only_in_the_index_package():
    outside = []
    for name, path in modules().items():
        if name.startswith("repo_memory.index") or name in GENERATED:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and n.body
                      and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if any(keyword in node.value for keyword in SQL):
                    outside.append(f"{name}:{node.lineno}: {node.value[:60]!r}")
    assert outside == []


def test_modules_stay_small_and_the_store_is_wiring():
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules().items() if name not in GENERATED}
    assert {name: n for name, n in sizes.items() if n > 400} == {}
    # a constructor and one-line delegations (an import's append takes two arguments more; close says what still waits;
    # a pre-push run binds its record to its branch, and what waits for another branch is asked for; an import pins code
    # refs as remember does; a pin is read against the code its commit holds, the briefing says a cut-off check, and a
    # person's redaction is wired)
    assert sizes["repo_memory.core.store"] < 282


def test_gitpython_reads_and_sqlite_utils_builds_the_schema():
    """The libraries the project is built on are used for their jobs, where the design says."""
    sources = {name: path.read_text(encoding="utf-8") for name, path in modules().items()}
    # gitpython's Repo, its git processes in a session of their own (git/detached.py), is what git/repo.py reads through
    assert "import git\n" in sources["repo_memory.git.detached"] and "(git.Repo)" in sources["repo_memory.git.detached"]
    reader = sources["repo_memory.git.repo"]
    assert "from repo_memory.git.detached import Repo" in reader and "Repo(" in reader
    assert "import sqlite_utils" in sources["repo_memory.index.db"] and "enable_fts(" in sources["repo_memory.index.db"]
    users_of_git = [n for n, s in sources.items() if "subprocess" in s and '["git"' in s]  # a command line git runs
    assert users_of_git == ["repo_memory.git.repo"]  # every git process starts in one place
