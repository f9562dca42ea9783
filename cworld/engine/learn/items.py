"""Candidate refusals that loop: over the records a list argument names (a traveller of a booking with no
passport on file, or one that expired) and over a collection's records (a traveller already on a booking
of the same flight). Each is one `any(...)` expression in the rule language; the learner weighs them
against the calls as it does every other candidate."""

from __future__ import annotations

from typing import Any

from cworld.engine.learn.diff import collections
from cworld.engine.learn.scope import MISSING, Scope, arg

_TIME_PREFIX = "2"
_MAX_CATEGORIES = 6


def list_item_atoms(props: dict[str, Any], calls: list[Any], scopes: dict[int, Scope]) -> list[str]:
    """For a list argument whose accepted items are all keys of one collection: one of the records it
    names lacks a field, or holds a time already past."""
    out: list[str] = []
    for name, coll in _named_collections(props, calls, scopes):
        item = f"({coll}.get(str(v)) or {{}})"
        fields = _fields(calls, scopes, name, coll)
        for f, values in fields.items():
            get = f"{item}.get({f!r})"
            loop = f"for v in ({arg(name)} or [])"
            out.append(f"any(not {get} {loop})")
            if any(isinstance(v, str) and v.startswith(_TIME_PREFIX) and v[:4].isdigit() for v in values):
                text = f"str({get} or '')"
                out.append(f"any({get} and {text} < now[:len({text})] {loop})")
    return out


def shared_item_atoms(props: dict[str, Any], calls: list[Any], scopes: dict[int, Scope]) -> list[str]:
    """A record of a collection whose field equals a string argument and whose list field holds an item of
    a list argument (a traveller already flying that flight), of any status or of one status."""
    state = next((o.before for o in calls if o.before is not None), None)
    if not state:
        return []
    strings = [a for a, s in props.items() if _kind(s) == "string"]
    lists = [a for a, s in props.items() if _kind(s) == "array"]
    out: list[str] = []
    for coll in collections(state):
        records = [r for o in calls for r in (_records(scopes[id(o)], coll))]
        if not records:
            continue
        scalar = {f for r in records for f, v in r.items() if isinstance(v, str) and isinstance(f, str)}
        listed = {f for r in records for f, v in r.items() if isinstance(v, list) and isinstance(f, str)}
        statuses = _statuses(records)
        for a in strings:
            for f in sorted(scalar):
                if not _ever_equal(calls, scopes, coll, f, a):
                    continue
                for lst in lists:
                    for g in sorted(listed):
                        base = (f"r.get({f!r}) == {arg(a)} and any(v in (r.get({g!r}) or []) for v in "
                                f"({arg(lst)} or []))")
                        out.append(f"any({base} for r in {coll}.values())")
                        out += [f"any({base} and r.get({s!r}) == {v!r} for r in {coll}.values())"
                                for s, v in statuses]
    return out


def _named_collections(props: dict[str, Any], calls: list[Any], scopes: dict[int, Scope]) -> list[tuple[str, str]]:
    state = next((o.before for o in calls if o.before is not None), None)
    if not state:
        return []
    out = []
    for name in props:
        lists = [o for o in calls if o.verdict == "ok" and isinstance(o.args.get(name), list) and o.args.get(name)]
        if not lists:
            continue
        for coll in collections(state):
            if all(all(_in(scopes[id(o)], coll, v) for v in o.args[name]) for o in lists):
                out.append((name, coll))
    return out


def _fields(calls: list[Any], scopes: dict[int, Scope], name: str, coll: str) -> dict[str, list[Any]]:
    """The fields of the records the argument named, with the values they had."""
    out: dict[str, list[Any]] = {}
    for o in calls:
        records = scopes[id(o)].value(coll)
        given = o.args.get(name)
        if not isinstance(records, dict) or not isinstance(given, list):
            continue
        for v in given:
            record = records.get(str(v))
            if isinstance(record, dict):
                for f, value in record.items():
                    if isinstance(f, str) and not isinstance(value, dict | list):
                        out.setdefault(f, []).append(value)
    return out


def _records(scope: Scope, coll: str) -> list[dict[str, Any]]:
    records = scope.value(coll)
    return [r for r in records.values() if isinstance(r, dict)] if isinstance(records, dict) else []


def _statuses(records: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Fields holding a few words (a booking's `status`), with each word."""
    values: dict[str, set[str]] = {}
    for r in records:
        for f, v in r.items():
            if isinstance(f, str) and isinstance(v, str) and v.isalpha() and v.islower():
                values.setdefault(f, set()).add(v)
    return [(f, v) for f, vs in sorted(values.items()) if 1 < len(vs) <= _MAX_CATEGORIES for v in sorted(vs)]


def _ever_equal(calls: list[Any], scopes: dict[int, Scope], coll: str, f: str, a: str) -> bool:
    """Some call gave the argument a value one of the collection's records held in the field."""
    return any(isinstance(o.args.get(a), str) and any(r.get(f) == o.args[a] for r in _records(scopes[id(o)], coll))
               for o in calls)


def _in(scope: Scope, coll: str, key: Any) -> bool:
    records = scope.value(coll)
    return records is not MISSING and isinstance(records, dict) and str(key) in records


def _kind(spec: Any) -> str | None:
    from cworld.engine.learn.atoms import kind_of  # atoms gathers these candidates with its own

    return kind_of(spec)
