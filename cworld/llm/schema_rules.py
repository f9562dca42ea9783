"""A tool's JSON Schema rewritten into what one provider family accepts (harvested schemas are as written).

Every family: local `$ref`s inlined (a cycle becomes an open schema), `$schema`/`$id`/`$comment`/`$defs`
dropped, every array given `items`, `required` kept to listed properties, the top level an object with
`properties` (top-level `anyOf`/`oneOf`/`allOf` merged into it: Anthropic and OpenAI refuse them there).

- openai (and OpenAI-compatible, Anthropic, the mock): JSON Schema as is; an array without items gets
  `items: {}`; whatever the draft-7 metaschema still rejects (a `type: "any"`, a draft-4 boolean
  `exclusiveMinimum`) is dropped, keyword by keyword, as jsonschema reports it.
- gemini (and Vertex): the OpenAPI 3.0 subset of Gemini's function declarations: only its keywords;
  `oneOf` read as `anyOf`, `allOf` merged, `const` as a one-value `enum`, type lists as `nullable`/`anyOf`,
  enums on strings only, formats `enum`/`date-time` only, every node typed (arrays of `{"type": "object"}`,
  as litellm does).
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from cworld.llm.metaschema import node_errors, subschemas

Family = Literal["openai", "anthropic", "gemini"]
EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
_DROPPED = ("$schema", "$id", "$comment", "$defs", "definitions")
_COMBINATORS = ("anyOf", "oneOf", "allOf")
_MAX_META_FIXES = 50
GEMINI_KEYWORDS = frozenset({
    "type", "format", "description", "nullable", "enum", "properties", "required", "items", "minItems", "maxItems",
    "minimum", "maximum", "anyOf", "propertyOrdering", "title", "minLength", "maxLength", "pattern", "default",
    "example", "minProperties", "maxProperties",
})  # fmt: skip
GEMINI_FORMATS = frozenset({"enum", "date-time"})


def sanitize_parameters(schema: Any, family: Family) -> dict[str, Any]:
    """The function-parameters schema `family` accepts; the input is not changed."""
    root = copy.deepcopy(schema) if isinstance(schema, dict) else {}
    node = _top_level(_inline(root, root, ()))
    node = _common(node)
    if family == "gemini":
        return _gemini_top(_gemini(node))
    return _metaschema_clean(node)


# --- every family --------------------------------------------------------------------------------
def _inline(node: Any, root: dict[str, Any], chain: tuple[str, ...]) -> Any:
    """`node` with local `$ref`s replaced by their targets; a reference back into its own chain is cut."""
    if isinstance(node, list):
        return [_inline(item, root, chain) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        rest = {k: v for k, v in node.items() if k != "$ref"}
        target = _pointer(ref, root)
        if target is None or ref in chain:
            return _inline(rest, root, chain)  # an open schema: no provider can follow it
        return _inline({**target, **rest}, root, (*chain, ref))
    return {key: (value if key in _DROPPED else _inline(value, root, chain)) for key, value in node.items()}


def _pointer(ref: str, root: dict[str, Any]) -> dict[str, Any] | None:
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in ref[2:].split("/") if ref.startswith("#/") else []:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _top_level(node: dict[str, Any]) -> dict[str, Any]:
    """An object with properties: combinators at the top are merged into it, other types become it."""
    branches = [b for key in _COMBINATORS for b in (node.pop(key, None) or []) if isinstance(b, dict)]
    properties = dict(node.get("properties") or {}) if isinstance(node.get("properties"), dict) else {}
    for branch in branches:
        for name, sub in (branch.get("properties") or {}).items():
            properties.setdefault(name, sub)
    node.pop("not", None)
    node.pop("enum", None)
    node.pop("const", None)
    node.update(type="object", properties=properties)
    return node


def _common(node: Any) -> Any:
    """Recursively: metadata keywords dropped, arrays given items, `required` kept to real properties."""
    if isinstance(node, list):
        return [_common(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            out[key] = {name: _common(sub) for name, sub in value.items()}
        elif key in ("default", "enum", "const", "examples", "example"):
            out[key] = value  # values, not schemas
        else:
            out[key] = _common(value)
    if isinstance(out.get("items"), list):
        out["items"] = _one_of_list(out["items"])
    if _is_array(out) and "items" not in out:
        out["items"] = {}
    if isinstance(out.get("required"), list) and isinstance(out.get("properties"), dict):
        out["required"] = [name for name in out["required"] if name in out["properties"]]
    elif "required" in out and not isinstance(out["required"], list):
        out.pop("required")
    return out


def _one_of_list(items: list[Any]) -> dict[str, Any]:
    """A draft-4 tuple `items: [...]` as one schema."""
    schemas = [s for s in items if isinstance(s, dict)]
    return schemas[0] if len(schemas) == 1 else ({"anyOf": schemas} if schemas else {})


def _is_array(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "array" or (isinstance(kind, list) and "array" in kind)


def _metaschema_clean(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop each keyword the JSON Schema metaschema rejects, node by node, as jsonschema reports it."""
    for _, node in list(subschemas(schema)):
        for _ in range(_MAX_META_FIXES):
            error = next(iter(node_errors(node)), None) if isinstance(node, dict) else None
            if error is None or not error.path:
                break
            _drop(node, list(error.path))
    return schema


