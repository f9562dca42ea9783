"""The simulated world the schema engine keeps per session: collections of records per server and entity.

What a create/update/delete did is seen by later list/get/search calls; ids keep their format and
continue the sequence; reads of unknown ids fail with the card's not-found message. A new world is not
empty: each collection starts with the task scenario's entities of it, or else the card's `seed_count`
plausible records (messy states matter).
Collections are per server: two mail servers do not share a mailbox.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import entity_named
from cworld.engine.world.filters import TIME_PAIRS, moment_of, move_to_moment
from cworld.engine.world.idformat import IdFormat, format_for
from cworld.schemas.plausible import record_values, value_for_type
from cworld.seeding import derive_rng

if TYPE_CHECKING:
    from cworld.engine.world.grounding import Grounding

_REF = re.compile(r"^(.+?)_ids?$")


@dataclass
class Outcome:
    """A semantic payload (before shaping to an output schema), or an error class and message."""

    payload: Any = None
    error_class: str | None = None
    message: str = ""
    many: bool = False  # the payload is a page or batch of records

    @classmethod
    def failed(cls, error_class: str, template: str, *, entity: str, key: str, field: str) -> Outcome:
        """A card failure's message with its `{id}`, `{entity}` and `{field}` filled in for one record."""
        text = template.replace("{id}", key).replace("{entity}", entity.replace("_", " ")).replace("{field}", field)
        return cls(error_class=error_class, message=text)


@dataclass
class Collection:
    entity: EntityType
    fmt: IdFormat
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    next_number: int = 1
    #: entity stem -> keys of that entity in the same world and card (`calendar_id` -> calendar keys).
    refs: Callable[[str], list[str]] | None = None
    #: (entity stem, key) -> that record of the same world and card, if it exists.
    ref_record: Callable[[str, str], dict[str, Any] | None] | None = None
    #: entity stem -> the collection of the same world and card holding it (what the task fixed of it).
    ref_collection: Callable[[str], Collection | None] | None = None
    #: The session's public task, resolved (None for a bare session): see `grounding.py`.
    ground: Grounding | None = None
    #: The task's scenario describes this collection: its entities are the records, nothing is made up.
    scenario: bool = False
    #: Keys of records the task put here -> the fields it fixed; the rest may still adapt until shown.
    grounded: dict[str, set[str]] = field(default_factory=dict)
    #: Keys of records some answer has shown the agent: those never change behind its back.
    shown: set[str] = field(default_factory=set)
    #: Change tracking (`changes.py`): key -> the record before the first write that touched it (None: new),
    origin: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    #: and key -> the fields writes set on it.
    written: dict[str, set[str]] = field(default_factory=dict)
    #: The records of every collection of the same world and card (a recipient behind an address).
    peers: Callable[[], list[dict[str, Any]]] | None = None

    @property
    def key_field(self) -> str:
        return self.entity.key_field

    def new_key(self, rng: random.Random) -> Any:
        """The next id in this collection's format (an int when the key field is an int)."""
        while True:
            key: Any = self.fmt.make(self.next_number, rng)
            self.next_number += 1
            if self.entity.fields.get(self.key_field) == "int" or (self.key_field == "id" and self.fmt.numeric):
                key = int(key)
            if str(key) not in self.records:
                return key

    def note_key(self, key: Any) -> None:
        """Keep the sequence ahead of an id that came from outside (an argument, a recorded response)."""
        number = self.fmt.number_of(str(key))
        if number is not None and number >= self.next_number:
            self.next_number = number + 1

    def put(self, record: dict[str, Any]) -> str:
        key = str(record[self.key_field])
        self.note_key(key)
        self.records[key] = record
        return key

    def natural_key(self, rng: random.Random, drawn: Any = None) -> Any:
        """A key for a record keyed by a field (a path, a name, an issue number), unique in the collection;
        `drawn` is the value the record drew with its other fields (a person entity's name), tried first."""
        kind = self.entity.fields.get(self.key_field, "string")
        if kind in ("int", "sha") or self.entity.id_format != "{prefix}_{n:04d}":
            return self.new_key(rng)
        for attempt in range(50):
            key = drawn if attempt == 0 and drawn is not None else value_for_type(kind, rng, field=self.key_field)
            if attempt:
                key = f"{key}-{attempt}" if kind != "path" else str(key).replace(".", f"-{attempt}.", 1)
            if str(key) not in self.records:
                return key
        return self.new_key(rng)


def fresh_fields(entity: EntityType, rng: random.Random) -> dict[str, Any]:
    return record_values(entity.name, entity.fields, rng)


