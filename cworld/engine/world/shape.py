"""A record a call makes takes the shape its kind's records have in the world.

A rule says what a create stores in the card's terms: the arguments, a contact's id for a recipient, no
sender. A service stores its own shape: every field its records hold (an unset phone is `""`, no cc is
`[]`), a recipient as the contact's `{name, email}`, the signed-in account as the sender. The world the
engine runs on shows that shape, so a made record is fitted to the kind's existing records here, once, for
every rule (family, inferred, per-tool): what the world shows, never what one service's code says.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any

from cworld.values import iso, parse_time

#: How many of a collection's records show its shape (creates are rare; a sample is enough).
SAMPLE = 20
#: Fields a service fills with who made the record: the signed-in user, shaped as the field's values are.
CREATOR_FIELDS = ("from", "sender", "author", "organizer", "owner", "created_by", "creator", "from_id", "sender_id",
                  "author_id", "organizer_id", "owner_id", "created_by_id", "creator_id")
#: A record's fields that map people to their role on it (`access: {person_057: editor}`).
ROLE_MAPS = ("access", "permissions", "roles", "acl", "sharing", "collaborators")
#: The role of whoever made a record, where every record's role map names one.
OWNER_ROLES = ("owner", "admin", "creator")
#: Fields the service stamps when a record is made or saved, whatever a call says: a made record's is now.
STAMPED = re.compile(r"^(created|creation|modified|updated|last_modified|last_updated|date_created|date_modified|"
                     r"created_(at|on|date|time)|updated_(at|on)|modified_(at|on))$", re.IGNORECASE)
_MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$")
#: Top-level names under which a world keeps the signed-in account as a record of its own.
ACCOUNT_NAMES = ("me", "account", "user", "current_user", "profile", "whoami", "self")


def world_shaped(record: dict[str, Any], key: str, records: dict[str, Any], state: dict[str, Any],
                 now: str) -> dict[str, Any]:
    """`record` (to be stored under `key`) with the fields every sampled record of `records` holds: its own key
    where they hold theirs, a reference given as an id stored as the records store it, a creator field naming
    the signed-in user, a history holding the record as its first version (saved `now`), and any other field the
    call left out empty in the kind's own way. Unchanged where the world holds no record of the kind."""
    sample = _sample(records)
    if not sample:
        return record
    # an option the call left out that no record of the kind holds is not stored (a channel post's `thread_id`
    # where messages keep no such field)
    shaped = {f: v for f, v in _renamed(record, sample, state).items() if v is not None or any(f in r for r in sample)}
    own = self_key_field(records)
    if own is not None and shaped.get(own) in (None, ""):
        shaped[own] = key
    for field in _shared_fields(sample):
        filled = _filled(field, shaped, [r[field] for r in sample], state, now)
        if filled is not _LEAVE:
            shaped[field] = filled
    return shaped


def now_as_examples(now: str, examples: list[Any]) -> str | None:
    """`now` as the kind's records write the moment they were made (`2026-03-02` or a full timestamp); None
    where they hold no moment there."""
    stamps = [e for e in examples if isinstance(e, str) and _MOMENT.match(e)]
    if not stamps or len(stamps) < len([e for e in examples if e is not None]):
        return None
    return now[:10] if all(len(e) == 10 for e in stamps) else now


_LEAVE = object()


def _filled(field: str, shaped: dict[str, Any], examples: list[Any], state: dict[str, Any], now: str) -> Any:
    """The value `field` of the made record takes, as `examples` (the kind's records' values) show it; `_LEAVE`
    where nothing says (a creator field in a world that keeps no signed-in user)."""
    stamp = now_as_examples(now, examples) if STAMPED.search(field) else None
    if stamp is not None:  # the service stamps it, whatever the call or the answer's shaping said
        return stamp
    value = shaped.get(field)
    if field in HISTORY_FIELDS and not value and all(isinstance(e, list) and e and isinstance(e[-1], dict)
                                                     for e in examples):
        user = signed_in(state)  # a record made is its first version, kept as the others keep theirs
        return history_after(examples[0][:1], {**shaped, "version": shaped.get("version") or 1},
                             user and user[0], now)[1:]
    if field in ROLE_MAPS and not value and _owned(examples):
        user = signed_in(state)
        return {user[0]: _owned(examples)} if user is not None and user[0] is not None else _LEAVE
    if value is not None:
        return _as_examples(value, examples, state)
    if field in CREATOR_FIELDS:
        user = signed_in(state)
        made = None if user is None else _shaped_like(user[0], user[1], examples)
        return _LEAVE if made is None else made
    return None if None in examples else _blank(examples)  # where a record holds null there, unset is null


def _sample(records: Any) -> list[dict[str, Any]]:
    """The first records of a collection, which show its shape (none where it is no collection)."""
    return [r for r in islice(records.values(), SAMPLE) if isinstance(r, dict)] if isinstance(records, dict) else []


