"""Effects that loop over a list argument: a call that made (or removed) several records of one collection,
one for each item it was given (a knowledge graph's `create_entities(entities=[...])`, `delete_entities(
entityNames=[...])`), is learned as one `each` effect over that argument, the record's key and fields read
off its item (`str(item.get('name'))`, a key joined from fields: `from|relationType|to`)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cworld.engine.learn.diff import Change, changes
from cworld.engine.learn.scope import Scope, arg, key_forms
from cworld.engine.learn.traffic import Observation
from cworld.engine.rules.spec import Effect

_SEPARATORS = ("|", ":", "/", "-", "_", " ")
ITEM = "item"
_ABOVE = "above:"
"""an ancestors loop's `over`: the key form of the path argument follows"""


@dataclass
class _Loop:
    """One loop (create or delete, in one collection, over one list argument, keyed one way) across calls."""

    kind: str
    target: str
    over: str
    key: str
    calls: list[Observation] = field(default_factory=list)
    fields: dict[str, Counter[str]] = field(default_factory=dict)
    explained: set[tuple[int, str]] = field(default_factory=set)
    deeper: bool = False
    """(an ancestors loop) some call made a record above the one its path names"""


@dataclass
class LoopEffect:
    effect: Effect
    support: int
    names: set[str]


def learn_loops(oks: list[Observation], scopes: dict[int, Scope]) -> tuple[list[LoopEffect], set[tuple[int, str]]]:
    """The `each` effects the accepted calls support, and the changes they explain (call id, path/key), so
    they are not learned again one by one."""
    loops: dict[tuple[str, str, str, str], _Loop] = {}
    explained: set[tuple[int, str]] = set()
    for o in oks:
        if o.before is None or o.after is None:
            continue
        groups: dict[tuple[str, str], list[Change]] = {}
        for c in changes(o.before, o.after):
            if c.kind in ("create", "delete") and len(c.path) == 1 and c.path[0].isidentifier():
                groups.setdefault((c.kind, c.path[0]), []).append(c)
        for (kind, target), made in groups.items():
            found = _matched(o, made) or (_cascade(o, made, target) if kind == "delete" else
                                          _ancestors(o, made, scopes[id(o)]))
            if found is None:
                continue
            over, key, pairs = found
            loop = loops.setdefault((kind, target, over, key), _Loop(kind, target, over, key))
            loop.calls.append(o)
            loop.deeper = loop.deeper or len(made) > 1
            (loop.explained if over.startswith(_ABOVE) else explained).update((id(o), f"{target}/{c.key}") for c in made)
            for change, item in pairs:
                for name, value in (change.new or {}).items() if kind == "create" else ():
                    loop.fields.setdefault(str(name), Counter()).update(_item_value(value, item))
    kept = [loop for loop in loops.values() if len(loop.calls) >= 2 and (loop.deeper or not loop.over.startswith(_ABOVE))]
    explained.update(*(loop.explained for loop in kept))
    out = [_effect(loop) for loop in kept]
    lists, touched = _list_loops(oks)
    return [e for e in out if e is not None] + lists, explained | touched


def _list_loops(oks: list[Observation]) -> tuple[list[LoopEffect], set[tuple[int, str]]]:
    """A list field of the records a list argument's items name (by a field of theirs) that gained the
    item's values it lacked, or lost the item's values (observations added to, or removed from, entities)."""
    votes: dict[tuple[str, str, str, str, str, str], list[Observation]] = {}
    touched: set[tuple[int, str]] = set()
    for o in oks:
        if o.before is None or o.after is None:
            continue
        for c in changes(o.before, o.after):
            if c.kind != "set" or len(c.path) != 1 or not isinstance(c.old, dict) or not isinstance(c.new, dict):
                continue
            for form in _list_forms(o, c):
                votes.setdefault((c.path[0], *form), []).append(o)
                touched.add((id(o), f"{c.path[0]}/{c.key}"))
    out = []
    for (coll, over, key, field_, given, how), calls in votes.items():
        if len({id(o) for o in calls}) < 2:
            continue
        record = f"{coll}[str({ITEM}.get({key!r}))]"
        had = f"({record}.get({field_!r}) or [])"
        new = f"(item.get({given!r}) or [])"
        value = (f"{had} + [v for v in {new} if v not in {had}]" if how == "add" else
                 f"[v for v in {had} if v not in {new}]")
        inner = {"set": record, "to": {field_: value}, "if": f"str({ITEM}.get({key!r})) in {coll}"}
        effect = Effect.model_validate({"each": f"({arg(over)} or [])", "as": ITEM, "do": [inner]})
        out.append(LoopEffect(effect, len(calls), {coll, "args"}))
    return out, touched


def _list_forms(o: Observation, c: Change) -> list[tuple[str, str, str, str, str]]:
    """(argument, item key field, list field, item list field, add/remove) explaining a record's change."""
    out = []
    for name, given in o.args.items():
        items = [i for i in given if isinstance(i, dict)] if isinstance(given, list) else []
        for item in items:
            for key, value in item.items():
                if value != c.key:
                    continue
                for f, new in c.new.items():
                    old = c.old.get(f)
                    if not isinstance(new, list) or not isinstance(old, list) or new == old:
                        continue
                    for g, values in item.items():
                        if not isinstance(values, list):
                            continue
                        if new == old + [v for v in values if v not in old]:
                            out.append((name, key, f, g, "add"))
                        elif new == [v for v in old if v not in values]:
                            out.append((name, key, f, g, "remove"))
    return out