def _linked(coll: Collection, values: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Reference fields (`calendar_id`, `labels: list[id]`) point at records that exist in the world."""
    if coll.refs is None:
        return values
    for name, kind in coll.entity.fields.items():
        match = _REF.match(name)
        keys = coll.refs(match.group(1)) if match and kind in ("id", "list[id]") else []
        if keys:
            values[name] = rng.choice(keys) if kind == "id" else rng.sample(keys, min(len(keys), rng.randint(1, 2)))
    return values


def _ordered_times(values: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    for start, end in TIME_PAIRS:
        try:
            begins = datetime.fromisoformat(str(values[start]))
        except (KeyError, ValueError):
            continue
        if end in values:
            finish = begins + timedelta(minutes=rng.choice([30, 45, 60, 90, 120]) if "date" not in start else 0,
                                        days=rng.randint(1, 5) if "date" in start or "check" in start else 0)
            values[end] = finish.date().isoformat() if len(str(values[start])) == 10 else finish.isoformat()
    return values


def matching_email(entity: EntityType, values: dict[str, Any]) -> dict[str, Any]:
    """A person's email is made from their name (ava.chen@northwind.example), not drawn separately."""
    name = next((values[f] for f, kind in entity.fields.items() if kind == "name" and isinstance(values.get(f), str)), None)
    email_field = next((f for f, kind in entity.fields.items() if kind == "email"), None)
    if name and email_field and isinstance(values.get(email_field), str) and "@" in values[email_field]:
        local = ".".join(part.lower() for part in re.findall(r"[A-Za-z]+", name)[:2])
        values[email_field] = f"{local}@{values[email_field].split('@', 1)[1]}" if local else values[email_field]
    return values


def _timed_like_refs(coll: Collection, record: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """A record made for another one it names (a booking of flight X) happens when that one does: its
    own time, unless given, is the referenced record's (paired end times move with it)."""
    found = moment_of(record)
    if coll.ref_record is None or found is None or found[0] in given:
        return record
    for name, value in record.items():
        match = _REF.match(name)
        ref = coll.ref_record(match.group(1), value) if match and name in given and isinstance(value, str) else None
        moment = moment_of(ref) if ref is not None else None
        if moment is not None:
            move_to_moment(record, moment[1])
            break
    return record


def new_record(coll: Collection, rng: random.Random, given: dict[str, Any] | None = None) -> dict[str, Any]:
    """A record with generated fields, overridden by `given`, and a key in the collection's format."""
    made = _ordered_times(_linked(coll, fresh_fields(coll.entity, rng), rng), rng)
    record = _timed_like_refs(coll, {**made, **(given or {})}, set(given or {}))
    if not any(coll.entity.fields.get(f) == "email" for f in given or {}):
        record = matching_email(coll.entity, record)
    if coll.key_field == "id":
        record = {"id": record.get("id") or coll.new_key(rng), **{k: v for k, v in record.items() if k != "id"}}
    elif not (given or {}).get(coll.key_field):
        record[coll.key_field] = coll.natural_key(rng, made.get(coll.key_field))
    return record


class SimWorld:
    def __init__(self, seed: int, grounding: Grounding | None = None) -> None:
        self.seed = seed
        self.grounding = grounding
        self._collections: dict[str, Collection] = {}
        self._seeding: set[str] = set()

    def collection(self, scope: str, card: CategoryCard, entity: EntityType,
                   hints: dict[str, IdFormat] | None = None) -> Collection:
        """The records of `entity` on server `scope`; id formats from the server's tool hints or the card."""
        key = f"{scope}:{card.name}:{entity.name}"
        if key not in self._collections:
            self._seeding.add(key)
            try:
                fmt = format_for(entity, hints or {})
                refs = lambda stem: self.keys(scope, card, stem, hints)  # noqa: E731
                self._collections[key] = coll = self._seeded(key, scope, card, entity, fmt, refs)
                coll.ref_record = lambda stem, ref: self.record(scope, card, stem, ref, hints)
                coll.ref_collection = lambda stem: self.collection_of(scope, card, stem, hints)
                coll.peers = lambda: self.peer_records(scope, card)
            finally:
                self._seeding.discard(key)
        return self._collections[key]

    def keys(self, scope: str, card: CategoryCard, stem: str, hints: dict[str, IdFormat] | None = None) -> list[str]:
        """Existing keys of the card entity a field stem names (`from_account` -> account); [] if none."""
        entity = entity_named(card, stem)
        if entity is None or f"{scope}:{card.name}:{entity.name}" in self._seeding:
            return []
        return list(self.collection(scope, card, entity, hints).records)

    def record(self, scope: str, card: CategoryCard, stem: str, ref: str,
               hints: dict[str, IdFormat] | None = None) -> dict[str, Any] | None:
        """The record an id field names (`flight_id` -> that flight), if it exists already."""
        coll = self.collection_of(scope, card, stem, hints)
        return coll.records.get(str(ref)) if coll is not None else None

    def collection_of(self, scope: str, card: CategoryCard, stem: str,
                      hints: dict[str, IdFormat] | None = None) -> Collection | None:
        """The collection of the card entity an id field's stem names (`payment_method` in
        `payment_method_id`); None when the card has no such entity or it is being seeded."""
        entity = entity_named(card, stem)
        if entity is None or f"{scope}:{card.name}:{entity.name}" in self._seeding:
            return None
        return self.collection(scope, card, entity, hints)

    def find(self, scope: str, card: CategoryCard, key: str) -> dict[str, Any] | None:
        """The record with this key in any collection of the card made so far (a payee behind `to_id`)."""
        prefix = f"{scope}:{card.name}:"
        return next((c.records[key] for k, c in self._collections.items() if k.startswith(prefix) and key in c.records),
                    None)

    def peer_records(self, scope: str, card: CategoryCard) -> list[dict[str, Any]]:
        """Every record of the card's collections on server `scope` made so far."""
        prefix = f"{scope}:{card.name}:"
        return [r for k, c in self._collections.items() if k.startswith(prefix) for r in c.records.values()]

    def _seeded(self, key: str, scope: str, card: CategoryCard, entity: EntityType, fmt: IdFormat,
                refs: Callable[[str], list[str]]) -> Collection:
        """A new collection: the scenario's entities of it when the task has some, else the card's seeded
        records (a live app holds what the scenario says, not filler besides)."""
        coll = Collection(entity, fmt, refs=refs, ground=self.grounding)
        if self.grounding is not None and self.grounding.populate(coll, scope, card,
                                                                  derive_rng(self.seed, f"engine:ground:{key}")):
            return coll
        rng = derive_rng(self.seed, f"engine:world:{key}")
        for example in entity.examples[: entity.seed_count]:
            coll.put(new_record(coll, rng, dict(example)))
        while len(coll.records) < entity.seed_count:
            coll.put(new_record(coll, rng))
        return coll

    def snapshot(self) -> dict[str, Any]:
        return {k: {rid: dict(r) for rid, r in c.records.items()} for k, c in sorted(self._collections.items())}

    def collections(self) -> dict[str, Collection]:
        """The collections made so far, by `server:card:entity`."""
        return dict(self._collections)


# --- keeping the world consistent with what was answered -------------------------------------------
def mark_shown(coll: Collection, payload: Any) -> None:
    """Records an answer showed (one record, or a page's items) are fixed from now on."""
    items = payload.get("items") if isinstance(payload, dict) else None
    records: list[Any] = items if isinstance(items, list) else [payload]
    for record in records:
        if isinstance(record, dict) and record.get(coll.key_field) is not None:
            coll.shown.add(str(record[coll.key_field]))


def id_keys(entity: EntityType) -> tuple[str, ...]:
    """Names under which a response or an argument carries this entity's key."""
    return _id_keys(entity.name, entity.key_field)


@lru_cache(maxsize=1024)
def _id_keys(name: str, key_field: str) -> tuple[str, ...]:
    keys = [key_field, f"{name}_{key_field}", f"{name}_id", "id"]
    if key_field != "id":
        keys.append(name)
    return tuple(dict.fromkeys(keys))


def absorb(coll: Collection, value: Any, depth: int = 0) -> None:
    """Add to records the scalar fields a response showed for them (generated by shaping, or recorded
    from another engine or a live server), so that later reads repeat them instead of inventing anew."""
    if depth > 6:
        return
    if isinstance(value, list):
        for item in value[:100]:
            absorb(coll, item, depth + 1)
        return
    if not isinstance(value, dict):
        return
    record = _record_named_by(coll, value)
    if record is not None:
        for key, sub in value.items():
            scalar_before = key in record and not isinstance(record[key], dict | list)
            if key not in record or (scalar_before and isinstance(sub, dict)):
                record[key] = copy.deepcopy(sub)  # a structured form (sender {name, email}) replaces a bare string
    for sub in value.values():
        if isinstance(sub, dict | list):
            absorb(coll, sub, depth + 1)


def _record_named_by(coll: Collection, value: dict[str, Any]) -> dict[str, Any] | None:
    for key in id_keys(coll.entity):
        found = value.get(key)
        if isinstance(found, str | int) and not isinstance(found, bool) and str(found) in coll.records:
            return coll.records[str(found)]
    return None


def adopt_key(coll: Collection, ours: str, recorded: Any) -> str:
    """During replay, a create that another engine (or a live server) answered with another id keeps that
    id, so the replayed world names the record as the agent saw it."""
    theirs = _first_key(coll.entity, recorded)
    if theirs is None or str(theirs) == ours or str(theirs) in coll.records or ours not in coll.records:
        return ours
    record = coll.records.pop(ours)
    record[coll.key_field] = theirs
    return coll.put(record)


def _first_key(entity: EntityType, value: Any, depth: int = 0) -> Any:
    if depth > 4:
        return None
    if isinstance(value, dict):
        for key in id_keys(entity):
            if isinstance(value.get(key), str | int) and not isinstance(value.get(key), bool):
                return value[key]
        nested = [v for v in value.values() if isinstance(v, dict | list)]
        return next((k for k in (_first_key(entity, v, depth + 1) for v in nested) if k is not None), None)
    if isinstance(value, list) and value:
        return _first_key(entity, value[0], depth + 1)
    return None
