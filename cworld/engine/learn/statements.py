"""An argument that is a statement the service applies to its state (SQL run on a database's tables): one
candidate effect from a fixed repertoire of statement languages, each a rule function that applies a
statement to a collection as the language's own engine does. It is proposed where the argument reads as a
statement of the language and the collection changed, and kept only where it gives the state after the call
on (almost) every accepted call and on (almost) every one that changed the collection: the diffs decide, the
service's code is never read."""

from __future__ import annotations

import re
from typing import Any

from cworld.engine.learn.scope import MISSING, Scope
from cworld.engine.learn.traffic import Observation
from cworld.engine.rules.spec import Effect

#: (how a statement of the language starts, the rule function that applies one to a collection)
REPERTOIRE = ((re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|WITH|PRAGMA)\b", re.I),
               "sql_tables"),)
#: the share of accepted calls, and of those that changed the collection, the expression must reproduce
#: exactly (a rare miss: the engine's own quirk; a call that changed nothing proves little)
MIN_SHARE = 0.9


def learn_statements(oks: list[Observation], scopes: dict[int, Scope]) -> tuple[list[tuple[Effect, int]], set[str]]:
    """The statement effects the accepted calls support, and the collections they account for whole (their
    other changes are not learned one by one)."""
    seen = [o for o in oks if o.before is not None and o.after is not None]
    out: list[tuple[Effect, int]] = []
    covered: set[str] = set()
    candidates = _candidates(seen)
    for target in _changed(seen):
        moved = {id(o) for o in seen if (o.before or {}).get(target) != (o.after or {}).get(target)}
        for expr in [f"{function}({target}, args[{name!r}])" for name, function in candidates]:
            hits = [o for o in seen if _reproduces(scopes[id(o)], expr, o, target)]  # each call's statement run once
            support, made = len(hits), sum(id(o) in moved for o in hits)
            if made >= 2 and made >= MIN_SHARE * len(moved) and support >= MIN_SHARE * len(seen):
                out.append((Effect(set="state", key=repr(target), value=expr), support))
                covered.add(target)
                break
    return out, covered


def _changed(seen: list[Observation]) -> list[str]:
    """Top-level collections some accepted call changed."""
    names = {k for o in seen for k in set(o.before or {}) | set(o.after or {})
             if k.isidentifier() and (o.before or {}).get(k) != (o.after or {}).get(k)}
    return sorted(names)


def _candidates(seen: list[Observation]) -> list[tuple[str, str]]:
    """(argument, rule function) where most accepted calls gave the argument as a statement of the language."""
    out = []
    names = sorted({k for o in seen for k, v in o.args.items() if isinstance(v, str)})
    for name in names:
        for pattern, function in REPERTOIRE:
            read = sum(isinstance(o.args.get(name), str) and bool(pattern.match(o.args[name])) for o in seen)
            if read >= MIN_SHARE * len(seen):
                out.append((name, function))
    return out


def _reproduces(scope: Scope, expr: str, obs: Observation, target: str) -> bool:
    value: Any = scope.value(expr)
    return value is not MISSING and value == (obs.after or {}).get(target)
