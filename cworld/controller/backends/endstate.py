"""A simulated end state in the sandbox's state schema: the World Engine's changes as a change set.

The engine reports what the episode's writes created, updated and deleted per (server, entity kind)
(`cworld/engine/world/changes.py`). For a server that is a sandbox app (server id == app name), the kind
names the app's state collection through the app's `entity_kinds` (reversed), and the grader overlays the
change set on the task's initial state (`cworld/sandbox/statediff/overlay.py`). Changes on other servers
cannot be graded against a sandbox state; they are kept under `_unmirrored` (bookkeeping, as every key
starting with `_`), so a reader sees what the episode did there.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from cworld.engine.world.changes import EntityChanges
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.statediff.overlay import CHANGES_KEY, WRITTEN_KEY

UNMIRRORED_KEY = "_unmirrored"


@cache
def mirrored_collections() -> dict[str, dict[str, str]]:
    """app -> entity kind -> the app's state collection of that kind."""
    return {app.name: {kind: name for name, kind in app.entity_kinds.items()} for app in all_apps() if app.entity_kinds}


def change_set(changes: Iterable[EntityChanges]) -> dict[str, Any]:
    out: dict[str, Any] = {CHANGES_KEY: True}
    written: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for c in changes:
        records: dict[str, Any] = {**c.created, **c.updated, **dict.fromkeys(c.deleted)}
        collection = mirrored_collections().get(c.server, {}).get(c.kind)
        if collection is None:
            other.setdefault(c.server, {}).setdefault(c.kind, {}).update(records)
            continue
        out.setdefault(c.server, {}).setdefault(collection, {}).update(records)
        if c.changed_fields:
            written.setdefault(c.server, {}).setdefault(collection, {}).update(c.changed_fields)
    if written:
        out[WRITTEN_KEY] = written
    if other:
        out[UNMIRRORED_KEY] = other
    return out


def split_mirrored(changes: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the change set's sandbox apps, with its bookkeeping; the rest): what a hybrid run overlays on its
    live sandbox state, and what it keeps aside."""
    apps = mirrored_collections()
    mirrored = {k: v for k, v in changes.items() if k in apps or k in (CHANGES_KEY, WRITTEN_KEY)}
    rest = {k: v for k, v in changes.items() if k not in mirrored}
    return mirrored, rest
