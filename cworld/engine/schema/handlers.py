"""What each kind of operation does to a collection of the simulated world: list, get, create, ...

Handlers are small and generic; the card decides the entity, its key and its messages. Batch calls are
understood (a create with a list of objects, a get/delete with a list of keys), because real tools use
them (the memory server's create_entities, the file system's read_multiple_files).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from cworld.engine.cards.card import CategoryCard
from cworld.engine.schema.rules import refused_use
from cworld.engine.world.filters import PAGE_ARGS, matches, query_of
from cworld.engine.world.fresh import as_fields, source_record
from cworld.engine.world.grounding import grounded_matches, materialize, namesakes
from cworld.engine.world.likeness import conform_values
from cworld.engine.world.state import Collection, Outcome, id_keys, new_record

RENAME_ARGS = ("destination", "new_path", "new_name", "to_path")
SOURCE_ARGS = ("source", "src", "from_path", "old_path")
Handler = Callable[[Collection, CategoryCard, dict[str, Any], random.Random], Outcome]


#: Arguments that prove the caller knows a record's secret (a document's password, a card's PIN).
SECRET_ARGS = ("password", "passcode", "pin", "secret")
#: Operations a locked record refuses (listing and searching still show it).
LOCKED_OPS = ("get", "update", "action", "delete")


def apply(coll: Collection, card: CategoryCard, op: str, args: dict[str, Any], rng: random.Random) -> Outcome:
    refused = guard(coll, card, op, args) or refused_use(coll, card, op, args)
    return refused if refused is not None else _HANDLERS.get(op, _action)(coll, card, args, rng)


def guard(coll: Collection, card: CategoryCard, op: str, args: dict[str, Any]) -> Outcome | None:
    """What a record's own state forbids before any handler runs: a secret argument that differs from the
    record's (`auth`), and any read or change of a record whose `locked` is true until the call that gives
    its secret unlocks it (the card's `business` failure), when the task's scenario says it is locked.
    None when the call may go on."""
    if op not in LOCKED_OPS or find_keys(coll, args) is not None:
        return None
    key = find_key(coll, args)
    record = coll.records.get(key) if key is not None else None
    if record is None:
        return None
    secrets = [name for name in SECRET_ARGS if name in args and record.get(name) is not None]
    if any(str(args[name]) != str(record[name]) for name in secrets):
        return failure(card, coll, key or "", "auth", "auth: wrong {field} for {entity} '{id}'", secrets[0])
    if not is_locked(record) or "locked" not in coll.grounded.get(str(key), ()):
        return None  # only a lock the task states blocks: a made-up flag would lock a record for good
    if secrets:
        unlock(record)
        return None
    return failure(card, coll, key or "", "business", "business: {entity} '{id}' is locked; unlock it first", "locked")


def is_locked(record: dict[str, Any]) -> bool:
    """Locked and not unlocked for the session (an app may keep the lock and mark it opened)."""
    return record.get("locked") is True and record.get("unlocked") is not True


def unlock(record: dict[str, Any]) -> None:
    if "unlocked" in record:
        record["unlocked"] = True
    else:
        record["locked"] = False


def failure(card: CategoryCard, coll: Collection, key: str, error_class: str, default: str, field: str) -> Outcome:
    """The card's failure of a class, filled in for this record (`default` when the card has none)."""
    mode = card.failure(error_class)
    return Outcome.failed(error_class, mode.message if mode else default, entity=coll.entity.name, key=key, field=field)


# --- finding the record a call is about ------------------------------------------------------------
def find_key(coll: Collection, args: dict[str, Any]) -> str | None:
    """The key the call names: under a key name (`message_id`, `path`, `issue_number`), else any string
    argument in the id format, else any string argument that is an existing key."""
    entity = coll.entity
    for name in (*id_keys(entity), entity.name, *SOURCE_ARGS):
        value = args.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    pattern = coll.fmt.regex() if entity.key_field == "id" else None
    for value in args.values():
        if isinstance(value, str) and (value in coll.records or (pattern is not None and pattern.match(value))):
            return value
    return None


def find_keys(coll: Collection, args: dict[str, Any]) -> list[str] | None:
    """Keys of a batch call (`message_ids`, `paths`, `names`, `entityNames`), or None."""
    entity = coll.entity
    names = (f"{entity.name}_ids", f"{entity.key_field}s", "ids", f"{entity.name}Names", f"{entity.name}_names")
    for name in names:
        value = args.get(name)
        if isinstance(value, list) and value and all(isinstance(v, str | int) for v in value):
            return [str(v) for v in value]
    return None


def _explicit_id(args: dict[str, Any]) -> str | None:
    """An id the call names under another name (`draft_id` for a message): it must exist to be changed."""
    for name, value in args.items():
        if re.search(r"(^|_)id$", name) and isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
    return None


def not_found(card: CategoryCard, coll: Collection, key: str) -> Outcome:
    return failure(card, coll, key, "not_found", "No {entity} with id '{id}'.", coll.key_field)


def _record_fields(coll: Collection, args: dict[str, Any]) -> dict[str, Any]:
    """Arguments that describe the record (paging, the record's own id and nested batches left out)."""
    skip = set(PAGE_ARGS) | {k for k in id_keys(coll.entity) if k != coll.key_field} | set(RENAME_ARGS)
    return {k: v for k, v in args.items() if k not in skip and v is not None and not _is_batch(v)}


def _is_batch(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def _lookup(coll: Collection, key: str, rng: random.Random) -> dict[str, Any] | None:
    """The record for a key; in an open world (time zones, web pages) an unknown key is made up on read,
    and so is an id the session's task names (grounding); any other unknown key is not found."""
    if key in coll.records:
        return coll.records[key]
    if not coll.entity.open_world:
        return materialize(coll, key, rng)
    given = {coll.key_field: int(key) if key.isdigit() and coll.key_field != "id" else key}
    coll.put(new_record(coll, rng, given))
    return coll.records[key]


# --- reading -----------------------------------------------------------------------------------------
def _page(items: list[dict[str, Any]], args: dict[str, Any]) -> dict[str, Any]:
    size = next((args[k] for k in ("page_size", "per_page", "limit", "max_results", "count", "max_count")
                 if isinstance(args.get(k), int) and not isinstance(args.get(k), bool)), 20)
    size = max(1, min(int(size), 100))
    page: int = args["page"] if isinstance(args.get("page"), int) and args["page"] > 0 else 1
    start = args["offset"] if isinstance(args.get("offset"), int) and args["offset"] >= 0 else (page - 1) * size
    chunk = [dict(r) for r in items[start : start + size]]
    return {"items": chunk, "total": len(items), "page": page, "page_size": size, "has_more": start + size < len(items)}


def _list(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    namesakes(coll, args, rng)
    items = [r for r in reversed(coll.records.values()) if matches(r, args)]  # newest first
    query = query_of(args)
    if not items and query and coll.entity.open_world:
        items = _made_up_matches(coll, query, rng)
    elif not items:
        items = grounded_matches(coll, args, rng)
    return Outcome(payload=_page(items, args), many=True)


def _made_up_matches(coll: Collection, query: str, rng: random.Random) -> list[dict[str, Any]]:
    """An open world always has something on the query: a few records that mention it."""
    text_fields = [f for f, kind in coll.entity.fields.items() if kind in ("title", "text", "string", "name")]
    made = []
    topic = query.strip().capitalize()
    for _ in range(3):
        record = new_record(coll, rng)
        for position, name in enumerate(text_fields[:2]):
            record[name] = f"{topic} - {record[name]}" if position == 0 else f"{topic}: {record[name]}"
        coll.put(record)
        made.append(record)
    return made


def _get(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    keys = find_keys(coll, args)
    if keys is not None:
        found = [r for r in (_lookup(coll, k, rng) for k in keys) if r is not None]
        return Outcome(payload={"items": [dict(r) for r in found], "total": len(found)}, many=True)
    key = find_key(coll, args)
    if key is None:
        listed = _list(coll, card, args, rng)
        listed.payload = {**_echo(args), **listed.payload}
        return listed
    record = _lookup(coll, key, rng)
    return Outcome(payload=dict(record)) if record is not None else not_found(card, coll, key)


def _echo(args: dict[str, Any]) -> dict[str, Any]:
    """A stateless computation's inputs, which its answer usually repeats (value, from_unit, to_unit)."""
    return {k: v for k, v in args.items() if k not in PAGE_ARGS and not isinstance(v, dict)}


# --- writing -----------------------------------------------------------------------------------------
def _membership(coll: Collection, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """`add_to_watchlist(watchlist_id, symbol)`: an existing record (by one of its id names) and values for
    its list fields (`symbol` -> `symbols`): the call adds or removes members, not a record."""
    key = next((str(args[k]) for k in id_keys(coll.entity) if k != coll.key_field and str(args.get(k)) in coll.records), None)
    lists = {f"{k}s": v for k, v in args.items()
             if coll.entity.fields.get(f"{k}s", "").startswith("list[") and isinstance(v, str | int)}
    return (key, lists) if key is not None and lists else None


def _create(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    joined = _membership(coll, args)
    if joined is not None:
        record = coll.records[joined[0]]
        for field, value in joined[1].items():
            members = record.setdefault(field, [])
            if value not in members:
                members.append(value)
        return Outcome(payload=dict(record))
    batch = next((v for v in args.values() if _is_batch(v)), None)
    if batch is not None:
        made = [_create_one(coll, {**_record_fields(coll, args), **item}, rng) for item in batch]
        return Outcome(payload={"items": made, "total": len(made)}, many=True)
    given = as_fields(coll.entity, _record_fields(coll, args))
    source = source_record(coll.records, args, coll.key_field) if coll.key_field == "id" else None
    if source is not None:  # made from another record of its kind: a sent draft, a reply, a copy
        given = {**{k: v for k, v in source.items() if k != coll.key_field}, **given}
    named = find_key(coll, args) if coll.key_field != "id" else None
    if named is not None and coll.key_field not in given:
        given[coll.key_field] = int(named) if coll.entity.fields.get(coll.key_field) == "int" and named.isdigit() else named
    return Outcome(payload=_create_one(coll, given, rng))


def _create_one(coll: Collection, given: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A new record; a natural key that exists already (a path written twice) updates that record."""
    key = given.get(coll.key_field) if coll.key_field != "id" else None
    if key is not None and str(key) in coll.records:
        coll.records[str(key)].update(conform_values(coll, given))
        return dict(coll.records[str(key)])
    record = new_record(coll, rng, {k: v for k, v in given.items() if k != "id"})
    coll.put(record)
    return dict(record)


def _update(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    """A change to the named record; with no key named (set_status, git_reset), to the current one."""
    key = find_key(coll, args) or _explicit_id(args)
    if key is None and coll.records:
        key = next(iter(coll.records))
    record = _lookup(coll, key, rng) if key is not None else None
    if key is None or record is None:
        return not_found(card, coll, key or "?")
    record.update(conform_values(coll, _record_fields(coll, {k: v for k, v in args.items() if k != coll.key_field})))
    target = next((args[k] for k in RENAME_ARGS if isinstance(args.get(k), str)), None)
    if target and coll.key_field != "id" and target not in coll.records:
        del coll.records[key]
        record[coll.key_field] = target
        coll.put(record)
    return Outcome(payload={**dict(record), "previous": key} if target else dict(record))


def _delete(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    batch = next((v for v in args.values() if _is_batch(v)), None)
    keys = find_keys(coll, args) if batch is None else [k for k in (find_key(coll, i) for i in batch) if k]
    if keys is not None:
        gone = [coll.records.pop(k) for k in keys if k in coll.records]
        return Outcome(payload=_deleted(coll, gone[0] if gone else {}, len(gone)))
    left = _membership(coll, args)
    if left is not None:
        return _leave(card, coll, *left)
    key = find_key(coll, args)
    if key is None and not _names_a_record(coll, args):
        return _action(coll, card, args, rng)  # `remove_coupon()`: the session's one coupon, not a record
    if key is None or _lookup(coll, key, rng) is None:
        return not_found(card, coll, key or "?")
    return Outcome(payload=_deleted(coll, coll.records.pop(key), 1))


def _leave(card: CategoryCard, coll: Collection, key: str, members: dict[str, Any]) -> Outcome:
    record = coll.records[key]
    for field, value in members.items():
        if value not in (record.get(field) or []):
            label = coll.entity.name.replace("_", " ")
            return Outcome(error_class="not_found", message=f"not_found: {value} is not on {label} {key}")
        record[field].remove(value)
    return Outcome(payload=dict(record))


def _names_a_record(coll: Collection, args: dict[str, Any]) -> bool:
    """Whether any argument could name a record (an id, a key, a path, a name), known or not."""
    names = {*id_keys(coll.entity), coll.entity.name, *SOURCE_ARGS}
    return any(k in names or re.search(r"(^|_)(ids?|names?|paths?|keys?)$", k) for k in args)


def _deleted(coll: Collection, record: dict[str, Any], count: int) -> dict[str, Any]:
    label = coll.entity.name.replace("_", " ")
    return {**record, "deleted": True, "ok": True, "success": True, "status": "deleted", "count": count,
            "message": f"{count} {label}(s) deleted successfully"}


def _action(coll: Collection, card: CategoryCard, args: dict[str, Any], rng: random.Random) -> Outcome:
    key = find_key(coll, args)
    if key is not None:
        record = _lookup(coll, key, rng)
        if record is None:
            return not_found(card, coll, key)
        fields = {k: v for k, v in _record_fields(coll, args).items() if k in record and k != coll.key_field}
        record.update(conform_values(coll, fields))
        return Outcome(payload={**dict(record), "ok": True, "success": True, "status": "completed"})
    return Outcome(payload={**_echo(args), "ok": True, "success": True, "status": "completed"})


_HANDLERS: dict[str, Handler] = {
    "list": _list, "search": _list, "get": _get, "create": _create, "update": _update, "delete": _delete,
}
