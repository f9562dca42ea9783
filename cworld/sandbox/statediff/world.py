"""The changes an episode made to servers that are not sandbox apps, in a form the state diff grades.

A sandbox app's end state is its whole state, diffed against the seed's initial state the grader rebuilds.
Another server's world (a harvested or catalog server's generated world, a real server's initial state)
can be hundreds of records per kind, and the grader has no world of its own to rebuild. So the end state
carries, under `_world`, what changed there: per server and collection, the records before and after,
only those that differ (`before` lacks a created record, `after` a deleted one); a collection that is not
a map of records is kept whole.

    {"_world": {"crm-server": {"contacts": {"records": true,
                                            "before": {"c_12": {...}},
                                            "after": {"c_12": {...}, "c_0201": {...}}}}}}

A task's ground truth carries the same for its gold plan. Both come from the same seeded world, so the
records' `before` agree; `world_trees` puts the two deltas back into three states (initial, expected,
actual) over the union of the records either touched, one part `world:<server>` per server, and the
one state diff grades them with the sandbox apps: R_c, R_b and success count every world.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

WORLD_KEY = "_world"
PART_PREFIX = "world:"


def is_record_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())


def world_delta(before: Mapping[str, Any], after: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The collections among `names` that differ between `before` and `after`, reduced to the records
    that differ (or kept whole when not a map of records)."""
    out: dict[str, Any] = {}
    for name in sorted(names):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict) and is_record_map(old) and is_record_map(new):
            keys = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
            out[name] = {"records": True, "before": {k: old[k] for k in sorted(keys) if k in old},
                         "after": {k: new[k] for k in sorted(keys) if k in new}}
        else:
            out[name] = {"records": False, "before": old, "after": new}
    return out


def world_trees(expected: Mapping[str, Any] | None, actual: Mapping[str, Any] | None
                ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(initial, expected, actual) parts `world:<server>` for the state diff, from the ground truth's and
    the episode's `_world` deltas. A record or collection only one side touched stands as it was before on
    the other."""
    expected, actual = expected or {}, actual or {}
    initial_out: dict[str, Any] = {}
    expected_out: dict[str, Any] = {}
    actual_out: dict[str, Any] = {}
    for server in sorted(set(expected) | set(actual)):
        gold, done = expected.get(server) or {}, actual.get(server) or {}
        part = PART_PREFIX + server
        initial_out[part], expected_out[part], actual_out[part] = {}, {}, {}
        for name in sorted(set(gold) | set(done)):
            start, want, got = _collection_states(gold.get(name), done.get(name))
            initial_out[part][name], expected_out[part][name], actual_out[part][name] = start, want, got
    return initial_out, expected_out, actual_out


def _collection_states(gold: dict[str, Any] | None, done: dict[str, Any] | None) -> tuple[Any, Any, Any]:
    sides = [d for d in (gold, done) if d is not None]
    if not all(d.get("records") for d in sides):
        start = sides[0].get("before")
        return start, _after(gold, start), _after(done, start)
    start_records: dict[str, Any] = {}
    for side in sides:
        for key, record in (side.get("before") or {}).items():
            start_records.setdefault(key, record)
    return start_records, _records_after(gold, start_records), _records_after(done, start_records)


def _after(delta: dict[str, Any] | None, start: Any) -> Any:
    return start if delta is None else delta.get("after")


def _records_after(delta: dict[str, Any] | None, start: dict[str, Any]) -> dict[str, Any]:
    if delta is None:
        return dict(start)
    touched = set(delta.get("before") or {}) | set(delta.get("after") or {})
    out = {k: v for k, v in start.items() if k not in touched}
    out.update(delta.get("after") or {})
    return out


def world_parts(ground_truth: Mapping[str, Any], end_state: Mapping[str, Any]
                ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """`world_trees` of a ground truth and an end state (either may carry no `_world`)."""
    return world_trees(ground_truth.get(WORLD_KEY), end_state.get(WORLD_KEY))
