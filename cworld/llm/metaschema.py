"""Is a JSON Schema well formed, node by node: the draft-7 metaschema checked one sub-schema at a time.

Validating a whole harvested schema against the metaschema costs ~10 ms (jsonschema resolves the
metaschema's `$ref: "#"` at every level); sanitizing 4,000 tools, or the agent's tool list every turn,
cannot pay that. So the metaschema is flattened once (its self-references opened, its definitions
inlined) and each node's keywords are checked against their own rules: the same verdicts, in microseconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft7Validator

Path = tuple[str, ...]
_NAMED = ("properties", "definitions", "$defs", "patternProperties", "dependencies")
_SINGLE = ("items", "additionalItems", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_LISTS = ("anyOf", "oneOf", "allOf", "items", "prefixItems")


def _flatten(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref == "#":
            return {"type": ["object", "boolean"]}  # a sub-schema: its keywords are checked as its own node
        if isinstance(ref, str) and ref.startswith("#/definitions/"):
            return _flatten(definitions[ref.rsplit("/", 1)[1]], definitions)
        return {k: _flatten(v, definitions) for k, v in node.items() if k not in ("definitions", "$id", "$schema")}
    if isinstance(node, list):
        return [_flatten(item, definitions) for item in node]
    return node


_FLAT = _flatten(Draft7Validator.META_SCHEMA, Draft7Validator.META_SCHEMA["definitions"])
_KEYWORDS = {key: Draft7Validator(rule) for key, rule in _FLAT["properties"].items()}


@dataclass(frozen=True)
class Problem:
    path: tuple[Any, ...]
    """within the node: the keyword, then positions inside its value"""
    message: str


def node_errors(node: Any) -> Iterator[Problem]:
    """What the metaschema rejects in this node's own keywords (its sub-schemas are nodes of their own).
    Each keyword is checked by its own rule: the whole metaschema per node costs ten times as much."""
    if not isinstance(node, dict):
        if not isinstance(node, bool):
            yield Problem((), f"{node!r} is not of type 'object', 'boolean'")
        return
    for key, value in node.items():
        rule = _KEYWORDS.get(key)
        if rule is not None:
            for error in rule.iter_errors(value):
                yield Problem((key, *error.absolute_path), error.message)


def subschemas(schema: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every node of a schema with its path (keywords and property names, as OpenAI reports them)."""
    yield path, schema
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        if key in _NAMED and isinstance(value, dict):
            for name, sub in value.items():
                if isinstance(sub, dict | bool):
                    yield from subschemas(sub, (*path, key, name))
        elif key in _SINGLE and isinstance(value, dict | bool):
            yield from subschemas(value, (*path, key))
        elif key in _LISTS and isinstance(value, list):
            for position, sub in enumerate(value):
                yield from subschemas(sub, (*path, key, str(position)))


def first_error(schema: Any) -> tuple[Path, Problem] | None:
    """The first malformed keyword of a schema: the node's path and jsonschema's error."""
    for path, node in subschemas(schema):
        error = next(iter(node_errors(node)), None)
        if error is not None:
            return path, error
    return None
