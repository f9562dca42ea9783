"""A record a call just made looks new: stamped now, in its first state, not yet archived or starred.

Generated values suit records that already existed (any status, any age); a create's answer needs the
values of a new thing. The tool's name also says what kind of thing it made (`book_flight` makes a
booking of kind `flight`). Arguments fill the record's fields under the card's names (`traveller_ids`
-> `travellers`), and a create that names a record of its own kind starts from it (`send_draft` sends
what the draft holds).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from cworld.engine.cards.card import EntityType
from cworld.engine.cards.operations import singular_word

_MADE = re.compile(r"creat|booked|placed|sent|updat|submitted|added|joined|modified|requested|ordered|opened")
_STATE = re.compile(r"(^|_)(status|state)$")
_VERSION = re.compile(r"version|revision")


def freshen(record: dict[str, Any], entity: EntityType, given: set[str], words: set[str], now: datetime) -> None:
    """Set the fields a call did not give to what a new record has."""
    for field, kind in entity.fields.items():
        if field in given or field == entity.key_field:
            continue
        if kind.startswith("enum["):
            options = [o.strip() for o in kind[5:-1].split(",")]
            named = next((o for o in options if o in words or singular_word(o) in words), None)
            if named is not None:
                record[field] = named
            elif _STATE.search(field):
                record[field] = options[0]  # cards list a state machine's first state first
        elif kind == "bool":
            record[field] = False
        elif kind.startswith("list["):
            record[field] = []  # a new card has no labels yet, a new draft no cc
        elif kind in ("datetime", "date") and _MADE.search(field):
            record[field] = now.date().isoformat() if kind == "date" else now.isoformat()
        elif kind == "int" and _VERSION.search(field):
            record[field] = 1


def fresh_default(prop: str, schema_types: set[str], now: datetime) -> Any:
    """An answer's field the world does not hold, for a record made just now; None when no rule applies."""
    if schema_types == {"boolean"}:
        return False
    if schema_types == {"array"}:
        return []
    if "integer" in schema_types and _VERSION.search(prop):
        return 1
    if "string" in schema_types and _MADE.search(prop) and re.search(r"(_at|date|time)$", prop):
        return now.isoformat()
    return None


def as_fields(entity: EntityType, given: dict[str, Any]) -> dict[str, Any]:
    """Arguments under the card's field names: `traveller_ids` fills `travellers`, `labels_list`... only
    where the card has no field of the argument's own name."""
    out = dict(given)
    for name, value in given.items():
        match = re.fullmatch(r"(.+?)_ids", name)
        plural = f"{match.group(1)}s" if match else None
        if plural and name not in entity.fields and plural in entity.fields and plural not in given:
            out[plural] = value
    return out


def source_record(records: dict[str, dict[str, Any]], args: dict[str, Any], key_field: str) -> dict[str, Any] | None:
    """A record of this collection that a create names by another id (`send_draft(draft_id=...)`)."""
    for name, value in args.items():
        if name != key_field and re.search(r"(^|_)id$", name) and isinstance(value, str) and value in records:
            return records[value]
    return None
