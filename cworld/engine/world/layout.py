"""Where a kind's records sit in a server's state: a top-level collection (`orders`), or a collection kept
inside a value the service holds once (`cart.items`: a shop's cart lines live in its cart, beside the
applied coupon).

A layout maps each card kind to a path of dict keys joined by dots. Services keep records nested like this
(a cart's lines, an account's settings' entries): naming the path lets every rule, the copy-on-write store
and the indexes treat the nested map as any collection, while the state keeps the service's own shape (the
grader diffs it exactly as live). The top-level entry (`head`) is what a session owns before a write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

SEP = "."


def head(path: str) -> str:
    """The top-level state entry a path starts at (`cart.items` -> `cart`)."""
    return path.split(SEP, 1)[0]


def at(state: dict[str, Any], path: str) -> Any:
    """The value a layout path names in `state`; None where a step is missing or not a map."""
    value: Any = state.get(path)
    if value is not None or SEP not in path:
        return value
    value = state
    for step in path.split(SEP):
        value = value.get(step) if isinstance(value, dict) else None
    return value


def is_records(value: Any) -> bool:
    """A `{key: record}` map (empty too): every value a record."""
    return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())


def nested_records(state: dict[str, Any], name: str) -> str | None:
    """The path of the one map of records inside `name`, when `name` is a value held once (a cart: its lines
    beside its coupon) rather than a collection; None when it is a collection or holds no single such map."""
    value = state.get(name)
    if not isinstance(value, dict) or not value or is_records(value):
        return None
    inner = [k for k, v in value.items() if isinstance(v, dict)]
    if len(inner) != 1 or not is_records(value[inner[0]]) or not str(inner[0]).isidentifier():
        return None
    return f"{name}{SEP}{inner[0]}"


def resolved(state: dict[str, Any], kinds: dict[str, str]) -> dict[str, str]:
    """`kinds` with each kind that names a value held once pointing at the collection inside it instead
    (`cart_item: cart` -> `cart_item: cart.items`); kinds that already name a collection or a path stay."""
    return {kind: nested_records(state, name) or name for kind, name in kinds.items()}


def nested_names(kinds: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Kind -> (the value held once, the field holding its records), for the kinds a path names."""
    return {kind: (head(path), path.split(SEP, 1)[1]) for kind, path in kinds.items() if SEP in path}


def held_view(name: str, kinds: dict[str, str]) -> str:
    """The rule expression answering the value held once `name`: itself, with each collection a layout path
    names inside it shown as a list of records, each with its key as `<kind>_id` (as every record is
    shown), where a service shows a cart with its lines."""
    inner = {field: kind for kind, (held, field) in nested_names(kinds).items() if held == name}
    if not inner:
        return name
    shown = ", ".join(f"{field!r}: [{{{kind + '_id'!r}: k, **v}} for k, v in {name}[{field!r}].items()]"
                      for field, kind in sorted(inner.items()))
    return f"{{**{name}, {shown}}}"


#: How many records of a reference map show what its records hold.
_SAMPLE = 5
#: How many of a kind's fields a reference map's records must hold besides half of them (a name and a city alone
#: are an airport's and a hotel's alike).
_SHARED = 3


def catalog_path(fields: Iterable[str], reference: dict[str, Any]) -> str | None:
    """The path of the map of records in the world's reference (what a service knows from the seed alone: a
    market's listed securities, a travel network's hotels) whose records hold at least half of a kind's `fields`,
    the best such map; None when none does. A kind the state holds no collection of is read from there, so its
    records are found and shown instead of made up."""
    wanted = set(fields)
    best: tuple[float, str] | None = None
    for path, records in _record_maps(reference, "", depth=2):
        sample = list(islice(records.values(), _SAMPLE))
        held = set.intersection(*(set(r) for r in sample)) if sample else set()
        share = len(wanted & held) / len(wanted) if wanted else 0.0
        if share >= 0.5 and len(wanted & held) >= _SHARED and (best is None or share > best[0]):
            best = (share, path)
    return best[1] if best else None


def _record_maps(value: Any, prefix: str, depth: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(path, map) of every non-empty map of records within `depth` steps of `value`."""
    if not isinstance(value, dict) or depth < 0:
        return
    for name, inner in value.items():
        if not isinstance(name, str) or not name.isidentifier() or not isinstance(inner, dict):
            continue
        path = f"{prefix}{SEP}{name}" if prefix else name
        if inner and is_records(inner):
            yield path, inner
        yield from _record_maps(inner, path, depth - 1)


def holder_answer(path: str | None, kinds: dict[str, str], output_schema: dict[str, Any] | None) -> str | None:
    """The answer of a write to a collection kept inside a value held once, where the tool's output schema shows
    that value (a list under the collection's field: the cart with its `items` after a line is added); None for
    a top-level collection or a tool that answers the record itself."""
    if path is None or path.count(SEP) != 1:
        return None
    field = ((output_schema or {}).get("properties") or {}).get(path.split(SEP, 1)[1])
    if not isinstance(field, dict) or field.get("type") != "array":
        return None
    return held_view(head(path), kinds)


def catalog_named(kind: str, reference: dict[str, Any]) -> str | None:
    """The path of the reference map of records named for `kind` (`hotel` -> `NETWORK.hotels`): how a family
    reads a kind the world keeps only in its reference, without the card's fields at hand."""
    names = {kind, f"{kind}s", f"{kind}es", f"{kind[:-1]}ies" if kind.endswith("y") else kind}
    return next((path for path, _ in _record_maps(reference, "", depth=2) if path.rpartition(SEP)[2] in names), None)
