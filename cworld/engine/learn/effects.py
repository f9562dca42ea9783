"""A tool's effects learned from state diffs: each change an accepted call made (a record created or
deleted in a map, a field set, a number moved, an item appended) is written as a rule effect whose target
and value are expressions over the call (`args`, `now`, the records the checks found, the user), the one
that explains the most calls; a change only some calls made gets the guard that tells them apart."""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cworld.engine.learn.diff import Change, changes, collections, is_map
from cworld.engine.learn.loops import learn_loops
from cworld.engine.learn.pointers import pointed
from cworld.engine.learn.scope import MISSING, Scope, arg, key_forms
from cworld.engine.learn.statements import learn_statements
from cworld.engine.learn.traffic import Observation
from cworld.engine.rules.expr import replaced
from cworld.engine.rules.spec import Effect
from cworld.values import parse_time

_COUNTER_ID = re.compile(r"^([A-Za-z]+)_(\d+)$")
_FRESH = re.compile(r"^([A-Za-z]+[_-])?[0-9a-f]{8,40}$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$")
_MAX_LITERAL = 200
_OWN_KEY = "own_key"
"""a created record's own key while learning; `<as>_key` once each create has its name"""


@dataclass
class Slot:
    """One place an effect writes, across the calls that wrote it: candidate expressions per call."""

    kind: str
    target: str
    name: str
    key_expr: str | None = None
    id_prefix: str | None = None
    calls: list[Observation] = field(default_factory=list)
    options: list[list[str]] = field(default_factory=list)
    fields: dict[str, list[list[str]]] = field(default_factory=dict)


@dataclass
class LearnedEffect:
    effect: Effect
    support: int
    names: set[str]


def learn_effects(oks: list[Observation], scopes: dict[int, Scope], names: list[str]) -> list[LearnedEffect]:
    """The effects the accepted calls' state diffs support, most supported first."""
    slots: dict[tuple[str, str, str], Slot] = {}
    statements, whole = learn_statements(oks, scopes)
    loops, explained = learn_loops(oks, scopes)
    loops = [loop for loop in loops if _target(loop.effect) not in whole]
    for o in oks:
        if o.before is None or o.after is None:
            continue
        scope = scopes[id(o)]
        for change in changes(o.before, o.after):
            if (change.path[:1] or (change.key,))[0] in whole:
                continue  # the statement gives that collection whole
            if (id(o), "/".join((*change.path, change.key))) not in explained:
                _collect(change, o, scope, names, slots)
    made = {key: _effect(slot, oks, scopes, names) for key, slot in slots.items()}
    _filled_later(slots, made)
    out = []
    for key, effect in made.items():
        moved = made.get(("add", *key[1:]))
        if effect is None or key[0] == "set" and moved is not None and _rather(moved, effect):
            continue  # a number that moved is an add, not a set that happens to fit some calls
        if key[0] == "add" and (kept := made.get(("set", *key[1:]))) is not None and not _rather(effect, kept):
            continue
        out.append(effect)
    out += [LearnedEffect(loop.effect, loop.support, loop.names) for loop in loops]
    out += [LearnedEffect(effect, support, set()) for effect, support in statements]
    out.sort(key=lambda e: -e.support)
    return _shared_keys(_ordered(out))


def _target(effect: Effect) -> str:
    """The top-level collection an effect writes (an `each` loop's first inner effect's)."""
    inner = effect.do[0] if effect.each is not None and effect.do else effect
    name = inner.create or inner.delete or inner.set or inner.add or inner.append or ""
    return re.split(r"[\[.(]", name, maxsplit=1)[0]


