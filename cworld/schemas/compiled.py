"""JSON Schemas compiled to Python checks: is a value valid, answered without walking the schema again.

The schema engine checks every call's arguments and every answer; `jsonschema` re-reads the schema on
each check (keyword dispatch, error objects), which made validation most of an answer's cost. A schema is
compiled once into nested closures for the keywords tools use (types, properties, required, items, enum,
const, bounds, lengths, patterns, anyOf/oneOf/allOf, local `$ref`s). A schema with any other keyword
jsonschema implements compiles to None, and the caller uses jsonschema itself: the compiled check never
disagrees with jsonschema, it only answers faster. Formats are annotations (jsonschema checks none by default).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

#: Keywords with no effect on validity.
_ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "$defs", "definitions", "$schema", "$id", "$comment",
    "deprecated", "readOnly", "writeOnly", "format", "contentMediaType", "contentEncoding", "$anchor",
})
#: Keywords compiled here; a schema using any other keyword jsonschema knows is left to jsonschema.
_COMPILED = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems",
    "anyOf", "oneOf", "allOf", "$ref",
})
_JSONSCHEMA_KEYWORDS = frozenset({
    "uniqueItems", "multipleOf", "patternProperties", "propertyNames", "dependencies", "dependentRequired",
    "dependentSchemas", "if", "then", "else", "not", "contains", "minContains", "maxContains", "prefixItems",
    "unevaluatedItems", "unevaluatedProperties", "minProperties", "maxProperties", "additionalItems",
    "$dynamicRef", "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor", "extends", "disallow", "divisibleBy",
})


class Unsupported(Exception):
    """The schema uses a keyword (or a form of one) this compiler leaves to jsonschema."""


def compile_schema(schema: Any) -> Check | None:
    """A check equivalent to jsonschema's `is_valid` for `schema` (Draft 4 and later), else None."""
    if isinstance(schema, dict) and "draft-03" in str(schema.get("$schema", "")):
        return None
    try:
        return _Compiler(schema).compile(schema)
    except (Unsupported, re.error, TypeError, ValueError, RecursionError):
        return None


class _Compiler:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return lambda value: True
        if schema is False:
            return lambda value: False
        if not isinstance(schema, dict):
            raise Unsupported("not a schema")
        if set(schema) & _JSONSCHEMA_KEYWORDS:
            raise Unsupported("keyword")
        if "$ref" in schema:
            if set(schema) - _ANNOTATIONS - {"$ref"}:
                raise Unsupported("$ref beside other keywords (drafts differ)")
            return self._ref(schema["$ref"])
        made = [self._keyword(key, schema) for key in schema if key in _COMPILED]
        checks = [c for c in made if c is not None]
        if not checks:
            return lambda value: True
        if len(checks) == 1:
            return checks[0]
        return _all_of(checks)

    def _ref(self, ref: Any) -> Check:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise Unsupported("remote $ref")
        if ref not in self.refs:
            self.refs[ref] = lambda value: True  # a cycle resolves to the finished check below
            node: Any = self.root
            for part in ref[1:].lstrip("/").split("/") if ref != "#" else []:
                part = part.replace("~1", "/").replace("~0", "~")
                if not isinstance(node, dict) or part not in node:
                    raise Unsupported("unresolvable $ref")
                node = node[part]
            self.refs[ref] = self.compile(node)
        refs = self.refs
        return lambda value: refs[ref](value)

    def _keyword(self, key: str, schema: dict[str, Any]) -> Check | None:
        arg = schema[key]
        if key == "type":
            return _type_check(arg)
        if key == "properties":
            return self._properties(arg)
        if key == "required":
            names = frozenset(arg)
            return lambda v: not isinstance(v, dict) or names <= v.keys()
        if key == "additionalProperties":
            return self._additional(arg, set(schema.get("properties") or {}))
        if key == "items":
            if isinstance(arg, list):
                raise Unsupported("tuple items")
            return _each_item(self.compile(arg))
        if key == "enum":
            options = list(arg)
            return lambda v: any(equal(v, o) for o in options)
        if key == "const":
            return lambda v: equal(v, arg)
        if key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            return _bound(key, arg)
        if key in ("minLength", "maxLength"):
            size = int(arg)
            if key == "minLength":
                return lambda v: not isinstance(v, str) or len(v) >= size
            return lambda v: not isinstance(v, str) or len(v) <= size
        if key == "pattern":
            found = re.compile(arg).search
            return lambda v: not isinstance(v, str) or found(v) is not None
        if key in ("minItems", "maxItems"):
            count = int(arg)
            if key == "minItems":
                return lambda v: not isinstance(v, list) or len(v) >= count
            return lambda v: not isinstance(v, list) or len(v) <= count
        return self._combined(key, arg)

    def _properties(self, props: dict[str, Any]) -> Check:
        compiled = [(name, self.compile(sub)) for name, sub in props.items()]

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for name, sub in compiled:  # noqa: SIM110 - a plain loop: checks run on every answer, ~2x all(genexpr)
                if name in v and not sub(v[name]):
                    return False
            return True

        return check

    def _additional(self, arg: Any, known: set[str]) -> Check:
        extra = self.compile(arg)
        return lambda v: not isinstance(v, dict) or all(extra(v[k]) for k in v if k not in known)

    def _combined(self, key: str, options: Any) -> Check:
        checks = [self.compile(o) for o in options]
        if key == "anyOf":
            return lambda v: any(c(v) for c in checks)
        if key == "allOf":
            return lambda v: all(c(v) for c in checks)
        return lambda v: sum(1 for c in checks if c(v)) == 1


def _all_of(checks: list[Check]) -> Check:
    def check(value: Any) -> bool:
        for one in checks:  # noqa: SIM110 - faster than all(genexpr) on the hot path
            if not one(value):
                return False
        return True

    return check


def _each_item(item: Check) -> Check:
    def check(value: Any) -> bool:
        if not isinstance(value, list):
            return True
        for x in value:  # noqa: SIM110 - faster than all(genexpr) on the hot path
            if not item(x):
                return False
        return True

    return check


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "number": _is_number,
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def _type_check(kind: Any) -> Check:
    kinds = [kind] if isinstance(kind, str) else list(kind)
    if any(k not in _TYPES for k in kinds):
        raise Unsupported("type")
    checks = [_TYPES[k] for k in kinds]
    return checks[0] if len(checks) == 1 else (lambda v: any(c(v) for c in checks))


def _bound(key: str, limit: Any) -> Check:
    if isinstance(limit, bool) or not _is_number(limit):
        raise Unsupported("draft-4 boolean exclusive bounds")
    tests: dict[str, Check] = {
        "minimum": lambda v: v >= limit, "maximum": lambda v: v <= limit,
        "exclusiveMinimum": lambda v: v > limit, "exclusiveMaximum": lambda v: v < limit,
    }
    test = tests[key]
    return lambda v: not _is_number(v) or test(v)


def equal(one: Any, two: Any) -> bool:
    """JSON equality as jsonschema has it: `true` is not `1`, `1` is `1.0`, containers compare deeply."""
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(equal(one[k], two[k]) for k in one)
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict | list) or isinstance(two, dict | list):
        return False
    if isinstance(one, str) != isinstance(two, str):
        return False
    return bool(one == two)
