"""A cited definition's hash: what of its code counts as a change, and the hashes older releases gave the same code.

The hash is taken over the definition's tokens with comments left out, and where a block is delimited by indentation
alone (Python), its start and end: re-indenting, re-wrapping or editing a comment changes nothing while any change to
the code, a statement moved out of an `if` included, does. The tokens include what the grammars keep beside the
definition: Python and TypeScript decorators, Rust attributes, TypeScript overload signatures. `hashed` also gives the
hashes older releases gave the same code (see `body_hash`), so a memory they pinned still matches it.
"""

from __future__ import annotations

import hashlib
from typing import Any

SIGNATURES = {"function_signature", "method_signature", "abstract_method_signature"}  # TypeScript: overloads, interface members
# Kept beside a definition, not inside it (see `decorated`): Python's and TypeScript's decorators, Rust's attributes.
DECORATIONS = {"decorator", "attribute_item"}

def body_hash(nodes: list[Any], structure: bool = True, continuations: bool = False) -> str:
    """A hash of the definitions' tokens (comments and Python's `\\` continuations left out) and (`structure`) of where
    each indented block starts and ends. Older releases hashed `continuations` (until 2026-12-06), no `structure`
    (before 2026-12-06), and no decorators, attributes nor overload signatures (before 2026-12)."""
    digest = hashlib.sha256()
    stack: list[Any] = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if node is None:
            digest.update(b"\x01}")
        elif "comment" in node.type or (node.type == "line_continuation" and not continuations):
            continue  # and nothing inside it (Rust's doc comments have children)
        elif node.child_count == 0:
            digest.update(node.text)
            digest.update(b"\x00")
        elif structure and node.type == "block" and node.children[0].type != "{":
            digest.update(b"\x01{")
            stack.append(None)  # the block's end, once its children are hashed
            stack.extend(reversed(node.children))
        else:
            stack.extend(reversed(node.children))
    return digest.hexdigest()[:16]


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
    legacy = [body_hash(full, continuations=True), body_hash(full, structure=False, continuations=True),
              *([body_hash(older, structure=False, continuations=True)] if older and older != full else [])]
    return now, places[0][2], tuple(h for h in dict.fromkeys(legacy) if h != now)
