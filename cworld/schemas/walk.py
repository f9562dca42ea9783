"""Walking JSON Schemas and JSON values: local `$ref`s, the shape of a value, the value a tool result carries."""

from __future__ import annotations

import json
from typing import Any

from cworld.data_model import ToolResult


def resolve_ref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """The target of a local `#/...` reference (followed until it is not one), else `schema` itself."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        return resolve_ref(node, root) if isinstance(node, dict) else {}
    return schema


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


def result_value(result: ToolResult) -> Any:
    """The JSON a tool result carries: its structured content, else its text parsed as JSON, else None.
    What the registry's value bank and the schema engine's replay both learn from."""
    if result.structured_content is not None:
        return result.structured_content
    try:
        return json.loads(result.text)
    except (json.JSONDecodeError, TypeError):
        return None


def item_schema(schema: dict[str, Any], index: int = 0) -> dict[str, Any]:
    """The schema of an array's `index`-th item; old-style tuple `items: [...]` (harvested servers) too."""
    items = schema.get("items") or {}
    if isinstance(items, list):
        items = items[index] if index < len(items) else schema.get("additionalItems") or {}
    return items if isinstance(items, dict) else {}
