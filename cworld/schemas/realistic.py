"""Values valid against a JSON Schema, plausible by field name, deterministic for an RNG.

When the engine knows the world, an `ids` callback turns `person_id` into the key of an existing person
instead of a made-up one, so generated responses point at records the agent can read next.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from typing import Any

from cworld.schemas.plausible import hinted_type, numeric_range, value_for_type

#: entity stem (e.g. "person") -> existing keys; empty when the world has no such entity.
IdSource = Callable[[str], list[str]]
_ID_FIELD = re.compile(r"^(.+?)_?ids?$")
_FORMATS = {"date-time": "datetime", "date": "date", "email": "email", "uri": "url", "time": "time"}
_ISO = re.compile(r"^20\d\d-\d\d-\d\d")
_HUGE = 1e9
_SPAN = re.compile(r"(^|_)(slot|range|window|interval|period|span)$", re.IGNORECASE)
_TROUBLE = re.compile(r"(problem|warning|error|issue|conflict)s$", re.IGNORECASE)


def number_bounds(schema: dict[str, Any], *, defaults: bool = True) -> tuple[float, float]:
    """The closed range a number schema allows (exclusive bounds nudged inwards); with `defaults`, an open
    side is closed at 0 and 1,000 above the low end, so a value can be drawn from it."""
    low = schema.get("minimum", -_HUGE)
    high = schema.get("maximum", _HUGE)
    if "exclusiveMinimum" in schema:
        low = max(low, schema["exclusiveMinimum"] + (1 if schema.get("type") == "integer" else 0.01))
    if "exclusiveMaximum" in schema:
        high = min(high, schema["exclusiveMaximum"] - (1 if schema.get("type") == "integer" else 0.01))
    if defaults and low == -_HUGE:
        low = 0 if high >= 0 else high - 1000
    if defaults and high == _HUGE:
        high = max(low, 0) + 1000
    return float(low), float(high)


class SchemaValues:
    def __init__(self, rng: random.Random, ids: IdSource | None = None) -> None:
        self.rng = rng
        self.ids = ids

    def value(self, schema: dict[str, Any], field: str = "", depth: int = 0) -> Any:
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return self.rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if schema.get(key):
                options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
                return self.value(options[0], field, depth)
        if schema.get("allOf"):
            return self.value(schema["allOf"][0], field, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        kind = kind or ("object" if "properties" in schema else "string")
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        maker = {"string": self._string, "integer": self._number, "number": self._number,
                 "array": self._array, "object": self._object}.get(kind, self._string)
        return maker(schema, field, depth)

    def _string(self, schema: dict[str, Any], field: str, depth: int) -> str:
        known = self._existing_id(field)
        if known is not None:
            text = known
        else:
            kind = _FORMATS.get(schema.get("format") or "") or hinted_type(field) or "string"
            text = str(value_for_type(kind, self.rng, field=field))
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        if high is not None:
            text = text[:high]
        return text.ljust(low, "x")

    def _existing_id(self, field: str) -> str | None:
        match = _ID_FIELD.match(field.lower()) if self.ids is not None else None
        if match is None or self.ids is None:
            return None
        keys = self.ids(match.group(1))
        return self.rng.choice(keys) if keys else None

    def _number(self, schema: dict[str, Any], field: str, depth: int) -> float | int:
        """Within the schema's bounds; where it gives none, in the range the name suggests (a rating 1-5)."""
        low, high = number_bounds(schema)
        hinted = numeric_range(field)
        if hinted is None and schema.get("type") == "integer" and re.search(r"[a-z]s$", field.lower()):
            hinted = (0, 40, 0)  # a bare plural (`documents`, `open_cards`) counts things
        decimals = 2
        if hinted is not None:
            floor, ceiling = number_bounds(schema, defaults=False)
            if max(floor, hinted[0]) <= min(ceiling, hinted[1]):
                low, high, decimals = max(floor, hinted[0]), min(ceiling, hinted[1]), hinted[2]
        if schema.get("type") == "integer":
            lo, hi = math.ceil(low), math.floor(high)
            return self.rng.randint(lo, max(lo, hi))
        return round(self.rng.uniform(low, high), decimals)

    def _array(self, schema: dict[str, Any], field: str, depth: int) -> list[Any]:
        if depth > 6 or (_TROUBLE.search(field) and not schema.get("minItems")):
            return []  # nothing is known to be wrong: no problems, warnings or errors
        count = max(schema.get("minItems", 0), self.rng.randint(1, 3))
        if _SPAN.search(field) and (schema.get("items") or {}).get("type") == "string":
            count = 2  # a slot, range or window is a [start, end] pair
        count = min(count, schema.get("maxItems", count))
        item = schema.get("items") or {"type": "string"}
        singular = field[:-1] if field.endswith("s") else field
        made = [self.value(item, singular, depth + 1) for _ in range(count)]
        if made and all(isinstance(v, str) and _ISO.match(v) for v in made):
            made.sort()  # [start, end] pairs and time series run forwards
        return made

    def _object(self, schema: dict[str, Any], field: str, depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        return {name: self.value(sub, name, depth + 1) for name, sub in props.items() if name in required or depth < 4}


def value_for_schema(schema: dict[str, Any], rng: random.Random, *, field: str = "", depth: int = 0,
                     ids: IdSource | None = None) -> Any:
    """A value valid against a (simple) JSON Schema; uses the field name to stay plausible."""
    return SchemaValues(rng, ids).value(schema, field, depth)
