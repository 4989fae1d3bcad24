"""JSON Schema validation of every on-disk format, with problems located by field."""

from __future__ import annotations

import json
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
    return fastjsonschema.compile(schema(kind), use_default=False)


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
        problems.append(Problem(_message(error), field=path or None))
    return problems


def _message(error: Any) -> str:
    if error.validator == "pattern" and isinstance(error.instance, str):
        return f"{error.instance!r} does not match the required form {error.schema['pattern']}"
    return str(error.message)