def _drop(node: dict[str, Any], path: list[Any]) -> None:
    """Remove the value at `path` (a list element becomes an open schema, keeping the list's length)."""
    parent: Any = node
    for part in path[:-1]:
        parent = parent[part]
    if isinstance(parent, dict):
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = {}


# --- gemini --------------------------------------------------------------------------------------
def _gemini(node: Any) -> dict[str, Any]:
    """One node in Gemini's OpenAPI subset (children recursively)."""
    if not isinstance(node, dict):
        return {"type": "string"}
    node = _merge_all_of(dict(node))
    if "oneOf" in node:
        node["anyOf"] = [*(node.get("anyOf") or []), *node.pop("oneOf")]
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if "type" not in node and isinstance(node.get("enum"), list) and all(isinstance(v, str) for v in node["enum"]):
        node["type"] = "string"
    _gemini_type(node)
    out = {k: v for k, v in node.items() if k in GEMINI_KEYWORDS}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: _gemini(sub) for name, sub in out["properties"].items()}
        if not out["properties"]:
            out.pop("properties")
            out.pop("required", None)
    if "items" in out or out.get("type") == "array":
        item = out.get("items")
        out["items"] = _gemini(item) if isinstance(item, dict) and item else {"type": "object"}
    if isinstance(out.get("anyOf"), list):
        branches = [b for b in out["anyOf"] if isinstance(b, dict)]
        kept = [_gemini(b) for b in branches if b.get("type") != "null"]
        if len(kept) < len(branches):
            out["nullable"] = True
        out["anyOf"] = kept or [{"type": "string"}]
    _gemini_enum_and_format(out)
    if "type" not in out and "anyOf" not in out:
        out["type"] = "object"
    return out


def _merge_all_of(node: dict[str, Any]) -> dict[str, Any]:
    for branch in node.pop("allOf", None) or []:
        if not isinstance(branch, dict):
            continue
        for key, value in branch.items():
            if key == "properties" and isinstance(value, dict):
                node["properties"] = {**value, **(node.get("properties") or {})}
            elif key == "required" and isinstance(value, list):
                node["required"] = sorted({*node.get("required", []), *value})
            else:
                node.setdefault(key, value)
    return node


def _gemini_type(node: dict[str, Any]) -> None:
    """A type list becomes one type (`nullable` for null), or `anyOf` when several remain."""
    kind = node.get("type")
    if not isinstance(kind, list):
        if kind == "null":
            node.pop("type")
            node["nullable"] = True
        return
    kinds = [k for k in kind if isinstance(k, str) and k != "null"]
    if len(kinds) < len(kind):
        node["nullable"] = True
    if len(kinds) <= 1:
        node["type"] = kinds[0] if kinds else "string"
        return
    node.pop("type")
    node["anyOf"] = [{"type": k} for k in kinds]


def _gemini_enum_and_format(node: dict[str, Any]) -> None:
    enum = node.get("enum")
    if isinstance(enum, list) and (node.get("type") != "string" or not all(isinstance(v, str) and v for v in enum)):
        node.pop("enum")
        listed = ", ".join(str(v) for v in enum[:20])
        node["description"] = f"{node.get('description', '')} (one of: {listed})".strip()
    if "format" in node and (node.get("type") != "string" or node["format"] not in GEMINI_FORMATS):
        node.pop("format")


def _gemini_top(node: dict[str, Any]) -> dict[str, Any]:
    node["type"] = "object"
    node.setdefault("properties", {})
    return node
