"""What a session's writes changed in the simulated world: records created, updated and deleted.

A world is never empty (cards seed records, the task grounds more, reads materialize ids the task names),
so its raw contents say nothing about what the agent did. Change tracking keeps, per collection, each
record as it stood before the first write that touched it (`Collection.origin`; None when the record did
not exist yet) and the fields writes set on it (`Collection.written`). A record is then created (no
origin, exists now), deleted (an origin, gone now) or updated (an origin, and written fields). Reads never
count: absorbing an answer's fields (the values shaping made up for display), adapting an unseen grounded
record to a search, or materializing a task-named id are the world being discovered, not changed.

Because the world is a function of the log, so are its changes: replaying a session log (an LLM engine's,
a live server's) through the schema engine gives the changes that log describes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cworld.engine.world.state import id_keys
from cworld.sandbox.framework.session import plain_copy

if TYPE_CHECKING:
    from cworld.engine.world.state import Collection, SimWorld

#: Operation kinds that may change records (`action` covers send, move, archive, ...).
WRITE_OPS = frozenset({"create", "update", "delete", "action"})


@dataclass
class EntityChanges:
    """The changes to one entity kind on one server."""

    server: str
    card: str
    kind: str
    key_field: str
    created: dict[str, dict[str, Any]] = field(default_factory=dict)
    """key -> the record as it is now"""
    updated: dict[str, dict[str, Any]] = field(default_factory=dict)
    """key -> the record's current fields"""
    changed_fields: dict[str, list[str]] = field(default_factory=dict)
    """key of an updated record -> the fields writes set (added or altered; a dropped field is absent now)"""
    deleted: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.created or self.updated or self.deleted)


def before_write(coll: Collection, op: str) -> dict[str, dict[str, Any]] | None:
    """A copy of the collection's records before a call that may write; None for a read. Records are JSON-like,
    so `plain_copy` does it (several times faster than `copy.deepcopy`; this runs on every write)."""
    return plain_copy(coll.records) if op in WRITE_OPS else None


def note_write(coll: Collection, before: dict[str, dict[str, Any]] | None, target: str | None = None,
               arguments: dict[str, Any] | None = None) -> None:
    """Keep, for each record the call changed, the record as it was before its first change and the
    fields the call set. Called before the answer is shaped: what shaping adds is display, not a write.

    `target` is the record the call answered with: an argument it holds under a field's name was written
    even when the engine's record had that value already (starring a message the seeded world had starred
    is still the write the agent made)."""
    if before is None:
        return
    for key in before.keys() | coll.records.keys():
        was, now = before.get(key), coll.records.get(key)
        if was == now:
            continue
        coll.origin.setdefault(key, was)
        if was is not None and now is not None:
            coll.written.setdefault(key, set()).update(f for f in was.keys() | now.keys() if was.get(f) != now.get(f))
    record = coll.records.get(target) if target is not None else None
    if record is not None and target in before:
        ids = set(id_keys(coll.entity))
        same = {f for f, v in (arguments or {}).items() if f not in ids and f in record and record[f] == v}
        if same:
            coll.origin.setdefault(target, before[target])
            coll.written.setdefault(target, set()).update(same)


def collection_changes(server: str, card: str, coll: Collection) -> EntityChanges:
    out = EntityChanges(server, card, coll.entity.name, coll.key_field)
    for key, was in sorted(coll.origin.items()):
        now = coll.records.get(key)
        if was is None and now is not None:
            out.created[key] = copy.deepcopy(now)
        elif was is not None and now is None:
            out.deleted.append(key)
        elif was is not None and now is not None:
            fields = sorted(f for f in coll.written.get(key, ()) if f in now)
            if fields:
                out.updated[key] = copy.deepcopy(now)
                out.changed_fields[key] = fields
    return out


def world_changes(world: SimWorld) -> list[EntityChanges]:
    """Every (server, entity kind) whose records the session's writes changed, in a stable order."""
    found = []
    for key, coll in sorted(world.collections().items()):
        server, card, _ = key.rsplit(":", 2)
        changes = collection_changes(server, card, coll)
        if changes:
            found.append(changes)
    return found
