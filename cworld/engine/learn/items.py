"""Candidate refusals that loop: over the records a list argument names (a traveller of a booking with no
passport on file, or one that expired) and over a collection's records (a traveller already on a booking
of the same flight; an event of the user's that overlaps the span asked for). Each is one `any(...)`
expression in the rule language; the learner weighs them against the calls as it does every other
candidate."""

from __future__ import annotations

from typing import Any

from cworld.engine.learn.diff import collections
from cworld.engine.learn.scope import MISSING, Scope, arg, key_forms

_TIME_PREFIX = "2"
_MAX_CATEGORIES = 6


def list_item_atoms(props: dict[str, Any], calls: list[Any], scopes: dict[int, Scope]) -> list[str]:
    """For a list argument whose accepted items are all keys of one collection: one of the records it
    names lacks a field, or holds a time already past."""
    out: list[str] = []
    for name, coll in named_collections(props, calls, scopes):
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


def item_text_atoms(props: dict[str, Any], calls: list[Any], scopes: dict[int, Scope], record: str) -> list[str]:
    """An item of a list argument whose text is not in a found record's text (an edit whose `oldText` the
    file does not hold)."""
    out: list[str] = []
    for name in props:
        items = [i for o in calls if isinstance(o.args.get(name), list) for i in o.args[name] if isinstance(i, dict)]
        texts = sorted({k for i in items for k, v in i.items() if isinstance(k, str) and isinstance(v, str)})
        if texts:
            fields = sorted({f for o in calls for f, v in _bound(scopes[id(o)], record).items()
                             if isinstance(f, str) and isinstance(v, str)})
            out += [f"{record} is not None and any(str(i.get({k!r})).strip() not in str({record}.get({f!r}) or '') "
                    f"for i in ({arg(name)} or []))" for k in texts for f in fields]
    return out


def _bound(scope: Scope, name: str) -> dict[str, Any]:
    value = scope.bound(name)
    return value if isinstance(value, dict) else {}


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


def overlap_atoms(props: dict[str, Any], calls: list[Any], scopes: dict[int, Scope]) -> list[str]:
    """A record whose span (two time fields) overlaps the span two time arguments ask for: of any record,
    of the user's own (a field that is `me`, or a list or map holding `me`), not of one status; unless a
    flag argument allows it (`allow_overlap`)."""
    spans = [(a, b) for a in props for b in props if a != b and _time_pair(calls, a, b)]
    flags = [a for a, spec in props.items() if _kind(spec) == "boolean"]  # allowing what the check refuses
    state = next((o.before for o in calls if o.before is not None), None)
    if not spans or not state:
        return []
    out: list[str] = []
    for coll in collections(state):
        records = [r for o in calls[:50] for r in _records(scopes[id(o)], coll)]
        times = sorted({f for r in records for f, v in r.items() if isinstance(f, str) and _is_time(v)})
        if len(times) < 2:
            continue
        mine = _mine(records, state.get("me"))
        statuses = _statuses(records)
        for a, b in spans:
            for f in times:
                for g in times:
                    if f == g or not _ordered(records, f, g):
                        continue
                    base = f"before({arg(a)}, r.get({g!r})) and before(r.get({f!r}), {arg(b)})"
                    filters = ["", *([f" and {mine}"] if mine else [])]
                    filters += [x + f" and r.get({k!r}) != {v!r}" for x in filters for k, v in statuses]
                    found = [f"any({base}{x} for r in {coll}.values())" for x in filters]
                    out += found + [f"not {arg(flag)} and {e}" for flag in flags for e in found]
    return out


def _time_pair(calls: list[Any], a: str, b: str) -> bool:
    """Two arguments every accepted call gave as times, the first never after the second."""
    from cworld.values import parse_time

    pairs = [(parse_time(o.args.get(a)), parse_time(o.args.get(b))) for o in calls if o.verdict == "ok"]
    return bool(pairs) and all(x is not None and y is not None and x <= y for x, y in pairs)


