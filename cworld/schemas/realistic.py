"""The realistic mode of the value generator: values valid against a JSON Schema, plausible by field name,
deterministic for an RNG.

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
from cworld.schemas.records import RecordContext, harmonize
from cworld.schemas.values import UNSET, ValueGenerator, fit_length
from cworld.schemas.walk import item_schema

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


class RealisticValues(ValueGenerator):
    """The realistic mode: plausible values drawn from `rng` (same state, same value); `ids` names the
    records that exist, so an id field points at one of them."""

    def __init__(self, rng: random.Random, ids: IdSource | None = None, record: RecordContext | None = None) -> None:
        self.rng = rng
        self.ids = ids
        #: the object being made: its fields share one person and one place.
        self.record = record

    def fixed(self, schema: dict[str, Any]) -> Any:
        if "const" in schema:
            return schema["const"]
        return self.rng.choice(schema["enum"]) if schema.get("enum") else UNSET

    def branch(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        """The first non-null option of an `anyOf`/`oneOf` (else its first), or the first of an `allOf`."""
        for key in ("anyOf", "oneOf"):
            if schema.get(key):
                options = [s for s in schema[key] if s.get("type") != "null"] or schema[key]
                return dict(options[0])
        return dict(schema["allOf"][0]) if schema.get("allOf") else None

    def boolean(self) -> bool:
        return self.rng.random() < 0.5

    def string(self, schema: dict[str, Any], name: str, depth: int) -> str:
        known = self._existing_id(name)
        if known is not None:
            text = known
        else:
            kind = _FORMATS.get(schema.get("format") or "") or hinted_type(name) or "string"
            text = str(value_for_type(kind, self.rng, field=name, record=self.record))
        return fit_length(text, schema)

    def _existing_id(self, field: str) -> str | None:
        match = _ID_FIELD.match(field.lower()) if self.ids is not None else None
        if match is None or self.ids is None:
            return None
        keys = self.ids(match.group(1))
        return self.rng.choice(keys) if keys else None

    def number(self, schema: dict[str, Any], name: str, depth: int) -> float | int:
        """Within the schema's bounds; where it gives none, in the range the name suggests (a rating 1-5)."""
        low, high = number_bounds(schema)
        hinted = numeric_range(name)
        if hinted is None and schema.get("type") == "integer" and re.search(r"[a-z]s$", name.lower()):
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

    def array(self, schema: dict[str, Any], name: str, depth: int) -> list[Any]:
        if depth > 6 or (_TROUBLE.search(name) and not schema.get("minItems")):
            return []  # nothing is known to be wrong: no problems, warnings or errors
        count = max(schema.get("minItems", 0), self.rng.randint(1, 3))
        if _SPAN.search(name) and item_schema(schema).get("type") == "string":
            count = 2  # a slot, range or window is a [start, end] pair
        if isinstance(schema.get("items"), list):
            count = len(schema["items"])  # an old-style tuple such as [longitude, latitude]
        count = min(count, schema.get("maxItems", count))
        singular = name[:-1] if name.endswith("s") else name
        made = [self.value(item_schema(schema, i) or {"type": "string"}, singular, depth + 1) for i in range(count)]
        if made and all(isinstance(v, str) and _ISO.match(v) for v in made):
            made.sort()  # [start, end] pairs and time series run forwards
        return made

    def obj(self, schema: dict[str, Any], name: str, depth: int) -> dict[str, Any]:
        """Required properties, and the others while the value is shallow; drawn as one record (a contact's
        name, email and company belong to one person), enums first so that the rest can follow them."""
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        keys = [key for key in props if key in required or depth < 4]
        outer, entity = self.record, singular_word(name.lower())
        self.record = RecordContext.for_fields(self.rng, entity, keys)
        try:
            for key in sorted(keys, key=lambda k: not props[k].get("enum")):
                self.record.values[key] = self.value(props[key], key, depth + 1)
            made = {key: self.record.values[key] for key in keys}
        finally:
            self.record = outer
        return harmonize(made, {key for key in made if _free_string(props[key])})


def _free_string(schema: dict[str, Any]) -> bool:
    """A string any text fits: one `harmonize` may rewrite without leaving the schema."""
    constrained = ("enum", "const", "pattern", "format", "maxLength", "minLength")
    return schema.get("type") == "string" and not any(k in schema for k in constrained)


def singular_word(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def value_for_schema(schema: dict[str, Any], rng: random.Random, *, field: str = "", depth: int = 0,
                     ids: IdSource | None = None) -> Any:
    """A value valid against a (simple) JSON Schema in the realistic mode; the field name keeps it plausible."""
    return RealisticValues(rng, ids).value(schema, field, depth)
