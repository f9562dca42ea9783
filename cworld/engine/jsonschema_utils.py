"""Small JSON Schema helpers the engine needs: inline `$ref`s, validate, list key paths."""

from __future__ import annotations

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


def validation_error(schema: dict[str, Any], value: Any) -> str | None:
    """None when `value` validates against `schema`, else the first error in one line."""
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return f"{where}: {exc.message}"
    except jsonschema.SchemaError as exc:
        return f"invalid schema: {exc.message}"
    return None


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