def _filled_later(slots: dict[tuple[str, str, str], Slot], made: dict[tuple[str, str, str], LearnedEffect | None]) -> None:
    """A record made keyed by ids (a hotel's booked nights, `{'2026-09-20': 1}`) that an add or set of the
    same call fills entry by entry is made empty: its entries are the ones the call names, which the add
    writes (the literal keys of the nights seen would be wrong on any other night, and the add doubles
    them)."""
    for key, slot in slots.items():
        effect = made.get(key)
        if slot.kind != "create" or effect is None or not slot.key_expr or not slot.fields or \
                not all(_is_id(f) for f in slot.fields):
            continue
        inner = f"{slot.target}[{slot.key_expr}]"
        if any(k[0] in ("add", "set") and k[1] == inner and e is not None and e.effect.key is not None
               for k, e in made.items()):
            effect.effect = effect.effect.model_copy(update={"record": "{}"})


def _rather(add: LearnedEffect, put: LearnedEffect) -> bool:
    """The add explains the number at least as often as the set, and the set gives no more than a constant."""
    return add.support > put.support or add.support == put.support and (
        _literal(_value_of(put.effect)) or not _literal(_value_of(add.effect)))


def _value_of(effect: Effect) -> str:
    return str(effect.value if effect.value is not None else next(iter((effect.to or {}).values()), ""))


def _shared_keys(effects: list[LearnedEffect]) -> list[LearnedEffect]:
    """Each create binds its own record (`made`, `made_2`, ...); a second create from the same id counter
    files its record under the first one's key (a transfer's code under the transfer's id), as the
    service did: one counter step, not two."""
    first: dict[str, str] = {}
    for i, e in enumerate(effects):
        made = e.effect
        if made.create is None:
            continue
        name = "made" if not first else f"made_{len(first) + 1}"
        record = made.record.replace(_OWN_KEY, f"{name}_key") if isinstance(made.record, str) else made.record
        update: dict[str, Any] = {"as_": name, "record": record}
        if made.id is not None and made.id in first:
            update.update(id=None, key=f"{first[made.id]}_key")
        elif made.id is not None:
            first[made.id] = name
        else:
            first[f"key:{i}"] = name
        e.effect = made.model_copy(update=update)
    return effects


def _ordered(effects: list[LearnedEffect]) -> list[LearnedEffect]:
    """Creates first (what later effects may name), deletes last."""
    rank = {"create": 0, "set": 1, "add": 1, "append": 1, "each": 1, "delete": 2}
    return sorted(effects, key=lambda e: rank[_kind(e.effect)])


def _kind(effect: Effect) -> str:
    return next(k for k in ("create", "set", "add", "append", "delete", "each") if getattr(effect, k) is not None)


def _collect(change: Change, o: Observation, scope: Scope, names: list[str], slots: dict[tuple[str, str, str], Slot]) -> None:
    target = _path_expr(change.path, o.before or {}, scope)
    if target is None:
        return
    if change.kind == "create":
        match = _COUNTER_ID.match(change.key)
        prefix = match.group(1) if match and int(match.group(2)) == o.ids.get(match.group(1), -1) + 1 else None
        key_expr = None if prefix else _first(_element(change.key, scope))
        if prefix is None and key_expr is None:
            return
        slot = slots.setdefault(("create", target, prefix or key_expr or ""),
                                Slot("create", target, "", key_expr=key_expr, id_prefix=prefix))
        slot.calls.append(o)
        for f in change.new or {}:
            slot.fields.setdefault(str(f), [[] for _ in slot.calls[1:]])  # one list per call, in order
        for f in slot.fields:
            value = (change.new or {}).get(f, MISSING)
            made = [_OWN_KEY] if value == change.key else []  # a record holding its own key
            counted = _counts(value, target, change.new or {}, scope)
            slot.fields[f].append(made + explain(value, None, scope, names) + counted)
        return
    if change.kind == "delete":
        key_expr = _first(_element(change.key, scope))
        if key_expr is None:
            return
        slot = slots.setdefault(("delete", target, key_expr), Slot("delete", target, "", key_expr=key_expr))
        slot.calls.append(o)
        return
    key_expr = _first(_element(change.key, scope)) if _is_id(change.key) or _named_by_argument(change, o) else None
    name = change.key if key_expr is None else ""
    old, new = change.old, change.new
    if isinstance(old, int | float) and isinstance(new, int | float) and not isinstance(new, bool) and old != new:
        slot = slots.setdefault(("add", target, name or key_expr or ""), Slot("add", target, name, key_expr=key_expr))
        slot.calls.append(o)
        slot.options.append(explain(round(new - old, 2) if isinstance(new, float) else new - old, None, scope, names,
                                    negate=True))
    if isinstance(old, list) and isinstance(new, list) and new[: len(old)] == old and len(new) == len(old) + 1:
        slot = slots.setdefault(("append", target, name), Slot("append", target, name, key_expr=key_expr))
        slot.calls.append(o)
        slot.options.append(explain(new[-1], None, scope, names))
    slot = slots.setdefault(("set", target, name or key_expr or ""), Slot("set", target, name, key_expr=key_expr))
    slot.calls.append(o)
    after = _at(o.after or {}, change.path)
    slot.options.append(explain(new, old, scope, names) + (_lengths(new, after) if name else []))


