"""Undo for one write call, paid for what the call touches rather than for the whole state.

A failed call changes nothing (`server.py`). Copying the app's whole state before every write made a
write cost as much as the state is large (0.7 s at 10,000 records per collection). Instead, while a write
call runs, the app sees its state through a `StateView`: each top-level collection (a `{key: value}` map)
through a `CollectionView` that keeps a copy of a record the first time the call reads or writes it by
key, and a copy of the whole collection (one C-speed marshal) the first time the call walks its records
(`values()`, `items()`) or has read many of them by key. Other top-level values (lists, scalars) are
copied the first time they are read. `CallJournal.undo()` puts every kept value back, in place, so the
state is exactly as before the call; a call that succeeds drops the journal.

Reads through the views behave as the plain dicts do, so the apps' code does not change; only the
collections' own map type is a view, never a record (records are the real dicts of the state).
"""

from __future__ import annotations

import marshal
from collections.abc import ItemsView, Iterator, KeysView, MutableMapping, ValuesView
from typing import Any

#: A record read by key this many times in one call: the whole collection is kept instead (one copy).
KEYS_BEFORE_WHOLE = 64

_ABSENT = object()


def copied(value: Any) -> Any:
    """A deep copy of JSON-like state, through marshal (several times faster than walking it in Python)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    try:
        return marshal.loads(marshal.dumps(value))
    except ValueError:  # a value marshal cannot write (a datetime, an object): copy it the slow way
        from cworld.sandbox.framework.session import plain_copy

        return plain_copy(value)


class Kept:
    """What one call kept of one collection: values by key (or `_ABSENT`), or a copy of all of it. For the
    indexes (`index.py`): every key the call touched by key, the keys it deleted (a key deleted and put back
    moves to the end of the map's order), and whether it `walked` the records (any may have changed)."""

    __slots__ = ("keys", "whole", "touched", "deleted", "walked")

    def __init__(self) -> None:
        self.keys: dict[Any, Any] = {}
        self.whole: Any = None
        self.touched: set[Any] = set()
        self.deleted: set[Any] = set()
        self.walked = False

    def undo(self, raw: dict[Any, Any]) -> None:
        if self.whole is not None:
            self.walked = True  # the whole map is put back, in its old order
            raw.clear()
            raw.update(self.whole)
        for key, old in self.keys.items():
            if old is _ABSENT:
                raw.pop(key, None)
            else:
                raw[key] = old


class CallJournal:
    """Everything one write call may have changed in one app's state, and how to put it back."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state
        self.view = StateView(self)
        self._top: dict[str, Any] = {}
        self._kept: dict[int, tuple[dict[Any, Any], Kept]] = {}

    def keep_top(self, name: str) -> None:
        """The top-level entry `name` as it is now (a map by reference: its own journal restores its content)."""
        if name in self._top:
            return
        value = self.state.get(name, _ABSENT)
        self._top[name] = value if value is _ABSENT or type(value) is dict else copied(value)

    def keep_key(self, raw: dict[Any, Any], key: Any) -> None:
        kept = self._of(raw)
        kept.touched.add(key)
        if kept.whole is not None or key in kept.keys:
            return
        if len(kept.keys) >= KEYS_BEFORE_WHOLE:
            kept.whole = copied(raw)
            return
        kept.keys[key] = copied(raw[key]) if key in raw else _ABSENT

    def keep_whole(self, raw: dict[Any, Any]) -> None:
        """Keep the whole map, which the call walks (so it may change any record)."""
        kept = self._of(raw)
        kept.walked = True
        if kept.whole is None:
            kept.whole = copied(raw)

    def kept_of(self, raw: dict[Any, Any]) -> Kept | None:
        """What this call kept of the map `raw`, if it touched it."""
        found = self._kept.get(id(raw))
        return found[1] if found is not None and found[0] is raw else None

    def keep_deleted(self, raw: dict[Any, Any], key: Any) -> None:
        self.keep_key(raw, key)
        self._of(raw).deleted.add(key)

    def _of(self, raw: dict[Any, Any]) -> Kept:
        found = self._kept.get(id(raw))
        if found is None:
            found = self._kept[id(raw)] = (raw, Kept())
        return found[1]

    def undo(self) -> None:
        """Put back every value the call kept: the state is as it was before the call."""
        for raw, kept in self._kept.values():
            kept.undo(raw)
        for name, old in self._top.items():
            if old is _ABSENT:
                self.state.pop(name, None)
            else:
                self.state[name] = old


class CollectionView(MutableMapping[Any, Any]):
    """A top-level map of the app's state as one write call sees it: the real map, kept before it changes."""

    __slots__ = ("_raw", "_journal")

    def __init__(self, raw: dict[Any, Any], journal: CallJournal) -> None:
        self._raw = raw
        self._journal = journal

    def __getitem__(self, key: Any) -> Any:
        value = self._raw[key]
        self._journal.keep_key(self._raw, key)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        if key not in self._raw:
            return default
        self._journal.keep_key(self._raw, key)
        return self._raw[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._journal.keep_key(self._raw, key)
        self._raw[key] = value

    def __delitem__(self, key: Any) -> None:
        self._journal.keep_deleted(self._raw, key)
        del self._raw[key]

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self) -> Iterator[Any]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __repr__(self) -> str:
        return f"CollectionView({self._raw!r})"

    def keys(self) -> KeysView[Any]:
        return self._raw.keys()

    def values(self) -> ValuesView[Any]:
        self._journal.keep_whole(self._raw)
        return self._raw.values()

    def items(self) -> ItemsView[Any, Any]:
        self._journal.keep_whole(self._raw)
        return self._raw.items()

    def copy(self) -> dict[Any, Any]:
        self._journal.keep_whole(self._raw)
        return dict(self._raw)


class StateView(MutableMapping[str, Any]):
    """An app's whole state as one write call sees it: maps as `CollectionView`s, other values kept on first read."""

    __slots__ = ("_journal", "_views")

    def __init__(self, journal: CallJournal) -> None:
        self._journal = journal
        self._views: dict[str, CollectionView] = {}

    def __getitem__(self, name: str) -> Any:
        value = self._journal.state[name]
        if type(value) is not dict:
            self._journal.keep_top(name)
            return value
        view = self._views.get(name)
        if view is None or view._raw is not value:
            view = self._views[name] = CollectionView(value, self._journal)
        return view

    def __setitem__(self, name: str, value: Any) -> None:
        self._journal.keep_top(name)
        self._journal.state[name] = value

    def __delitem__(self, name: str) -> None:
        self._journal.keep_top(name)
        del self._journal.state[name]

    def __contains__(self, name: object) -> bool:
        return name in self._journal.state

    def __iter__(self) -> Iterator[str]:
        return iter(self._journal.state)

    def __len__(self) -> int:
        return len(self._journal.state)


def for_reading(collection: Any) -> Any:
    """The real map behind a write call's view, for a walk that only reads (a scan for a clash, a count):
    walking the view would copy the whole collection for an undo that such a walk never needs. Never
    change what this returns: the journal does not see it."""
    return collection._raw if type(collection) is CollectionView else collection
