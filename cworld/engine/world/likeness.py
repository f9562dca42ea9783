"""A record the session writes looks like the scenario's records of its collection.

The card names an entity's fields in its own words (`author: name`); the scenario's entities are the
service's records as they are (`author: U_0018`, `deleted: false`, `from: {name, email}`). When a task's
scenario describes a collection, its records are the service's vocabulary, so what a write puts there
follows them (the end state a grader reads is then the one the service would hold):

- values typed like the existing records' values of the field: a time in their format
  (`2026-03-22T12:00` -> `2026-03-22T12:00:00Z`), a number as a number, recipients as the records do
  (an address or a contact id -> `{name, email}`, an address -> the id of the record that holds it);
- an argument under a name the records do not use moves to the unset field whose values have its id
  form (`channel_id: C_0005` -> `conversation_id`);
- an unset field whose values are the session user's id form (`author`, `owner`) is the user: a record
  the session makes is the user's own (the scenario's notes say who the user is);
- any other unset field the records share takes their common empty value (`thread_parent: null`,
  `deleted: false`, `reactions: {}`): a new thing has no parent, no reactions yet.

Only public task data is read (the scenario's entities and notes), never a sandbox or ground truth.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cworld.engine.world.state import Collection

_ID_FORM = re.compile(r"^([A-Za-z][A-Za-z0-9]*[_-])\d+$")
#: "The user is chat/user/U_0001 on chat.": (app, kind, key, server) of the session user on a server.
USER_NOTE = re.compile(r"^The user is (\S+?)/(\S+?)/(\S+) on (\S+?)\.?$")
_FACTS_NOTE = re.compile(r"^(\S+) (\w+): (.+)$")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")


def vocabulary(coll: Collection) -> dict[str, list[Any]]:
    """Field -> its values among the scenario's records of this collection ({} when it has none)."""
    if not coll.scenario:
        return {}
    out: dict[str, list[Any]] = {}
    for key in coll.grounded:
        record = coll.records.get(key)
        for name, value in (record or {}).items():
            out.setdefault(name, []).append(value)
    return out


def conform_new(coll: Collection, record: dict[str, Any], given: set[str]) -> None:
    """Make a record the session just created look like the scenario's records (see the module doc)."""
    vocab = vocabulary(coll)
    if not vocab:
        return
    record.update(conform_values(coll, {k: v for k, v in record.items() if k in given}, vocab))
    unset = [f for f in vocab if f not in given and f != coll.key_field]
    mine = _user_values(coll, record, unset, vocab)
    moved = _moved(record, given, [f for f in unset if f not in mine], vocab)
    for name in unset:
        if name in mine or name in moved:
            continue
        empty = _common_empty(vocab[name])
        if empty is not _NONE:
            record[name] = copy.deepcopy(empty)


def conform_values(coll: Collection, values: dict[str, Any], vocab: dict[str, list[Any]] | None = None) -> dict[str, Any]:
    """Written values typed like the scenario's values of their fields; fields it does not show keep theirs."""
    vocab = vocabulary(coll) if vocab is None else vocab
    if not vocab:
        return values
    return {name: _like(coll, value, vocab[name]) if vocab.get(name) else value for name, value in values.items()}


# --- values ------------------------------------------------------------------------------------------
def _like(coll: Collection, value: Any, samples: list[Any]) -> Any:
    sample = next((s for s in samples if s is not None), None)
    if sample is None:
        return value
    if isinstance(value, str) and isinstance(sample, str) and _TIME.match(sample) and _TIME.match(value):
        return _time_like(value, sample)
    if isinstance(value, str) and _NUMBER.match(value.strip()) and all(
            isinstance(s, int | float) and not isinstance(s, bool) for s in samples if s is not None):
        number = float(value)
        return int(number) if all(isinstance(s, int) for s in samples if s is not None) and number.is_integer() else number
    if isinstance(value, list) and isinstance(sample, list):
        item = next((i for s in samples if isinstance(s, list) for i in s), None)
        return [_person_like(coll, v, item) for v in value] if item is not None else value
    return _person_like(coll, value, sample)


def _person_like(coll: Collection, value: Any, sample: Any) -> Any:
    """A person as the records hold one: `{name, email}` from an address or an id, or an id from an address."""
    if not isinstance(value, str):
        return value
    if isinstance(sample, dict) and "email" in sample:
        peer = _peer(coll, value)
        if peer is not None:
            return {k: peer[k] for k in sample if k in peer} or value
        return {"name": "", "email": value} if _EMAIL.match(value) and set(sample) <= {"name", "email"} else value
    if isinstance(sample, str) and _EMAIL.match(value) and not _EMAIL.match(sample):
        form = _id_form(sample)
        peer = _peer(coll, value)
        key = _key_of(peer, form) if peer is not None else None
        return key if key is not None else value
    return value


