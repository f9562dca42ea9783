"""Resolve unit names the way people write them ('km', 'Kilometres', 'square feet') to canonical units."""

from __future__ import annotations

from functools import cache

from cworld.sandbox.stateless.shared import invalid
from cworld.sandbox.stateless.units.tables import FUEL_ECONOMY_UNITS, LINEAR, TEMPERATURE_UNITS

_SUPERSCRIPTS = str.maketrans({"²": "2", "³": "3"})


def _normal(text: str) -> str:
    return "_".join(text.strip().translate(_SUPERSCRIPTS).split())


def _spellings(canonical: str, aliases: tuple[str, ...], plurals: bool) -> set[str]:
    """The canonical symbol, its aliases, and (for word-like lowercase aliases) their plurals."""
    out = {canonical, *aliases}
    if plurals:
        words = [a for a in aliases if len(a) > 2 and a.islower() and a.replace("_", "").isalpha()]
        out |= {a + ("es" if a.endswith(("ch", "sh", "x")) else "s") for a in words if not a.endswith("s")}
    return out


@cache
def spelling_index(dimension: str) -> dict[str, str]:
    """spelling -> canonical unit, for one dimension."""
    if dimension == "temperature":
        table = {u: a for u, a in TEMPERATURE_UNITS.items()}
    elif dimension == "fuel_economy":
        table = dict(FUEL_ECONOMY_UNITS)
    else:
        table = {u: a for u, (_, a) in LINEAR[dimension].items()}
    plurals = dimension != "temperature"
    return {s: unit for unit, aliases in table.items() for s in _spellings(unit, aliases, plurals)}


def units_of(dimension: str) -> list[str]:
    return list(dict.fromkeys(spelling_index(dimension).values()))


def resolve(dimension: str, text: str) -> str | None:
    """The canonical unit `text` names in `dimension`: exact spelling first, then a unique case-insensitive
    match (so 'KM' works but 'mb' stays ambiguous between megabyte and megabit)."""
    index = spelling_index(dimension)
    key = _normal(text)
    if key in index:
        return index[key]
    matches = {unit for s, unit in index.items() if s.lower() == key.lower()}
    return matches.pop() if len(matches) == 1 else None


def require(dimension: str, text: str) -> str:
    unit = resolve(dimension, text)
    if unit is None:
        raise invalid(
            f"unknown {dimension.replace('_', ' ')} unit {text!r}; use one of "
            f"{', '.join(units_of(dimension))} (exact case when it matters, e.g. MB vs Mbit)"
        )
    return unit


def dimension_of(text: str, other: str) -> str:
    """The dimension in which both units exist (first in table order), for the generic converter."""
    dims = [*LINEAR, "temperature", "fuel_economy"]
    both = [d for d in dims if resolve(d, text) and resolve(d, other)]
    if both:
        return both[0]
    first = [d for d in dims if resolve(d, text)]
    second = [d for d in dims if resolve(d, other)]
    if not first or not second:
        unknown = text if not first else other
        raise invalid(f"unknown unit {unknown!r}; call list_units to see the units of each dimension")
    raise invalid(
        f"{text!r} is a {first[0]} unit but {other!r} is a {second[0]} unit; they cannot be converted"
    )