def held_only(records: Any, record: dict[str, Any]) -> dict[str, Any]:
    """`record` with only the fields the collection's records hold (all of `record` where it holds none yet): a
    family written for several layouts stores what this world's records keep (`parent` or `path`)."""
    held = {f for r in _sample(records) for f in r}
    return {f: v for f, v in record.items() if f in held} if held else dict(record)


def user_id(user: Any) -> Any:
    """A user's id, whether the world keeps the user as an id (`me: "u_1"`) or as a record (`{"id": "u_1", ...}`)."""
    return user.get("id") if isinstance(user, dict) else user


def is_signed_in(value: Any, state: dict[str, Any]) -> bool:
    """Whether `value` (a key, an email, or a record with either) names the signed-in user."""
    user = signed_in(state)
    if user is None or value is None:
        return False
    key, record = user
    names = {key, record.get("id"), record.get("email")} - {None}
    given = {value.get("id"), value.get("email")} - {None} if isinstance(value, dict) else {value}
    return bool(names & given)


def _renamed(record: dict[str, Any], sample: list[dict[str, Any]], state: dict[str, Any]) -> dict[str, Any]:
    """`record` with a reference the rule stored under the argument's name (`channel_id`) moved to the one field
    in which the kind's records hold references to that collection (`conversation_id`), or into the one list in
    which they hold them (`traveller_id` -> `travellers: [...]`), where they hold none under the argument's own
    name."""
    shared = set(_shared_fields(sample))
    renamed = dict(record)
    for field, value in record.items():
        holder = _holder(value, state) if field not in shared and isinstance(value, str) else None
        if holder is None:
            continue
        keys = state[holder]
        targets = [g for g in shared if renamed.get(g) is None
                   and all(isinstance(r[g], str) or r[g] is None for r in sample)
                   and any(isinstance(r[g], str) and r[g] in keys for r in sample)]
        lists = [g for g in shared if renamed.get(g) in (None, []) and all(isinstance(r[g], list) for r in sample)
                 and any(isinstance(x, str) and x in keys for r in sample for x in r[g])]
        if len(targets) == 1:
            renamed[targets[0]] = renamed.pop(field)
        elif not targets and len(lists) == 1:  # one guest where the records list their travellers
            renamed[lists[0]] = [renamed.pop(field)]
    return renamed


def _holder(key: str, state: dict[str, Any]) -> str | None:
    """The top-level collection that holds a record under `key`, if one does."""
    return next((name for name, records in state.items() if isinstance(records, dict)
                 and isinstance(records.get(key), dict)), None)


def self_key_field(records: Any) -> str | None:
    """The field in which every record of the collection holds its own key (`{'mail_0003': {'id': 'mail_0003', ...}}`),
    so a record made keeps it there too; None where the world's records do not (a few looked at)."""
    if not isinstance(records, dict) or not records:
        return None
    sample = list(islice(records.items(), SAMPLE))
    shared = set.intersection(*(set(r) if isinstance(r, dict) else set() for _, r in sample))
    return next((f for f in sorted(shared) if all(str(r[f]) == str(k) for k, r in sample)), None)


def user_pointer(state: dict[str, Any]) -> tuple[str, str] | None:
    """(the collection, the top-level name) of a world entry naming one record of a kind: the signed-in user
    (`me: usr_0002`, `current_user`, `user_id`)."""
    for name, key in state.items():
        if not isinstance(key, str) or not name.isidentifier():
            continue
        for coll, records in state.items():
            if isinstance(records, dict) and coll.isidentifier() and isinstance(records.get(key), dict):
                return coll, name
    return None


def signed_in(state: dict[str, Any]) -> tuple[str | None, dict[str, Any]] | None:
    """(its key, its record) for the signed-in user: a record a top-level pointer names, else an account the
    world keeps once (`account: {name, email}`); None where the world keeps neither."""
    pointer = user_pointer(state)
    if pointer is not None:
        key = state[pointer[1]]
        return key, state[pointer[0]][key]
    for name in ACCOUNT_NAMES:
        value = state.get(name)
        if isinstance(value, dict) and value and not all(isinstance(v, dict) for v in value.values()):
            return value.get("id"), value
    return None


def _owned(examples: list[Any]) -> str | None:
    """The owner's role where every record's role map names exactly one owner (a record made is its maker's)."""
    found = {r for e in examples if isinstance(e, dict) for r in e.values() if r in OWNER_ROLES}
    if len(found) != 1 or not all(isinstance(e, dict) and sum(r in found for r in e.values()) == 1 for e in examples):
        return None
    return found.pop()


#: Fields in which a record keeps its past versions, oldest first.
HISTORY_FIELDS = ("versions", "revisions", "history")
_ENTRY_TIMES = ("saved_at", "created_at", "at", "date", "modified_at", "updated_at", "timestamp")
_ENTRY_AUTHORS = ("author", "by", "user", "saved_by", "modified_by", "editor")