def _time_like(value: str, sample: str) -> str:
    """`value` written the way `sample` writes a time (a `Z` or an offset, seconds or not)."""
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value
    when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    zulu = sample.endswith("Z")
    if zulu:
        when = when.astimezone(UTC)
    seconds = len(sample) >= 19 and sample[16] == ":"
    text = when.strftime("%Y-%m-%dT%H:%M:%S" if seconds else "%Y-%m-%dT%H:%M")
    if zulu:
        return text + "Z"
    offset = re.search(r"([+-]\d{2}:\d{2})$", sample)
    return text + when.strftime("%z")[:3] + ":" + when.strftime("%z")[3:] if offset else text


_NONE = object()


def _common_empty(values: list[Any]) -> Any:
    """The value most of the records share when it is an empty one (None, False, 0, "", [], {})."""
    counts = Counter(json.dumps(v, sort_keys=True, default=str) for v in values)
    text, count = counts.most_common(1)[0]
    value = json.loads(text)
    empty = value is None or value is False or value in ("", [], {}) or (value == 0 and not isinstance(value, bool))
    return value if empty and 2 * count >= len(values) else _NONE


# --- the session user ---------------------------------------------------------------------------------
def _user_values(coll: Collection, record: dict[str, Any], unset: list[str], vocab: dict[str, list[Any]]) -> set[str]:
    """Set the unset fields that name a person in the user's id form (or as `{name, email}`) to the user."""
    me = session_user(coll)
    done = set()
    for name in unset:
        values = [v for v in vocab[name] if v is not None]
        forms = {_id_form(v) if isinstance(v, str) else None for v in values}
        if len(forms) == 1 and (form := forms.pop()) is not None and form in me["ids"]:
            record[name] = me["ids"][form]
            done.add(name)
        elif values and all(isinstance(v, dict) and set(v) == {"name", "email"} for v in values) and me.get("email"):
            record[name] = {"name": me.get("name", ""), "email": me["email"]}
            done.add(name)
    return done


def session_user(coll: Collection) -> dict[str, Any]:
    """Who the session's user is, from the scenario's notes: their ids by form (`U_` -> `U_0001`), name, email."""
    ground = coll.ground
    me: dict[str, Any] = {"ids": {}}
    if ground is None:
        return me
    scenario = ground.task.scenario
    by_handle = {e.handle: e for e in scenario.entities}
    for note in scenario.notes:
        match = USER_NOTE.match(note.strip())
        if match is not None:
            key = match.group(3)
            form = _id_form(key)
            if form is not None:
                me["ids"].setdefault(form, key)
            entity = by_handle.get(f"{match.group(1)}/{match.group(2)}/{key}")
            for field in ("name", "email"):
                if entity is not None and isinstance(entity.attributes.get(field), str):
                    me.setdefault(field, entity.attributes[field])
            continue
        facts = _FACTS_NOTE.match(note.strip())
        if facts is not None:
            pairs = dict(p.strip().split(" ", 1) for p in facts.group(3).split(", ") if " " in p.strip())
            if "email" in pairs and _EMAIL.match(pairs["email"]):
                me["email"] = pairs["email"]
                me["name"] = pairs.get("name", me.get("name", ""))
    return me


# --- arguments under other names ------------------------------------------------------------------------
def _moved(record: dict[str, Any], given: set[str], unset: list[str], vocab: dict[str, list[Any]]) -> set[str]:
    """Given values under names the records do not use go to the unset field of their id form."""
    moved: set[str] = set()
    for name in sorted(given):
        value = record.get(name)
        form = _id_form(value) if isinstance(value, str) and name not in vocab else None
        if form is None:
            continue
        target = next((f for f in unset if f not in moved
                       and form in {_id_form(v) for v in vocab[f] if isinstance(v, str)}), None)
        if target is not None:
            record[target] = value
            moved.add(target)
    return moved


# --- helpers ----------------------------------------------------------------------------------------------
def _id_form(value: str) -> str | None:
    match = _ID_FORM.match(value.strip())
    return match.group(1) if match else None


def _peer(coll: Collection, value: str) -> dict[str, Any] | None:
    """A record of the same server and card keyed by `value` or holding it as its email."""
    records: Iterable[dict[str, Any]] = coll.peers() if coll.peers is not None else coll.records.values()
    low = value.strip().lower()
    found = None
    for record in records:
        if any(str(record.get(k, "")).lower() == low for k in ("id", "email") if k in record):
            found = record
            if str(record.get("id", "")).lower() == low or "name" in record:
                break
    return found


def _key_of(record: dict[str, Any], form: str | None) -> str | None:
    key = record.get("id")
    return str(key) if isinstance(key, str) and (form is None or _id_form(key) == form) else None
