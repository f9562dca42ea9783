"""The names a rule's expressions see for one observed call (the state before it, `args`, `now`), so every
candidate condition or value the learner weighs is evaluated exactly as the rules engine will run it."""

from __future__ import annotations

import re
from typing import Any

from cworld.engine.learn.traffic import Observation
from cworld.engine.rules.expr import Evaluator, RuleExprError
from cworld.errors import ContentError

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
MISSING = object()


def arg(name: str) -> str:
    """How a rule names an argument."""
    return f"args[{name!r}]"


def key_forms(name: str, given: Any, state: dict[str, Any] | None) -> list[str]:
    """Expressions that may turn an argument into a record's key: the argument itself, or the argument less a
    folder the state names (`root`), as a file's key is its path relative to the allowed folder
    (`str(args['path']).removeprefix(root + '/')`)."""
    out = [f"str({arg(name)})"]
    if not isinstance(given, str):
        return out
    for top, value in (state or {}).items():
        if _NAME.match(top) and isinstance(value, str) and value.startswith("/") and given.startswith(value + "/"):
            out.append(f"str({arg(name)}).removeprefix({top} + '/')")
    return out


def field_of(record: str, name: str) -> str:
    return f"{record}.get({name!r})"


class Scope:
    """An evaluator over one observation's state before the call; names can be bound as learned steps run."""

    def __init__(self, obs: Observation, state: dict[str, Any] | None = None) -> None:
        self.obs = obs
        base = state if state is not None else (obs.before or {})
        names = {k: v for k, v in base.items() if _NAME.match(k)}
        names.update(state=base, args=obs.args, now=obs.now, seed=0, server_ids=dict(obs.ids), consts=obs.reference)
        self.ev = Evaluator(names)
        self._cache: dict[str, Any] = {}

    def value(self, expr: str) -> Any:
        """The expression's value, or MISSING when it fails (a candidate that fails here does not fit here)."""
        found = self._cache.get(expr, None)
        if found is not None or expr in self._cache:
            return found
        try:
            found = self.ev(expr)
        except (RuleExprError, ContentError, RecursionError):
            found = MISSING
        self._cache[expr] = found
        return found

    def holds(self, expr: str) -> bool:
        value = self.value(expr)
        return value is not MISSING and bool(value)

    def bind(self, name: str, value: Any) -> None:
        self.ev.bind(name, value)
        self._cache.clear()

    def bound(self, name: str) -> Any:
        return self.ev.names.get(name, MISSING)
