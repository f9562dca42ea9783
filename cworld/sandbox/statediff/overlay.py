"""A synthesized episode's end state: the sandbox's initial state with the World Engine's changes applied.

A synthesized world is not the sandbox: it starts from card-seeded and task-grounded records, never from
the sandbox's seeded state (the engine must not read it). What it can report is what the episode's writes
did, as a change set in the sandbox's state schema (`_changes` marks it; `controller/backends/endstate.py`
makes it):

    {"_changes": true, "mail": {"messages": {"mail_0009": {...}, "mail_0003": {...}, "mail_0005": null}},
     "_written": {"mail": {"messages": {"mail_0003": ["folder"]}}}}

The grader rebuilds the state the episode would have ended in from the task's initial state:

- a record `_written` names is updated: the fields the writes set are merged onto the initial record
  (those the collection's records use); when the initial collection lacks it, it is added like a new one;
- any other record is new: added with the fields the collection's records use (all it gives when the
  collection starts empty), so fields only the engine's card knows (`snippet`) are not charged as damage.
  The engine numbers its records on its own, so a new record may carry an id the initial state already
  uses: it gets the next free id of the same form (`mail_0010` -> `mail_0020`), and the state diff pairs
  it with the expected new record by content, as it does for live runs (`ids.py`);
- None removes the record.

Collections that hold records under `items` (the shop's `cart`) are overlaid there. Keys starting with `_`
are bookkeeping, never state. The inputs are not modified. `actual_state` copies only what the change set
touches (the grader's initial state is cached and shared; a deep copy of it per episode was a large part of
a submit's cost): its result shares everything else with `initial` and is read-only.
"""

from __future__ import annotations

import copy
import re
from typing import Any

_NUMBERED = re.compile(r"^(.*?)(\d+)$")

CHANGES_KEY = "_changes"
WRITTEN_KEY = "_written"


def is_change_set(state: dict[str, Any]) -> bool:
    return state.get(CHANGES_KEY) is True


def actual_state(initial: dict[str, Any], end_state: dict[str, Any]) -> dict[str, Any]:
    """The state an episode ended in: its end state, or the initial state with its change set applied;
    bookkeeping keys dropped either way."""
    state = apply_changes(initial, end_state, share=True) if is_change_set(end_state) else end_state
    return {k: v for k, v in state.items() if not k.startswith("_")}


def apply_changes(initial: dict[str, Any], changes: dict[str, Any], *, share: bool = False) -> dict[str, Any]:
    """`initial` with the change set applied: a deep copy, or with `share` a copy of only the apps,
    collections and records the changes touch (the rest is `initial`'s own objects: read the result only)."""
    out = dict(initial) if share else copy.deepcopy(initial)
    written = changes.get(WRITTEN_KEY) or {}
    for app, collections in changes.items():
        if app.startswith("_") or not isinstance(collections, dict):
            continue
        state = out.setdefault(app, {})
        if share and isinstance(state, dict):
            state = out[app] = dict(state)
        for name, records in collections.items():
            if not isinstance(records, dict):
                continue
            collection = state.setdefault(name, {})
            if share:
                collection = state[name] = _shallow(collection)
            target = _records_of(collection)
            if target is not None:
                _overlay(target, records, written.get(app, {}).get(name, {}))
    return out


def _shallow(collection: Any) -> Any:
    """A collection's own copy, down to the dict of records `_records_of` gives (records stay shared)."""
    if not isinstance(collection, dict):
        return collection
    out = dict(collection)
    items = out.get("items")
    if isinstance(items, dict) and _records_of(out) is items:
        out["items"] = dict(items)
    return out


def _records_of(collection: Any) -> dict[str, Any] | None:
    """The dict of records a collection holds: itself, or its `items` (a cart: items and a coupon)."""
    if not isinstance(collection, dict):
        return None
    if all(isinstance(v, dict) for v in collection.values()):
        return collection
    items = collection.get("items")
    return items if isinstance(items, dict) and all(isinstance(v, dict) for v in items.values()) else None


def _overlay(target: dict[str, Any], records: dict[str, Any], written: dict[str, list[str]]) -> None:
    known = {f for record in target.values() for f in record}
    taken = set(target) | set(records)
    for key, record in records.items():
        if record is None:
            target.pop(key, None)
        elif not isinstance(record, dict):
            continue
        elif key in written and key in target:
            fields = set(written[key]) & known
            target[key] = {**target[key], **{f: copy.deepcopy(v) for f, v in record.items() if f in fields}}
        else:
            new_key = key if key not in target else _free_key(key, taken)
            taken.add(new_key)
            made = {f: copy.deepcopy(v) for f, v in record.items() if not f.startswith("_") and (not known or f in known)}
            target[new_key] = {f: new_key if v == key and f in ("id", "key") else v for f, v in made.items()}


def _free_key(key: str, taken: set[str]) -> str:
    """The next id of `key`'s form (prefix and digit count) above every taken one: `mail_0010` -> `mail_0020`."""
    match = _NUMBERED.match(key)
    if match is None:
        n, candidate = 1, f"{key}-1"
        while candidate in taken:
            n, candidate = n + 1, f"{key}-{n + 1}"
        return candidate
    prefix, digits = match.groups()
    used = [int(m.group(2)) for k in taken if (m := _NUMBERED.match(k)) and m.group(1) == prefix]
    return f"{prefix}{max(used, default=0) + 1:0{len(digits)}d}"
