"""A session's writable copy of one server's world, record by record (copy on write).

Copying a whole collection on a session's first write to it cost a quarter second per 10,000 records,
and a session writes a handful of records. So a session's collection is a shallow copy of the seed's
(its records shared) and a record is deep-copied the first time a rule writes it. Every write goes
through `writable`, which knows which record of which collection it changes: that keeps the seed's
world untouched, and tells the indexes (`index.py`) which keys no longer look as in the seed's world
(`dirty`) and which keys joined the end of a collection (`appended`). Values a write stores are copied
(a world is JSON: no two records share a part), and the rule's names follow them to the copy.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

from cworld.sandbox.framework.session import plain_copy

#: (collection, key): where a container the session owns lives; key None is the collection's own map.
Place = tuple[str, str | None]


class SeedMaps:
    """Where each container of a seed's collection is (by id), built once per collection and shared by every
    session of the world: the seed's records never change (sessions copy on write), and walking 10,000
    records' containers on each session's first write cost more than the session's calls."""

    def __init__(self) -> None:
        self._of: dict[int, tuple[dict[str, Any], dict[int, str], dict[int, tuple[str, tuple[Any, ...]]] | None]] = {}

    def records(self, coll: dict[str, Any]) -> dict[int, str]:
        """id of a record -> its key."""
        return self._entry(coll)[1]

    def nested(self, coll: dict[str, Any]) -> dict[int, tuple[str, tuple[Any, ...]]]:
        """id of a container inside a record -> (the record's key, the path to it)."""
        seen, ids, inner = self._entry(coll)
        if inner is None:
            inner = {id(c): (key, path) for key, record in coll.items() for c, path in _containers(record, ()) if path}
            self._of[id(coll)] = (seen, ids, inner)
        return inner

    def _entry(self, coll: dict[str, Any]) -> tuple[dict[str, Any], dict[int, str],
                                                     dict[int, tuple[str, tuple[Any, ...]]] | None]:
        found = self._of.get(id(coll))
        if found is None or found[0] is not coll:
            found = self._of[id(coll)] = (coll, {id(r): k for k, r in coll.items() if type(r) is dict}, None)
        return found