def _matched(o: Observation, made: list[Change]) -> tuple[str, str, list[tuple[Change, Any]]] | None:
    """The list argument and key form that pair every change with one of its items."""
    for name, given in o.args.items():
        if not isinstance(given, list) or not given or len(given) < len(made):
            continue
        for key in _key_forms(given[0]):
            pairs = []
            for change in made:
                item = next((i for i in given if _key_of(key, i) == change.key), None)
                if item is None:
                    break
                pairs.append((change, item))
            else:
                return name, key, pairs
    return None


def _ancestors(o: Observation, made: list[Change], scope: Scope) -> tuple[str, str, list[tuple[Change, Any]]] | None:
    """The path an argument names and the folders above it that were not there, each one record (a folder
    made with its missing parents, as `mkdir -p`): every record made is the path or one above it."""
    for name, given in o.args.items():
        if not isinstance(given, str):
            continue
        for form in key_forms(name, given, o.before)[1:]:
            path = scope.value(form)
            if not isinstance(path, str) or not path or not any(c.key == path for c in made):
                continue
            if all(c.key == path or path.startswith(c.key + "/") for c in made):
                return f"{_ABOVE}{form}", f"str({ITEM})", [(c, c.key) for c in made]
    return None


def _cascade(o: Observation, made: list[Change], target: str) -> tuple[str, str, list[tuple[Change, Any]]] | None:
    """Records removed because a field of theirs named an item of a list argument (a deleted entity's
    relations): every removed record has such a field, and none that stayed does."""
    kept = [r for r in ((o.after or {}).get(target) or {}).values() if isinstance(r, dict)]
    for name, given in o.args.items():
        if not isinstance(given, list) or not given or not all(isinstance(g, str) for g in given):
            continue
        fields = sorted({f for c in made for f, v in (c.old or {}).items() if isinstance(f, str) and v in given})
        if fields and all(any((c.old or {}).get(f) in given for f in fields) for c in made) and \
                not any(r.get(f) in given for r in kept for f in fields):
            return name, "cascade:" + ",".join(fields), [(c, None) for c in made]
    return None


def _key_forms(item: Any) -> list[str]:
    """Ways an item may give a record's key: itself, one of its fields, fields joined by a separator."""
    if isinstance(item, str | int) and not isinstance(item, bool):
        return [f"str({ITEM})"]
    if not isinstance(item, dict):
        return []
    names = [k for k, v in item.items() if isinstance(k, str) and isinstance(v, str | int) and not isinstance(v, bool)]
    out = [f"str({ITEM}.get({k!r}))" for k in names]
    for sep in _SEPARATORS:
        for order in _orders(names):
            out.append(f" + {sep!r} + ".join(f"str({ITEM}.get({k!r}))" for k in order))
    return out


def _orders(names: list[str]) -> list[list[str]]:
    """Orders of two or three of the item's fields (a relation's `from|relationType|to`)."""
    from itertools import permutations

    return [list(p) for n in (2, 3) for p in permutations(names, n)][:60]


def _key_of(form: str, item: Any) -> str | None:
    from cworld.engine.rules.expr import Evaluator, RuleExprError

    try:
        return str(Evaluator({ITEM: item})(form))
    except (RuleExprError, TypeError, ValueError):
        return None


def _item_value(value: Any, item: Any) -> list[str]:
    """Expressions over the item giving the value; a literal last."""
    out: list[str] = []
    if isinstance(item, dict):
        out += [f"{ITEM}.get({k!r})" for k, v in item.items() if isinstance(k, str) and v == value]
        if value == [] and not out:
            out += [f"list({ITEM}.get({k!r}) or [])" for k, v in item.items() if isinstance(k, str) and v is None]
    elif item == value:
        out.append(ITEM)
    elif isinstance(item, str) and isinstance(value, str) and item.rpartition("/")[0] == value:
        out.append(f"{ITEM}.rpartition('/')[0]")  # the folder a path lies in
    out.append(repr(json.loads(json.dumps(value))))
    return out


def _effect(loop: _Loop) -> LoopEffect | None:
    over = f"({arg(loop.over)} or [])"
    if loop.over.startswith(_ABOVE):  # the path and each folder above it, outermost first
        path = loop.over.removeprefix(_ABOVE)
        over = f"['/'.join({path}.split('/')[:i + 1]) for i in range(len({path}.split('/')))]"
    if loop.key.startswith("cascade:"):
        named = " or ".join(f"r.get({f!r}) in {over}" for f in loop.key.removeprefix("cascade:").split(","))
        effect = Effect.model_validate({"each": f"[k for k, r in {loop.target}.items() if {named}]", "as": "gone",
                                        "do": [{"delete": loop.target, "key": "gone"}]})
        return LoopEffect(effect, len(loop.calls), {loop.target, "args"})
    if loop.kind == "delete":
        inner: dict[str, Any] = {"delete": loop.target, "key": loop.key, "if": f"{loop.key} in {loop.target}"}
    else:
        record = {name: votes.most_common(1)[0][0] for name, votes in loop.fields.items()}
        body = "{" + ", ".join(f"{n!r}: {e}" for n, e in record.items()) + "}"
        inner = {"create": loop.target, "key": loop.key, "record": body, "if": f"{loop.key} not in {loop.target}"}
    effect = Effect.model_validate({"each": over, "as": ITEM, "do": [inner]})
    return LoopEffect(effect, len(loop.calls), {loop.target, "args"})
