"""Small JSON Schema helpers the engine needs: inline `$ref`s, validate, list key paths."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import jsonschema


def inline_refs(schema: dict[str, Any], _root: dict[str, Any] | None = None, _depth: int = 0) -> dict[str, Any]:
    """A copy of `schema` with local `#/$defs/...` references replaced by their targets (cycles cut at depth 8)."""
    root = _root or schema
    if _depth > 8:
        return {}
    if "$ref" in schema:
        ref = schema["$ref"]
        target: Any = root
        for part in ref.lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        return inline_refs(merged, root, _depth + 1)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$defs":
            continue
        if isinstance(value, dict):
            out[key] = inline_refs(value, root, _depth + 1) if key != "properties" else {
                k: inline_refs(v, root, _depth + 1) for k, v in value.items()
            }
        elif isinstance(value, list):
            out[key] = [inline_refs(v, root, _depth + 1) if isinstance(v, dict) else v for v in value]
        else:
            out[key] = value
    return out


@lru_cache(maxsize=2048)
def _validator(schema_text: str) -> Any:
    """One checked validator per distinct schema: checking a schema costs far more than using it."""
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_problem(schema: dict[str, Any]) -> str | None:
    """None when `schema` is a valid JSON Schema, else why not, in one line."""
    try:
        _validator(json.dumps(schema, sort_keys=True, default=str))
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{where}: {exc.message}"
    return None


def validation_error(schema: dict[str, Any], value: Any) -> str | None:
    """None when `value` validates against `schema`, else the first error in one line."""
    try:
        validator = _validator(json.dumps(schema, sort_keys=True, default=str))
    except jsonschema.SchemaError as exc:
        return f"invalid schema: {exc.message}"
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"


def key_paths(value: Any, prefix: str = "") -> dict[str, str]:
    """Key path -> JSON type name, with list items collapsed to `[]`: the shape of a response."""
    out: dict[str, str] = {}
    if isinstance(value, dict):
        out[prefix or "$"] = "object"
        for key, sub in value.items():
            out.update(key_paths(sub, f"{prefix}.{key}" if prefix else key))
    elif isinstance(value, list):
        out[prefix or "$"] = "array"
        for sub in value[:5]:
            out.update(key_paths(sub, f"{prefix}[]"))
    else:
        out[prefix or "$"] = _type_name(value)
    return out


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"
