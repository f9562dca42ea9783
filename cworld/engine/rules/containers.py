"""Indexes over what a record holds and when: the members of a list or map field, a map's entries, a time.

The planner (`index.py`) answers `it.F == v` from a hash index, but rules also ask whether a value is IN a
record's list or map (`me in (it.get('attendees') or [])`), what a map field holds for a key
(`it['attendees'].get(p) in ('accepted', 'tentative')`) and whether a record's time falls after or before a
moment (`before(arg_start, it.get('end'))`, a clash or a busy time), or whether some element of a record's
list passes a test (`any(norm(v) == 'needs_action' for v in it['attendees'].values())`). Each walked every
record. These
indexes are built once over the seed's collection (records the session wrote are evaluated in full by the
caller) and answer exactly as the expression would for every record they file; a record they cannot file
(a field of another type, an element that no hash finds as `==` would) is in `residual`.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import datetime
from itertools import islice
from typing import Any

from cworld.values import parse_time

_HASHABLE = (str, int, bool, type(None))
_CONTAINERS = (list, tuple, set, frozenset, dict)
_ITERABLES: tuple[type, ...] = (*_CONTAINERS, type({}.keys()), type({}.values()))
_NONE: dict[str, None] = {}

Buckets = dict[Any, dict[str, None]]
RecordFunction = Callable[[dict[str, Any], str], Any]


def indexable_value(value: Any) -> bool:
    """A value a hash look-up finds exactly as `==` would."""
    return isinstance(value, _HASHABLE) or (type(value) is float and not math.isnan(value))


def members(keys: list[str], records: dict[str, Any], fn: RecordFunction) -> tuple[Buckets, set[str]]:
    """Element -> keys whose `fn` value (a list, tuple, set or map: `v in` it tests its elements or map keys)
    holds it; residual: keys whose value is no such container, holds an element a hash would not find, or
    fails."""
    return bucketed(keys, records, fn, lambda value: type(value) in _CONTAINERS and all(map(indexable_value, value)),
                     lambda value: value)


def entries(keys: list[str], records: dict[str, Any], fn: RecordFunction) -> tuple[Buckets, set[str]]:
    """(map key, value) -> keys whose `fn` value, a map, holds that entry (`m.get(k) == v`); residual: keys
    whose value is no map, holds a key or value a hash would not find, or fails."""
    return bucketed(keys, records, fn, lambda value: type(value) is dict and all(
        indexable_value(k) and indexable_value(v) for k, v in value.items()), lambda value: value.items())


def elements(keys: list[str], records: dict[str, Any], fn: RecordFunction) -> tuple[Buckets, set[str]]:
    """(type, element) -> keys whose `fn` value (a list, tuple, set, map - its keys - or a map's keys or values)
    yields that element when iterated; residual: keys whose value is none of those, yields an element a hash
    would not group with its equals of the same type, or fails. Types stay apart: a test may tell 1 from True."""
    return bucketed(keys, records, fn, lambda value: type(value) in _ITERABLES and all(map(indexable_value, value)),
                     lambda value: ((type(e), e) for e in value))


def bucketed(keys: list[str], records: dict[str, Any], fn: RecordFunction, accepts: Callable[[Any], bool],
              grouped: Callable[[Any], Iterable[Any]] | None) -> tuple[Buckets, set[str]]:
    """Bucket -> keys whose `fn` value `accepts` and files under it (`grouped`; None: the value is its one
    bucket); residual: the keys whose value it does not accept, or fails on."""
    buckets: Buckets = {}
    residual: set[str] = set()
    values = record_values(keys, records, fn)
    plain = grouped is None and accepts is indexable_value and set(map(type, values)) <= _PLAIN
    for key, value in zip(keys, values, strict=True):
        if not plain and (value is _FAILED or not accepts(value)):
            residual.add(key)
        elif grouped is None:
            _file(buckets, value, key)
        else:
            for bucket in grouped(value):
                _file(buckets, bucket, key)
    return buckets, residual


def _file(buckets: Buckets, bucket: Any, key: str) -> None:
    found = buckets.get(bucket)
    if found is None:  # not setdefault: it would make an empty map per record to throw away
        buckets[bucket] = {key: None}
    else:
        found[key] = None


def record_values(keys: list[str], records: dict[str, Any], fn: RecordFunction) -> list[Any]:
    """`fn` of each record, `_FAILED` where it fails: one comprehension while none fails (a try per record
    cost a third of a hash index's build), record by record once one has."""
    try:
        return [fn(records[key], key) for key in keys]
    except Exception:
        out: list[Any] = []
        for key in keys:
            try:
                out.append(fn(records[key], key))
            except Exception:
                out.append(_FAILED)
        return out


_FAILED = object()
#: the types of values a hash files as `==` finds them, whatever the value (floats are not: NaN)
_PLAIN = frozenset({str, int, bool, type(None)})


def some_hits(buckets: Buckets, test: Callable[[Any], Any]) -> set[str]:
    """Keys with an element that passes `test` (tested once per distinct element)."""
    out: set[str] = set()
    for (_, element), keys in buckets.items():
        if test(element):
            out.update(keys)
    return out


def entry_hits(buckets: Buckets, key: Any, wanted: Any, many: bool) -> Collection[str] | None:
    """Keys whose map holds `key` -> `wanted` (`many`: -> one of `wanted`); None when no look-up can say
    (a value a hash would not find, a None that a missing key also gives, `wanted` no plain collection)."""
    values = wanted if many else (wanted,)
    if many and type(wanted) not in (list, tuple, set, frozenset):
        return None
    if not indexable_value(key) or any(v is None or not indexable_value(v) for v in values):
        return None
    if len(values) == 1:
        return buckets.get((key, next(iter(values))), _NONE)
    out: set[str] = set()
    for value in values:
        out.update(buckets.get((key, value), _NONE))
    return out


class Times:
    """Every record's time (`parse_time` of its `fn` value) in order, for `before(x, it.F)` and
    `before(it.F, x)`: the records after or before a moment are a slice. A record whose value is no time
    fails `before` either way and is filed nowhere; one whose value fails is residual."""

    def __init__(self, keys: list[str], records: dict[str, Any], fn: RecordFunction) -> None:
        self.moment: dict[str, datetime] = {}
        self.residual: set[str] = set()
        for key in keys:
            try:
                value = fn(records[key], key)
            except Exception:
                self.residual.add(key)
                continue
            moment = parse_time(value)
            if moment is not None:
                self.moment[key] = moment
        rows = sorted(self.moment.items(), key=lambda row: row[1])
        self.keys = [row[0] for row in rows]
        self.times = [row[1] for row in rows]

    def window(self, moment: Any, after: bool) -> Collection[str]:
        """The keys whose time is strictly after `moment` (`after`) or strictly before it."""
        at = parse_time(moment)
        if at is None:
            return _NONE  # `before` is false for every record
        if after:
            return _Window(self, bisect_right(self.times, at), len(self.keys), at, after)
        return _Window(self, 0, bisect_left(self.times, at), at, after)


class _Window(Collection[str]):
    """A slice of a `Times` index, read lazily: an intersection tests membership, or iterates the smaller."""

    def __init__(self, times: Times, lo: int, hi: int, at: datetime, after: bool) -> None:
        self.times, self.lo, self.hi, self.at, self.after = times, lo, hi, at, after

    def __len__(self) -> int:
        return self.hi - self.lo

    def __iter__(self) -> Iterator[str]:
        return islice(self.times.keys, self.lo, self.hi)

    def __contains__(self, key: object) -> bool:
        moment = self.times.moment.get(key) if isinstance(key, str) else None
        if moment is None:
            return False
        return moment > self.at if self.after else moment < self.at
