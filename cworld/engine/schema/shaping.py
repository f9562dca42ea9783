"""Fit a semantic payload (a record, a page of records, a confirmation) into a tool's output schema.

Values come from the payload where a property name matches (directly, through the entity's id aliases
such as `message_id` -> the record key, or a known synonym such as `messages` -> the page's items), and
are generated from the schema otherwise, so the result both validates and stays consistent with the world.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from cworld.engine.schema.rules import EXPIRY_FLAGS, expiry_flag
from cworld.engine.world.fresh import fresh_default
from cworld.schemas.plausible import clock
from cworld.schemas.realistic import IdSource, number_bounds, value_for_schema
from cworld.schemas.walk import item_schema

#: (property, the record being shaped, the answer object's property names) -> the world's records that
#: list holds (a board's `lists`, a cart's `items`), or None when no collection holds it.
Nested = Callable[[str, dict[str, Any], set[str]], list[dict[str, Any]] | None]

#: Output property names that mean "the list of items".
LIST_ALIASES = ("items", "results", "data", "entries", "records", "list", "rows")
#: A property holding a [start, end] pair, and the call arguments that say how long it lasts.
SPAN = re.compile(r"(^|_)(slot|window|interval|period|span)$", re.IGNORECASE)
DURATION_ARGS = ("duration_minutes", "duration", "length_minutes", "minutes")
#: Record fields that hold when it expires (`expired` beside them follows from the clock).
EXPIRY_NAMES = ("expires", "expires_at", "expiry", "expiry_date", "expires_on", "valid_until")
#: An answer's flag for its own outcome (`{success, message}`): true on every answer the shaper fills.
SUCCESS_FLAGS = ("success", "successful", "succeeded", "ok", "is_success")
PAGE_COUNT_NAMES = ("total_pages", "totalPages", "page_count", "pageCount", "num_pages", "pages")
TOTAL_NAMES = ("count", "total", "total_count", "totalResults", "total_results", "totalCount", "num_results")


@dataclass
class Shaper:
    rng: random.Random
    #: property name -> payload key, e.g. {"message_id": "id"}: the entity's key under the names tools use.
    aliases: dict[str, str] = field(default_factory=dict)
    #: existing keys by entity stem, so generated `person_id`s name records that exist.
    ids: IdSource | None = None
    #: records of the world for lists nested in a record's answer.
    nested: Nested | None = None
    #: any record of the world by its key: `to_name` beside `to_id` is that record's name.
    lookup: Callable[[str], dict[str, Any] | None] | None = None
    #: the time the record being shaped was made, when this call made it (fresh.py's defaults apply).
    fresh: datetime | None = None
    #: the call's arguments: an answer's top-level field of the same name the world does not hold echoes
    #: it (`search_hotels(city="Madrid")` answers `city: "Madrid"`).
    given: dict[str, Any] = field(default_factory=dict)
    #: the session user's keys on this server: `your_role` is the user's entry in the record's `roles`.
    me: frozenset[str] = frozenset()

    def make(self, schema: dict[str, Any], name: str = "", depth: int = 0) -> Any:
        made = value_for_schema(schema, self.rng, field=name, depth=depth, ids=self.ids)
        return self._lasting(made) if SPAN.search(name) else made

    def _lasting(self, span: Any) -> Any:
        """A [start, end] pair lasts as long as the call asked (`find_free_slots(duration_minutes=60)`)."""
        minutes = next((v for k, v in self.given.items() if k in DURATION_ARGS and isinstance(v, int)), None)
        if minutes is None or not (isinstance(span, list) and len(span) == 2 and all(isinstance(v, str) for v in span)):
            return span
        try:
            start = datetime.fromisoformat(span[0].replace("Z", "+00:00"))
        except ValueError:
            return span
        end = (start + timedelta(minutes=minutes)).isoformat()
        return [span[0], end.replace("+00:00", "Z") if span[0].endswith("Z") else end]

    def fill(self, schema: dict[str, Any], source: Any, *, name: str = "", depth: int = 0) -> Any:
        """A value valid for `schema`, taken from `source` where it fits."""
        types = schema_types(schema)
        if source is None or depth > 8:
            return self.make(schema, name, depth)
        if schema.get("enum") and source not in schema["enum"]:
            return self.make(schema, name)
        if "object" in types and isinstance(source, dict):
            return self._object(schema, source, depth)
        each = name[:-1] if name.endswith("s") else name  # an item is named as one (`slots` -> `slot`)
        if "array" in types and isinstance(source, dict) and source and all(isinstance(v, dict) for v in source.values()):
            source = [{f"{each}_id": key, **v} for key, v in source.items()]  # `labels: {lbl_1: {...}}` as a list
        if "array" in types and isinstance(source, list):
            return [self.fill(item_schema(schema, i), x, name=each, depth=depth + 1) for i, x in enumerate(source)]
        if "object" in types and isinstance(source, str) and "properties" in schema:
            return self._object_from_text(schema, source, depth)
        return self._coerce(schema, types, source, name)

    def _object(self, schema: dict[str, Any], source: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        if not props:
            return dict(source) if schema.get("additionalProperties", True) is not False else {}
        required = set(schema.get("required", []))
        out: dict[str, Any] = {}
        siblings, twins = set(props), _Twins(source)
        for prop, sub in props.items():
            picked = self._pick(source, prop, sub, siblings, twins)
            if picked is None and depth == 0 and isinstance(self.given.get(prop), str | int | float):
                picked = self.given[prop]
            if picked is None and self.fresh is not None and depth == 0:
                picked = fresh_default(prop, schema_types(sub), self.fresh)
            if picked is None and prop in required and "null" in schema_types(sub):
                out[prop] = None  # what the world does not know stays empty where the schema allows it
            elif picked is not None or prop in required:
                out[prop] = self.fill(sub, picked, name=prop, depth=depth + 1)
        return out

    def _pick(self, source: dict[str, Any], prop: str, schema: dict[str, Any], siblings: set[str],
              twins: _Twins) -> Any:
        implied = expiry_flag(source) if prop in EXPIRY_FLAGS else None
        if implied is not None:
            return implied  # what the record's expiry says, over a flag drawn before (a live app derives it)
        if prop in source:
            return source[prop]
        if prop in self.aliases and self.aliases[prop] in source:
            return source[self.aliases[prop]]
        twin = twins.of(prop)
        if twin is not None:
            return source[twin]  # `depart_at` in the answer, `departs_at` in the record
        types = schema_types(schema)
        if "array" in types:
            nested = self.nested is not None and "object" in schema_types(item_schema(schema))
            found = _list_in(source)
            if found is None and nested:
                found = self.nested(prop, source, siblings)  # type: ignore[misc]
            return found
        if self.me and (mine := _users_entry(source, prop, self.me)) is not None:
            return mine
        if types == {"boolean"}:
            return _membership(source, prop, self.me) if self.me else _derived_flag(source, prop)
        if prop.endswith("name") and self.lookup is not None:
            return self._referenced_name(source, prop)
        if prop in TOTAL_NAMES:
            return _total(source)
        if prop in PAGE_COUNT_NAMES:
            return _page_count(source)
        if "object" in types and "properties" in schema:
            return _object_in(source, schema)
        return None

    def _referenced_name(self, source: dict[str, Any], prop: str) -> Any:
        """`to_name` beside `to_id`, `list_name` beside `list_id`: the name of the record the id names."""
        ref = source.get(prop[: -len("name")].rstrip("_") + "_id")
        record = self.lookup(str(ref)) if self.lookup is not None and isinstance(ref, str | int) else None
        if record is None:
            return None
        return next((record[k] for k in ("name", "title", "full_name", "display_name") if isinstance(record.get(k), str)), None)

    def _object_from_text(self, schema: dict[str, Any], text: str, depth: int) -> dict[str, Any]:
        """`sender: "a@b.example"` into `{name, email}`: the string lands in the property it looks like."""
        made = self.make(schema, depth=depth + 1)
        if not isinstance(made, dict):
            return made
        props = list(schema.get("properties", {}))
        email_prop = next((p for p in props if "email" in p.lower()), None)
        name_prop = next((p for p in props if "name" in p.lower()), None)
        if "@" in text and email_prop:
            made[email_prop] = text
            local = [w.capitalize() for w in re.findall(r"[A-Za-z]+", text.split("@", 1)[0])]
            if name_prop and local and isinstance(made.get(name_prop), str):
                made[name_prop] = " ".join(local)
        elif name_prop:
            made[name_prop] = text
        return made

    def _coerce(self, schema: dict[str, Any], types: set[str], value: Any, name: str) -> Any:
        if isinstance(value, bool):
            return value if "boolean" in types else self.make(schema, name)
        if isinstance(value, int | float) and types & {"integer", "number"}:
            if "integer" in types and "number" not in types and not float(value).is_integer():
                return self.make(schema, name)
            return _clamped(schema, int(value) if "number" not in types else value)
        if isinstance(value, str) and "string" in types:
            limit = schema.get("maxLength")
            return value[:limit] if limit else value
        if "string" in types and isinstance(value, int | float):
            return str(value)
        if types & {"integer", "number"} and isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?", value):
            return int(value) if "integer" in types and value.lstrip("-").isdigit() else float(value)
        return self.make(schema, name)


class _Twins:
    """The first key of `source` by stem (`depart_at` for `departs_at`), found once per object shaped
    rather than once per property."""

    def __init__(self, source: dict[str, Any]) -> None:
        self.source = source
        self._first: dict[str, str] | None = None

    def of(self, prop: str) -> str | None:
        if self._first is None:
            self._first = {}
            for key in self.source:
                self._first.setdefault(_stem(key), key)
        return self._first.get(_stem(prop))


def _clamped(schema: dict[str, Any], value: int | float) -> int | float:
    """A remembered value kept inside the schema's bounds (a record's 7 shown where the schema says 0-5)."""
    low, high = number_bounds(schema, defaults=False)
    if low <= value <= high:
        return value
    bounded = min(max(value, low), high)
    return int(bounded) if isinstance(value, int) else bounded


def schema_types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, list):
        return set(kind)
    if kind:
        return {kind}
    if "properties" in schema:
        return {"object"}
    options = schema.get("anyOf") or schema.get("oneOf") or []
    return {t for option in options for t in schema_types(option)}


@lru_cache(maxsize=8192)
def _stem(name: str) -> str:
    return re.sub(r"s?_(at|on)$", r"_\1", name.lower())


def _total(source: dict[str, Any]) -> int | None:
    """The answer's count of matches: the page's `total`, else the length of its only list (what the world
    found: a count made up beside it would say there were more, or some where there were none)."""
    if isinstance(source.get("total"), int):
        return int(source["total"])
    lists = [v for v in source.values() if isinstance(v, list)]
    return len(lists[0]) if len(lists) == 1 else None


def _page_count(source: dict[str, Any]) -> int | None:
    """How many pages the matches fill: from the page's total and size, else one page of what was found."""
    total, size = _total(source), source.get("page_size")
    if total is not None and isinstance(size, int) and size > 0:
        return -(-total // size)
    return None if total is None else min(total, 1)


def _derived_flag(source: dict[str, Any], prop: str) -> bool | None:
    """`in_stock` from `stock`, `has_seats` from `seats`: a flag the record implies by a count; `expired`
    from the record's expiry (`expires: "2026-05"`) and the session clock."""
    if prop in ("expired", "is_expired"):
        return _expired(source)
    if prop in SUCCESS_FLAGS:
        return True  # only an answer that succeeded is shaped: its own outcome flag says so
    match = re.match(r"^(?:in|is|has)_(.+)$", prop)
    count = source.get(match.group(1)) if match else None
    if isinstance(count, int | float) and not isinstance(count, bool):
        return count > 0
    return None


def _membership(source: dict[str, Any], prop: str, me: frozenset[str]) -> bool | None:
    """`is_member` beside `members: [...]`: whether the signed-in user is among them, as the record says; any
    other flag as the record implies it (`_derived_flag`)."""
    match = re.match(r"^(?:is|am|you_are|i_am)_(.+)$", prop)
    listed = source.get(f"{match.group(1)}s") if match else None
    if isinstance(listed, list | dict):
        return any(str(m) in me for m in listed)
    return _derived_flag(source, prop)


def _users_entry(source: dict[str, Any], prop: str, me: frozenset[str]) -> Any:
    """`your_role` / `my_role`: the user's entry in the record's map of them (`roles: {person_110: admin}`)."""
    match = re.match(r"^(?:your|my)_(.+)$", prop)
    table = next((source[n] for n in (f"{match.group(1)}s", match.group(1)) if isinstance(source.get(n), dict)),
                 None) if match else None
    return next((table[k] for k in me if k in table), None) if table else None


def _expired(source: dict[str, Any]) -> bool | None:
    """Whether the expiry the record holds has passed; a month (`2026-05`) lasts through its last day."""
    stamp = next((source[k] for k in EXPIRY_NAMES if isinstance(source.get(k), str)), None)
    match = re.match(r"^(\d{4})-(\d{2})(-\d{2}(?:[T ][\d:.]+)?)?", stamp or "")
    if match is None:
        return None
    now = clock()
    if match.group(3) is None:
        return (int(match.group(1)), int(match.group(2))) < (now.year, now.month)
    return match.group(0)[:10] < now.date().isoformat()


def _list_in(source: dict[str, Any]) -> list[Any] | None:
    """A page's items under any list-like name, else the one list of records the payload holds."""
    for alias in LIST_ALIASES:
        if isinstance(source.get(alias), list):
            return source[alias]
    lists = [v for v in source.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
    return lists[0] if len(lists) == 1 else None


def _object_in(source: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any] | None:
    """The nested record an object property wants: the only nested dict, else the source itself when
    it already has some of the wanted properties, else the first item of a page."""
    nested = [v for v in source.values() if isinstance(v, dict)]
    if len(nested) == 1:
        return nested[0]
    props = set(schema.get("properties", {}))
    if props and props & set(source) and not props <= {"items"}:
        return source
    items = source.get("items")
    if isinstance(items, list) and items and isinstance(items[0], dict):
        return items[0]
    return None


def single_text_property(schema: dict[str, Any]) -> str | None:
    """The property of an output schema that is one string holding the whole answer (`{content: str}`)."""
    props = schema.get("properties") or {}
    if len(props) != 1:
        return None
    name, sub = next(iter(props.items()))
    return name if schema_types(sub) == {"string"} else None
