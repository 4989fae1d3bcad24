"""JSON Schema validation of every on-disk format, with problems located by field."""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from importlib import resources
from typing import Any

import fastjsonschema

from repo_memory.errors import Problem

SCHEMAS = ("config", "skill", "experience", "loop")


@cache
def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of `kind` as shipped in repo_memory/schemas."""
    text = resources.files("repo_memory").joinpath("schemas", f"{kind}.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator(kind: str) -> Any:
    from jsonschema import Draft7Validator  # only needed to explain a failure; it costs ~0.1 s to import

    return Draft7Validator(schema(kind))


@cache
def _fast(kind: str) -> Any:
    """A compiled validator: the one shipped in compiled_schemas.py when it matches the schema, else compiled now (~20 ms)."""
    try:
        from repo_memory.formats import compiled_schemas
    except ImportError:
        compiled_schemas = None  # type: ignore[assignment]
    if compiled_schemas is not None and compiled_schemas.HASHES.get(kind) == schema_hash(kind):
        return getattr(compiled_schemas, f"validate_{kind}")
    return fastjsonschema.compile(schema(kind), use_default=False)


def schema_hash(kind: str) -> str:
    """A fingerprint of a schema's meaning (key order and spacing do not count)."""
    return hashlib.sha256(json.dumps(schema(kind), sort_keys=True).encode()).hexdigest()


def compiled_source() -> str:
    """Python source of every schema's validator, as compiled_schemas.py holds it (hooks start ~40 ms faster with it)."""
    parts = ['"""Validators generated from schemas/ by repo_memory.formats.schema.compiled_source(); do not edit."""', "# ruff: noqa", "# mypy: ignore-errors"]
    hashes = {}
    for kind in SCHEMAS:
        code = fastjsonschema.compile_to_code(schema(kind), use_default=False)
        code = code.replace("REGEX_PATTERNS", f"REGEX_PATTERNS_{kind}")  # each block defines its own; keep them apart
        entry = re.search(r"^def (validate_\w+)\(", code, re.MULTILINE)
        assert entry is not None
        parts.append(f"{code}\nvalidate_{kind} = {entry.group(1)}")
        hashes[kind] = schema_hash(kind)
    parts.append(f"HASHES = {json.dumps(hashes, indent=4, sort_keys=True)}")
    return "\n\n".join(parts) + "\n"


@cache
def _required(kind: str) -> frozenset[str]:
    return frozenset(schema(kind).get("required", ()))


@cache
def _lacking(missing: frozenset[str]) -> str:  # one string for every line lacking the same fields
    return f"not a record: it lacks {', '.join(sorted(missing))}"


def rejected(kind: str, data: Any) -> str:
    """Why `data` is no valid `kind`, said cheaply ('' when it is): the required fields it lacks, or the compiled check's
    first complaint. `validate` words every problem at a hundred times the cost (0.4 ms a line): a log of a million
    `{}` lines stalled every first search for minutes. It is for the few lines a person is shown."""
    if isinstance(data, dict) and (missing := _required(kind).difference(data)):
        return _lacking(missing)
    try:
        _fast(kind)(data)
        return ""
    except fastjsonschema.JsonSchemaException as exc:
        return f"not a record: {exc}"


def validate(kind: str, data: Any) -> list[Problem]:
    """Every schema violation of `data`, each naming the field it concerns."""
    try:
        _fast(kind)(data)  # compiled check: the common, valid case costs microseconds
        return []
    except fastjsonschema.JsonSchemaException:
        pass  # jsonschema then reports every problem with its path
    problems = []
    for error in sorted(_validator(kind).iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        path = ".".join(str(p) for p in error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = sorted(error.schema.get("properties", {}))
            for key in sorted(set(error.instance) - set(allowed)):
                where = f"{path}.{key}" if path else str(key)
                problems.append(Problem(f"unknown field '{key}'; allowed here: {', '.join(allowed)}", field=where))
            continue
        if error.context:  # one of several forms (a tag list or one tag): what is wrong deepest inside the form meant
            error = max(error.context, key=lambda e: len(e.absolute_path))
            path = ".".join(str(p) for p in error.absolute_path)
        problems.append(Problem(_message(error), field=path or None))
    return problems


YAML_TYPES = {bool: "a yes/no value", int: "a number", float: "a number", type(None): "empty"}


def _message(error: Any) -> str:
    if error.validator == "minLength" and error.instance == "":
        return "it must not be empty"
    if error.validator in ("maxLength", "minLength") and isinstance(error.instance, str):  # never the whole text back
        bound = "at most" if error.validator == "maxLength" else "at least"
        return f"it is {len(error.instance)} characters; it must be {bound} {error.validator_value}"
    if error.validator == "pattern" and isinstance(error.instance, str):
        return f"{error.instance!r} does not match the required form {error.schema['pattern']}"
    if error.validator == "type" and error.validator_value == "string" and error.instance is None:  # `goal:`, nothing after
        return "it is empty (YAML read nothing here): write the text"
    if error.validator == "type" and error.validator_value == "string" and type(error.instance) in YAML_TYPES:
        # YAML reads `3`, `true` or `no` unquoted as a number or a yes/no: the fix is quotes, not another word
        return f"YAML read this as {YAML_TYPES[type(error.instance)]} ({json.dumps(error.instance)}), not text: put it in quotes"
    return str(error.message)
