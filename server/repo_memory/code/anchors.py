"""Code anchors: a memory cites code as `path/to/file.py::Class.method`; we notice when that code changes.

Each cited file is parsed with tree-sitter (grammars from the per-language wheels, never downloaded). An anchor
resolves to the definition with that qualified name, and its hash is taken over the definition's tokens
(code/fingerprint.py: what formatting leaves out, and the hashes older releases gave the same code, in
`Resolved.legacy`). A memory stores the hashes of its anchors when it is written; when a hash no longer matches, or
the symbol is gone, the memory is stale.

Qualified names: nested definitions joined by dots — `Class.method` (Python, JavaScript, TypeScript, Java),
`Type.Method` for Go methods (the receiver's type), `Type.method` for Rust functions in `impl Type` blocks,
`module.function` for Rust `mod`. Overloads (Java, TypeScript) share one name and one hash.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

from repo_memory.code import mistakes
from repo_memory.code.fingerprint import FORM, hashed

ANCHOR = re.compile(r"^(?P<path>[^\s:]\S*?)::(?P<symbol>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)$")
# Plain-text mentions worth suggesting as anchors: "`parse_config` in src/config.py"
MENTION = re.compile(r"`(?P<symbol>[A-Za-z_][\w.]*)(?:\(\))?`\s+in\s+`?(?P<path>[\w./-]+\.(?:py|js|mjs|cjs|jsx|ts|mts|cts|tsx|go|rs|java))(?![\w])`?")

LANGUAGES = {
    ".py": ("tree_sitter_python", "language"), ".pyi": ("tree_sitter_python", "language"),
    ".js": ("tree_sitter_javascript", "language"), ".mjs": ("tree_sitter_javascript", "language"),
    ".cjs": ("tree_sitter_javascript", "language"), ".jsx": ("tree_sitter_javascript", "language"),
    ".ts": ("tree_sitter_typescript", "language_typescript"), ".mts": ("tree_sitter_typescript", "language_typescript"),
    ".cts": ("tree_sitter_typescript", "language_typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx"),
    ".go": ("tree_sitter_go", "language"), ".rs": ("tree_sitter_rust", "language"), ".java": ("tree_sitter_java", "language"),
}
DEFINITIONS = {
    # python
    "function_definition", "class_definition",
    # javascript / typescript
    "function_declaration", "generator_function_declaration", "class_declaration", "abstract_class_declaration",
    "method_definition", "interface_declaration", "type_alias_declaration", "enum_declaration", "variable_declarator",
    "function_signature", "method_signature", "abstract_method_signature",
    # go
    "method_declaration", "type_spec",
    # rust
    "function_item", "function_signature_item", "struct_item", "enum_item", "trait_item", "mod_item", "union_item",
    # java
    "record_declaration", "constructor_declaration",
}
SCOPES = {"impl_item"}  # Rust: `impl Type { fn f }` names `Type.f`, but the impl block is not a symbol itself
CALLABLE_VALUES = {"arrow_function", "function_expression", "function", "class", "generator_function"}
MAX_FILE_BYTES = 2 * 1024 * 1024
# What starts a problem that says nothing of the code's changes (a language not parsed, a file too big): not stale.
UNCHECKED = "cannot be checked: "
MISSING = "the file does not exist"


@dataclass(frozen=True)
class Anchor:
    path: str
    symbol: str

    def __str__(self) -> str:
        return f"{self.path}::{self.symbol}"


@dataclass(frozen=True)
class Resolved:
    """Where an anchor stands in the code now: `hash` when found; otherwise `problem` says why not."""

    anchor: str
    hash: str = ""
    line: int = 0
    problem: str = ""
    legacy: tuple[str, ...] = ()  # the hashes older releases gave it (code/fingerprint.py), those that differ


@functools.lru_cache(maxsize=65536)
def parse(text: str) -> Anchor | None:
    """`path::Symbol` as an Anchor, its path spelled one way (`./a//b.py`: `a/b.py`); None when `text` is not one."""
    match = ANCHOR.match(text.strip())
    if not match or match["path"].startswith("/") or ".." in match["path"].split("/"):
        return None
    return Anchor("/".join(part for part in match["path"].split("/") if part not in ("", ".")), match["symbol"])


def canonical(text: str) -> str:
    """The one spelling of anchor `text` (what is stored and what to look up); `text` itself when it is not one."""
    anchor = parse(text)
    return str(anchor) if anchor is not None else text


def suggest(text: str) -> list[str]:
    """Anchors a plain-text mention suggests ("`parse_config` in src/config.py" -> "src/config.py::parse_config")."""
    return list(dict.fromkeys(f"{m['path']}::{m['symbol']}" for m in MENTION.finditer(text)))


def supported(path: str) -> bool:
    return os.path.splitext(path)[1] in LANGUAGES


_parsers: dict[tuple[str, str], tuple[Any, Any]] = {}
_parsers_lock = threading.Lock()


def _parser(suffix: str) -> tuple[Any, Any]:
    """The parser of a file type and a query that captures its definitions (run in C, not a Python tree walk)."""
    module, function = LANGUAGES[suffix]
    with _parsers_lock:
        if (module, function) not in _parsers:
            from tree_sitter import Language, Parser, Query  # imported when the first anchor is resolved

            language = Language(getattr(import_module(module), function)())
            kinds = sorted(k for k in DEFINITIONS | SCOPES if language.id_for_node_kind(k, True))
            _parsers[(module, function)] = (Parser(language), Query(language, " ".join(f"({k}) @def" for k in kinds)))
        return _parsers[(module, function)]


def _name(node: Any) -> str | None:
    if node.type == "method_declaration" and node.child_by_field_name("receiver") is not None:  # Go
        name = node.child_by_field_name("name")
        receiver = node.child_by_field_name("receiver")
        types = [t for t in _walk(receiver) if t.type == "type_identifier"]
        prefix = types[0].text.decode() + "." if types else ""
        return prefix + name.text.decode() if name is not None else None
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is None or value.type not in CALLABLE_VALUES:
            return None
    name = node.child_by_field_name("name")
    if name is None or name.type not in ("identifier", "type_identifier", "property_identifier", "field_identifier",
                                         "private_property_identifier", "constant"):
        return None
    return name.text.decode("utf-8", "replace")


def _scope_label(node: Any) -> str | None:
    """The name a node gives to definitions inside it, if any."""
    if node.type in SCOPES:
        target = node.child_by_field_name("type")
        return re.sub(r"<.*", "", target.text.decode()) if target is not None else None
    if node.type in DEFINITIONS and node.type != "method_declaration":
        return _name(node)
    return None


def _walk(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def definitions(source: bytes, suffix: str) -> dict[str, list[Any]]:
    """Qualified name -> definition nodes (several for overloads) of a source file."""
    return parse_tree(source, suffix)[1]


def parse_tree(source: bytes, suffix: str) -> tuple[Any, dict[str, list[Any]]]:
    """The syntax tree of a source file and its definitions by qualified name."""
    parser, query = _parser(suffix)
    from tree_sitter import QueryCursor

    tree = parser.parse(source)
    nodes = QueryCursor(query).captures(tree.root_node).get("def", [])
    found: dict[str, list[Any]] = {}
    labels: dict[int, str | None] = {}
    for node in sorted(nodes, key=lambda n: n.start_byte):
        if node.type in SCOPES or not (name := _name(node)):
            continue
        if node.type == "method_declaration" and "." in name:  # a Go method is named by its receiver, not its place
            found.setdefault(name, []).append(node)
            continue
        scope: list[str] = []
        parent = node.parent
        while parent is not None:
            if parent.type in DEFINITIONS or parent.type in SCOPES:
                if parent.id not in labels:
                    labels[parent.id] = _scope_label(parent)
                label = labels[parent.id]
                if label:
                    scope.append(label)
            parent = parent.parent
        found.setdefault(".".join([*reversed(scope), name]), []).append(node)
    return tree, found


Spans = dict[str, tuple[tuple[int, int, int], ...]]  # qualified name -> (start byte, end byte, line) of each definition node


@dataclass
class _Parsed:
    """What the cache keeps of one file: its definitions' places (or why there are none) and the hashes asked for."""

    stamp: str
    spans: Spans | str
    hashes: dict[str, tuple[str, int, tuple[str, ...]]] = field(default_factory=dict)  # name -> (hash, line, legacy hashes)