def _named_by_argument(change: Change, o: Observation) -> bool:
    """A field the call named (the cabin a seat is sold in: `sold[flight][args['cabin']]`): its name is an
    argument's value, and a number moved there."""
    return isinstance(change.new, int | float) and not isinstance(change.new, bool) and any(
        isinstance(v, str) and v == change.key for v in o.arguments.values())


def _at(state: dict[str, Any], path: tuple[str, ...]) -> Any:
    """The value at a change's path in a state (the record after the call)."""
    value: Any = state
    for part in path:
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _is_id(key: str) -> bool:
    """A record's key, not a field's name: an id with digits, or a path (`docs/notes.md`)."""
    return bool(re.search(r"\d", key)) and not key.isidentifier() or bool(_COUNTER_ID.match(key)) or \
        bool(re.search(r"[./]", key))


def _path_expr(path: tuple[str, ...], state: dict[str, Any], scope: Scope) -> str | None:
    """`events[str(args['event_id'])]['attendees']`: the elements that are record keys in a map of records
    named by the call, the rest literal."""
    if not path or not path[0].isidentifier():
        return None if path else "state"
    expr, value = path[0], state.get(path[0])
    for part in path[1:]:
        is_key = is_map(value) and _is_id(part)
        options = _element(part, scope) if is_key else []
        chosen = _first(options)
        if is_key and chosen is None:
            return None
        expr = f"{expr}[{chosen}]" if is_key else f"{expr}[{part!r}]"
        value = value.get(part) if isinstance(value, dict) else None
    return expr


def _element(value: str, scope: Scope) -> list[str]:
    """Expressions giving a key: an argument, a found record's own key, the user."""
    out = []
    args = scope.obs.args
    for name, given in args.items():
        if given is not None and not isinstance(given, dict | list):
            out += [form for form in key_forms(name, given, scope.obs.before) if scope.value(form) == value]
            out += _word(name, given, value)
    if scope.bound("me") == value:
        out.append("me")
    return out


def _word(name: str, given: Any, value: str) -> list[str]:
    """A key that is a word of a statement the call gave (`CREATE TABLE notes (...)` makes `notes`): the
    last word before its first parenthesis, or one of its first words."""
    if not isinstance(given, str) or " " not in given.strip():
        return []
    out = []
    if given.split("(")[0].split()[-1:] == [value]:
        out.append(f"str({arg(name)}).split('(')[0].split()[-1]")
    out += [f"str({arg(name)}).split()[{i}]" for i, w in enumerate(given.split()[:6]) if w == value]
    return out


def _first(options: list[str]) -> str | None:
    return options[0] if options else None


