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


@lru_cache(maxsize=4096)
def _validator(schema_text: str) -> Any:
    """One validator per distinct schema. Schemas are not checked here (that costs ~35 ms each, far more
    than validating): tools' schemas were checked by the registry, forged ones by `schema_problem`."""
    schema = json.loads(schema_text)
    return jsonschema.validators.validator_for(schema)(schema)


def schema_problem(schema: dict[str, Any]) -> str | None:
    """None when `schema` is a valid JSON Schema, else why not, in one line."""
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{where}: {exc.message}"
    return None


def validation_error(schema: dict[str, Any], value: Any) -> str | None:
    """None when `value` validates against `schema`, else the first error in one line."""
    validator = _validator(json.dumps(schema, sort_keys=True, default=str))
    try:
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except Exception as exc:  # an unchecked, malformed schema fails in many ways (bad $ref, wrong types)
        return f"invalid schema: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
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
