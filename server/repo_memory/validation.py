"""JSON Schema validation of every on-disk format, with problems located by field."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator

from repo_memory.errors import Problem

SCHEMAS = ("config", "skill")


@cache
def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of `kind` as shipped in repo_memory/schemas."""
    text = resources.files("repo_memory").joinpath("schemas", f"{kind}.schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@cache
def _validator(kind: str) -> Draft202012Validator:
    return Draft202012Validator(schema(kind))


def validate(kind: str, data: Any) -> list[Problem]:
    """Every schema violation of `data`, each naming the field it concerns."""
    problems = []
    for error in sorted(_validator(kind).iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        path = ".".join(str(p) for p in error.absolute_path) or None
        problems.append(Problem(_message(error), field=path))
    return problems


def _message(error: Any) -> str:
    if error.validator == "additionalProperties":
        return f"{error.message}; allowed keys are listed in schemas/"
    if error.validator == "pattern" and isinstance(error.instance, str):
        return f"{error.instance!r} does not match the required form {error.schema['pattern']}"
    return str(error.message)