def explain(value: Any, old: Any, scope: Scope, names: list[str], negate: bool = False, whole: bool = True) -> list[str]:
    """Expressions that give `value` in this call, most general first; a literal last."""
    if value is MISSING:
        return []
    out: list[str] = []
    for name, given in scope.obs.args.items():
        if given is not None and given == value and not isinstance(value, bool):
            out.append(arg(name))
        if negate and isinstance(given, int | float) and not isinstance(given, bool) and given and -given == value:
            out.append(f"-{arg(name)}")
        out += _normalized(value, given, name)
        if isinstance(given, list | str) and given and len(given) == value and not isinstance(value, bool):
            out.append(f"len({arg(name)})")
        out += _derived(value, given, name, scope)
    if isinstance(value, str) and value == scope.obs.now:
        out.append("now")
    elif isinstance(value, str) and _TIME.match(value):
        out += _times(value, scope)
    if scope.bound("me") == value and isinstance(value, str):
        out.append("me")
    for name in names:
        record = scope.bound(name)
        if isinstance(record, dict):
            out += [name] if record == value else []
            out += [f"{name}.get({f!r})" for f, v in record.items() if v == value and isinstance(f, str) and v not in (None, "", [], {})]
    out += pointed(value, scope)
    if isinstance(value, str) and not out and whole and len(value) <= 200:
        out += _prefixed(value, scope, names)
    if isinstance(old, bool) and isinstance(value, bool) and old != value:
        out.append("not_old")
    out += _edited(value, old, scope)
    out += _removed(value, old, scope, names)
    if isinstance(value, list) and value and not out:
        out += _looked_up(value, scope)
    if isinstance(value, list) and value and not out and len(value) <= 12:
        items = [explain(v, None, scope, names) for v in value]
        if all(items) and not all(_literal(i[0]) for i in items):
            out.append("[" + ", ".join(i[0] for i in items) + "]")
    if isinstance(value, dict) and value and not out and len(value) <= 12:
        parts = []
        for key, sub in value.items():
            options = explain(sub, None, scope, names)
            if not options:
                break
            name = "me" if key == scope.bound("me") else repr(str(key))  # the user's own entry (`access[me]`)
            parts.append(f"{name}: {_value_expr(options[0], '{}', str(key))}")
        else:
            out.append("{" + ", ".join(parts) + "}")
    if isinstance(value, str) and _FRESH.match(value) and not out:
        prefix = (_FRESH.match(value).group(1) or "")  # type: ignore[union-attr]
        out.append(f"fresh:{prefix}:{len(value) - len(prefix)}")
    if _literal_ok(value):
        out.append(repr(value) if not isinstance(value, dict | list) else json_literal(value))
    return out


def _derived(value: Any, given: Any, name: str, scope: Scope) -> list[str]:
    """A key made from the argument (a path less the allowed folder), or its folder (`parent`)."""
    if not isinstance(value, str) or not isinstance(given, str):
        return []
    out = []
    for form in key_forms(name, given, scope.obs.before)[1:]:
        out += [form] if scope.value(form) == value else []
        folder = f"{form}.rpartition('/')[0]"
        out += [folder] if scope.value(folder) == value else []
    return out


def _edited(value: Any, old: Any, scope: Scope) -> list[str]:
    """A text changed by the (old, new) pairs of a list argument's items, in order (a file's edits):
    `edit:ARG:OLD_FIELD:NEW_FIELD`, written over the target's field once it is known."""
    if not isinstance(value, str) or not isinstance(old, str) or value == old:
        return []
    out = []
    for name, given in scope.obs.args.items():
        items = [i for i in given if isinstance(i, dict)] if isinstance(given, list) else []
        if not items or len(items) != len(given):
            continue
        fields = sorted({k for i in items for k, v in i.items() if isinstance(k, str) and isinstance(v, str)})
        for a in fields:
            for b in fields:
                if a != b and replaced(old, [(i.get(a), i.get(b)) for i in items]) == value:
                    out.append(f"edit:{name}:{a}:{b}")
    return out


def _lengths(value: Any, record: Any) -> list[str]:
    """A number that is the length of a text field of the record after the call (a file's size after its
    content changed): `length:FIELD`, read once the earlier effects have run."""
    if not isinstance(value, int) or isinstance(value, bool) or not isinstance(record, dict):
        return []
    return [f"length:{f}" for f, v in record.items() if isinstance(f, str) and isinstance(v, str) and len(v) == value]


