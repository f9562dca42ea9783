"""A value copied from the record something else names: a field of the record an argument names
(`branches[args['base_branch']]['commit']`) or that a pointer record of the state names (a repository's
`head` names its branch: a new branch starts at `branches[head['branch']]['commit']`). Candidates for
`effects.explain`; the calls decide which one, if any, is kept."""

from __future__ import annotations

from typing import Any

from cworld.engine.learn.scope import Scope, arg

#: values too common to say where they were copied from
_BLAND: tuple[Any, ...] = (None, "", [], {}, True, False, 0)


def pointed(value: Any, scope: Scope) -> list[str]:
    """Expressions for `value` as a field of a record another value names: an argument's first."""
    if any(value is b or value == b and type(value) is type(b) for b in _BLAND) or isinstance(value, dict):
        return []
    state = scope.obs.before or {}
    maps = {n: v for n, v in state.items() if n.isidentifier() and _records(v)}
    out = []
    for name, given in scope.obs.args.items():
        if isinstance(given, str):
            out += _fields(value, maps, given, f"str({arg(name)})")
    for name, record in state.items():
        if name.isidentifier() and isinstance(record, dict) and name not in maps:
            for field, named in record.items():
                if isinstance(named, str) and isinstance(field, str):
                    out += _fields(value, maps, named, f"str({name}.get({field!r}))")
    return out


def _fields(value: Any, maps: dict[str, dict[str, Any]], key: str, key_expr: str) -> list[str]:
    """`(C.get(KEY) or {}).get('G')` for each map C holding `key` whose record's field G is `value`."""
    return [f"({coll}.get({key_expr}) or {{}}).get({field!r})"
            for coll, records in maps.items() if isinstance(records.get(key), dict)
            for field, held in records[key].items() if held == value and isinstance(field, str)]


def _records(value: Any) -> bool:
    """A map whose every value is a record (keyed by anything: branch names too)."""
    return isinstance(value, dict) and bool(value) and all(isinstance(v, dict) for v in value.values())

