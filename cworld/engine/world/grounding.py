"""Grounding: the simulated world holds what the public task says it holds (docs/world-engine.md, "Grounding").

From a `PublicTask` (never the gold plan, hints or ground truth, never a live sandbox) the engine learns:

- **the scenario's entities**: each `ScenarioEntity(app, kind, id, attributes)` is a record of the card
  entity named `kind` on server `app`. When the scenario has entities of a collection's kind, they are
  that collection's world (no card-seeded filler a live app would not have); relations set the linking
  fields (`account_id`) the attributes do not. Lists nested in an answer show the scenario's entities
  related to the record (a board's lists by `board_id`, its members by relation).
- **mentions**: a value is grounded when the task's text or an earlier answer of the session names it. In
  a collection the scenario does not describe, a read of an unseen id the task names materializes it and
  a search whose filter values are grounded returns at least one match. Anything else keeps the card's
  contract: unknown ids are not found.
"""

from __future__ import annotations

import random
import re
from typing import Any

from cworld.data_model import PublicTask, ScenarioEntity
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import entity_named, singular_word
from cworld.engine.protocol import LogEntry
from cworld.engine.world.filters import QUERY_ARGS, matches, query_of, satisfy, skipped
from cworld.engine.world.idformat import IdFormat
from cworld.engine.world.likeness import USER_NOTE
from cworld.engine.world.state import Collection, matching_email, new_record
from cworld.engine.world.task import TaskText, mentioned

