"""What one call changed in a service's state: records created and deleted in maps, fields set, compared
path by path between the state before and after (the sandbox apps' state diffs), and the leaves a change
touched (what a learned rule is scored on)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Change:
    """`create`/`delete` of `key` in the map at `path`, or `set` of field `key` of the record (or entry `key`
    of the keyed map) at `path`."""

    kind: str
    path: tuple[str, ...]
    key: str
    old: Any = None
    new: Any = None


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """Every change from `before` to `after`: a new or removed record (a dict value) is a create or delete
    in its map; any other new, removed or changed value is a set of that field."""
    out: list[Change] = []
    _walk(before, after, (), out)
    return out


def _walk(before: dict[str, Any], after: dict[str, Any], path: tuple[str, ...], out: list[Change]) -> None:
    for key in after:
        new = after[key]
        if key not in before:
            kind = "create" if isinstance(new, dict) and path else "set"
            out.append(Change(kind, path, str(key), None, new))
            continue
        old = before[key]
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict) and (not path or is_map(before) or is_map(new) or
                                                                keyed(old) and keyed(new)):
            _walk(old, new, (*path, str(key)), out)
        else:
            out.append(Change("set", path, str(key), old, new))
    for key in before:
        if key not in after:
            kind = "delete" if isinstance(before[key], dict) and path else "set"
            out.append(Change(kind, path, str(key), before[key], None))


def leaves(value: Any, path: str = "") -> dict[str, str]:
    """`a/b/c` -> canonical JSON of every scalar or list under `value` (an empty map is one leaf)."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for key, sub in value.items():
            out.update(leaves(sub, f"{path}/{key}"))
        return out
    return {path: json.dumps(value, sort_keys=True, default=str)}


def changed_leaves(before: dict[str, Any], after: dict[str, Any]) -> dict[str, str]:
    """The leaves that differ between two states (a removed one as `<absent>`), over the top-level entries
    that differ only."""
    out: dict[str, str] = {}
    for name in before.keys() | after.keys():
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        old, new = leaves(was, name), leaves(now, name)
        out.update({p: v for p, v in new.items() if old.get(p) != v})
        out.update({p: "<absent>" for p in old if p not in new})
    return out


def collections(state: dict[str, Any]) -> list[str]:
    """Expressions naming the maps of records a state holds: top-level ones (`orders`) and those inside a
    single record (`cart['items']`). An empty map counts: it may fill later."""
    out: list[str] = []
    for name, value in state.items():
        if not isinstance(value, dict) or not name.isidentifier():
            continue
        if _is_records(value) and not is_reference(name):
            out.append(name)
            continue
        for sub, inner in value.items():
            if isinstance(inner, dict) and _is_records(inner) and inner:
                out.append(f"{name}[{sub!r}]")
    return out


def records(state: dict[str, Any]) -> list[str]:
    """Top-level single records (`account`, `cart`): maps that are not maps of records."""
    return [n for n, v in state.items()
            if isinstance(v, dict) and n.isidentifier() and v and not _is_records(v) and not is_reference(n)]


def is_reference(name: str) -> bool:
    """The world's reference data (`NETWORK`, `MARKET`: named as the rule language's consts are): a folder
    of collections (`NETWORK['hotels']`), never one itself, never changed."""
    return name.isupper()


def is_map(value: Any) -> bool:
    """A map of records keyed by id (`{ord_0001: {...}}`), not a record with a nested record (`auth.token`)."""
    return isinstance(value, dict) and bool(value) and all(isinstance(v, dict) and _key_like(k) for k, v in value.items())


def _key_like(key: Any) -> bool:
    """An id with digits or a path (`notes.md`, `docs/plan.txt`), not a field's name."""
    text = str(key)
    return any(c.isdigit() for c in text) or "." in text or "/" in text


def keyed(value: Any) -> bool:
    """A map keyed by ids whatever its values (a board's `roles`: person id -> role): its entries change
    one by one."""
    return isinstance(value, dict) and bool(value) and all(any(c.isdigit() for c in str(k)) for k in value)


def _is_records(value: dict[str, Any]) -> bool:
    return not value or all(isinstance(v, dict) for v in value.values())
