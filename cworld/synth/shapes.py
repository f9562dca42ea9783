"""Compact shapes of tool results: keys and types, never values, so a drafter can write references.

A gold plan copies values between steps with `{{step.path.to.field}}`; a drafter that has never seen a
tool's result guesses the path. These shapes tell it the keys: `{contacts: [{contact_id: string, name:
string}], total: integer}`. They come from a tool's output schema, or from one sample answer (a value),
and are cut to a character limit, so a long candidate list stays a prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cworld.schemas.walk import inline_refs

#: Keys shown per object before the rest are counted; levels of nesting shown.
MAX_KEYS = 12
MAX_DEPTH = 4
SHAPE_CHARS = 400


def schema_shape(schema: Mapping[str, Any] | None, limit: int = SHAPE_CHARS) -> str | None:
    """The shape an output schema promises; None when it says nothing useful (no schema, a bare object)."""
    if not schema:
        return None
    inlined = inline_refs(dict(schema))
    if _is_opaque(inlined):
        return None
    return cut(_schema(inlined, 0), limit)


def value_shape(value: Any, limit: int = SHAPE_CHARS) -> str:
    """The shape of a sample answer: a dict's keys with their types, a list as its first item's shape."""
    return cut(_value(value, 0), limit)


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_opaque(schema: Mapping[str, Any]) -> bool:
    return not any(k in schema for k in ("properties", "items", "anyOf", "oneOf", "allOf")) and (
        schema.get("type") in (None, "object")
    )


def _schema(node: Any, depth: int) -> str:
    if not isinstance(node, Mapping):
        return "any"
    for combiner in ("anyOf", "oneOf"):
        if isinstance(node.get(combiner), list):
            options = [_schema(o, depth) for o in node[combiner] if not _is_null(o)]
            return " | ".join(dict.fromkeys(options)) or "null"
    if isinstance(node.get("allOf"), list):
        merged: dict[str, Any] = {}
        for part in node["allOf"]:
            if isinstance(part, Mapping):
                merged.setdefault("properties", {}).update(part.get("properties") or {})
        return _schema({"type": "object", **merged}, depth)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "array" or "items" in node:
        return "[" + (_schema(node.get("items"), depth + 1) if depth < MAX_DEPTH else "…") + "]"
    props = node.get("properties")
    if isinstance(props, Mapping) and props:
        if depth >= MAX_DEPTH:
            return "{…}"
        return _object({str(k): _schema(v, depth + 1) for k, v in props.items()})
    if "enum" in node:
        return "|".join(map(str, node["enum"]))[:40]
    return str(kind or "any")


def _is_null(option: Any) -> bool:
    return isinstance(option, Mapping) and option.get("type") == "null"


def _value(value: Any, depth: int) -> str:
    if isinstance(value, Mapping):
        if depth >= MAX_DEPTH:
            return "{…}"
        return _object({str(k): _value(v, depth + 1) for k, v in value.items()})
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[" + (_value(value[0], depth + 1) if depth < MAX_DEPTH else "…") + "]"
    return _scalar(value)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _object(fields: dict[str, str]) -> str:
    shown = [f"{k}: {v}" for k, v in list(fields.items())[:MAX_KEYS]]
    if len(fields) > MAX_KEYS:
        shown.append(f"…+{len(fields) - MAX_KEYS} more")
    return "{" + ", ".join(shown) + "}"


def keys_at(value: Any) -> str:
    """What a result holds at one place, for a failed reference: an object's keys, a list's length and its
    items' keys, or the type of a scalar."""
    if isinstance(value, Mapping):
        return "an object with keys: " + (", ".join(map(str, value)) or "(none)")
    if isinstance(value, list | tuple):
        first = next((item for item in value if isinstance(item, Mapping)), None)
        items = f"; each item has keys: {', '.join(map(str, first))}" if first is not None else ""
        return f"a list of {len(value)} item(s){items}"
    return f"a {_scalar(value)}: {cut(str(value), 80)!r}"