class SessionStore:
    """What one session made its own of one server's world (`state`: the session's top-level map)."""

    def __init__(self, base: dict[str, Any], state: dict[str, Any], maps: SeedMaps | None = None) -> None:
        self.base = base
        self.maps = maps or SeedMaps()
        self.state = state
        self.collections: dict[str, dict[str, Any]] = {}
        """name -> the session's shallow copy of the seed's map"""
        self.places: dict[int, Place] = {id(state): ("", None)}
        self.pinned: dict[int, Any] = {id(state): state}
        """every container the session owns, by id (kept alive, so an id is never reused)"""
        self.dirty: dict[str, set[str]] = {}
        """collection -> keys this session wrote, made or deleted"""
        self.appended: dict[str, dict[str, int]] = {}
        """collection -> keys this session added to the end of the map, with their order"""
        self.owned: set[str] = set()
        """the top-level entries the session made its own"""
        self._copies: dict[int, Any] = {}
        self._serial = 0

    def own(self, name: str) -> None:
        """Make the top-level entry `name` the session's: a map is copied shallowly (its values stay the
        seed's until written), anything else deeply."""
        if name in self.owned or name not in self.state:
            return
        self.owned.add(name)
        if self.state[name] is not self.base.get(name):
            return
        value = self.state[name]
        if type(value) is dict:
            mine = self.collections[name] = dict(value)
            self.places[id(mine)], self.pinned[id(mine)] = (name, None), mine
        else:
            mine = plain_copy(value)
            self._own(mine, (name, None))
        self.state[name] = mine

    def overlay(self, coll: Any) -> tuple[str, dict[str, Any]] | None:
        """(name, the seed's map) when `coll` is a top-level collection whose records are the seed's but
        for its `dirty` keys: the seed's map itself, or the session's shallow copy of it."""
        for name, value in self.state.items():
            if value is coll:
                mine = self.collections.get(name)
                if mine is coll or (mine is None and self.base.get(name) is coll):
                    return name, self.base[name]
                return None
        return None

    # --- writing ----------------------------------------------------------------------------------
    def writable(self, target: Any, names: MutableMapping[str, Any]) -> Any:
        """The object a write to `target` must change: `target` when the session owns it (or the rule made
        it), else the session's copy of the seed's container, made now and put in its collection."""
        place = self.places.get(id(target))
        if place is not None:
            self._touch(place)
            return target
        for name, value in self.base.items():
            if value is target and self.state.get(name) is target:  # a seed's top-level map
                self.own(name)
                for bound, seen in list(names.items()):
                    if seen is target:
                        names[bound] = self.state[name]
                return self.state[name]
        found = self._in_base(target)
        if found is None:
            return target  # the rule's own value, not part of the world
        name, key, path = found
        record = self._copy_of(name, key, names)
        self._touch((name, key))
        for step in path:
            record = record[step]
        return record

    def current(self, value: Any) -> Any:
        """The session's copy of a seed's record when one was made (a reference taken before the write)."""
        return self._copies.get(id(value), value)

    def adopt(self, value: Any, names: MutableMapping[str, Any]) -> Any:
        """A copy of a value a write stores (a world shares no parts), the rule's names moved onto it."""
        if not isinstance(value, dict | list):
            return value
        mine = plain_copy(value)
        _rebind(names, value, mine)
        return mine

    def stored(self, coll: Any, key: Any, value: Any, was_there: bool) -> None:
        """`coll[key] = value` was done (`coll` from `writable`, `value` from `adopt`)."""
        place = self.places.get(id(coll))
        if place is None:
            return
        name, owner = place
        if owner is None and coll is self.collections.get(name):
            if not was_there:
                self._serial += 1
                self.appended.setdefault(name, {})[str(key)] = self._serial
            place = (name, str(key))
        self._own(value, place)
        self._touch(place)

    def removed(self, coll: Any, key: str) -> None:
        """`key` left `coll` (a `delete`; `coll` from `writable`)."""
        place = self.places.get(id(coll))
        if place is None:
            return
        if place[1] is None and coll is self.collections.get(place[0]):
            self.appended.get(place[0], {}).pop(key, None)
            place = (place[0], key)
        self._touch(place)

    # --- inside -----------------------------------------------------------------------------------
    def _touch(self, place: Place) -> None:
        name, key = place
        if key is not None:
            self.dirty.setdefault(name, set()).add(key)

    def _copy_of(self, name: str, key: str, names: MutableMapping[str, Any]) -> Any:
        """The session's copy of the seed's record `name[key]`, put in the session's collection when that
        still holds the seed's record; the rule's names follow."""
        original = self.base[name][key]
        mine = self._copies.get(id(original))
        if mine is not None:  # copied before (and maybe deleted or replaced since: then detached, as live)
            _rebind(names, original, mine)
            return mine
        mine = self._copies[id(original)] = plain_copy(original)
        self._own(mine, (name, key))
        coll = self.collections.get(name)
        if coll is not None and coll.get(key) is original:
            coll[key] = mine
        _rebind(names, original, mine)
        return mine

    def _in_base(self, target: Any) -> tuple[str, str, tuple[Any, ...]] | None:
        """(collection, key, path inside the record) of a seed's container the session may write."""
        for name in self.collections:
            key = self._ids(name).get(id(target))
            if key is not None:
                return name, key, ()
        for name in self.collections:
            hit = self._nested_ids(name).get(id(target))
            if hit is not None:
                return name, hit[0], hit[1]
        return None

    def _ids(self, name: str) -> dict[int, str]:
        return self.maps.records(self.base[name])

    def _nested_ids(self, name: str) -> dict[int, tuple[str, tuple[Any, ...]]]:
        """Containers inside the seed's records (built once per world, on the first write to one)."""
        return self.maps.nested(self.base[name])

    def _own(self, value: Any, place: Place) -> None:
        for inner, _ in _containers(value, ()):
            self.places[id(inner)] = place
            self.pinned[id(inner)] = inner


def _containers(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """`value` and every dict and list inside it, with its path."""
    if isinstance(value, dict):
        yield value, path
        for k, v in value.items():
            if isinstance(v, dict | list):
                yield from _containers(v, (*path, k))
    elif isinstance(value, list):
        yield value, path
        for i, v in enumerate(value):
            if isinstance(v, dict | list):
                yield from _containers(v, (*path, i))


def _rebind(names: MutableMapping[str, Any], old: Any, new: Any) -> None:
    """Names bound to `old`, or to a container inside it, now name the same place in `new`."""
    inside = {id(c): path for c, path in _containers(old, ())}
    for name, value in list(names.items()):
        path = inside.get(id(value))
        if path is not None and isinstance(value, dict | list):
            names[name] = _follow(new, path)


def _follow(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value
