"""Candidate conditions a refusal may rest on, written in the rule language: an argument that names no
record of a collection, a session token that is not the live one, and comparisons of argument and record
fields with each other, with constants the traffic showed and with `now` (expired, out of stock, over
balance, wrong status). The learner weighs them against the calls; it never reads the service's code."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from cworld.data_model import ToolSpec
from cworld.engine.learn.diff import collections, records
from cworld.engine.learn.items import (
    item_text_atoms,
    list_item_atoms,
    named_collections,
    overlap_atoms,
    path_atoms,
    shared_item_atoms,
)
from cworld.engine.learn.limits import tally_atoms
from cworld.engine.learn.scope import MISSING, Scope, arg, field_of, key_forms
from cworld.engine.learn.traffic import Observation
from cworld.values import parse_time

_TIME = re.compile(r"^\d{4}-\d{2}(-\d{2})?")
_MAX_CATEGORIES = 8
_MAX_SHAPES = 3
_WORD = re.compile(r"^[a-z][a-z_\- ]{0,23}$")
#: A value drawn at random after its prefix (a session token, `tok_00fdd0d578ff9193daca`): its digits and
#: letters follow no rule of the service's (a bare hash, a commit's sha, keeps its form)
_RANDOM = re.compile(r"[A-Za-z]+[_-](?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}")


@dataclass(frozen=True)
class Binding:
    """A record a rule names: found by an argument in a collection (`find`), or computed (`let`)."""

    name: str
    arg: str | None
    collection: str
    expr: str
    optional: bool = False
    parent: str | None = None
    """the binding whose record names this one (a card's board: `boards.get(str(card.get('board_id')))`)"""
    key: str | None = None
    """the record's key from the argument (`str(args['path']).removeprefix(root + '/')`), else the argument"""

    @property
    def key_expr(self) -> str:
        return self.key or f"str({arg(self.arg or '')})"

    @property
    def resolve(self) -> str:
        """An expression giving the record, or None when it is missing."""
        return self.expr


@dataclass(frozen=True)
class Atom:
    """A condition under which a call is refused: `kind` find/auth/fail, `expr` the condition (true =
    refused), `binding` the find it is (find) or needs (fail), `store` the token's place (auth)."""

    kind: str
    expr: str
    binding: Binding | None = None
    store: str | None = None
    token_arg: str | None = None
    on_args: bool = False
    least: int = 2
    """refused calls it must explain to be a check (a `fail`; a find or auth needs one)"""

    @property
    def cost(self) -> tuple[int, int]:
        """Of two conditions that explain the same calls, the simpler: one on the arguments alone before one
        that reads a record."""
        order = {"auth": 0, "find": 1, "fail": 2}[self.kind] + (self.kind == "fail" and not self.on_args)
        return order, len(self.expr)


@dataclass
class Hints:
    """What the server's other tools showed: the collection an argument name always named (`address_id` ->
    `addresses`) and where a token argument's live token sits, for a tool with few accepted calls."""

    collections: dict[str, str]
    stores: dict[str, str]


def server_hints(calls: list[Observation]) -> Hints:
    """Over every accepted call of the server: each argument's collection and each token's place."""
    oks = [o for o in calls if o.verdict == "ok" and o.valid and o.before is not None]
    held: dict[str, dict[str, int]] = {}
    missed: set[tuple[str, str]] = set()
    stores: dict[str, str] = {}
    for o in oks:
        assert o.before is not None
        colls = collections(o.before)
        for name, value in o.arguments.items():
            if not isinstance(value, str):
                continue
            for coll in colls:
                records = Scope(o).value(coll)
                if isinstance(records, dict) and value in records:
                    held.setdefault(name, {}).setdefault(coll, 0)
                    held[name][coll] += 1
                else:
                    missed.add((name, coll))
            if name not in stores:
                found = _token_paths(o.before, value)
                if found:
                    stores[name] = found[0]
    best = {}
    for name, counts in held.items():
        fits = [(n, c) for c, n in counts.items() if (name, c) not in missed]
        if fits:
            best[name] = max(fits)[1]
    return Hints(best, stores)


def bindings(tool: ToolSpec, oks: list[Observation], scopes: dict[int, Scope],
             hints: Hints | None = None, pool: list[Observation] | None = None) -> list[Binding]:
    """For each argument that always named an existing record in the calls the service accepted: the
    collection holding them (the one that held most), as a find; and the signed-in user's record (`me`).
    An argument no accepted call gave takes the collection the server's other tools showed for its name
    (a tool the service refused every time still names its records)."""
    props = (tool.input_schema or {}).get("properties") or {}
    required = set((tool.input_schema or {}).get("required") or [])
    states = [o.before for o in (oks or pool or []) if o.before is not None]
    if not states:
        return []
    colls = sorted({c for s in states for c in collections(s)})
    names = set(states[0])
    out: list[Binding] = []
    for name in props:
        given = [o for o in oks if isinstance(o.args.get(name), str | int) and not isinstance(o.args.get(name), bool)]
        if not given:
            if hints is not None and name in hints.collections:
                coll = hints.collections[name]
                out.append(Binding(_record_name(name, names | set(props)), name, coll,
                                   f"{coll}.get(str({arg(name)}))", optional=name not in required))
            continue
        best, support, key = None, 0, ""
        for form in key_forms(name, given[0].args[name], states[0]):
            for coll in colls:
                held = [o for o in given if _has(scopes[id(o)], coll, scopes[id(o)].value(form))]
                if len(held) > support:
                    best, support, key = coll, len(held), form
        record = _record_name(name, names | set(props))
        if best is not None and support == len(given):
            out.append(Binding(record, name, best, f"{best}.get({key})", optional=name not in required,
                               key=None if key == f"str({arg(name)})" else key))
        elif best is not None and support * 2 >= len(given):  # most calls named one (a file; else a folder)
            out.append(Binding(record, None, best, f"({best}.get({key}) or {{}})"))
    out += _referenced(out, oks, scopes, colls)
    me = states[0].get("me")
    if isinstance(me, str) and oks:
        for coll in colls:
            if all(_has(scopes[id(o)], coll, o.before.get("me") if o.before else None) for o in oks if o.before):
                out.append(Binding("me_record", None, coll, f"{coll}.get(me)"))
                break
    return out


def _referenced(found: list[Binding], oks: list[Observation], scopes: dict[int, Scope],
                colls: list[str]) -> list[Binding]:
    """The records a found record names in a field (a card's `board_id`): a condition may rest on them."""
    out: list[Binding] = []
    for b in [b for b in found if b.arg is not None]:
        fields: dict[str, list[tuple[Observation, Any]]] = {}
        for o in oks:
            record = scopes[id(o)].value(b.expr)
            if isinstance(record, dict):
                for f, v in record.items():
                    if isinstance(f, str) and f.endswith("_id") and isinstance(v, str):
                        fields.setdefault(f, []).append((o, v))
        for f, seen in fields.items():
            coll = next((c for c in colls if c != b.collection and len(seen) >= 2 and
                         all(_has(scopes[id(o)], c, v) for o, v in seen)), None)
            if coll is not None:
                out.append(Binding(f"{b.name}_{f[:-3]}", None, coll, f"{coll}.get(str(({b.name} or {{}}).get({f!r})))",
                                   parent=b.name))
    return out


def _has(scope: Scope, coll: str, key: Any) -> bool:
    found = scope.value(coll)
    return isinstance(found, dict) and key is not None and str(key) in found


def _record_name(arg_name: str, taken: set[str]) -> str:
    base = arg_name[:-3] if arg_name.endswith("_id") else f"{arg_name}_record"
    base = re.sub(r"\W", "_", base) or "record"
    return base if base not in taken and base not in ("args", "state", "now", "me") else f"{base}_record"


def bind_all(found: Iterable[Binding], scopes: Iterable[Scope]) -> None:
    """Bind every candidate record in every scope (None when it is missing there)."""
    found = list(found)
    for scope in scopes:
        for b in found:
            value = scope.value(b.expr)
            scope.bind(b.name, None if value is MISSING else value)


def atoms(tool: ToolSpec, calls: list[Observation], scopes: dict[int, Scope], found: list[Binding],
          hints: Hints | None = None) -> list[Atom]:
    """Every candidate refusal condition over these calls (the learner keeps those the traffic supports)."""
    props = (tool.input_schema or {}).get("properties") or {}
    out: list[Atom] = []
    out += _auth_atoms(props, calls, hints)
    for one in found:
        if one.arg is not None:
            out.append(Atom("find", f"{arg(one.arg)} is not None and {one.key_expr} not in {one.collection}", one))
    out += _list_reference_atoms(props, calls, scopes)
    looped = [*list_item_atoms(props, calls, scopes), *shared_item_atoms(props, calls, scopes),
              *overlap_atoms(props, calls, scopes), *path_atoms(props, calls)]
    out += [Atom("fail", e) for e in looped]
    out += [Atom("fail", e, b) for b in found for e in item_text_atoms(props, calls, scopes, b.name)]
    by_name = {b.name: b for b in found}
    out += [Atom("fail", e, by_name.get(r or "")) for e, r in tally_atoms(props, calls, scopes, list(by_name))]
    records_in: list[tuple[str, Binding | None]] = [(b.name, b) for b in found]
    records_in += [(r, None) for r in _singletons(calls)]
    for name, binding in records_in:
        out += [Atom("fail", e, binding) for e in _record_atoms(name, props, calls, scopes)]
    flags = {f"{arg(a)} is not None and not {arg(a)}" for a, spec in props.items() if kind_of(spec) == "boolean"}
    out += [Atom("fail", e, on_args=True, least=3 if e in flags else 2) for e in _argument_atoms(props, calls)]
    return out


def _singletons(calls: list[Observation]) -> list[str]:
    state = next((o.before for o in calls if o.before is not None), None)
    return records(state) if state else []


def _auth_atoms(props: dict[str, Any], calls: list[Observation], hints: Hints | None) -> list[Atom]:
    """A token argument whose accepted values sat at `{value, expires_at}` somewhere in the state (here, or
    in the server's other tools' calls)."""
    out: list[Atom] = []
    for name in props:
        stores = {p for o in calls if o.verdict == "ok" and isinstance(o.args.get(name), str) and o.before
                  for p in _token_paths(o.before, o.args[name])}
        if not stores and hints is not None and name in hints.stores:
            stores = {hints.stores[name]}
        for store in sorted(stores)[:2]:
            live = _path_expr(store)
            expr = (f"not ({arg(name)} and {live}.get('value') == {arg(name)} and not ({live}.get('expires_at') and "
                    f"str({live}.get('expires_at')) <= now))")
            out.append(Atom("auth", expr, store=store, token_arg=name))
    return out


def _path_expr(dotted: str) -> str:
    expr = "state"
    for part in dotted.split("."):
        expr = f"({expr}.get({part!r}) or {{}})"
    return expr


def _token_paths(state: dict[str, Any], token: str, prefix: str = "", depth: int = 0) -> list[str]:
    out: list[str] = []
    for key, value in state.items():
        if not isinstance(value, dict) or not isinstance(key, str) or depth > 2:
            continue
        here = f"{prefix}{key}"
        if value.get("value") == token:
            out.append(here)
        elif len(value) < 50:
            out += _token_paths(value, token, here + ".", depth + 1)
    return out


def _list_reference_atoms(props: dict[str, Any], calls: list[Observation], scopes: dict[int, Scope]) -> list[Atom]:
    """A list argument naming records (`attendee_ids`): one of its items is not in a collection."""
    return [Atom("fail", f"any(str(v) not in {coll} for v in ({arg(name)} or []))")
            for name, coll in named_collections(props, calls, scopes)]


def _values(calls: list[Observation], scopes: dict[int, Scope], expr: str) -> list[tuple[Observation, Any]]:
    out = []
    for o in calls:
        value = scopes[id(o)].value(expr)
        if value is not MISSING:
            out.append((o, value))
    return out


def _record_atoms(name: str, props: dict[str, Any], calls: list[Observation], scopes: dict[int, Scope]) -> list[str]:
    """Conditions on one record's fields: a status the accepted calls never had, a flag, a time past or to
    come, a number an argument exceeds, an argument that differs from (or equals) a field, membership."""
    fields: dict[str, list[tuple[Observation, Any]]] = {}
    for o in calls:
        record = scopes[id(o)].bound(name)
        if record is MISSING:
            record = scopes[id(o)].value(name)
        if isinstance(record, dict):
            for f, v in record.items():
                if isinstance(f, str):
                    fields.setdefault(f, []).append((o, v))
    out: list[str] = []
    guard = f"{name} is not None and "
    for f, seen in fields.items():
        get = field_of(name, f)
        values = [v for _, v in seen]
        scalars = [v for v in values if isinstance(v, str | int | float | bool) or v is None]
        out += [guard + f"not {get}", guard + f"bool({get})"]
        ok_values = {_hashable(v) for o, v in seen if o.verdict == "ok"}
        distinct = {_hashable(v) for v in scalars}
        timely = any(isinstance(v, str) and _TIME.match(v) for v in scalars)
        if len(distinct) <= _MAX_CATEGORIES and ok_values and len(scalars) == len(values) and not timely and \
                not _names_a_record(f) and all(_category(v) for v in distinct):
            out.append(guard + f"{get} not in {tuple(sorted(ok_values, key=repr))!r}")  # a status never accepted
        if timely:  # a time is compared with the clock, never read as a status
            text = f"str({get} or '')"
            out += [guard + f"{get} and {text} < now[:len({text})]", guard + f"{get} and {text} > now[:len({text})]"]
        for a, spec in props.items():
            out += _field_vs_argument(guard, get, a, spec, values)
        if any(isinstance(v, list | dict) for v in values):
            out += [guard + f"me not in ({get} or [])", guard + f"me in ({get} or [])"] if _has_me(calls) else []
            out += _mine(guard, get, seen) if _has_me(calls) else []
        if any(isinstance(v, str) for v in values) and _has_me(calls):
            out += [guard + f"{get} != me", guard + f"{get} == me"]
    return out


def _names_a_record(field: str) -> bool:
    """`id`, `owner_id`: a field whose value names a record is no status, whatever its words."""
    return field == "id" or field.endswith("_id") or field == "key"


def _category(value: Any) -> bool:
    """A value that can be a status (`open`, `in review`, a flag, a small number), not a name or an id: a
    condition on names or ids holds only for the world it was learned in."""
    return value is None or isinstance(value, bool) or isinstance(value, str) and bool(_WORD.match(value))


def _mine(guard: str, get: str, seen: list[tuple[Observation, Any]]) -> list[str]:
    """The user's entry in a map keyed by users (a board's `roles[me]`), in a category no accepted call had."""
    mine = [(o, v.get((o.before or {}).get("me"))) for o, v in seen if isinstance(v, dict)]
    accepted = {_hashable(v) for o, v in mine if o.verdict == "ok"}
    if not accepted or not all(_category(v) for _, v in mine) or len({_hashable(v) for _, v in mine}) > _MAX_CATEGORIES:
        return []
    return [guard + f"({get} or {{}}).get(me) not in {tuple(sorted(accepted, key=repr))!r}"]


def _field_vs_argument(guard: str, get: str, a: str, spec: dict[str, Any], values: list[Any]) -> list[str]:
    kind = kind_of(spec)
    out: list[str] = []
    if kind in ("integer", "number") and any(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        for op in (">", ">=", "<"):
            out.append(guard + f"{arg(a)} is not None and ({arg(a)} or 0) {op} ({get} or 0)")
    if kind == "string" and any(isinstance(v, str) for v in values):
        out += [guard + f"{arg(a)} is not None and str({arg(a)}) != str({get})",
                guard + f"{arg(a)} is not None and str({arg(a)}) == str({get})"]
    if any(isinstance(v, list | dict) for v in values):
        if kind == "string":
            out += [guard + f"{arg(a)} is not None and {arg(a)} in ({get} or [])",
                    guard + f"{arg(a)} is not None and {arg(a)} not in ({get} or [])"]
        if kind == "array":
            out += [guard + f"any(v in ({get} or []) for v in ({arg(a)} or []))"]
    return out


def _argument_atoms(props: dict[str, Any], calls: list[Observation]) -> list[str]:
    """Conditions on the arguments alone: a number past what was ever accepted, two arguments equal, an
    argument missing, an empty one, the user's own id."""
    out: list[str] = []
    oks = [o for o in calls if o.verdict == "ok"]
    required = set((calls[0].tool.input_schema or {}).get("required") or []) if calls else set()
    for a, spec in props.items():
        kind = kind_of(spec)
        out.append(f"{arg(a)} is None")
        out.append(f"{arg(a)} is not None and not {arg(a)}")
        if kind in ("integer", "number"):
            accepted = [o.args[a] for o in oks if isinstance(o.args.get(a), int | float)]
            if accepted:
                out += [f"{arg(a)} is not None and {arg(a)} < {min(accepted)!r}",
                        f"{arg(a)} is not None and {arg(a)} > {max(accepted)!r}"]
        if kind == "string" and _has_me(calls):
            out.append(f"{arg(a)} == me")
        if kind == "string":
            out.append(f"{arg(a)} is not None and {arg(a)} and {arg(a)} < now[:len({arg(a)})]")
            out += _format_atoms(a, [o.args[a] for o in oks if isinstance(o.args.get(a), str)])
        for b, other in props.items():
            if b > a and kind_of(other) == kind and kind in ("string", "integer", "number"):
                both = f"{arg(a)} is not None and {arg(b)} is not None and "
                out.append(both + f"{arg(a)} == {arg(b)}")
                if kind != "string" or _times(calls, a) and _times(calls, b):  # an id is in no order with a time
                    out += [both + f"{arg(a)} > {arg(b)}", both + f"{arg(a)} < {arg(b)}"]
            if b > a and a not in required and b not in required:  # one of them, or both; both or neither
                out += [f"{arg(a)} is None and {arg(b)} is None", f"({arg(a)} is None) != ({arg(b)} is None)"]
    return out


def _times(calls: list[Observation], a: str) -> bool:
    """Every value the accepted calls gave the argument is a time (there is at least one)."""
    given = [o.args[a] for o in calls if o.verdict == "ok" and isinstance(o.args.get(a), str)]
    return bool(given) and all(parse_time(v) is not None for v in given)


def _format_atoms(a: str, accepted: list[str]) -> list[str]:
    """A string argument written in a form no accepted call used: not a time where every accepted one was,
    or not of the few shapes (digit runs, letter runs, punctuation) the accepted values had."""
    out: list[str] = []
    if len(accepted) < 2:
        return out
    if all(parse_time(v) is not None for v in accepted):
        out.append(f"{arg(a)} is not None and parse_time({arg(a)}) is None")
    if all(_RANDOM.fullmatch(v) for v in accepted):  # a token's digits and letters fall as they may
        return out
    shapes = sorted({shape(v) for v in accepted})
    if len(shapes) <= _MAX_SHAPES and all(r"\d" in s for s in shapes) and not any("/" in v for v in accepted):
        pattern = "(?:" + "|".join(shapes) + r")\Z"
        out.append(f"{arg(a)} is not None and not re_match({pattern!r}, str({arg(a)}))")
    exact = exact_shape(accepted)
    if exact is not None and r"\d" in exact and exact not in shapes:
        whole = exact + r"\Z"
        out.append(f"{arg(a)} is not None and not re_match({whole!r}, str({arg(a)}))")
    return out


def exact_shape(values: list[str]) -> str | None:
    r"""The one form every value has, closer than `shape`: a letter run all of them share kept as it is, a
    digit run of one length counted (`htl_029`, `htl_112` -> `htl_\d{3}`, where `hotel_4618` is no hotel
    id); None when their runs differ."""
    if any("/" in v or " " in v or len(v) > 40 for v in values):  # a path or a text: no id, its form says little
        return None
    split = [re.findall(r"\d+|[A-Za-z]+|.", v, flags=re.S) for v in values]
    if not split or len({len(p) for p in split}) != 1:
        return None
    out = []
    for column in zip(*split, strict=True):
        if all(c.isdigit() for c in column):
            lengths = {len(c) for c in column}
            out.append(rf"\d{{{lengths.pop()}}}" if len(lengths) == 1 else r"\d+")
        elif len(set(column)) == 1:
            out.append(re.escape(column[0]))
        elif all(c.isalpha() for c in column):
            out.append("[A-Za-z]+")
        else:
            return None
    return "".join(out)


def shape(text: str) -> str:
    """A value's form as a regular expression: `2026-03-24T16:51` -> `\\d+\\-\\d+\\-\\d+T\\d+:\\d+`."""
    parts = re.findall(r"\d+|[A-Za-z]+|.", text, flags=re.S)
    return "".join(r"\d+" if p[0].isdigit() else "[A-Za-z]+" if p.isalpha() and len(p) > 1 else re.escape(p)
                   for p in parts)


def kind_of(spec: Any) -> str | None:
    """A property's JSON type, its non-null one where it may be null (`anyOf: [string, null]`)."""
    if not isinstance(spec, dict):
        return None
    kinds = spec.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else [kind_of(s) for s in spec.get("anyOf") or []]
    return next((k for k in kinds if k not in (None, "null")), None)


def _has_me(calls: list[Observation]) -> bool:
    return any(isinstance((o.before or {}).get("me"), str) for o in calls[:1])


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)