def _normalized(value: Any, given: Any, name: str) -> list[str]:
    """An argument the service stored normalized: upper or lower case, or without surrounding space
    (a passport number written `EXAMPLE` from `example`)."""
    if not (isinstance(value, str) and isinstance(given, str)) or given == value or not value:
        return []
    forms = {"upper": given.upper(), "lower": given.lower(), "strip": given.strip()}
    return [f"str({arg(name)}).{method}()" for method, made in forms.items() if made == value]


def _times(value: str, scope: Scope) -> list[str]:
    """A time written as an argument's time (normalized, or moved by a fixed amount), or as `now` moved."""
    out = []
    for name, given in scope.obs.args.items():
        seconds = _seconds_after(value, given) if isinstance(given, str) and given != value else None
        if seconds is not None and abs(seconds) <= 400 * 86400:
            out.append(f"later({arg(name)}, seconds={seconds})")
    seconds = _seconds_after(value, scope.obs.now)
    if seconds is not None and seconds % 60 == 0 and 0 < abs(seconds) <= 400 * 86400:
        out.append(f"later(now, seconds={seconds})")
    return out


def _counts(value: Any, target: str, record: dict[str, Any], scope: Scope) -> list[str]:
    """A number that counts the collection's records before the call (all, or those sharing a field the
    call gave with the new one), or one more: a new list's position on its board."""
    if not isinstance(value, int) or isinstance(value, bool):
        return []
    records = scope.value(target)
    if not isinstance(records, dict):
        return []
    out = []
    groups = [(f"len({target})", len(records))]
    for f, v in record.items():
        for name, given in scope.obs.args.items():
            if isinstance(given, str) and given == v and isinstance(f, str):
                n = sum(1 for r in records.values() if isinstance(r, dict) and r.get(f) == v)
                groups.append((f"len([r for r in {target}.values() if r.get({f!r}) == {arg(name)}])", n))
    for expr, n in groups:
        out += [f"{expr} + {value - n}"] if value - n in (0, 1) else []
    return out


def _looked_up(value: list[Any], scope: Scope) -> list[str]:
    """A list of records an argument's ids name, each shown by some of its fields (a message's recipients
    from the contact ids given: `[{'name': ..., 'email': ...} for v in args['to']]`)."""
    if not all(isinstance(v, dict) and v for v in value) or scope.obs.before is None:
        return []
    keys = list(value[0])
    out = []
    for name, given in scope.obs.args.items():
        if not (isinstance(given, list) and len(given) == len(value)):
            continue
        for coll in collections(scope.obs.before):
            records = scope.value(coll)
            found = [records.get(str(g)) if isinstance(records, dict) else None for g in given]
            if all(isinstance(r, dict) and list(v) == keys and all(r.get(k) == v[k] for k in keys)
                   for r, v in zip(found, value, strict=True)):
                fields = ", ".join(f"{k!r}: ({coll}.get(str(v)) or {{}}).get({k!r})" for k in keys)
                out.append(f"[{{{fields}}} for v in ({arg(name)} or [])]")
    return out


def _prefixed(value: str, scope: Scope, names: list[str]) -> list[str]:
    """A short fixed prefix before a value the call names (`'Re: ' + message.get('subject')`)."""
    out = []
    for cut in range(1, min(8, len(value))):
        head, tail = value[:cut], value[cut:]
        if tail:
            out += [f"{head!r} + {e}" for e in explain(tail, None, scope, names, whole=False) if not _literal(e) and
                    not e.startswith(("later(", "fresh:", "drop:", "[", "{"))]
    return out


def _removed(value: Any, old: Any, scope: Scope, names: list[str]) -> list[str]:
    """A list that lost one item the call names (`members` less the user): `drop:EXPR`."""
    if not (isinstance(old, list) and isinstance(value, list) and len(value) == len(old) - 1):
        return []
    gone = [v for v in old if v not in value]
    if len(gone) != 1 or [v for v in old if v != gone[0]] != value:
        return []
    return [f"drop:{e}" for e in explain(gone[0], None, scope, names) if not _literal(e)]


