"""Fit a semantic payload (a record, a page of records, a confirmation) into a tool's output schema.

Values come from the payload where a property name matches (directly or by a known alias), and are
generated from the schema otherwise, so the result both validates and stays consistent with the world.
"""

from __future__ import annotations

import random
from typing import Any

from cworld.engine.values import value_for_schema

#: Output property names that mean "the list of items" or "the one entity".
LIST_ALIASES = ("items", "results", "data", "entries", "records", "list")


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, list):
        return set(kind)
    if kind:
        return {kind}
    if "properties" in schema:
        return {"object"}
    options = schema.get("anyOf") or schema.get("oneOf") or []
    return {t for option in options for t in _types(option)}


def _pick(source: dict[str, Any], name: str, schema: dict[str, Any]) -> Any:
    if name in source:
        return source[name]
    types = _types(schema)
    if "array" in types:
        for alias in LIST_ALIASES:
            if isinstance(source.get(alias), list):
                return source[alias]
    if "object" in types and "properties" in schema:
        nested = [v for v in source.values() if isinstance(v, dict)]
        if len(nested) == 1:
            return nested[0]
        props = set(schema.get("properties", {}))
        if props and props & set(source) and not props <= {"items"}:
            return source
    if name in ("count", "total", "total_count") and isinstance(source.get("total"), int):
        return source["total"]
    return None


def fill(schema: dict[str, Any], source: Any, rng: random.Random, *, field: str = "", depth: int = 0) -> Any:
    """A value valid for `schema`, taken from `source` where it fits."""
    types = _types(schema)
    if source is None or depth > 8:
        if "null" in types and depth > 0 and rng.random() < 0.0:
            return None
        return value_for_schema(schema, rng, field=field, depth=depth)
    if schema.get("enum") and source not in schema["enum"]:
        return value_for_schema(schema, rng, field=field)
    if "object" in types and isinstance(source, dict):
        return _fill_object(schema, source, rng, depth)
    if "array" in types and isinstance(source, list):
        item = schema.get("items") or {}
        return [fill(item, x, rng, field=field, depth=depth + 1) for x in source]
    return _coerce(schema, types, source, rng, field)


def _fill_object(schema: dict[str, Any], source: dict[str, Any], rng: random.Random, depth: int) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        return dict(source) if schema.get("additionalProperties", True) is not False else {}
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for name, sub in props.items():
        picked = _pick(source, name, sub)
        if picked is not None or name in required:
            out[name] = fill(sub, picked, rng, field=name, depth=depth + 1)
    return out


def _coerce(schema: dict[str, Any], types: set[str], value: Any, rng: random.Random, field: str) -> Any:
    if isinstance(value, bool):
        return value if "boolean" in types else value_for_schema(schema, rng, field=field)
    if isinstance(value, int | float) and types & {"integer", "number"}:
        return int(value) if "integer" in types and "number" not in types else value
    if isinstance(value, str) and "string" in types:
        limit = schema.get("maxLength")
        return value[:limit] if limit else value
    if "string" in types and isinstance(value, int | float):
        return str(value)
    return value_for_schema(schema, rng, field=field)
