"""Markdown documents with YAML frontmatter: split, load fast and safely, and edit in place.

Reading uses PyYAML's C loader with YAML 1.2 core-schema resolvers (so `no` stays a string and
dates stay text); editing uses ruamel.yaml only to locate a value, then splices new text into
exactly that span, so a person's comments, key order, quoting and unknown keys survive byte for byte.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from repo_memory.errors import InvalidRecordError, Problem

MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_NODES = 5_000
_FENCE = re.compile(r"^---[ \t]*\r?$", re.MULTILINE)
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)


@dataclass(frozen=True)
class Document:
    """A markdown file split at its frontmatter fences."""

    frontmatter: str
    body: str
    body_line: int  # 1-based line of the file where the body starts
    opening: str = "---\n"  # the fence lines as the file has them (a Windows editor's CRLF), and its byte order mark
    closing: str = "---\n"
    bom: str = ""

    @property
    def newline(self) -> str:
        return "\r\n" if self.opening.endswith("\r\n") else "\n"

    def render(self) -> str:
        return f"{self.bom}{self.opening}{self.frontmatter}{self.closing}{self.body}"


def split(text: str, what: str) -> Document:
    """Split `text` into frontmatter and body, or raise with the line that is wrong."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text[len(bom):]
    if (line := _conflict(text)) is not None:
        raise InvalidRecordError(what, [Problem("it holds an unresolved merge conflict (the '<<<<<<<' here): resolve it, "
                                                "then `git add` the file", line=line)])
    if not _FENCE.match(text):
        raise InvalidRecordError(what, [Problem("the file must start with a '---' line opening the YAML frontmatter", line=1)])
    first_nl = text.find("\n")
    close = _CLOSE.search(text, first_nl + 1) if first_nl >= 0 else None
    if close is None:
        raise InvalidRecordError(what, [Problem("the frontmatter is never closed by a '---' line", line=1)])
    fm = text[first_nl + 1 : close.start()]
    if len(fm.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise InvalidRecordError(
            what, [Problem(f"the frontmatter is over {MAX_FRONTMATTER_BYTES // 1024} KiB; keep long text in the body", line=2)]
        )
    end = text.find("\n", close.end())
    body = "" if end < 0 else text[end + 1 :]
    closing = text[close.start() : len(text) if end < 0 else end + 1]
    return Document(frontmatter=fm, body=body, body_line=fm.count("\n") + 3, opening=text[: first_nl + 1],
                    closing=closing if closing.endswith("\n") else closing + "\n", bom=bom)


def _conflict(text: str) -> int | None:
    """The line of the first merge conflict git left in `text` (`<<<<<<<`, `=======`, `>>>>>>>` in that order, outside
    fenced code, where a skill about git may show one), or None."""
    if "\n<<<<<<<" not in f"\n{text}" or "\n>>>>>>>" not in text:
        return None
    fence, start, middle = "", 0, False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith(("```", "~~~")):
            fence = "" if fence and line.startswith(fence) else fence or line[:3]
        elif fence:
            continue
        elif line.startswith("<<<<<<<"):
            start, middle = number, False
        elif start and line.rstrip() == "=======":
            middle = True
        elif start and middle and line.startswith(">>>>>>>"):
            return start
    return None


# YAML 1.2 core schema: only true/false are booleans, no timestamps, no sexagesimal, no merge keys.
_CORE = (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+.0123456789",
    ),
)
_RESOLVERS: list[tuple[str, re.Pattern[str]]] = [(tag, re.compile(regex)) for tag, regex, _ in _CORE]
_RESOLVER_FIRST = frozenset("tTfFnN~-+.0123456789")


def _int(text: str) -> int:
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    return int(text, 10)


def _float(text: str) -> float:
    text = text.lower()
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text == ".nan":
        return float("nan")
    return float(text)


_CONVERT: dict[str, Any] = {"bool": lambda t: t.lower() == "true", "null": lambda t: None, "int": _int, "float": _float}


