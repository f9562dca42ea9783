"""Completing an answer so the paths the task reads from it exist (grounding's last step).

A planned call that reads `{{board.lists[name=To do].list_id}}` or `{{slots.slots.0.1}}` from an answer
says what that answer holds. Most such items are records the grounded world already has (`world/grounding.py`
seeds them); this step covers lists nested in an answer that no collection fills: it walks the path in
the shaped answer and, where an item is missing, adds one made from the output schema (from the world's
record when the list names one of the card's entities), with the fields the selection names. The result
must still validate, or the answer is left as it was.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import singular_word
from cworld.engine.schema.shaping import Shaper, schema_types
from cworld.engine.world.grounding import LIST_NAMES, Part, entity_named, typed, typed_key
from cworld.engine.world.idformat import IdFormat
from cworld.engine.world.state import Collection, SimWorld, id_keys, new_record

_ISO = re.compile(r"^20\d\d-\d\d-\d\d")
#: (list name, item schema, conditions) -> a new item for that list.
ItemMaker = Callable[[str | None, dict[str, Any], tuple[tuple[str, str, str], ...]], Any]


def complete(value: Any, schema: dict[str, Any], parts: tuple[Part, ...], make_item: ItemMaker) -> None:
    """Add, in place, what `value` lacks for `parts` to resolve; stop where the shape does not allow it."""
    node, sub, list_name = value, schema, None
    for part in parts:
        if part.field is not None:
            if not isinstance(node, dict) or part.field not in node:
                return
            node, sub, list_name = node[part.field], property_schema(sub, part.field), part.field
        elif not isinstance(node, list):
            return
        elif part.index is not None:
            item = item_schema(sub)
            while len(node) < (part.index + 1 if part.index >= 0 else -part.index):
                node.append(make_item(list_name, item, ()))
            if all(isinstance(x, str) and _ISO.match(x) for x in node):
                node.sort()  # times stay in order ([start, end])
            node, sub = node[part.index], item
        else:
            item = item_schema(sub)
            hit = next((x for x in node if isinstance(x, dict) and holds(x, part.where)), None)
            if hit is None:
                hit = make_item(list_name, item, part.where)
                node.insert(0, hit)
            node, sub = hit, item


@dataclass
class ExpectedItems:
    """Makes the items an answer of one tool lacks, from the world where the list names an entity."""

    world: SimWorld
    scope: str
    card: CategoryCard
    coll: Collection
    hints: dict[str, IdFormat]
    rng: random.Random

    def complete(self, value: Any, schema: dict[str, Any], parts: tuple[Part, ...]) -> None:
        complete(value, schema, parts, self.item)

    def item(self, list_name: str | None, schema: dict[str, Any], where: tuple[tuple[str, str, str], ...]) -> Any:
        entity = self._entity(list_name)
        if entity is None:  # named like the list's items, so values fit (`slots` -> times)
            made = Shaper(self.rng).make(schema, singular_word(list_name or ""))
            return set_conditions(made, schema, where)
        target = self.world.collection(self.scope, self.card, entity, self.hints)
        record = next((r for r in target.records.values() if holds(_with_key(target, r), where)), None)
        if record is None:
            record = self._new_record(target, where)
        target.shown.add(str(record[target.key_field]))
        shaper = Shaper(self.rng, {alias: target.key_field for alias in id_keys(entity)})
        return set_conditions(shaper.fill(schema, record), schema, where)

    def _entity(self, list_name: str | None) -> EntityType | None:
        named = entity_named(self.card, singular_word(list_name)) if list_name else None
        if named is None and (list_name is None or list_name in LIST_NAMES):
            return self.coll.entity
        return named

    def _new_record(self, target: Collection, where: tuple[tuple[str, str, str], ...]) -> dict[str, Any]:
        entity = target.entity
        given = {f: typed(entity, f, v) for f, _, v in where if f not in id_keys(entity)}
        key = next((v for f, _, v in where if f in id_keys(entity)), None)
        if key is not None:
            given[target.key_field] = typed_key(target, key)
        record = new_record(target, self.rng, given)
        target.grounded[target.put(record)] = {*given}
        return record


def _with_key(coll: Collection, record: dict[str, Any]) -> dict[str, Any]:
    """A record with its key also under the entity's id aliases (`list_id`), as selections name it."""
    key = record.get(coll.key_field)
    return {**{alias: key for alias in id_keys(coll.entity)}, **record}


def holds(item: dict[str, Any], where: tuple[tuple[str, str, str], ...]) -> bool:
    """The selection rule of gold-plan references: equal ignoring case, or containing for `~`."""
    for field, op, wanted in where:
        if item.get(field) is None:
            return False
        have, want = str(item[field]).lower(), wanted.lower()
        if have != want and not (op == "~" and want in have):
            return False
    return True


def set_conditions(item: Any, schema: dict[str, Any], where: tuple[tuple[str, str, str], ...]) -> Any:
    """Write the selection's values into an item, each in the type its property asks for."""
    if isinstance(item, dict):
        for field, _, wanted in where:
            item[field] = as_schema_type(wanted, property_schema(schema, field))
    return item


def as_schema_type(text: str, schema: dict[str, Any]) -> Any:
    types = schema_types(schema)
    low = text.strip().lower()
    if "boolean" in types and low in ("true", "false"):
        return low == "true"
    try:
        if "integer" in types and low.lstrip("-").isdigit():
            return int(low)
        if "number" in types:
            return float(low)
    except ValueError:
        pass
    return text


def property_schema(schema: dict[str, Any], name: str) -> dict[str, Any]:
    found = (_concrete(schema).get("properties") or {}).get(name)
    return _concrete(found) if isinstance(found, dict) else {}


def item_schema(schema: dict[str, Any]) -> dict[str, Any]:
    items = _concrete(schema).get("items")
    return _concrete(items) if isinstance(items, dict) else {}


def _concrete(schema: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of an `anyOf`/`oneOf` (optional fields are `anyOf: [X, null]`)."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return next((o for o in options if isinstance(o, dict) and o.get("type") != "null"), schema)
    return schema