def stamp(st: os.stat_result | None) -> str:
    """A file's identity on disk: any write, or a file put in its place, changes it ('' when there is no file)."""
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}" if st is not None else ""


class Code:
    """The definitions of a repository's cited source files, re-parsed only when a file changes on disk.

    Per file it keeps where each definition is and the hashes asked for, never the syntax tree (about 30 times the
    source: 400 MB at 800 files), except the last one parsed, which the anchors into that file that follow use.
    At most `max_files` files are kept, the least recently used dropped first; a file found gone is dropped."""

    def __init__(self, root: Path, max_files: int = 1024):
        self.root, self.max_files = root, max_files
        self._base = str(root)
        self._stats: dict[str, os.stat_result | None] | None = None  # within `batch()`: one stat per file
        self._files: OrderedDict[str, _Parsed] = OrderedDict()
        self._tree: tuple[str, str, Any] | None = None  # (path, stamp, tree) of the last file parsed
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Resolve many anchors against one look at the disk: each file is stat'ed once inside the block."""
        self._stats = {}
        try:
            yield
        finally:
            self._stats = None

    def held(self) -> tuple[int, int]:
        """(files whose definitions are kept, syntax trees kept): what the cache costs."""
        return len(self._files), int(self._tree is not None)

    def stamp(self, path: str) -> str:
        """The file's stamp on disk now (see `stamp`) and the form of the hashes (`fingerprint.FORM`)."""
        if path.startswith("/") or ".." in path.split("/"):  # not an anchor's path (parse refuses it): nothing outside is looked at
            return ""
        return f"{stamp(self._stat(path))}@{FORM}"

    def _stat(self, path: str) -> os.stat_result | None:
        stats = self._stats
        if stats is not None and path in stats:
            return stats[path]
        try:
            st: os.stat_result | None = os.stat(os.path.join(self._base, path))
        except OSError:
            st = None
        if stats is not None:
            stats[path] = st
        return st

    def _parse(self, path: str, st: os.stat_result) -> tuple[Spans | str, Any]:
        """(qualified name -> places of its definitions, or why there are none; the tree, when parsed)."""
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device named like code would block the read
            return f"{UNCHECKED}it is not a regular file", None
        if st.st_size > MAX_FILE_BYTES:
            return f"{UNCHECKED}the file is over {MAX_FILE_BYTES // 1024 // 1024} MiB", None
        try:
            full = self.root / path
            tree, found = parse_tree(full.read_bytes(), full.suffix)
        except (OSError, ValueError) as exc:
            return f"{UNCHECKED}the file could not be read ({exc})", None
        return {name: tuple((n.start_byte, n.end_byte, n.start_point[0] + 1) for n in nodes) for name, nodes in found.items()}, tree

    def _parsed(self, path: str, again: bool = False) -> tuple[_Parsed | str, Any]:
        """(the file's entry, parsed now if it changed since or `again`, or why it has none; the tree when parsed now)."""
        st = self._stat(path)
        now = stamp(st)
        with self._lock:
            if st is None:
                self._files.pop(path, None)
                if self._tree is not None and self._tree[0] == path:
                    self._tree = None
                return MISSING, None
            cached = self._files.get(path)
            if cached is not None and cached.stamp == now and not again:
                self._files.move_to_end(path)
                return cached, None
        spans, tree = self._parse(path, st)
        entry = _Parsed(now, spans)
        with self._lock:
            self._files[path] = entry
            self._files.move_to_end(path)
            while len(self._files) > self.max_files:
                self._files.popitem(last=False)
            if tree is not None:
                self._tree = (path, now, tree)
        return entry, tree

    def resolve(self, text: str) -> Resolved:
        """The current hash of an anchor's definition, or why it has none."""
        anchor = parse(text)
        if anchor is None:
            return Resolved(text, problem="not an anchor: write path/to/file.py::Class.method (a path inside the repository)")
        text = str(anchor)
        if not supported(anchor.path):
            kind = f"{suffix} files" if (suffix := os.path.splitext(anchor.path)[1]) else "files without an extension"
            return Resolved(text, problem=f"{UNCHECKED}{kind} are not parsed "
                                          f"(anchors work in {', '.join(sorted(set(LANGUAGES)))} files)")
        for again in (False, True):  # again: the tree was let go since the file was parsed, and a new symbol needs it
            entry, tree = self._parsed(anchor.path, again)
            if isinstance(entry, str) or isinstance(entry.spans, str):
                return Resolved(text, problem=entry if isinstance(entry, str) else str(entry.spans))
            where = entry.spans.get(anchor.symbol)
            if not where:
                return Resolved(text, problem=mistakes.unknown(anchor.path, anchor.symbol, entry.spans))
            with self._lock:
                memo = entry.hashes.get(anchor.symbol)
                if memo is None and tree is None and self._tree is not None and self._tree[:2] == (anchor.path, entry.stamp):
                    tree = self._tree[2]
            if memo is None and tree is not None:
                # Parsed a second time for another symbol: every definition is hashed now, so this is the last time.
                wanted = entry.spans if again else {anchor.symbol: where}
                hashes = {name: hashed(tree, places) for name, places in wanted.items()}
                with self._lock:
                    entry.hashes.update(hashes)
                memo = hashes[anchor.symbol]
            if memo is not None:
                return Resolved(text, hash=memo[0], line=memo[1], legacy=memo[2])
        return Resolved(text, problem="the file changed while it was read; look again")

    def near(self, text: str) -> list[str]:
        """What anchor `text`, which resolves to nothing, may have meant: told to whoever writes it, not of a stale one."""
        anchor = parse(text)
        entry = self._parsed(anchor.path)[0] if anchor is not None and supported(anchor.path) else ""
        if anchor is not None and entry == MISSING:
            return mistakes.files_like(self._base, anchor.path, supported)
        if anchor is None or isinstance(entry, str) or isinstance(entry.spans, str):
            return []
        return mistakes.definitions_like(anchor.symbol, entry.spans)

