"""The simulated world the schema engine keeps per session: collections of entities per card.

What a create/update/delete did is seen by later list/get/search calls; ids keep the card's format and
continue the sequence; reads of unknown ids fail with the card's not-found message. A new world is not
empty: each collection starts with the card's `seed_count` plausible entities (messy states matter).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from cworld.engine.cards import CategoryCard, EntityType
from cworld.engine.values import value_for_type
from cworld.seeding import derive_rng

QUERY_ARGS = ("query", "q", "search", "keyword", "keywords", "text", "term", "filter")
PAGE_ARGS = ("page", "page_size", "per_page", "limit", "offset", "max_results", "cursor", "count")


@dataclass
class Outcome:
    """A semantic payload (before shaping to an output schema), or an error class and message."""

    payload: Any = None
    error_class: str | None = None
    message: str = ""


@dataclass
class Collection:
    entity: EntityType
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    next_number: int = 1

    def new_id(self) -> str:
        rid = f"{self.entity.id_prefix}_{self.next_number:04d}"
        self.next_number += 1
        return rid


class SimWorld:
    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._collections: dict[str, Collection] = {}

    def collection(self, card: CategoryCard, entity: EntityType) -> Collection:
        key = f"{card.name}:{entity.name}"
        if key not in self._collections:
            self._collections[key] = self._seeded(card, entity)
        return self._collections[key]

    def _seeded(self, card: CategoryCard, entity: EntityType) -> Collection:
        rng = derive_rng(self.seed, f"engine:world:{card.name}:{entity.name}")
        coll = Collection(entity)
        for example in entity.examples[: entity.seed_count]:
            rid = coll.new_id()
            coll.records[rid] = {"id": rid, **{k: v for k, v in example.items() if k != "id"}}
        while len(coll.records) < entity.seed_count:
            rid = coll.new_id()
            coll.records[rid] = {"id": rid, **fresh_fields(entity, rng)}
        return coll

    def snapshot(self) -> dict[str, Any]:
        return {k: dict(c.records) for k, c in sorted(self._collections.items())}


def fresh_fields(entity: EntityType, rng: random.Random) -> dict[str, Any]:
    return {name: value_for_type(kind, rng, field=name) for name, kind in entity.fields.items()}


def find_id(entity: EntityType, arguments: dict[str, Any]) -> str | None:
    """The id the call refers to: `<entity>_id`, `id`, another `*_id`, or any value in the id format."""
    for key in (f"{entity.name}_id", "id"):
        if isinstance(arguments.get(key), str | int):
            return str(arguments[key])
    pattern = re.compile(rf"^{re.escape(entity.id_prefix)}_\d+$")
    for key, value in arguments.items():
        if isinstance(value, str) and (pattern.match(value) or (key.endswith("_id") and key != "user_id")):
            return value
    return None


def apply(world: SimWorld, card: CategoryCard, entity: EntityType, op: str, args: dict[str, Any], rng: random.Random) -> Outcome:
    coll = world.collection(card, entity)
    handler = _HANDLERS.get(op, _action)
    return handler(coll, card, args, rng)


def _not_found(card: CategoryCard, entity: EntityType, rid: str) -> Outcome:
    failure = card.failure("not_found")
    template = failure.message if failure else "No {entity} with id '{id}'."
    return Outcome(error_class="not_found", message=template.replace("{id}", rid).replace("{entity}", entity.name))


def _matches(record: dict[str, Any], args: dict[str, Any]) -> bool:
    for key, value in args.items():
        if key in PAGE_ARGS or value in (None, "", []):
            continue
        if key in QUERY_ARGS:
            haystack = " ".join(str(v) for v in record.values()).lower()
            if not all(word in haystack for word in str(value).lower().split()):
                return False
        elif key in record and not isinstance(value, dict | list) and str(record[key]).lower() != str(value).lower():
            return False
    return True


def _page(items: list[dict[str, Any]], args: dict[str, Any]) -> dict[str, Any]:
    size = int(args.get("page_size") or args.get("per_page") or args.get("limit") or args.get("max_results") or 20)
    size = max(1, min(size, 100))
    page = max(1, int(args.get("page") or 1))
    start = int(args.get("offset") or (page - 1) * size)
    chunk = items[start : start + size]
    return {"items": chunk, "total": len(items), "page": page, "page_size": size, "has_more": start + size < len(items)}


def _list(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    items = [r for r in coll.records.values() if _matches(r, args)]
    return Outcome(payload=_page(sorted(items, key=lambda r: r["id"], reverse=True), args))


def _get(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    rid = find_id(coll.entity, args)
    if rid is None:
        return _list(coll, card, args, rng)
    if rid not in coll.records:
        return _not_found(card, coll.entity, rid)
    return Outcome(payload=dict(coll.records[rid]))


def _create(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    rid = coll.new_id()
    record = {"id": rid, **fresh_fields(coll.entity, rng)}
    record.update({k: v for k, v in args.items() if not k.endswith("_id") or k in coll.entity.fields})
    coll.records[rid] = record
    return Outcome(payload=dict(record))


def _update(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    rid = find_id(coll.entity, args)
    if rid is None or rid not in coll.records:
        return _not_found(card, coll.entity, rid or "?")
    id_keys = {f"{coll.entity.name}_id", "id"}
    coll.records[rid].update({k: v for k, v in args.items() if k not in id_keys})
    return Outcome(payload=dict(coll.records[rid]))


def _delete(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    rid = find_id(coll.entity, args)
    if rid is None or rid not in coll.records:
        return _not_found(card, coll.entity, rid or "?")
    del coll.records[rid]
    return Outcome(payload={"deleted": True, "id": rid})


def _action(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    rid = find_id(coll.entity, args)
    if rid is not None and rid not in coll.records:
        return _not_found(card, coll.entity, rid)
    payload: dict[str, Any] = {"ok": True, "status": "completed"}
    if rid is not None:
        payload[coll.entity.name] = dict(coll.records[rid])
    return Outcome(payload=payload)


_HANDLERS = {"list": _list, "search": _list, "get": _get, "create": _create, "update": _update, "delete": _delete}
