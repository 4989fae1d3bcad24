"""Frontmatter: YAML 1.2 reading, refusal of hostile input, and edits that keep every other byte."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from repo_memory.formats import edits
from repo_memory.formats import frontmatter
from repo_memory.errors import InvalidRecordError


def test_yaml_12_keeps_no_and_dates_as_text():
    data = frontmatter.load("a: no\nb: on\nc: 2026-01-02\nd: 012\ne: true\nf: 0x1F\ng: 1.5\nh: ~\n", "t")
    assert data == {"a": "no", "b": "on", "c": "2026-01-02", "d": 12, "e": True, "f": 31, "g": 1.5, "h": None}


def test_alias_bomb_is_rejected_fast():
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    for i in range(1, 10):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        bomb += f"{cur}: &{cur} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"
    started = time.perf_counter()
    with pytest.raises(InvalidRecordError, match="aliases"):
        frontmatter.load(bomb, "bomb")
    assert time.perf_counter() - started < 1.0


def test_one_megabyte_frontmatter_is_rejected_before_parsing():
    text = "---\n" + "k: " + "x" * (1024 * 1024) + "\n---\nbody\n"
    started = time.perf_counter()
    with pytest.raises(InvalidRecordError, match="over 64 KiB"):
        frontmatter.split(text, "big")
    assert time.perf_counter() - started < 1.0


def test_invalid_yaml_names_the_file_line():
    doc = frontmatter.split("---\nname: a\ndescription: [unclosed\n---\nbody\n", "t")
    with pytest.raises(InvalidRecordError) as info:
        frontmatter.load(doc.frontmatter, "t")
    assert info.value.problems[0].line in (3, 4)


def test_unclosed_frontmatter_is_reported():
    with pytest.raises(InvalidRecordError, match="never closed"):
        frontmatter.split("---\nname: a\n", "t")


@pytest.mark.parametrize(
    "original",
    [
        "name: a\ndescription: old  # why\nmetadata:\n  status: draft   # c\n  x: 1\nfoo: bar\n",
        "name: a\ndescription: >\n  folded\n  text\nmetadata: {status: draft}\n",
        "name: a\ndescription: |\n  lit\nmetadata:\n  tags:\n    - a\n    - b\n# trailing comment\n",
        "name: a\ndescription:\n",
        "name: a\n",
        "name: a\nmetadata:\n",
    ],
)
def test_edits_produce_the_requested_values(original):
    out = edits.set_field(original, ["description"], "New: text #1")
    out = edits.set_field(out, ["metadata", "status"], "active")
    out = edits.set_field(out, ["metadata", "tags"], ["x", "y z"])
    data = frontmatter.load(out, "t")
    assert data["description"] == "New: text #1"
    assert data["metadata"]["status"] == "active"
    assert data["metadata"]["tags"] == ["x", "y z"]
    assert data["name"] == "a"


KEYS = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True).filter(lambda k: k not in ("name", "description", "metadata"))
PLAIN = st.from_regex(r"[A-Za-z][A-Za-z0-9 ]{0,20}[A-Za-z0-9]", fullmatch=True)
COMMENT = st.one_of(st.just(""), st.from_regex(r"  # [a-z ]{0,15}", fullmatch=True))
TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=60)


@st.composite
def human_frontmatter(draw: st.DrawFn) -> tuple[str, int]:
    """A frontmatter a person might write: unknown keys, comments, quoting styles, a metadata block."""
    lines = ["name: my-skill" + draw(COMMENT)]
    desc_style = draw(st.sampled_from(["plain", "single", "double"]))
    desc = draw(PLAIN)
    rendered = {"plain": desc, "single": f"'{desc}'", "double": f'"{desc}"'}[desc_style]
    extras = draw(st.lists(st.tuples(KEYS, PLAIN, COMMENT), max_size=4, unique_by=lambda t: t[0]))
    position = draw(st.integers(0, len(extras)))
    for key, value, comment in extras[:position]:
        lines.append(f"{key}: {value}{comment}")
    desc_line = len(lines)
    lines.append(f"description: {rendered}" + draw(COMMENT))
    if draw(st.booleans()):
        lines.append("# a comment line a person left")
    for key, value, comment in extras[position:]:
        lines.append(f"{key}: {value}{comment}")
    if draw(st.booleans()):
        lines += ["metadata:", "  status: active" + draw(COMMENT), "  tags: [one, two]"]
    return "\n".join(lines) + "\n", desc_line


@settings(max_examples=300, deadline=None)
@given(human_frontmatter(), TEXT)
def test_a_server_edit_changes_only_the_edited_field(case, new_description):
    original, desc_line = case
    edited = edits.set_field(original, ["description"], new_description)
    before, after = original.splitlines(), edited.splitlines()
    assert len(before) == len(after)
    for number, (old, new) in enumerate(zip(before, after, strict=True)):
        if number != desc_line:
            assert old == new
    old_data, new_data = frontmatter.load(original, "t"), frontmatter.load(edited, "t")
    assert new_data["description"] == new_description
    assert {k: v for k, v in new_data.items() if k != "description"} == {k: v for k, v in old_data.items() if k != "description"}


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_any_text_survives_render_and_load(value):
    assert frontmatter.load(frontmatter.render_new({"description": value, "metadata": {"tags": [value]}}), "t") == {
        "description": value, "metadata": {"tags": [value]}
    }


SCALAR_CHARS = st.sampled_from(list("abcXYZ019 _-.,:#'\"[]{}&*!|>%@`/()~?\\\t") + ["é", "\u2028", "\x85", "\x07"])
SCALARS = st.one_of(
    st.text(SCALAR_CHARS, max_size=12),
    st.sampled_from(["no", "yes", "on", "true", "False", "null", "~", "012", "0o17", "0x1F", "1e3", ".5", "-3", ".inf", ".NaN", "2026-01-02", "1:20"]),
)
SIMPLE = st.text(st.sampled_from(list("abcXYZ019 _-.,()/'")), min_size=1, max_size=12)
VALUES = st.one_of(
    SCALARS, SIMPLE, SIMPLE.map(lambda v: f'"{v}"'), SCALARS.map(lambda v: f'"{v}"'),
    st.text(SCALAR_CHARS, max_size=8).map(json.dumps), st.text(max_size=8).map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.lists(st.one_of(SCALARS, SIMPLE), max_size=3).map(lambda items: "[" + ", ".join(items) + "]"),
)


@st.composite
def frontmatter_lines(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        key = draw(st.sampled_from(["name", "description", "metadata", "tags", "x-y", "a_b"]))
        indent = draw(st.sampled_from(["", "", "", "  ", "  ", "   "]))
        value = draw(st.one_of(st.just(""), VALUES))
        lines.append(f"{indent}{key}:{' ' + value if value else ''}")
    return "\n".join(lines) + "\n"


@st.composite
def common_frontmatter(draw: st.DrawFn) -> str:
    """The shape nearly every SKILL.md has: unique top-level keys, then a metadata block."""
    keys = draw(st.lists(st.sampled_from(["name", "description", "license", "x-y", "a_b"]), unique=True, max_size=5))
    lines = [f"{k}: {draw(VALUES)}" for k in keys]
    if draw(st.booleans()):
        lines.append("metadata:")
        nested = draw(st.lists(st.sampled_from(["status", "origin", "tags", "related"]), unique=True, max_size=4))
        lines += [f"  {k}: {draw(VALUES)}" for k in nested]
    return "\n".join(lines) + "\n"


@settings(max_examples=1500, deadline=None)
@given(st.one_of(frontmatter_lines(), common_frontmatter()))
@example("metadata:\n  status: [0\x85\t]\n")  # NEL: whitespace to Python's strip(), a line break to YAML
@pytest.mark.slow
def test_the_fast_path_agrees_with_the_yaml_parser_whenever_it_answers(text):
    import yaml

    fast = frontmatter._load_simple(text)
    if fast is None:
        return
    try:
        slow = yaml.load(text, Loader=frontmatter._loader())
    except yaml.YAMLError:
        raise AssertionError(f"fast path accepted YAML the parser rejects: {text!r} -> {fast!r}") from None
    assert repr(fast) == repr(slow or {}), text  # repr: NaN equals itself


@settings(max_examples=300, deadline=None)
@given(TEXT, st.booleans(), st.sampled_from(["", "'", '"']))
def test_a_rename_replaces_only_the_named_items_and_keys_and_reads_back(new, block, quote):
    """`stale --follow-renames` rewrote a person's anchors block as a flow list, and the comments on its lines went."""
    old = f"{quote}a.py::f{quote}"
    listed = (f"  anchors:\n    - {old}  # why\n    - b.py::g\n  anchor_hashes:\n    {old}: 12ab  # pinned\n" if block
              else f"  anchors: [{old}, b.py::g]  # why\n  anchor_hashes: {{{old}: 12ab}}  # pinned\n")
    fm = "name: x  # top\nmetadata:\n" + listed

    def renamed(to: str) -> str:
        return edits.rename(edits.rename(fm, ["metadata", "anchors"], {"a.py::f": to}), ["metadata", "anchor_hashes"], {"a.py::f": to})

    assert renamed("c.py::h") == fm.replace("a.py::f", "c.py::h")  # quoted as it was, every other byte kept
    out = renamed(new)
    assert frontmatter.load(out, "t")["metadata"] == {"anchors": [new, "b.py::g"], "anchor_hashes": {new: "12ab"}}
    comments = [line.partition("#")[2] for line in fm.splitlines()]
    assert [line.partition("#")[2] for line in out.splitlines()] == comments or "#" in new
