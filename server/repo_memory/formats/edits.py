"""Editing frontmatter in place: ruamel.yaml locates a value, and new text is spliced into exactly that span,
so a person's comments, key order, quoting and unknown keys survive byte for byte.

Kept apart from `frontmatter` because ruamel costs ~30 ms to import and only writes need it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError as RuamelError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from repo_memory.errors import InvalidRecordError, Problem
from repo_memory.formats.frontmatter import load, render_scalar


def set_field(fm: str, path: Sequence[str], value: Any) -> str:
    """Return `fm` with the value at `path` (one or two keys deep) replaced, touching nothing else."""
    if not fm.endswith("\n"):
        fm += "\n"
    root = _compose(fm)
    rendered = render_scalar(value)
    key, *rest = path
    pair = _find(root, key)
    if not rest:
        if pair is None:
            return fm + f"{key}: {rendered}\n"
        return _replace_value(fm, pair, rendered)
    (child,) = rest
    if pair is None:
        return fm + f"{key}:\n  {child}: {rendered}\n"
    parent = pair[1]
    if not isinstance(parent, MappingNode) or parent.flow_style or not parent.value:
        return _replace_value(fm, pair, _flow_mapping(fm, parent, child, rendered))
    inner = _find(parent, child)
    if inner is not None:
        return _replace_value(fm, inner, rendered)
    last_key, last_value = parent.value[-1]
    pos = _line_end(fm, _content_end(last_value)) + 1
    indent = " " * last_key.start_mark.column
    return fm[:pos] + f"{indent}{child}: {rendered}\n" + fm[pos:]


def drop_field(fm: str, path: Sequence[str]) -> str:
    """Return `fm` without the key at `path` (one or two keys deep) and its value; a mapping left empty goes too.
    Nothing else is touched; a key not there leaves `fm` as it is."""
    if not fm.endswith("\n"):
        fm += "\n"
    mapping, nested = _compose(fm), False
    for key in path[:-1]:
        parent = _find(mapping, key)
        if parent is None or not isinstance(parent[1], MappingNode):
            return fm
        mapping, nested = parent[1], True
    pair = _find(mapping, path[-1])
    if pair is None:
        return fm
    if nested and len(mapping.value) == 1:
        return drop_field(fm, path[:-1])  # its only key: the mapping goes with it
    if mapping.flow_style:  # {a: 1, b: 2}: written again from the other pairs' own text
        rest = [f"{fm[k.start_mark.index:k.end_mark.index]}: {fm[v.start_mark.index:v.end_mark.index]}"
                for k, v in mapping.value if k is not pair[0]]
        return fm[:mapping.start_mark.index] + "{" + ", ".join(rest) + "}" + fm[mapping.end_mark.index:]
    start = fm.rfind("\n", 0, pair[0].start_mark.index) + 1
    return fm[:start] + fm[_line_end(fm, _content_end(pair[1])) + 1:]


def rename(fm: str, path: Sequence[str], renames: dict[str, str]) -> str:
    """Return `fm` with each item of the list at `path` (or key of the mapping there) that `renames` names replaced
    by its new text, quoted as the old one was where that reads back the same: a comment on its line, the other items
    and the list's layout are kept."""
    node: Node | None = _compose(fm)
    for key in path:
        node = pair[1] if isinstance(node, MappingNode) and (pair := _find(node, key)) else None
    items = [k for k, _ in node.value] if isinstance(node, MappingNode) else []  # a mapping's keys
    items = node.value if isinstance(node, SequenceNode) else items
    named = sorted((s for s in items if isinstance(s, ScalarNode) and s.style not in ("|", ">") and s.value in renames),
                   key=lambda s: s.start_mark.index, reverse=True)
    wanted = [renames.get(v, v) if isinstance(v, str) else v for v in _items(fm, path)]
    for quoted in (_as_before, lambda _, new: render_scalar(new)):  # the person's quoting; else what always reads back
        out = fm
        for s in named:
            out = out[:s.start_mark.index] + quoted(s, renames[s.value]) + out[s.end_mark.index:]
        try:
            if _items(out, path) == wanted:
                return out
        except InvalidRecordError:  # the text did not parse as it stood there (a plain '[', say)
            continue
    raise InvalidRecordError("frontmatter", [Problem(f"could not rename the items of {'.'.join(path)}")])


def _items(fm: str, path: Sequence[str]) -> list[Any]:
    """The items of the list at `path` in `fm` (the keys of a mapping), as the frontmatter reader reads them."""
    data: Any = load(fm, "frontmatter")
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return list(data) if isinstance(data, dict | list) else []


def _as_before(old: ScalarNode, new: str) -> str:
    """`new` quoted the way `old` was (a plain scalar stays plain); `rename` checks that it reads back as `new`."""
    if old.style == "'":
        return "'" + new.replace("'", "''") + "'"
    return json.dumps(new, ensure_ascii=False) if old.style == '"' else new


def _compose(fm: str) -> MappingNode:
    try:
        root = YAML().compose(fm)
    except RuamelError as exc:
        raise InvalidRecordError("frontmatter", [Problem(f"invalid YAML: {exc}")]) from None
    if root is None:
        return MappingNode("tag:yaml.org,2002:map", [])
    if not isinstance(root, MappingNode):
        raise InvalidRecordError("frontmatter", [Problem("the frontmatter must be a mapping")])
    return root


def _find(mapping: MappingNode, key: str) -> tuple[Node, Node] | None:
    for k, v in mapping.value:
        if isinstance(k, ScalarNode) and k.value == key:
            return k, v
    return None


def _replace_value(fm: str, pair: tuple[Node, Node], rendered: str) -> str:
    key, value = pair
    if isinstance(value, ScalarNode) and value.style not in ("|", ">"):
        start, end = value.start_mark.index, value.end_mark.index
        if start == end:  # an empty value ("key:"): write just after the colon, with its separating space
            start = end = fm.index(":", key.end_mark.index) + 1
            rendered = " " + rendered
    elif getattr(value, "flow_style", False):
        start, end = value.start_mark.index, value.end_mark.index
    else:
        # A block value starts on a later line: rewrite from just after the key's colon to its last line.
        start = fm.index(":", key.end_mark.index) + 1
        end = _content_end(value)
        if not isinstance(value, ScalarNode):
            end = _line_end(fm, end)
        rendered = " " + rendered
    old = fm[start:end]
    trailing = old[len(old.rstrip("\n")) :]
    return fm[:start] + rendered + trailing + fm[end:]


def _content_end(node: Node) -> int:
    """Where a node's own text ends; a block collection's end mark runs on into comments and indentation."""
    while isinstance(node, MappingNode | SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, MappingNode) else last
    return int(node.end_mark.index)


def _line_end(fm: str, pos: int) -> int:
    """Index of the newline ending the line that holds `pos` (a position just after a newline counts as that line)."""
    if fm[pos - 1 : pos] == "\n":
        return pos - 1
    nl = fm.find("\n", pos)
    return len(fm) if nl < 0 else nl


def _flow_mapping(fm: str, node: Node, child: str, rendered: str) -> str:
    """A small flow mapping holding the existing keys (when any) plus `child`."""
    pairs: list[str] = []
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value != child:
                pairs.append(f"{k.value}: {fm[v.start_mark.index : v.end_mark.index].strip()}")
    pairs.append(f"{child}: {rendered}")
    return "{" + ", ".join(pairs) + "}"
