"""A `list:` read answered from the seed's indexes (`index.py`) and the session's changes (`cow.py`).

The answer is the walk's (run.py `_walked`), key for key: the records that pass `where`, in the walk's
order (the collection's order, then a stable sort by `sort`, reversed for `desc`), and how many pass.
Positions follow the collection's map: a seed's key keeps its place, a key the session (re)made sits
after every seed's key in the order it joined (`SessionStore.appended`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from itertools import islice
from typing import Any

from cworld.engine.rules.expr import parsed
from cworld.engine.rules.index import (
    _WALK_SHARE,
    CollectionIndexes,
    _pure,
    merged,
    plan,
    record_function,
    select,
    sortable,
)
from cworld.engine.rules.spec import ListRead


@lru_cache(maxsize=4096)
def _of_record(sort: str) -> bool:
    """The sort reads only the record: the seed's order for it can be kept."""
    return _pure(parsed(sort))


class Listing:
    """One list read over one collection."""

    def __init__(self, spec: ListRead, source: dict[str, Any], ix: CollectionIndexes, dirty: set[str],
                 appended: dict[str, int], value_of: Callable[[str], Any],
                 of_item: Callable[[str, dict[str, Any], str], Any], counted: Callable[[int], None]) -> None:
        self.spec, self.source, self.ix = spec, source, ix
        self.dirty, self.appended = dirty, appended
        self.value_of, self.of_item, self.counted = value_of, of_item, counted

    def rows(self, first: int) -> tuple[int, list[str]]:
        """(how many records pass, the first `first` keys in answer order)."""
        where = self.spec.where
        chosen = select(self.ix, plan(where), self.value_of) if where else None
        always = (chosen.always if chosen else set()) | self.dirty
        base: Iterable[str] = self.ix.keys if chosen is None or chosen.keys is None else chosen.keys
        exact = chosen is None or chosen.exact
        everything = exact and (chosen is None or chosen.keys is None)
        if not exact:
            base = [k for k in base if k not in always]
            self.counted(len(base))
            base = [k for k in base if self.of_item(k, self.source[k], where or "True")]
        passed_base = set(base) - always if not everything else None
        extra = [k for k in sorted(always, key=self._position) if self._passes(k)]
        total = (len(self.ix.keys) - len(always & self.ix.key_set) if passed_base is None
                 else len(passed_base)) + len(extra)
        return total, self._ordered(passed_base, extra, total, first)

    def _passes(self, key: str) -> bool:
        record = self.source.get(key)
        if type(record) is not dict:
            return False
        if self.spec.where is None:
            return True
        self.counted(1)
        return bool(self.of_item(key, record, self.spec.where))

    def _position(self, key: str) -> int:
        joined = self.appended.get(key)
        return len(self.ix.position) + joined if joined is not None else self.ix.position.get(key, -1)

    def _ordered(self, passed: set[str] | None, extra: list[str], total: int, first: int) -> list[str]:
        """The first `first` passing keys in the walk's order (`passed` None: every seed's record not in
        `extra`'s company of re-evaluated keys)."""
        spec = self.spec
        seed_order = self.ix.order(spec.sort, spec.desc) if spec.sort and _of_record(spec.sort) else None
        if spec.sort and (seed_order is None or total * _WALK_SHARE < len(self.ix.keys)):
            keys = self._in_place_order(passed, extra)
            value = self._sort_value(spec.sort)
            keys.sort(key=lambda k: sortable(value(k)), reverse=spec.desc)
            return keys[:first]
        if spec.sort and seed_order is not None:
            skip = self.dirty | set(extra)
            base = (row for row in seed_order if row[2] not in skip and (passed is None or row[2] in passed))
            value = self._sort_value(spec.sort)
            mine = [(sortable(value(k)), self._position(k), k) for k in extra]
            mine.sort(key=lambda row: row[0], reverse=spec.desc)
            out: list[str] = []
            for key in merged(base, mine, spec.desc):
                if len(out) >= first:
                    break
                out.append(key)
            return out
        if passed is None:  # every record passes: the page is the walk's first (or last) keys, not all of them
            return list(islice(self._every(extra, spec.desc), first))
        keys = self._in_place_order(passed, extra)
        return (keys[::-1] if spec.desc else keys)[:first]

    def _sort_value(self, sort: str) -> Callable[[str], Any]:
        """A key's sort value: a sort that reads only the record is a compiled function of it (as the seed's
        order reads it), not an evaluation in the rule's scope per key."""
        if not _of_record(sort):
            return lambda k: self.of_item(k, self.source[k], sort)
        fn = record_function(sort)
        return lambda k: fn(self.source[k], k)

    def _every(self, extra: list[str], backwards: bool = False) -> Iterator[str]:
        """Every passing key when every record passes, in the collection's order (or backwards)."""
        skip = self.dirty | set(extra)
        mine = set(extra)
        source = self.source
        return (k for k in (reversed(source) if backwards else source)
                if k in mine or (k not in skip and k in self.ix.position and type(source[k]) is dict))

    def _in_place_order(self, passed: set[str] | None, extra: list[str]) -> list[str]:
        """Passing keys in the collection's order."""
        if passed is None:
            return list(self._every(extra))
        keys = list(passed) + extra
        keys.sort(key=self._position)
        return keys