_ID_LIKE = re.compile(r"^[\w.:/@#+-]{2,80}$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
#: Names under which an answer holds "the list of items" rather than a named entity's list.
LIST_NAMES = ("items", "results", "data", "entries", "records", "list", "rows", "matches", "hits")


class Grounding:
    """A public task resolved for one session: its text for the mention rules, its scenario for the world."""

    def __init__(self, task: PublicTask) -> None:
        self.task = task
        self.words = TaskText(task)
        self.clock = self.words.clock()
        self._by_handle = {e.handle: e for e in task.scenario.entities}
        self._entries: list[LogEntry] = []
        self._seen: tuple[int, str] = (-1, "")

    # --- what the session has shown -------------------------------------------------------------------
    def observe(self, entries: list[LogEntry]) -> None:
        """The answers given before the current call (only those may ground it: replay stays exact)."""
        self._entries = entries

    def mentions(self, value: Any) -> bool:
        text = str(value).strip()
        return bool(text) and (self.words.mentions(text) or mentioned(self._seen_text(), text))

    def _seen_text(self) -> str:
        if self._seen[0] != len(self._entries):
            shown = [e.result.text for e in self._entries if not e.result.is_error]
            self._seen = (len(self._entries), "\n".join(shown).lower())
        return self._seen[1]

    # --- what the engine asks ---------------------------------------------------------------------------
    def knows(self, entity: EntityType, fmt: IdFormat, key: str) -> bool:
        """An id nobody created yet exists when the task names it and it looks like this entity's ids."""
        if entity.key_field != "id":
            return self.words.mentions(key)
        return _ID_LIKE.match(key) is not None and self.words.mentions(key) and fmt.looks_like(key)

    def grounded(self, entity: EntityType, args: dict[str, Any]) -> bool:
        """A list/search the task is about: every text value it filters by is named by the task or by an
        earlier answer (a plain list, with no such value, is grounded by the task being there at all)."""
        values = [v for k, v in args.items() if not skipped(k, v) and isinstance(v, str) and not _DAY.match(v)
                  and (k in QUERY_ARGS or k in entity.fields)]
        return all(self.mentions(v) for v in values)

    # --- the scenario ---------------------------------------------------------------------------------
    def populate(self, coll: Collection, scope: str, card: CategoryCard, rng: random.Random) -> bool:
        """Put the scenario's entities of this collection in it, as it is created; False when the scenario
        has none (the card's seeded records are the world then)."""
        mine = [e for e in self.task.scenario.entities if e.app == scope and kind_entity(card, e.kind) is coll.entity]
        if not mine:
            return False
        coll.scenario = True
        for entity in mine:
            given = {k: typed(coll.entity, k, v) for k, v in entity.attributes.items()}
            for name, value in self._links(entity, coll.entity, card).items():
                if name not in given:
                    given[name] = value
                elif isinstance(given[name], list) and value[0] not in given[name]:
                    given[name] = [*given[name], *value]
            key = typed_key(coll, entity.id) if entity.id is not None else _new_key(coll, rng)
            key_field = coll.key_field
            record = {key_field: key, **{k: v for k, v in given.items() if k != key_field}}
            coll.grounded[coll.put(record)] = {*given, key_field}
        return True

    def _links(self, subject: ScenarioEntity, entity: EntityType, card: CategoryCard) -> dict[str, Any]:
        """The linking fields the scenario's relations give an entity (`account_id`, `members: [...]`)."""
        links: dict[str, Any] = {}
        for relation in self.task.scenario.relations:
            if relation.subject != subject.handle:
                continue
            _, kind, key = _split(relation.object)
            other = kind_entity(card, kind)
            name = link_field(entity, relation.relation, other.name if other is not None else singular_word(kind))
            if entity.fields.get(name, "").startswith("list["):
                links.setdefault(name, []).append(key)
            else:
                links.setdefault(name, key)
        return links

    def related(self, scope: str, parent: EntityType, parent_key: str, list_name: str) -> list[dict[str, Any]] | None:
        """The scenario's entities a list nested in a record's answer shows when no card entity holds them
        (a board's `members`): those of the kind the list names linked to the record by a relation or by a
        `<parent>_id` attribute. None when the scenario has no entity of that kind."""
        kind = singular_word(list_name)
        candidates = [e for e in self.task.scenario.entities
                      if e.app == scope and (kind in (e.kind, singular_word(e.kind)) or e.kind.endswith(f"_{kind}"))]
        if not candidates:
            return None
        parents = [e for e in self.task.scenario.entities
                   if e.app == scope and e.id == parent_key and parent.name in (e.kind, singular_word(e.kind))]
        pairs = {(r.subject, r.object) for r in self.task.scenario.relations}
        shown = []
        for entity in candidates:
            linked = any((entity.handle, p.handle) in pairs or (p.handle, entity.handle) in pairs for p in parents)
            if linked or str(entity.attributes.get(f"{parent.name}_id")) == parent_key:
                record = {f"{kind}_id": entity.id, **entity.attributes} if entity.id is not None else dict(entity.attributes)
                for p in parents:
                    for name, value in keyed_facts(p.attributes, str(entity.id)).items():
                        record.setdefault(name, value)
                shown.append(record)
        return shown

    def user_keys(self, scope: str) -> set[str]:
        """The session user's keys on a server, from the scenario's notes ('The user is chat/user/U_0001 on
        chat.')."""
        found = set()
        for note in self.task.scenario.notes:
            match = USER_NOTE.match(note.strip())
            if match is not None and scope in (match.group(1), match.group(4)):
                found.add(match.group(3))
        return found


def keyed_facts(attributes: dict[str, Any], key: str) -> dict[str, Any]:
    """What a record's maps keyed by another record's key say of it, each under the map's singular name: a
    board's `roles: {person_110: admin}` gives member person_110 `role: admin`."""
    return {singular_word(name): value[key] for name, value in attributes.items()
            if isinstance(value, dict) and key in value and isinstance(value[key], str | int | float | bool)}


def kind_entity(card: CategoryCard, kind: str) -> EntityType | None:
    """The card entity a scenario kind names: by name, singular form (`payees`), or `_`-suffix (`cart_item`)."""
    return entity_named(card, kind) or entity_named(card, singular_word(kind))


def link_field(entity: EntityType, relation: str, other: str) -> str:
    """The field of `entity` a relation to an `other` sets: a card field named after the relation or the
    other entity (`account` -> `account_id`), else `<other>_id`."""
    names = [relation, f"{relation}_id", f"{singular_word(relation)}s", f"{other}_id", f"{other}s"]
    found = next((n for n in names if n in entity.fields), None)
    return found or (relation if relation.endswith("_id") else f"{other}_id")


def typed(entity: EntityType, name: str, value: Any) -> Any:
    """A text value in the type the card gives its field (`"true"` for a bool, `"12.50"` for money)."""
    if not isinstance(value, str):
        return value
    kind = entity.fields.get(name, "")
    low = value.strip().lower()
    if kind == "bool" and low in ("true", "false"):
        return low == "true"
    if kind == "int" and re.fullmatch(r"-?\d+", low):
        return int(low)
    if kind in ("float", "money") and re.fullmatch(r"-?\d+(\.\d+)?", low):
        return float(low)
    return value


def _split(handle: str) -> tuple[str, str, str]:
    app, _, rest = handle.partition("/")
    kind, _, key = rest.partition("/")
    return app, kind, key


def _new_key(coll: Collection, rng: random.Random) -> Any:
    return coll.new_key(rng) if coll.key_field == "id" else coll.natural_key(rng)


def _same(have: Any, want: Any) -> bool:
    return str(have).strip().lower() == str(want).strip().lower()


# --- the world's side: grounded reads and searches find something ------------------------------------
def materialize(coll: Collection, key: str, rng: random.Random) -> dict[str, Any] | None:
    """The record for an id the task names, made on first use; None for an id the task does not name, and
    in a collection the scenario describes (its entities are all there is)."""
    if coll.ground is None or coll.scenario or not coll.ground.knows(coll.entity, coll.fmt, key):
        return None
    stored = coll.put(new_record(coll, rng, {coll.key_field: typed_key(coll, key)}))
    coll.grounded[stored] = {coll.key_field}
    return coll.records[stored]


def grounded_matches(coll: Collection, args: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """For a grounded list/search that found nothing: a task entity nobody has seen yet, adapted to the
    filters where the task did not fix its fields, else one new record that matches them. Nothing in a
    collection the scenario describes: a live app finds nothing there either."""
    if coll.ground is None or coll.scenario or not coll.ground.grounded(coll.entity, args):
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
    if coll.ground is None or coll.scenario or name_field is None or not query or not re.fullmatch(r"[A-Z][\w'-]+", query.strip()):
        return
    known = {str(r.get(name_field)).lower() for r in coll.records.values()}
    for name in coll.ground.words.full_names(query.strip()):
        if name.lower() not in known:
            made = matching_email(coll.entity, new_record(coll, rng, {name_field: name}))
            coll.grounded[coll.put(made)] = {name_field}


def typed_key(coll: Collection, key: str) -> Any:
    numeric = coll.entity.fields.get(coll.key_field) == "int" or (coll.key_field == "id" and coll.fmt.numeric)
    return int(key) if numeric and key.isdigit() else key