def json_literal(value: Any) -> str:
    """A JSON value as an expression (true/false/null as Python's)."""
    return repr(json.loads(json.dumps(value)))


def _literal_ok(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool) or len(json.dumps(value, default=str)) <= _MAX_LITERAL


def _seconds_after(value: str, now: str) -> int | None:
    """Seconds from `now` to `value`, read as the rules' `later` reads times (no zone: UTC)."""
    a, b = parse_time(value), parse_time(now)
    return None if a is None or b is None else int((a - b).total_seconds())


def _choose(options: list[list[str]], calls: list[Observation]) -> tuple[str | None, int]:
    """The expression that explains the most calls (a non-literal wins a tie), and how many; an argument
    with the value the service took when it was not given (`args['quantity'] if ... else 1`) where that
    explains more."""
    counts: Counter[str] = Counter(e for opts in options for e in dict.fromkeys(opts))
    if not counts:
        return None, 0
    top = max(counts, key=lambda e: (counts[e], not _literal(e), -len(e)))
    best, most = top, counts[top]
    for name in calls[0].args if calls else []:
        given = arg(name)
        if not counts.get(given):
            continue
        rest = Counter(e for opts, o in zip(options, calls, strict=False) if given not in opts and o.args.get(name) is None
                       for e in dict.fromkeys(opts) if _literal(e))
        if rest:
            literal, n = rest.most_common(1)[0]
            if counts[given] + n > most:
                best, most = f"({given} if {given} is not None else {literal})", counts[given] + n
    return _or_else(options, calls, best, most)


def _or_else(options: list[list[str]], calls: list[Observation], best: str | None, most: int) -> tuple[str | None, int]:
    """An expression over an argument where it was given, another where it was not (a new branch starts at
    the base branch's commit when one is named, else at the head's), where that explains more calls."""
    for name in calls[0].args if calls else []:
        given = arg(name)
        named = Counter(e for opts in options for e in dict.fromkeys(opts) if given in e and not _literal(e))
        if not named:
            continue
        first, n = max(named.items(), key=lambda kv: (kv[1], -len(kv[0])))
        rest = Counter(e for opts, o in zip(options, calls, strict=False) if first not in opts and o.args.get(name) is None
                       for e in dict.fromkeys(opts) if given not in e)
        if rest:
            other, m = max(rest.items(), key=lambda kv: (kv[1], not _literal(kv[0]), -len(kv[0])))
            if n + m > most:
                best, most = f"({first} if {given} is not None else {other})", n + m
    return best, most


def _literal(expr: str) -> bool:
    """An expression that is a constant (a list or record of constants too)."""
    try:
        ast.literal_eval(expr)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


def _value_expr(expr: str, target: str, name: str) -> str:
    if expr == "not_old":
        return f"not {target}.get({name!r})"
    if expr.startswith("drop:"):
        return f"[v for v in ({target}.get({name!r}) or []) if v != {expr[5:]}]"
    if expr.startswith("fresh:"):
        _, prefix, length = expr.split(":")
        return f"{prefix!r} + secret(seed, now, server_ids, length={length})"
    if expr.startswith("edit:"):
        _, given, a, b = expr.split(":")
        return (f"replaced({target}.get({name!r}), [(i.get({a!r}), i.get({b!r})) for i in ({arg(given)} or [])])")
    if expr.startswith("length:"):
        return f"len(str({target}.get({expr.split(':', 1)[1]!r}) or ''))"
    return expr


