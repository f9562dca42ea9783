"""Grounding: the simulated world holds what the task says it holds (docs/world-engine.md, "Grounding").

From a `TaskContext` (never from a live sandbox) the engine learns:

- **seeds**: entities the task presumes exist, per collection (server, card, entity): an id a planned call
  uses literally (`get_fare_rules(flight_id="OA314-20260426")`, `add_to_watchlist(watchlist_id="wl_0001")`),
  an item a planned call picks out of an earlier answer (`{{payees.payees[name=Chidi Lewis].payee_id}}`: a
  payee named Chidi Lewis), or the first item it reads (`{{find.messages.0.message_id}}`: the search has a
  hit). A seed also satisfies the literal arguments of the call whose answer shows it (`search_products(
  category="books", max_price=30)` -> a book under 30). Seeds are materialized when their collection is.
- **expectations**: the paths later calls read from an answer. A list nested in a record that no
  collection holds (a board's members, free-time slots) is checked after shaping and completed.
- **mentions**: a value is grounded when the task or an earlier answer of the session names it. A read
  of an unseen id the task names materializes it; a search whose filter values are grounded returns at
  least one match. Anything else keeps the card's contract: unknown ids are not found.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cworld.data_model.references import references
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import singular_word
from cworld.engine.protocol import LogEntry
from cworld.engine.world.filters import QUERY_ARGS, matches, query_of, satisfy, skipped
from cworld.engine.world.idformat import IdFormat
from cworld.engine.world.state import Collection, id_keys, matching_email, new_record
from cworld.engine.world.task import TaskContext, mentioned

_PART = re.compile(r"\.([^.\[\]]+)|\[([^\]]*)\]")
_CONDITION = re.compile(r"^\s*([^=~]+?)\s*([=~])\s*(.*?)\s*$")
_STEM = re.compile(r"^(.+?)_ids?$")
_ID_LIKE = re.compile(r"^[\w.:/@#+-]{2,80}$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
#: Names under which an answer holds "the list of items" rather than a named entity's list.
LIST_NAMES = ("items", "results", "data", "entries", "records", "list", "rows", "matches", "hits")


@dataclass(frozen=True)
class Part:
    """One step of a reference path: a field, a list index, or a selection `[field=value&field~value]`."""

    field: str | None = None
    index: int | None = None
    where: tuple[tuple[str, str, str], ...] = ()


def parse_path(path: str) -> tuple[Part, ...] | None:
    """`.payees[name=Chidi Lewis].payee_id` -> parts; None for a path this grammar does not read."""
    parts: list[Part] = []
    for match in _PART.finditer(path):
        text = match.group(1) if match.group(1) is not None else match.group(2)
        if re.fullmatch(r"\s*-?\d+\s*", text):
            parts.append(Part(index=int(text)))
        elif match.group(1) is not None:
            parts.append(Part(field=text))
        else:
            conditions = [_CONDITION.match(c) for c in text.split("&")]
            if not all(conditions):
                return None
            parts.append(Part(where=tuple((c.group(1), c.group(2), c.group(3)) for c in conditions if c)))
    return tuple(parts)


@dataclass(frozen=True)
class ToolView:
    """What the engine knows of a tool: its server (the world's scope), card, operation and entity."""

    scope: str
    card: CategoryCard
    op: str
    entity: EntityType


@dataclass
class Seed:
    key: str | None
    fields: dict[str, Any] = field(default_factory=dict)
    filters: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Expectation:
    filters: dict[str, Any]
    parts: tuple[Part, ...]

    def applies_to(self, arguments: dict[str, Any]) -> bool:
        """A call asks what the planned call asked when no literal argument of the plan differs."""
        return all(k not in arguments or _same(arguments[k], v) for k, v in self.filters.items())


Describe = Callable[[str], ToolView | None]


class Grounding:
    """The task context resolved against the engine's tools and cards, for one session."""

    def __init__(self, context: TaskContext, describe: Describe) -> None:
        self.context = context
        self.clock: datetime | None = context.clock()
        self.seeds: dict[str, list[Seed]] = {}
        self.expectations: dict[str, list[Expectation]] = {}
        self._entries: list[LogEntry] = []
        self._seen: tuple[int, str] = (-1, "")
        self._read_plan(describe)

    # --- what the session has shown -------------------------------------------------------------------
    def observe(self, entries: list[LogEntry]) -> None:
        """The answers given before the current call (only those may ground it: replay stays exact)."""
        self._entries = entries

    def mentions(self, value: Any) -> bool:
        text = str(value).strip()
        return bool(text) and (self.context.mentions(text) or mentioned(self._seen_text(), text))

    def _seen_text(self) -> str:
        if self._seen[0] != len(self._entries):
            shown = [e.result.text for e in self._entries if not e.result.is_error]
            self._seen = (len(self._entries), "\n".join(shown).lower())
        return self._seen[1]

    # --- what the engine asks ---------------------------------------------------------------------------
    def knows(self, entity: EntityType, fmt: IdFormat, key: str) -> bool:
        """An id nobody created yet exists when the task names it and it looks like this entity's ids."""
        if entity.key_field != "id":
            return self.context.mentions(key)
        return _ID_LIKE.match(key) is not None and self.context.mentions(key) and fmt.looks_like(key)

    def grounded(self, entity: EntityType, args: dict[str, Any]) -> bool:
        """A list/search the task is about: every text value it filters by is named by the task or by an
        earlier answer (a plain list, with no such value, is grounded by the task being there at all)."""
        values = [v for k, v in args.items() if not skipped(k, v) and isinstance(v, str) and not _DAY.match(v)
                  and (k in QUERY_ARGS or k in entity.fields)]
        return all(self.mentions(v) for v in values)

    def populate(self, coll: Collection, key: str, rng: random.Random) -> None:
        """Add the task's entities to a collection as it is created (after the card's seeded records)."""
        coll.ground = self
        for seed in self.seeds.get(key, []):
            record = _existing(coll, seed)
            if record is None:
                given = dict(seed.fields)
                if seed.key is not None:
                    given[coll.key_field] = typed_key(coll, seed.key)
                record = new_record(coll, rng, given)
            satisfy(record, seed.filters, coll.entity, rng)
            record.update(seed.fields)
            coll.grounded[coll.put(matching_email(coll.entity, record))] = {*seed.fields, coll.key_field}

    # --- reading the plan -----------------------------------------------------------------------------
    def _read_plan(self, describe: Describe) -> None:
        steps = {s.id: s for s in self.context.steps}
        for step in self.context.steps:
            view = describe(step.tool)
            literals = literal_arguments(step.arguments)
            if view is not None:
                for arg, value in literals.items():
                    self._named_ids(view, arg, value, literals)
            for ref_step, path in references(step.arguments):
                source = steps.get(ref_step)
                parts = parse_path(path)
                if source is None or not parts or not any(p.field is None for p in parts):
                    continue
                filters = literal_arguments(source.arguments)
                self.expectations.setdefault(source.tool, []).append(Expectation(filters, parts))
                source_view = describe(source.tool)
                if source_view is not None:
                    self._selected(source_view, parts, filters)

    def _named_ids(self, view: ToolView, arg: str, value: Any, literals: dict[str, Any]) -> None:
        keys = _id_values(value)
        own = arg in id_keys(view.entity) or arg == view.entity.name
        if own and (view.op != "create" or arg not in (view.entity.key_field, "id")):  # a create's own key is new
            pins = {k: v for k, v in literals.items() if k != arg and k in view.entity.fields and not isinstance(v, list)}
            for key in keys:
                self._add(view, view.entity, Seed(key, pins if view.op in ("get", "list", "search") else {}))
            return
        stem = _STEM.match(arg)
        other = entity_named(view.card, stem.group(1)) if stem else None
        if other is not None and other is not view.entity:
            for key in keys:
                self._add(view, other, Seed(key))

    def _selected(self, view: ToolView, parts: tuple[Part, ...], filters: dict[str, Any]) -> None:
        at = next(i for i, p in enumerate(parts) if p.field is None)
        if at == 0 or any(p.field is None for p in parts[:at]):
            return
        list_name = parts[at - 1].field or ""
        entity = entity_named(view.card, singular_word(list_name))
        main = at == 1 and (view.op in ("list", "search") or list_name in LIST_NAMES)
        entity = entity or (view.entity if main else None)
        if entity is None:
            return  # a list no collection holds: the expectation completes the answer instead
        key, fields = None, {}
        for name, _, value in parts[at].where:
            if name in id_keys(entity):
                key = value
            else:
                fields[name] = typed(entity, name, value)
        self._add(view, entity, Seed(key, fields, filters))

    def _add(self, view: ToolView, entity: EntityType, seed: Seed) -> None:
        bucket = self.seeds.setdefault(collection_key(view.scope, view.card, entity), [])
        for known in bucket:
            if seed.key is not None and known.key == seed.key:
                known.fields.update(seed.fields)
                known.filters.update(seed.filters)
                return
            if seed.key is None and known.fields == seed.fields and known.filters == seed.filters:
                return
        bucket.append(seed)


def collection_key(scope: str, card: CategoryCard, entity: EntityType) -> str:
    return f"{scope}:{card.name}:{entity.name}"


def literal_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a planned call fixes in advance (those without a `{{reference}}` anywhere inside)."""
    return {k: v for k, v in arguments.items() if not references(v)}


def typed(entity: EntityType, name: str, value: str) -> Any:
    """A selector's text in the field's type: `[is_primary=true]` means the boolean."""
    kind = entity.fields.get(name, "")
    low = value.strip().lower()
    if kind == "bool" or low in ("true", "false"):
        return low == "true"
    if kind == "int" and re.fullmatch(r"-?\d+", low):
        return int(low)
    if kind in ("float", "money") and re.fullmatch(r"-?\d+(\.\d+)?", low):
        return float(low)
    return value


def _id_values(value: Any) -> list[str]:
    """The values of an argument that could be ids: one string or number, or a list of strings."""
    if isinstance(value, str | int) and not isinstance(value, bool):
        found = [str(value)]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        found = [str(v) for v in value]
    else:
        found = []
    return [k for k in found if _ID_LIKE.match(k) and not _DAY.match(k)]


def entity_named(card: CategoryCard, stem: str) -> EntityType | None:
    return next((e for e in card.entities if stem == e.name or stem.endswith(f"_{e.name}")), None)


def _same(have: Any, want: Any) -> bool:
    return str(have).strip().lower() == str(want).strip().lower()


# --- the world's side: seeds become records, grounded reads and searches find something ----------------
def materialize(coll: Collection, key: str, rng: random.Random) -> dict[str, Any] | None:
    """The record for an id the task names, made on first use; None for an id the task does not name."""
    if coll.ground is None or not coll.ground.knows(coll.entity, coll.fmt, key):
        return None
    stored = coll.put(new_record(coll, rng, {coll.key_field: typed_key(coll, key)}))
    coll.grounded[stored] = {coll.key_field}
    return coll.records[stored]


def grounded_matches(coll: Collection, args: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """For a grounded list/search that found nothing: a task entity nobody has seen yet, adapted to the
    filters where the task did not fix its fields, else one new record that matches them."""
    if coll.ground is None or not coll.ground.grounded(coll.entity, args):
        return []
    for key, pinned in coll.grounded.items():
        record = coll.records.get(key)
        if record is None or key in coll.shown or any(
                k in pinned and not _same(record.get(k), v) for k, v in args.items() if not skipped(k, v)):
            continue
        trial = matching_email(coll.entity, satisfy(dict(record), args, coll.entity, rng))
        if matches(trial, args):
            record.update(trial)
            return [record]
    made = matching_email(coll.entity, satisfy(new_record(coll, rng), args, coll.entity, rng))
    query = query_of(args)
    if query and coll.entity.key_field != "id" and coll.entity.fields.get(coll.key_field) == "code":
        code = "".join(ch for ch in query if ch.isalpha())[:3].upper()
        made[coll.key_field] = code if len(code) == 3 and code not in coll.records else made[coll.key_field]
    if not matches(made, args):
        return []
    coll.grounded[coll.put(made)] = set()
    return [made]


def namesakes(coll: Collection, args: dict[str, Any], rng: random.Random) -> None:
    """A search for a first name finds every person of that name the task mentions: the one meant and
    the one to leave out ('I mean Emma Lopez; leave Emma Johansson out of it')."""
    query = query_of(args)
    name_field = next((f for f, k in coll.entity.fields.items() if k == "name"), None)
    if coll.ground is None or name_field is None or not query or not re.fullmatch(r"[A-Z][\w'-]+", query.strip()):
        return
    known = {str(r.get(name_field)).lower() for r in coll.records.values()}
    for name in coll.ground.context.full_names(query.strip()):
        if name.lower() not in known:
            made = matching_email(coll.entity, new_record(coll, rng, {name_field: name}))
            coll.grounded[coll.put(made)] = {name_field}


def typed_key(coll: Collection, key: str) -> Any:
    numeric = coll.entity.fields.get(coll.key_field) == "int" or (coll.key_field == "id" and coll.fmt.numeric)
    return int(key) if numeric and key.isdigit() else key


def _existing(coll: Collection, seed: Seed) -> dict[str, Any] | None:
    if seed.key is not None:
        return coll.records.get(seed.key)
    return next((r for r in coll.records.values()
                 if all(_same(r.get(f), v) for f, v in seed.fields.items()) and matches(r, seed.filters)), None)