def history_after(entries: Any, record: Any, user: Any, now: Any) -> Any:
    """A record's history with its new version appended, the entry shaped like the last one: the record's
    version, its fields as they now read, the time and who saved it. Unchanged where it keeps no such list."""
    if not isinstance(entries, list) or not entries or not isinstance(entries[-1], dict) or not isinstance(record, dict):
        return entries
    entry: dict[str, Any] = {}
    for field in entries[-1]:
        if field in _ENTRY_TIMES:
            entry[field] = now
        elif field in _ENTRY_AUTHORS:
            entry[field] = user_id(user)
        else:
            entry[field] = record.get(field)
    return [*entries, entry]


#: A field's name: a word, not data used as a key (a ledger's `{"2026-09-01": 3}` is a map, not a record's fields).
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _shared_fields(sample: list[dict[str, Any]]) -> list[str]:
    """The fields every sampled record holds, named as fields are."""
    shared = set.intersection(*(set(r) for r in sample))
    return [f for f in sample[0] if f in shared and _FIELD.match(str(f))]


def _blank(examples: list[Any]) -> Any:
    """An unset value as the kind's records hold one: `""` where a record's text already reads `""`, `[]` beside
    lists, False beside flags, 0 where a number already reads 0, else null (the field is there, as on every
    record, with nothing in it)."""
    present = [e for e in examples if e is not None]
    if all(isinstance(e, bool) for e in present):
        return False
    if all(isinstance(e, list) for e in present):
        return []
    if all(isinstance(e, dict) for e in present):
        return {}
    if all(isinstance(e, str) for e in present):
        return "" if "" in present else None
    if all(isinstance(e, (int, float)) for e in present) and 0 in present:
        return 0
    return None


def _as_examples(value: Any, examples: list[Any], state: dict[str, Any]) -> Any:
    """A given value stored as the records store the field: ids of records where the records hold objects
    (`to: ['contact_0028']` -> `[{name, email}]`), one by one for a list."""
    if value in ([], {}) and examples and all(isinstance(e, dict) for e in examples):
        return {}  # none yet, held as the records hold theirs (`reactions: {}`)
    if value in ([], {}) and examples and all(isinstance(e, list) for e in examples):
        return []
    if isinstance(value, list):
        inner = [x for e in examples if isinstance(e, list) for x in e]
        if not inner or not all(isinstance(x, dict) for x in inner):
            return value
        return [_entry_like(v, inner) if isinstance(v, dict) else _referenced_like(v, inner, state) for v in value]
    if isinstance(value, str) and examples and all(isinstance(e, dict) for e in examples):
        return _referenced_like(value, examples, state)
    moment = parse_time(value) if isinstance(value, str) and _NAIVE_TIME.match(value) else None
    if moment is not None and examples and all(isinstance(e, str) and _ZULU_TIME.match(e) for e in examples):
        return iso(moment)  # `2026-06-30T13:00` (UTC) kept as the service keeps times: `2026-06-30T13:00:00Z`
    return value


#: A wall-clock time given with no zone (`2026-06-30T13:00`, seconds optional), and one kept in UTC with seconds.
_NAIVE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$")
_ZULU_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def _entry_like(entry: dict[str, Any], examples: list[dict[str, Any]]) -> dict[str, Any]:
    """A list's object (an order's line) with the fields every entry of the records' lists holds, the missing ones
    empty as theirs show empty (`returned_quantity: 0` on a line just bought)."""
    shared = _shared_fields(examples)
    return {**entry, **{f: _blank([e[f] for e in examples]) for f in shared if f not in entry}}


def _referenced_like(value: Any, examples: list[Any], state: dict[str, Any]) -> Any:
    holder = _holder(value, state) if isinstance(value, str) else None
    if holder is None:
        return value
    made = _shaped_like(value, state[holder][value], examples)
    return value if made is None else made


def _shaped_like(key: str | None, record: dict[str, Any], examples: list[Any]) -> Any:
    """The record as the examples name one: an object of the fields they all hold, its email, its key, or its
    name; None where the record cannot fill that shape."""
    if all(isinstance(e, dict) for e in examples):
        fields = set.intersection(*(set(e) for e in examples)) if examples else set()
        full = {**record, **({"id": key} if key is not None and "id" not in record else {})}
        if fields and fields <= set(full):
            return {f: full[f] for f in examples[0] if f in fields}
        return None
    texts = [e for e in examples if isinstance(e, str)]
    if not texts or len(texts) != len(examples):
        return None
    if all("@" in t for t in texts):
        return record.get("email")
    named = all(" " in t for t in texts)  # people's names, not keys
    for candidate in ((record.get("name"),) if named else (key, record.get("id"), record.get("username"))):
        if isinstance(candidate, str):
            return candidate
    return None