def _is_time(value: Any) -> bool:
    from cworld.values import parse_time

    return isinstance(value, str) and "T" in value and parse_time(value) is not None


def _ordered(records: list[dict[str, Any]], f: str, g: str) -> bool:
    """The records' field `f` is never after `g` (a start and its end)."""
    return all(str(r.get(f)) <= str(r.get(g)) for r in records if _is_time(r.get(f)) and _is_time(r.get(g)))


def _mine(records: list[dict[str, Any]], me: Any) -> str | None:
    """The user's part in a record: a field holding `me`, or a list or map of people holding it."""
    if not isinstance(me, str):
        return None
    own = sorted({f for r in records for f, v in r.items() if isinstance(f, str) and v == me})
    held = sorted({f for r in records for f, v in r.items() if isinstance(f, str) and isinstance(v, list | dict)
                   and me in v})
    parts = [f"r.get({f!r}) == me" for f in own] + [f"me in (r.get({f!r}) or [])" for f in held]
    return "(" + " or ".join(parts) + ")" if parts else None


def path_atoms(props: dict[str, Any], calls: list[Any]) -> list[str]:
    """For an argument that is always the folder the state names (a repository's path): it is another one.
    For an argument that names records by a path under a folder the state names (a file under the
    allowed folder): the path is outside that folder, is the folder, names a record of a collection (a
    folder where a file is wanted), names none, or lies in a record that is no folder (a file's path), its
    parent or any folder above it (`notes.txt/ideas/a.csv` under the file `notes.txt`)."""
    out: list[str] = []
    state = next((o.before for o in calls if o.before is not None), None)
    oks = [o for o in calls if o.verdict == "ok" and o.before is not None]
    for name in props:
        for top, value in (state or {}).items():  # the one folder the service works in (a repository)
            if isinstance(value, str) and value.startswith("/") and top.isidentifier() and oks and \
                    all(o.args.get(name) == o.before.get(top) for o in oks):
                out.append(f"{arg(name)} is not None and normpath({arg(name)}) != {top}")  # `repo/` is the repo
        forms = {f for o in calls for f in key_forms(name, o.args.get(name), o.before)[1:]}
        for form in sorted(forms):
            top = form.split(".removeprefix(")[1].split(" + ")[0]
            given = f"{arg(name)} is not None and "
            out += [given + f"not str({arg(name)}).startswith({top} + '/')", given + f"str({arg(name)}) == {top}",
                    given + f"str({arg(name)}).startswith('/') and not (normpath({arg(name)}) + '/').startswith({top} + '/')"]
            inside = given + f"str({arg(name)}).startswith({top} + '/') and "
            parent = f"{form}.rpartition('/')[0]"
            for coll in collections(state or {}):
                out += [inside + f"{form} in {coll}", inside + f"{form} not in {coll}", inside + f"{parent} in {coll}",
                        inside + f"any('/'.join({form}.split('/')[:i + 1]) in {coll} for i in range({form}.count('/')))"]
            colls = collections(state or {})
            if len(colls) > 1:
                out.append(inside + " and ".join(f"{form} not in {c}" for c in colls))
    out += _nested_paths(props, calls)
    return out


def _nested_paths(props: dict[str, Any], calls: list[Any]) -> list[str]:
    """Two path arguments, the second under the first (a folder moved into itself)."""
    paths = [n for n in props if any(isinstance(o.args.get(n), str) and o.args[n].startswith("/") for o in calls)]
    return [f"{arg(a)} is not None and {arg(b)} is not None and str({arg(b)}).startswith(str({arg(a)}) + '/')"
            for a in paths for b in paths if a != b]


def named_collections(props: dict[str, Any], calls: list[Any], scopes: dict[int, Scope]) -> list[tuple[str, str]]:
    """(list argument, collection) where every item of every accepted call's list was a key of the collection
    (`attendee_ids` -> people): the records a list argument names."""
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
