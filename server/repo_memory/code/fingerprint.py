"""A cited definition's hash: what of its code counts as a change, and the hashes older releases gave the same code.

The hash is taken over the definition's tokens with comments left out, and where a block is delimited by indentation
alone (Python), its start and end: re-indenting, re-wrapping or editing a comment changes nothing while any change to
the code, a statement moved out of an `if` included, does. A comma just before a closing bracket is formatting too
(black, prettier, rustfmt and gofmt add one when they break a list over lines), except where it makes a one-element
tuple: Python's `(a,)`, `d[a,]`, `(yield a,)` and Rust's `(a,)` are not `(a)`. The tokens include what the grammars
keep beside the definition: Python and TypeScript decorators, Rust attributes, TypeScript overload signatures.
`hashed` also gives the hashes older releases gave the same code (see `body_hash`), so a memory they pinned still
matches it.
"""

from __future__ import annotations

import hashlib
from typing import Any

# The form of the hashes `body_hash` gives (one more each time what it leaves out changes), kept with the stamp of each
# file a hash was read from: in an index an older release wrote, every cited file is read once more, and its older
# hashes worked out then, while the code is still the code those were pinned over.
FORM = "5"
SIGNATURES = {"function_signature", "method_signature", "abstract_method_signature"}  # TypeScript: overloads, interface members
# Kept beside a definition, not inside it (see `decorated`): Python's and TypeScript's decorators, Rust's attributes.
DECORATIONS = {"decorator", "attribute_item"}
CLOSERS = {")", "]", "}", ">"}  # `>`: generics, `f<T,>()` (TypeScript), `S<T,>` (Rust)
# Where one comma makes a tuple, `(a,)` (Python, Rust), `d[a,]` and `(yield a,)` (Python), the comma is code when it
# is the only one (TypeScript's tuple type `[T,]` is `[T]`). In a Rust macro's `(...)` the macro decides, so it is
# kept there too; in a macro's repetition it is the separator, `$($x:expr,)*`, always kept.
TUPLES = {"tuple", "tuple_pattern", "subscript", "expression_list", "tuple_expression", "tuple_type"}
SEPARATORS = {"token_repetition", "token_repetition_pattern"}
SKIPPED = ("comment", "line_continuation")  # node types containing these are no tokens of the hash


def body_hash(nodes: list[Any], structure: bool = True, continuations: bool = False, commas: bool = False) -> str:
    """A hash of the definitions' tokens (comments, Python's `\\` continuations and trailing commas left out) and
    (`structure`) of where each indented block starts and ends. Older releases hashed trailing `commas` (until
    2026-12-06), `continuations` (until 2026-12-06), no `structure` (before 2026-12-06), and no decorators,
    attributes nor overload signatures (before 2026-12)."""
    digest = hashlib.sha256()
    stack: list[Any] = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if node is None:
            digest.update(b"\x01}")
        elif "comment" in node.type or (node.type == "line_continuation" and not continuations):
            continue  # and nothing inside it (Rust's doc comments have children)
        elif node.child_count == 0:
            if node.type == "," and not commas and trailing(node):
                continue
            digest.update(node.text)
            digest.update(b"\x00")
        elif structure and node.type == "block" and node.children[0].type != "{":
            digest.update(b"\x01{")
            stack.append(None)  # the block's end, once its children are hashed
            stack.extend(reversed(node.children))
        else:
            stack.extend(reversed(node.children))
    return digest.hexdigest()[:16]


def trailing(comma: Any) -> bool:
    """Whether `comma` is only formatting: the last token before a closing bracket, no hole in a JavaScript array
    (`[a,,]`, `[,]`) and no one-element tuple's."""
    after, before = _next_token(comma), comma.prev_sibling
    if after is None or after.type not in CLOSERS or before is None or before.type in (",", "(", "[", "{"):
        return False
    parent = comma.parent
    if parent.type in SEPARATORS:
        return False
    opener = parent.children[0].type
    if parent.type in TUPLES and opener != "[" or parent.type == "token_tree" and opener == "(":
        return sum(child.type == "," for child in parent.children) > 1
    return True


def _next_token(node: Any) -> Any:
    """The token after `node`, comments left out: a Rust match's last arm `B => 2,` is followed by the match's `}`."""
    while True:
        while node is not None and node.next_sibling is None:
            node = node.parent
        if node is None:
            return None
        node = node.next_sibling
        if not any(kind in node.type for kind in SKIPPED):
            while node.child_count:
                node = node.children[0]
            return node


def decorated(nodes: list[Any]) -> list[Any]:
    """`nodes` with the decorators or attributes written just before each (comments, `export` and `default` between)."""
    out = []
    for node in nodes:
        before, sibling = [], node.prev_sibling
        while sibling is not None and (sibling.type in DECORATIONS or sibling.type in ("export", "default") or "comment" in sibling.type):
            if sibling.type in DECORATIONS:
                before.append(sibling)
            sibling = sibling.prev_sibling
        out += [*reversed(before), node]
    return out


def _node_at(tree: Any, start: int, end: int) -> Any:
    """The outermost definition node spanning exactly start..end."""
    node = tree.root_node.descendant_for_byte_range(start, end)
    while node.parent is not None and node.parent.start_byte == start and node.parent.end_byte == end and node.parent.parent is not None:
        node = node.parent
    return node


def hashed(tree: Any, places: tuple[tuple[int, int, int], ...]) -> tuple[str, int, tuple[str, ...]]:
    """(hash, line, the hashes older releases gave it) of the definition at `places` in `tree`."""
    nodes = [_node_at(tree, start, end) for start, end, _ in places]
    full, older = decorated(nodes), [n for n in nodes if n.type not in SIGNATURES]
    now = body_hash(full)
    legacy = [body_hash(full, commas=True), body_hash(full, continuations=True, commas=True),
              body_hash(full, structure=False, continuations=True, commas=True),
              *([body_hash(older, structure=False, continuations=True, commas=True)] if older and older != full else [])]
    return now, places[0][2], tuple(h for h in dict.fromkeys(legacy) if h != now)