@cache
def _loader() -> Any:
    """PyYAML's C loader with the core schema's resolvers (built on first use: PyYAML costs ~25 ms to import)."""
    import yaml

    class Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
        """YAML 1.2 core schema on PyYAML, with duplicate keys refused (YAML 1.2 requires unique keys; PyYAML keeps
        the last, while an editor finds the first, so a second `status:` could hide behind the one it rewrites)."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                if key is not None and key in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"the key '{key}' is given twice", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    Loader.yaml_implicit_resolvers = {}
    for tag, regex, first in _CORE:
        Loader.add_implicit_resolver(f"tag:yaml.org,2002:{tag}", re.compile(regex), list(first))
    Loader.add_constructor("tag:yaml.org,2002:int", lambda loader, node: _int(loader.construct_scalar(node)))
    Loader.add_constructor("tag:yaml.org,2002:float", lambda loader, node: _float(loader.construct_scalar(node)))
    return Loader


_SIMPLE_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*?))?[ \t]*$")
_SIMPLE_PLAIN = re.compile(r"^[A-Za-z0-9_(/.][^:#\t\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]*$")
_SIMPLE_ITEM = re.compile(r"^[A-Za-z0-9_(/.][^:#,\[\]{}'\"\t\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]*$")


def _simple_scalar(text: str) -> Any:
    """The value of a one-line scalar in the common subset, or _NOT_SIMPLE."""
    if text.startswith('"'):
        # JSON's escapes mean the same in YAML double quotes (surrogate pairs aside, which JSON joins and YAML does not).
        if not text.endswith('"') or _NOT_JSON_SAFE.search(text):
            return _NOT_SIMPLE
        try:
            value = json.loads(text)
        except ValueError:
            return _NOT_SIMPLE
        return value if isinstance(value, str) else _NOT_SIMPLE
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip(" ")  # spaces only: Python's strip() also takes \x85, a line break to YAML
        items = [i.strip(" ") for i in inner.split(",")] if inner else []
        if all(_SIMPLE_ITEM.match(i) and not i.endswith(" ") for i in items):
            return [_resolve(i) for i in items]
        return _NOT_SIMPLE
    if _SIMPLE_PLAIN.match(text) and " " not in (text[0], text[-1]):
        return _resolve(text)
    return _NOT_SIMPLE


_NOT_SIMPLE = object()
_NOT_JSON_SAFE = re.compile(r"[\x7f-\x9f\u2028\u2029\ufeff]|\\u[dD][89a-fA-F]")  # YAML 1.1 line breaks, non-printables, surrogates


def _resolve(text: str) -> Any:
    """YAML 1.2 core-schema resolution of a plain scalar, exactly as the loader does it."""
    if text[:1] not in _RESOLVER_FIRST:
        return text
    for tag, regexp in _RESOLVERS:
        if regexp.match(text):
            return _CONVERT[tag](text)
    return text


def _load_simple(fm: str) -> dict[str, Any] | None:
    """Parse the shape nearly every frontmatter has (one-line values, one nested block mapping) without a YAML parser.

    Anything outside that shape returns None and goes to the real parser, so results never differ.
    """
    out: dict[str, Any] = {}
    parent: dict[str, Any] | None = None
    for line in fm.split("\n"):
        if not line:
            continue
        nested = line.startswith("  ") and not line.startswith("   ")
        match = _SIMPLE_KEY.match(line[2:] if nested else line)
        if match is None or (nested and parent is None):
            return None
        key, raw = match.group(1), match.group(2)
        target = parent if nested and parent is not None else out
        if key in target:
            return None
        if raw is None:
            if nested:
                return None
            parent = out[key] = {}
            continue
        value = _simple_scalar(raw)
        if value is _NOT_SIMPLE:
            return None
        if not nested:
            parent = None
        target[key] = value
    return {k: (None if v == {} else v) for k, v in out.items()}


def load(fm: str, what: str, line_offset: int = 1) -> dict[str, Any]:
    """Parse frontmatter text into a mapping; aliases, huge and non-mapping documents are refused."""
    simple = _load_simple(fm)
    if simple is not None:
        return simple
    import yaml

    try:
        data = yaml.load(fm, Loader=_loader())  # noqa: S506 - the loader derives from SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 + line_offset if mark else None
        raise InvalidRecordError(what, [Problem(f"invalid YAML: {exc.problem or exc.context}", line=line)]) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise InvalidRecordError(what, [Problem(f"invalid YAML: {type(exc).__name__}", line=line_offset + 1)]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidRecordError(what, [Problem("the frontmatter must be a mapping of keys to values", line=line_offset + 1)])
    _check_shape(data, what, line_offset)
    return data


def _check_shape(data: Any, what: str, line_offset: int) -> None:
    """Refuse aliases (shared containers: the 'billion laughs' shape) and oversized documents."""
    seen: set[int] = set()
    stack = [data]
    count = 0
    while stack:
        item = stack.pop()
        count += 1
        if count > MAX_NODES:
            raise InvalidRecordError(what, [Problem(f"the frontmatter has over {MAX_NODES} values", line=line_offset + 1)])
        if isinstance(item, dict | list):
            if id(item) in seen:
                raise InvalidRecordError(what, [Problem("YAML anchors and aliases (&name / *name) are not allowed here", line=line_offset + 1)])
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
            if isinstance(item, dict) and not all(isinstance(k, str) for k in item):
                raise InvalidRecordError(what, [Problem("every key must be text", line=line_offset + 1)])


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9 _.()/'+-]*$")  # no comma: it ends an item inside [a, b]
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def render_scalar(value: Any) -> str:
    """YAML text for a string, number, bool, or a list or mapping of those (flow style), plain when that is unambiguous."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render_scalar(k)}: {render_scalar(v)}" for k, v in value.items()) + "}"
    text = str(value)
    if _PLAIN.match(text) and not text.endswith(" ") and text.lower() not in _RESERVED:
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    # Other tools split lines on these; escaped, the value stays on one line everywhere.
    return quoted.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")


def render_new(fields: dict[str, Any]) -> str:
    """Frontmatter text for a new document: one key per line, a nested mapping indented two spaces."""
    lines: list[str] = []

    def emit(mapping: dict[str, Any], indent: str) -> None:
        for key, value in mapping.items():
            label = render_scalar(key)
            if isinstance(value, dict) and value:
                lines.append(f"{indent}{label}:")
                emit(value, indent + "  ")
            else:
                lines.append(f"{indent}{label}: {render_scalar(value)}")

    emit(fields, "")
    return "\n".join(lines) + "\n"
