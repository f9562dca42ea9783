"""Candidate refusals on a tally: a number the service keeps per record and per value the call names (a
hotel's rooms booked per night, `hotel_nights[hotel][night]`), which accepted calls moved by an amount
they asked for, refused once the tally and the amount pass a limit: a number field of a record the call
found (the hotel's `rooms`) or the most any accepted call reached. Found from the accepted calls' state
diffs, written as one comparison in the rule language; the learner weighs them as every other candidate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cworld.engine.learn.diff import changes
from cworld.engine.learn.scope import Scope, arg


@dataclass(frozen=True)
class Tally:
    """`coll[args[outer]][args[inner]]` moved by `amount` (an expression) on every accepted call that moved it."""

    coll: str
    outer: str
    inner: str
    amount: str

    @property
    def count(self) -> str:
        return f"(({self.coll}.get(str({arg(self.outer)})) or {{}}).get(str({arg(self.inner)})) or 0)"


def tally_atoms(props: dict[str, Any], calls: list[Any], scopes: dict[int, Scope],
                records: list[str]) -> list[tuple[str, str | None]]:
    """(condition, the found record it reads or None) for each tally the accepted calls moved: over a number
    field of a found record, or over the most any accepted call left it at."""
    oks = [o for o in calls if o.verdict == "ok" and o.before is not None and o.after is not None]
    out: list[tuple[str, str | None]] = []
    for tally in _tallies(props, oks):
        after = f"{tally.count} + {tally.amount}"
        reached = [scopes[id(o)].value(after) for o in oks]
        numbers = [v for v in reached if isinstance(v, int | float) and not isinstance(v, bool)]
        for record in records:
            for f in _number_fields(oks, scopes, record):
                out.append((f"{record} is not None and {after} > ({record}.get({f!r}) or 0)", record))
        if numbers:
            out.append((f"{after} > {max(numbers)}", None))
    return out


def _tallies(props: dict[str, Any], oks: list[Any]) -> list[Tally]:
    """Tallies every accepted call that touched them moved by the same argument (or its default)."""
    seen: dict[tuple[str, str, str], list[tuple[Any, float]]] = {}
    for o in oks:
        for coll, outer, inner, moved in _moves(o):
            for a in _naming(o, outer):
                for b in _naming(o, inner):
                    seen.setdefault((coll, a, b), []).append((o, moved))
    out: list[Tally] = []
    for (coll, a, b), moves in seen.items():
        amount = _amount(props, moves)
        if amount is not None and len(moves) >= 2:
            out.append(Tally(coll, a, b, amount))
    return out


def _moves(o: Any) -> list[tuple[str, str, str, float]]:
    """(collection, outer key, inner key, how much it moved) of each number two keys deep that the call
    moved or started (`hotel_nights/htl_049/2026-09-20`: 4 -> 5)."""
    out: list[tuple[str, str, str, float]] = []
    for c in changes(o.before, o.after):
        if len(c.path) == 2 and _number(c.new) and (c.old is None or _number(c.old)):
            out.append((c.path[0], c.path[1], c.key, c.new - (c.old or 0)))
        elif len(c.path) == 1 and c.kind == "create" and isinstance(c.new, dict):
            out += [(c.path[0], c.key, str(k), v) for k, v in c.new.items() if _number(v)]
    return [m for m in out if m[0].isidentifier()]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _naming(o: Any, key: str) -> list[str]:
    return [name for name, v in o.arguments.items() if isinstance(v, str | int) and str(v) == key]


def _amount(props: dict[str, Any], moves: list[tuple[Any, float]]) -> str | None:
    """The argument every move equals (its default, else 1, when it was not given), else the constant they
    all share."""
    for name, spec in props.items():
        if spec.get("type") not in ("integer", "number"):
            continue
        default = spec.get("default", 1)
        if all((o.args.get(name) if o.args.get(name) is not None else default) == moved for o, moved in moves):
            return f"({arg(name)} if {arg(name)} is not None else {default!r})"
    first = moves[0][1]
    return repr(first) if all(moved == first for _, moved in moves) else None


def _number_fields(oks: list[Any], scopes: dict[int, Scope], record: str) -> list[str]:
    """The number fields the record held on every accepted call."""
    fields: set[str] | None = None
    for o in oks:
        value = scopes[id(o)].bound(record)
        if not isinstance(value, dict):
            continue
        here = {f for f, v in value.items() if isinstance(f, str) and _number(v)}
        fields = here if fields is None else fields & here
    return sorted(fields or ())