def _effect(slot: Slot, oks: list[Observation], scopes: dict[int, Scope], names: list[str]) -> LearnedEffect | None:
    n = len(slot.calls)
    if slot.kind == "create":
        record = {}
        for f, options in slot.fields.items():
            expr, _ = _choose(options, slot.calls)
            if expr is not None:
                record[f] = _value_expr(expr, "{}", f)
        body = "{" + ", ".join(f"{f!r}: {e}" for f, e in record.items()) + "}"
        spec: dict[str, Any] = {"create": slot.target, "record": body, "as": "made"}
        spec.update({"id": slot.id_prefix} if slot.id_prefix else {"key": slot.key_expr})
        effect = Effect.model_validate(spec)
    elif slot.kind == "delete":
        effect = Effect.model_validate({"delete": slot.target, "key": slot.key_expr})
    else:
        expr, count = _choose(slot.options, slot.calls)
        if expr is None or count < max(1, n // 2):
            return None
        value = _value_expr(expr, slot.target, slot.name)
        spec = {slot.kind: slot.target}
        spec.update({"key": slot.key_expr, "value": value} if slot.key_expr else {"to": {slot.name: value}})
        effect = Effect.model_validate(spec)
    guard = _guard(slot, oks, scopes, names)
    if guard == "never":
        return None
    if guard:
        effect.if_ = guard
    return LearnedEffect(effect, n, _names(effect))


def _names(effect: Effect) -> set[str]:
    text = json.dumps(effect.model_dump(by_alias=True, exclude_none=True))
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def _named_guard(slot: Slot, others: list[Observation], scopes: dict[int, Scope]) -> str | None:
    """`KEY in coll` for a record an argument names that was in a collection on the calls that made the change
    and on (nearly: one in ten) none of the others (a folder moved: its `directories` entry goes with it, no
    file is made), else None."""
    first = slot.calls[0]
    colls = collections(first.before or {})
    fresh = f"{slot.key_expr} not in {slot.target}" if slot.kind == "create" and slot.key_expr else None
    if fresh is not None and all(scopes[id(o)].holds(fresh) for o in slot.calls):
        others = [o for o in others if scopes[id(o)].holds(fresh)]  # a record already there is left to the sets
    else:
        fresh = None
    for name, given in first.arguments.items():
        for form in key_forms(name, given, first.before)[1:]:
            for coll in colls:
                cond = f"{form} in {coll}"
                if others and all(scopes[id(o)].holds(cond) for o in slot.calls) and \
                        sum(scopes[id(o)].holds(cond) for o in others) <= len(others) // 10:
                    return cond if fresh is None else f"{fresh} and {cond}"
    return None


def _guard(slot: Slot, oks: list[Observation], scopes: dict[int, Scope], names: list[str]) -> str | None:
    """None when the change happened in (nearly) every accepted call whose target exists; else the argument
    condition that was given exactly when it happened; `never` when it happened in too few."""
    happened = {id(o) for o in slot.calls}
    reachable = [o for o in oks if o.after is not None and scopes[id(o)].value(slot.target) is not MISSING]
    others = [o for o in reachable if id(o) not in happened]
    if not others:
        return None
    named = _named_guard(slot, others, scopes)
    if named is not None:  # the record an argument names was there exactly then (a folder moved, not a file)
        return named
    if len(others) <= len(happened) // 10:
        return None
    if slot.kind == "create" and slot.key_expr:  # a record made where none was, else left to the sets
        fresh = f"{slot.key_expr} not in {slot.target}"
        if all(scopes[id(o)].holds(fresh) for o in slot.calls) and not any(scopes[id(o)].holds(fresh) for o in others):
            return fresh
    for name in names:  # a record the call named was there exactly then (a file moved, not a folder)
        if all(scopes[id(o)].holds(name) for o in slot.calls) and not any(scopes[id(o)].holds(name) for o in others):
            return name
    given = [name for name in (slot.calls[0].tool.input_schema or {}).get("properties") or {}]
    for name in given:
        cond = f"{arg(name)} is not None"
        if all(slot_o.args.get(name) is not None for slot_o in slot.calls) and \
                all(o.args.get(name) is None for o in others):
            return cond
    return None if len(happened) >= len(others) else "never"
