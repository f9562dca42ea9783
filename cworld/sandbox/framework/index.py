"""Indexes over an app's collections, so a look-up costs the records it finds, not the collection.

A tool that wants the messages of one thread, or the people whose name holds a word, walked every record:
10 ms at 10,000 records where 100 took 0.1 ms. `Indexes` (one per session) keeps, per top-level `{key:
record}` map of an app's state and on first use: a hash index per field asked (`value -> keys`), a token
index per tuple of text fields (each record's text as `matches` reads it), and every key's place
in the map's order, so answers come back in the order a walk gives.

They stay true through the write calls' journals (`journal.py`): a write call keeps every record it reads
or writes by key, so when it ends (done or undone) only those keys are filed again; a call that walked the
whole map, a map replaced (a reset, a restore) or one whose size changed behind the journal's back is
indexed afresh on its next use. While a write call runs, the keys it has touched so far are candidates too.
The apps never change their state outside a tool call, and read-only tools never change it; that is what
the indexes rest on.
"""

from __future__ import annotations

import copy
import heapq
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from operator import itemgetter, neg
from typing import Any, Self, TypeVar, overload

from sortedcontainers import SortedList

from cworld.sandbox.framework.journal import CallJournal, CollectionView, Kept
from cworld.values import text_of

_Built = TypeVar("_Built")

#: A name in a sort's `by` that stands for the record's key in its map (orders keyed by their id only).
BY_KEY = "@key"

_MISSING = object()
#: The entries of a group no record is filed under (read, never written).
_NOTHING = SortedList()
#: The bucket of records a field index cannot file (not a dict, an unhashable value): always candidates.
_ODD = object()


def holds(record: Any, equal: Mapping[str, Any]) -> bool:
    """Whether the record holds `equal`'s values (a field it lacks holds none, not even None)."""
    return type(record) is dict and all(record.get(f, _MISSING) == v for f, v in equal.items())


def among(values: tuple[Any, ...], read: Iterable[Any]) -> bool:
    """Whether one of `values` is among what a function read off a record."""
    found = read if isinstance(read, (set, frozenset, dict)) else list(read)
    return any(v in found for v in values)


def read_path(record: dict[str, Any], path: tuple[str, ...]) -> Any:
    """`record[field]` for a field's path (`from.name`: ("from", "name")), read inside; None when it is not
    there."""
    value: Any = record
    for part in path:
        value = value.get(part) if type(value) is dict else None
    return value


def _copy(entries: SortedList) -> SortedList:
    """A copy of a sorted group as it is stored, part by part: `SortedList(entries)` sorts them all again, 35
    times slower (a fork's first change to a group of 8,000 documents copied it in 0.55 ms). Reads the
    layout of sortedcontainers 2.x (`_lists`, `_maxes`, `_len`; its position index is rebuilt on use)."""
    new = SortedList()
    new._lists = [list(part) for part in entries._lists]
    new._maxes = list(entries._maxes)
    new._len = len(entries)
    return new


class _Postings:
    """`value -> {key: None}` and each key's values (`single`: its one value), refiled key by key. What stays
    filed is flat (a value, not a tuple of tuples): the collector leaves a tuple that holds tracked tuples
    tracked, and 10,000 of them set off a full collection of the whole heap."""

    __slots__ = ("by_value", "filed", "single", "mine")

    def __init__(self, single: bool = False) -> None:
        self.by_value: dict[Any, dict[Any, None]] = {}
        self.filed: dict[Any, Any] = {}
        self.single = single
        self.mine: set[Any] | None = None
        """a fork's buckets it has copied (the others are a shared index's, never changed); None: all its own"""

    def forked(self) -> _Postings:
        """A copy that shares every bucket until it changes one (`_own`): forking costs two dict copies."""
        new = _Postings(self.single)
        new.by_value, new.filed, new.mine = dict(self.by_value), dict(self.filed), set()
        return new

    def _own(self, value: Any, bucket: dict[Any, None]) -> dict[Any, None]:
        """The bucket of `value`, copied first when it is still a shared index's."""
        mine = self.mine
        if mine is None or value in mine:
            return bucket
        mine.add(value)
        bucket = self.by_value[value] = dict(bucket)
        return bucket

    def add(self, key: Any, values: Iterable[Any]) -> None:
        if self.single:
            (self.filed[key],) = values
        else:
            self.filed[key] = values
        by_value = self.by_value
        for value in values:
            bucket = by_value.get(value)
            if bucket is None:
                bucket = by_value[value] = {}
                if self.mine is not None:
                    self.mine.add(value)
            else:
                bucket = self._own(value, bucket)
            bucket[key] = None

    def remove(self, key: Any) -> None:
        if key not in self.filed:
            return
        filed = self.filed.pop(key)
        for value in (filed,) if self.single else filed:
            bucket = self.by_value.get(value)
            if bucket is not None:  # None: a value the record gave twice, gone with the first
                bucket = self._own(value, bucket)
                bucket.pop(key, None)
                if not bucket:
                    del self.by_value[value]


def _reader(fields: tuple[str, ...], missing: Any = _MISSING) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A function giving a record's values of `fields` (a missing one as `missing`): built once per index, so
    filing 10,000 records makes one tuple each and no list."""
    if len(fields) == 1:
        (one,) = fields
        return lambda record: (record.get(one, missing),)
    if len(fields) == 2:
        one, two = fields
        return lambda record: (record.get(one, missing), record.get(two, missing))
    return lambda record: tuple([record.get(f, missing) for f in fields])


def _group(record: Any, read: Callable[[dict[str, Any]], tuple[Any, ...]]) -> Any:
    """The record's values as `read` gives them, or `_ODD` when they cannot be filed."""
    if type(record) is not dict:
        return _ODD
    values = read(record)
    try:
        hash(values)
    except TypeError:
        return _ODD
    return values


def _columns(raw: Mapping[Any, Any], fields: tuple[str, ...], by_key: bool = False) -> list[list[Any]] | None:
    """Each field's values over every record (`BY_KEY` the keys, when `by_key`), read at C speed, or None when
    a record is not a plain dict or lacks one of them (the caller then files record by record)."""
    records = raw.values()
    if set(map(type, records)) - {dict}:
        return None
    try:
        return [list(raw) if by_key and f == BY_KEY else list(map(itemgetter(f), records)) for f in fields]
    except KeyError:
        return None


def _path_columns(raw: Mapping[Any, Any], paths: list[tuple[str, ...]]) -> list[list[Any]] | None:
    """`_columns` for dotted fields (`from.name`: ("from", "name")), each part read inside the last; None when
    a record, or a value on the way, is not a dict holding the part."""
    columns = _columns(raw, tuple(path[0] for path in paths))
    if columns is None:
        return None
    for n, path in enumerate(paths):
        for part in path[1:]:
            if set(map(type, columns[n])) - {dict}:
                return None
            try:
                columns[n] = list(map(itemgetter(part), columns[n]))
            except KeyError:
                return None
    return columns


def _rows(columns: list[list[Any]], size: int) -> list[tuple[Any, ...]]:
    """The records' tuples of those values (the empty tuple each, for no field)."""
    return list(zip(*columns, strict=True)) if columns else [()] * size


class _PostingIndex(ABC):
    """Keys by the values `_values` reads off each record, kept true key by key (`refile`)."""

    def __init__(self, raw: Mapping[Any, Any], single: bool = False) -> None:
        self.postings = _Postings(single)
        add, values = self.postings.add, self._values
        for key, record in raw.items():
            add(key, values(record))

    def refile(self, key: Any, record: Any = _MISSING) -> None:
        self.postings.remove(key)
        if record is not _MISSING:
            self.postings.add(key, self._values(record))

    def forked(self) -> Self:
        """This index for one session to change (`CollectionIndex.fork`), sharing what it does not change."""
        new = copy.copy(self)
        new.postings = self.postings.forked()
        return new

    @abstractmethod
    def _values(self, record: Any) -> Iterable[Any]: ...


class FieldIndex(_PostingIndex):
    """Keys by some fields' values (`record.get(field)` each); records it cannot file are always candidates."""

    def __init__(self, fields: tuple[str, ...], raw: Mapping[Any, Any]) -> None:
        self.fields = fields
        self._read = _reader(fields)
        columns = _columns(raw, fields)
        if columns is None or not self._file_all(raw, _rows(columns, len(raw))):
            super().__init__(raw, single=True)

    def _file_all(self, raw: Mapping[Any, Any], groups: list[tuple[Any, ...]]) -> bool:
        """File every record at once from its values read column by column; False when one cannot be
        hashed (then each record is filed on its own, the unfiled ones as always candidates)."""
        postings = _Postings(single=True)
        by_value = postings.by_value
        try:
            for key, group in zip(raw, groups, strict=True):
                bucket = by_value.get(group)
                if bucket is None:
                    bucket = by_value[group] = {}
                bucket[key] = None
        except TypeError:
            return False
        postings.filed = dict(zip(raw, groups, strict=True))
        self.postings = postings
        return True

    def _values(self, record: Any) -> Iterable[Any]:
        return (_group(record, self._read),)

    def hits(self, values: tuple[Any, ...]) -> dict[Any, None]:
        return self.postings.by_value.get(values, {})

    def odd(self) -> dict[Any, None]:
        return self.postings.by_value.get(_ODD, {})


class DerivedIndex(_PostingIndex):
    """Keys by the values a function reads off each record (`of(record)`, an iterable: the people of an
    event, its attendees' answers); a record it cannot read is always a candidate."""

    def __init__(self, of: Callable[[Any], Iterable[Any]], raw: Mapping[Any, Any]) -> None:
        self.of = of
        self.postings = _Postings()
        filed, by_value = self.postings.filed, self.postings.by_value
        for key, record in raw.items():  # `_values` and `_Postings.add` inlined: a build calls `of` 10,000 times
            try:
                values = tuple(of(record))
            except Exception:  # noqa: BLE001 - as `_values`
                values = (_ODD,)
            filed[key] = values
            for value in values:
                bucket = by_value.get(value)
                if bucket is None:
                    bucket = by_value[value] = {}
                bucket[key] = None

    def _values(self, record: Any) -> Iterable[Any]:
        try:
            return tuple(self.of(record))  # a value given twice is filed once (a bucket is a dict)
        except Exception:  # noqa: BLE001 - a record the function cannot read: the caller's own test decides
            return (_ODD,)

    def candidates(self, values: tuple[Any, ...]) -> set[Any]:
        by_value = self.postings.by_value
        found = set(by_value.get(_ODD, ()))
        for value in values:
            found.update(by_value.get(value, ()))
        return found


#: What a sorted index orders records by: field names (`record.get` each; `BY_KEY` the key), or a module-level
#: function of (key, record) giving the values to sort by (a descending price with ascending ids as ties).
SortBy = tuple[str, ...] | Callable[[Any, Any], tuple[Any, ...]]

#: What a sorted index groups records by: field names (a group per tuple of their values, as `FieldIndex`
#: files them) or a function of the record (a group per value it reads, as `DerivedIndex` files them).
Grouping = tuple[str, ...] | Callable[[Any], Iterable[Any]]


def _grouper(grouping: Grouping) -> Callable[[Any], Any]:
    """A function giving what a record is filed under: its group (grouped by fields) or a tuple of its
    groups (grouped by a function), or None when it cannot be filed."""
    if isinstance(grouping, tuple):
        read = _reader(grouping)

        def by_fields(record: Any) -> Any:
            group = _group(record, read)
            return None if group is _ODD else group
        return by_fields

    def by_function(record: Any) -> tuple[Any, ...] | None:
        try:
            return tuple(set(grouping(record)))
        except Exception:  # noqa: BLE001 - a record the function cannot read: the caller sorts
            return None
    return by_function


def _entry_maker(by: SortBy, sign: int, place: dict[Any, int]) -> Callable[[Any, dict[str, Any]], tuple[Any, ...]]:
    """A function giving a record's entry in a sorted group: the values of `by` (`record.get`; `BY_KEY` the
    key; or what a function of (key, record) gives), then the tie-break, the place in the map (negated when
    sorting in reverse, so a reversed read keeps ties in the map's order), then the key. One flat tuple per
    record."""
    if callable(by):
        return lambda key, record: (*by(key, record), sign * place[key], key)
    if len(by) == 1 and BY_KEY not in by:
        (one,) = by
        return lambda key, record: (record.get(one), sign * place[key], key)
    if len(by) == 2 and BY_KEY not in by:
        one, two = by
        return lambda key, record: (record.get(one), record.get(two), sign * place[key], key)
    return lambda key, record: (*[key if f == BY_KEY else record.get(f) for f in by], sign * place[key], key)


def _entries(by: SortBy, reverse: bool, raw: Mapping[Any, Any], place: dict[Any, int]) -> list[tuple[Any, ...]] | None:
    """Every record's entry as `_entry_maker` makes it, read column by column (fields: every record a dict
    holding them) or by one `map` of the function; None when the fields cannot be read so."""
    keys = list(raw)
    places = list(map(place.__getitem__, keys))
    if reverse:
        places = list(map(neg, places))
    if callable(by):
        return [(*values, at, key) for values, at, key in zip(map(by, keys, raw.values()), places, keys, strict=True)]
    values = _columns(raw, by, by_key=True)
    return None if values is None else list(zip(*values, places, keys, strict=True))


class SortedIndex:
    """Per group (`Grouping`), the keys ordered as Python's stable `sorted` orders their records by the values
    of `by` (`reverse` too): ties keep the map's order. A map with a record that cannot be filed or ordered is
    left to the caller."""

    def __init__(self, grouping: Grouping, by: SortBy, reverse: bool, raw: Mapping[Any, Any],
                 place: dict[Any, int]) -> None:
        self.grouping, self.by, self.reverse = grouping, by, reverse
        self._filed_under, self._entry = _grouper(grouping), _entry_maker(by, -1 if reverse else 1, place)
        self._one = isinstance(grouping, tuple)
        self.groups: dict[Any, SortedList] = {}
        self.mine: set[Any] | None = None
        """a fork's groups it has copied (the others are a shared index's, never changed); None: all its own"""
        self.entries: dict[Any, tuple[Any, ...]] = {}
        """each filed key's entry; and `under`, what it is filed under (flat, as `_Postings` keeps it)"""
        self.under: dict[Any, Any] = {}
        self.unordered: set[Any] = set()
        grouped = self._fast(grouping, by, reverse, raw, place)
        if grouped is None:
            grouped = self._one_by_one(raw)
        for group, entries in grouped.items():
            try:
                self.groups[group] = SortedList(entries)
            except TypeError:  # values that do not compare: this map is sorted by the caller
                self.unordered.update(entry[-1] for entry in entries)

    def _fast(self, grouping: Grouping, by: SortBy, reverse: bool, raw: Mapping[Any, Any],
              place: dict[Any, int]) -> dict[Any, list[tuple[Any, ...]]] | None:
        """Every record's groups and entry read a column or a `map` at a time (no per-record call of the
        index's own), grouped; None when that cannot be done (the records are then filed one by one, which
        leaves the ones it cannot file to the caller)."""
        entries = _entries(by, reverse, raw, place)
        if entries is None:
            return None
        if isinstance(grouping, tuple):
            groups = _columns(raw, grouping)
            if groups is None:
                return None
            unders: list[Any] = _rows(groups, len(raw))
        else:
            try:  # as `_grouper`'s by_function, each record's groups once
                unders = list(map(tuple, map(set, map(grouping, raw.values()))))
            except Exception:  # noqa: BLE001 - a record the function cannot read: filed one by one
                return None
        grouped: defaultdict[Any, list[tuple[Any, ...]]] = defaultdict(list)
        try:
            if self._one:
                for under, entry in zip(unders, entries, strict=True):
                    grouped[under].append(entry)
            else:
                for under, entry in zip(unders, entries, strict=True):
                    for group in under:
                        grouped[group].append(entry)
        except TypeError:  # a group that cannot be hashed
            return None
        self.entries, self.under = dict(zip(raw, entries, strict=True)), dict(zip(raw, unders, strict=True))
        return grouped

    def _one_by_one(self, raw: Mapping[Any, Any]) -> dict[Any, list[tuple[Any, ...]]]:
        grouped: dict[Any, list[tuple[Any, ...]]] = {}
        filed_under, entry_of, one = self._filed_under, self._entry, self._one
        for key, record in raw.items():  # one sort per group, not one insertion per record
            under = filed_under(record)
            if under is None:
                self.unordered.add(key)
                continue
            entry = self.entries[key] = entry_of(key, record)
            self.under[key] = under
            for group in (under,) if one else under:
                found = grouped.get(group)
                if found is None:
                    grouped[group] = [entry]
                else:
                    found.append(entry)
        return grouped

    def forked(self, place: dict[Any, int]) -> Self:
        """This index for one session to change, its entries placed by that session's `place`; it shares every
        group until it changes one (`_own`), so forking costs a few dict copies."""
        new = copy.copy(self)
        new._entry = _entry_maker(self.by, -1 if self.reverse else 1, place)
        new.groups, new.entries, new.under = dict(self.groups), dict(self.entries), dict(self.under)
        new.unordered, new.mine = set(self.unordered), set()
        return new

    def _own(self, group: Any) -> SortedList:
        """The group's entries, copied first when they are still a shared index's (a new group is its own)."""
        found = self.groups.get(group)
        mine = self.mine
        if found is None:
            found = self.groups[group] = SortedList()
        elif mine is not None and group not in mine:
            found = self.groups[group] = _copy(found)
        if mine is not None:
            mine.add(group)
        return found

    def refile(self, key: Any, record: Any = _MISSING) -> None:
        if key in self.entries:
            entry, under = self.entries.pop(key), self.under.pop(key)
            for group in (under,) if self._one else under:
                if group in self.groups:
                    self._own(group).discard(entry)
        self.unordered.discard(key)
        if record is _MISSING:
            return
        under = self._filed_under(record)
        try:
            if under is None:
                raise TypeError("unfiled")
            entry = self._entry(key, record)
            for group in (under,) if self._one else under:
                self._own(group).add(entry)
        except TypeError:  # values that do not compare with the others: this map is sorted by the caller
            self.unordered.add(key)
            return
        self.entries[key], self.under[key] = entry, under


#: A world's text index files its texts' words after this many searches (by any of its sessions): filing
#: them cost about 20 scans (chat's messages 250 ms against 1 ms a scan), which a world's first session,
#: with fewer searches than that, would pay for nothing (the engine's text index waits 32 searches too).
SEARCHES_BEFORE_WORDS = 32


class TextIndex:
    """Each record's text over some fields, as `matches` reads it: a query's candidates are the records whose
    text holds every word, found by one substring test per record (no per-record call, no match object).
    Building it is one cached look-up per record; a token index cost 50 times more to build than the
    searches of an episode saved (issue 35), so only a world's index, built once for all its sessions, keeps
    one (`tokens`), once its sessions (and the forks of it) have searched `SEARCHES_BEFORE_WORDS` times (a
    session that forked before keeps scanning): each distinct word of
    the texts with the records that hold it. A query word has no
    space, so it is in a text exactly when it is in one of the text's words: a search tests the distinct
    words, not every record's text."""

    def __init__(self, fields: tuple[str, ...], raw: Mapping[Any, Any], tokens: bool = False) -> None:
        self.fields = fields
        paths = [tuple(f.split(".")) for f in fields]  # split once, not once a record
        self._read: Callable[[dict[str, Any]], tuple[Any, ...]] = (
            _reader(fields, None) if not any("." in f for f in fields)
            else lambda record: tuple([read_path(record, path) for path in paths]))
        self.texts: dict[Any, str | None] = {}
        self.words: _Postings | None = None
        """with `tokens`: each word of the texts -> the keys whose text holds it"""
        self.odd: set[Any] = set()
        """the keys of records it cannot read (always candidates)"""
        columns = _path_columns(raw, paths)
        if columns is not None:  # every record a dict holding every field: read column by column
            self.texts = dict(zip(raw, map(text_of, zip(*columns, strict=True)), strict=True))
        else:
            refile = self.refile
            for key, record in raw.items():
                refile(key, record)
        self.world: TextIndex | None = self if tokens else None
        """the world's text index whose words it counts searches toward (itself, a fork's origin; None: a
        session's own index, which never files words)"""
        self.searches = 0
        self.built_s = 0.0
        """CPU seconds its words' index took to build (part of a world's load)"""

    def _file_words(self) -> None:
        """File each text's distinct words (`words`), timed into `built_s`."""
        started = time.process_time()
        words = self.words = _Postings()
        add = words.add
        for key, text in self.texts.items():
            if text is not None:
                add(key, tuple(set(text.split(" "))))
        self.built_s += time.process_time() - started

    def forked(self) -> Self:
        """This index for one session to change (its texts are strings: one dict copy; its words' buckets
        copied when changed)."""
        new = copy.copy(self)
        new.texts, new.odd = dict(self.texts), set(self.odd)
        new.words = None if self.words is None else self.words.forked()
        new.built_s = 0.0  # a fork never files words itself; its searches count toward the world's
        return new

    def refile(self, key: Any, record: Any = _MISSING) -> None:
        self.odd.discard(key)
        if self.words is not None:
            self.words.remove(key)
        if record is _MISSING:
            self.texts.pop(key, None)
        elif type(record) is not dict:
            self.texts[key] = None  # unreadable: always a candidate
            self.odd.add(key)
        else:
            text = self.texts[key] = text_of(self._read(record))
            if self.words is not None:
                self.words.add(key, tuple(set(text.split(" "))))

    def candidates(self, words: list[str]) -> set[Any]:
        first, *rest = sorted(words, key=len, reverse=True)
        world = self.world
        if world is not None and world.words is None:  # the world's sessions' searches, forks' too, count
            world.searches += 1
            if world.searches > SEARCHES_BEFORE_WORDS:
                world._file_words()
        if self.words is not None:
            return self._by_words(first, rest)
        found = {k for k, text in self.texts.items() if text is None or first in text}
        for word in rest:
            texts = self.texts
            found = {k for k in found if texts[k] is None or word in texts[k]}  # type: ignore[operator]
        return found

    def _by_words(self, first: str, rest: list[str]) -> set[Any]:
        """The keys whose text holds every word: the first (longest) word's from the distinct words that hold
        it, unless they file more records than the texts are (a common word: "on" is in "london", "monday",
        ...; scanning the texts is cheaper then), the other words tested on those; and the unreadable ones."""
        texts = self.texts
        buckets = [keys for token, keys in self.words.by_value.items() if first in token]  # type: ignore[union-attr]
        if sum(map(len, buckets)) > len(texts):
            found = {k for k, text in texts.items() if text is not None and first in text}
        else:
            found = set().union(*buckets)
        for word in rest:
            found = {k for k in found if word in texts[k]}  # type: ignore[operator]
        return found | self.odd


class CollectionIndex:
    """The indexes of one `{key: record}` map and each key's place in its order.

    With `shared` (a world's index over the records the map was copied from, `WorldIndexes`), it reads and
    extends the world's indexes, built once for all the world's sessions, until a write call touches the
    map: `fork` then gives it its own, which share every bucket and group they have not changed."""

    def __init__(self, raw: dict[Any, Any], shared: CollectionIndex | None = None) -> None:
        self.raw = raw
        self.shared = shared
        self.built_s = 0.0
        """CPU seconds spent building this map's indexes (a shared one's: the world's load)"""
        self.world = False
        """a world's own index (`WorldIndexes`), built once for all its sessions: its text indexes keep tokens"""
        self.origin: CollectionIndex | None = None
        """the world's index this one forked from, and `changed`, the keys the session's writes refiled since"""
        self.changed: set[Any] = set()
        self.place: dict[Any, int]
        self._next: int
        self.fields: dict[tuple[str, ...], FieldIndex]
        self.texts: dict[tuple[str, ...], TextIndex]
        self.derived: dict[Callable[[Any], Iterable[Any]], DerivedIndex]
        self.sorts: dict[tuple[Grouping, SortBy, bool], SortedIndex]
        if shared is not None:
            self.place, self._next = shared.place, shared._next
            self.fields, self.texts, self.derived, self.sorts = shared.fields, shared.texts, shared.derived, shared.sorts
            return
        self.place = {key: n for n, key in enumerate(raw)}
        self._next = len(raw)
        self.fields, self.texts, self.derived, self.sorts = {}, {}, {}, {}

    def fork(self) -> None:
        """Own indexes from now on (a write call touched the map), so no other session sees its changes: the
        shared ones forked, each sharing what it has not changed (a few dict copies, not a build)."""
        shared = self.shared
        if shared is None:
            return
        self.shared, self.origin = None, shared
        self.place, self._next = dict(shared.place), shared._next
        self.fields = {k: v.forked() for k, v in shared.fields.items()}
        self.texts = {k: v.forked() for k, v in shared.texts.items()}
        self.derived = {k: v.forked() for k, v in shared.derived.items()}
        self.sorts = {k: v.forked(self.place) for k, v in shared.sorts.items()}

    def _built(self, make: Callable[[Mapping[Any, Any]], _Built]) -> _Built:
        """`make(records)`, timed into the owner's `built_s`; a shared index is built from the world's own
        records, which are the ones this map holds and which no session changes."""
        owner = self.shared or self
        started = time.process_time()
        made = make(owner.raw)
        owner.built_s += time.process_time() - started
        return made

    def _made(self, of_world: Callable[[CollectionIndex], _Built], make: Callable[[Mapping[Any, Any]], _Built],
              forked: Callable[[_Built], _Built]) -> _Built:
        """A new index of the map: once forked from the world's, the world's (built there once, into its
        load) forked and refiled at the keys this session's writes changed, which costs those keys, not a
        build; else built."""
        origin = self.origin
        if origin is None:
            return self._built(make)
        made = forked(of_world(origin))
        raw = self.raw
        for key in self.changed:
            made.refile(key, raw.get(key, _MISSING))  # type: ignore[attr-defined]
        return made

    def field(self, names: tuple[str, ...]) -> FieldIndex:
        found = self.fields.get(names)
        if found is None:
            found = self.fields[names] = self._made(lambda world: world.field(names),
                                                    lambda raw: FieldIndex(names, raw), FieldIndex.forked)
        return found

    def sort(self, grouping: Grouping, by: SortBy, reverse: bool) -> SortedIndex:
        found = self.sorts.get((grouping, by, reverse))
        if found is None:
            found = self.sorts[(grouping, by, reverse)] = self._made(
                lambda world: world.sort(grouping, by, reverse),
                lambda raw: SortedIndex(grouping, by, reverse, raw, self.place),
                lambda made: made.forked(self.place))
        return found

    def deriving(self, of: Callable[[Any], Iterable[Any]]) -> DerivedIndex:
        found = self.derived.get(of)
        if found is None:
            found = self.derived[of] = self._made(lambda world: world.deriving(of), lambda raw: DerivedIndex(of, raw),
                                                  DerivedIndex.forked)
        return found

    def text(self, fields: tuple[str, ...]) -> TextIndex:
        found = self.texts.get(fields)
        if found is None:
            tokens = (self.shared or self).world
            found = self.texts[fields] = self._made(lambda world: world.text(fields),
                                                    lambda raw: TextIndex(fields, raw, tokens), TextIndex.forked)
        return found

    def refile(self, keys: set[Any], moved: set[Any]) -> bool:
        """File `keys` again as the map holds them now. A key added, or deleted on the way (`moved`) and
        back, stands at the end of the map's order, as a dict puts it: those keys are the map's last ones,
        placed in that order. False when they are not (the index must be built afresh)."""
        raw = self.raw
        if self.origin is not None:
            self.changed |= keys
        tail = [k for k in keys if k in raw and (k not in self.place or k in moved)]
        if tail:
            last = list(islice(reversed(raw), len(tail)))[::-1]
            if set(last) != set(tail):
                return False
            for key in last:
                self.place[key] = self._next
                self._next += 1
        for key in keys:
            record = raw.get(key, _MISSING)
            if record is _MISSING:
                self.place.pop(key, None)
            for field in self.fields.values():
                field.refile(key, record)
            for text in self.texts.values():
                text.refile(key, record)
            for derived in self.derived.values():
                derived.refile(key, record)
            for sort in self.sorts.values():
                sort.refile(key, record)
        return True

    def in_order(self, keys: Collection[Any]) -> list[Any]:
        """`keys` (all filed) in the map's order: sorted by place when they are few, else read off the map's
        own order (a sort of thousands of keys cost several walks of the map)."""
        if len(keys) * 8 > len(self.place):
            wanted = keys if isinstance(keys, (set, frozenset, dict)) else set(keys)
            return [k for k in self.raw if k in wanted]
        return sorted(keys, key=self.place.__getitem__)


def _explained(index: CollectionIndex, kept: Kept | None) -> bool:
    """Whether the keys a running write call touched account for the change in the map's size since `index`
    was filed (keys added that it has no place for, keys of its that are gone)."""
    if kept is None or kept.walked:
        return False
    raw, place = index.raw, index.place
    added = sum(1 for k in kept.touched if k in raw and k not in place)
    gone = sum(1 for k in kept.touched if k not in raw and k in place)
    return len(place) + added - gone == len(raw)


class WorldIndexes:
    """A world's indexes, shared by every session that starts from it, as a database keeps its indexes: each
    (app, collection) indexed once, on its first use by a session whose copy of the map no write call has
    touched (`Indexes`), and never changed after (a session that writes forks its own, `CollectionIndex.fork`).
    `state` is the world's start state, which no session changes (each works on its own copy)."""

    def __init__(self, state: Mapping[str, Mapping[str, Any]]) -> None:
        self._state = state
        self._cores: dict[tuple[str, str], CollectionIndex] = {}

    def core(self, app: str, name: str) -> CollectionIndex | None:
        """The world's index of the app's map `name` (None when the world holds no such map)."""
        found = self._cores.get((app, name))
        if found is None:
            raw = self._state.get(app, {}).get(name)
            if type(raw) is not dict:
                return None
            found = self._cores[(app, name)] = CollectionIndex(raw)
            found.world = True
        return found

    def built_s(self) -> float:
        """CPU seconds spent building the world's indexes so far: its load, paid once for all its sessions."""
        return sum(core.built_s + sum(text.built_s for text in core.texts.values()) for core in self._cores.values())

    def built(self) -> set[tuple[Any, ...]]:
        """Which indexes the world holds: (app, map, kind, what it is over) each."""
        return {(*at, kind, key) for at, core in self._cores.items()
                for kind, made in (("field", core.fields), ("text", core.texts), ("derived", core.derived),
                                   ("sorted", core.sorts)) for key in made}

    def cores(self) -> dict[tuple[str, str], CollectionIndex]:
        return dict(self._cores)


class Indexes:
    """The session's indexes, per (app, collection name), brought up to date when each write call ends; with
    `world`, the world's own indexes for the maps in `pristine` (the session's copies of the world's maps)
    until a write call touches them."""

    def __init__(self, enabled: bool = True, world: WorldIndexes | None = None,
                 pristine: dict[tuple[str, str], dict[Any, Any]] | None = None) -> None:
        self.enabled = enabled
        """False: every look-up walks its map (what the tests compare the indexes with)"""
        self.world = world
        self._pristine = dict(pristine or {})
        self._drifted: dict[tuple[str, str], tuple[dict[Any, Any], set[Any], set[Any]]] = {}
        """maps of the world's that write calls touched before the session indexed them: the map, the keys
        they touched and the ones they deleted (the world's index forked and refiled there is the map's)"""
        self._of: dict[tuple[str, str], CollectionIndex] = {}

    def of(self, app: str, name: str, raw: dict[Any, Any], kept: Kept | None = None) -> CollectionIndex:
        """The map's index, built afresh when the map was replaced or its size changed behind the journal's
        back. A running write call's keys (`kept`) may explain the size: it added a record and reads on (a new
        event's clashes), and its touched keys are candidates anyway, so the index stays and is refiled when
        the call ends instead of being built twice. A map the running call touched has indexes of its own."""
        found = self._of.get((app, name))
        if found is None or found.raw is not raw or (len(found.place) != len(raw) and not _explained(found, kept)):
            found = self._of[(app, name)] = self._new(app, name, raw)
        if kept is not None:
            self._pristine.pop((app, name), None)
            found.fork()
        return found

    def _new(self, app: str, name: str, raw: dict[Any, Any]) -> CollectionIndex:
        """The world's index for a map still as the world holds it, else one of the session's own."""
        if self.world is not None and self._pristine.get((app, name)) is raw:
            core = self.world.core(app, name)
            if core is not None and len(core.raw) == len(raw):
                return CollectionIndex(raw, shared=core)
        drifted = self._drifted.pop((app, name), None)
        if self.world is not None and drifted is not None and drifted[0] is raw:
            core = self.world.core(app, name)
            if core is not None:
                index = CollectionIndex(raw, shared=core)
                index.fork()
                if index.refile(drifted[1], drifted[2]):
                    return index
        return CollectionIndex(raw)

    def after_write(self, app: str, journal: CallJournal) -> None:
        """File again what a write call touched (after it is done or undone), in the session's own indexes."""
        for (owner, name), raw in list(self._pristine.items()):
            kept = journal.kept_of(raw) if owner == app else None
            if kept is not None:
                del self._pristine[(owner, name)]
                if not kept.walked and (owner, name) not in self._of:
                    self._drifted[(owner, name)] = (raw, set(kept.touched), set(kept.deleted))
        for (owner, name), (raw, touched, moved) in list(self._drifted.items()):
            kept = journal.kept_of(raw) if owner == app else None
            if kept is None or (owner, name) in self._of:
                continue
            if kept.walked:
                del self._drifted[(owner, name)]
            else:
                touched |= kept.touched
                moved |= kept.deleted
        for (owner, _), index in list(self._of.items()):
            if owner != app:
                continue
            kept = journal.kept_of(index.raw)
            if kept is None:
                continue
            if kept.walked:
                del self._of[(owner, _)]
                continue
            index.fork()
            if not index.refile(kept.touched, kept.deleted):
                del self._of[(owner, _)]

    def select(self, app: str, name: str, collection: Any, journal: CallJournal | None, *,
               equal: Mapping[str, Any], words: list[str] | None, fields: tuple[str, ...],
               having: tuple[Callable[[Any], Iterable[Any]], tuple[Any, ...]] | None = None) -> list[Any]:
        """Keys of `collection` (the app's map `name`, or a write call's view of it), in the map's order, that
        may hold `equal`'s values, every one of `words` in `fields` and (`having`) one of some values among
        those a function reads off the record: index hits, and what the running write call touched."""
        raw = collection._raw if type(collection) is CollectionView else collection
        kept = journal.kept_of(raw) if journal is not None else None
        if not self.enabled or (kept is not None and kept.walked):
            return list(raw)
        index = self.of(app, name, raw, kept)
        found: set[Any] | None = None
        if equal:
            fields_of = index.field(tuple(sorted(equal)))
            found = set(fields_of.hits(tuple(equal[f] for f in sorted(equal)))) | set(fields_of.odd())
        if words:
            hits = index.text(fields).candidates(words)
            found = hits if found is None else found & hits
        if having is not None:
            hits = index.deriving(having[0]).candidates(having[1])
            found = hits if found is None else found & hits
        if found is None:  # nothing narrowed it: every key, as the map orders them
            return list(raw)
        keys = found
        if kept is None or not kept.touched:
            return index.in_order(keys)
        keys = {k for k in keys | kept.touched if k in raw}
        if any(k not in index.place or k in kept.deleted for k in keys):
            return [k for k in raw if k in keys]
        return index.in_order(keys)

    def fresh(self, app: str, name: str, collection: Any, journal: CallJournal | None) -> CollectionIndex | None:
        """The index of the map, when it holds exactly what the map holds now (no running write call has
        touched the map yet); else None, and the caller walks."""
        raw = collection._raw if type(collection) is CollectionView else collection
        if not self.enabled or (journal is not None and journal.kept_of(raw) is not None):
            return None
        return self.of(app, name, raw)

    def exact(self, app: str, name: str, collection: Any, journal: CallJournal | None,
              equal: Mapping[str, Any], having: tuple[Callable[[Any], Iterable[Any]], tuple[Any, ...]] | None = None
              ) -> list[Any] | None:
        """The keys whose records hold `equal`'s values (or, `having`, one of some values a function reads off
        them), in the map's order, when the index can say exactly (no record it cannot file, the map not
        walked by a running write call); else None, and the caller checks each candidate. Inside a write call
        only the keys it touched are tested again: the others are as the index filed them."""
        raw = collection._raw if type(collection) is CollectionView else collection
        kept = journal.kept_of(raw) if journal is not None else None
        if not self.enabled or (kept is not None and kept.walked):
            return None
        index = self.of(app, name, raw, kept)
        if having is None:
            fields = index.field(tuple(sorted(equal)))
            if fields.odd():
                return None
            hits: Collection[Any] = fields.hits(tuple(equal[f] for f in sorted(equal)))
        else:
            by_value = index.deriving(having[0]).postings.by_value
            if _ODD in by_value:
                return None
            buckets = [by_value[v] for v in having[1] if v in by_value]
            hits = buckets[0] if len(buckets) == 1 else set().union(*buckets)
        if kept is None or not kept.touched:
            return index.in_order(hits)
        touched = kept.touched
        keys = {k for k in hits if k not in touched}
        keys.update(k for k in touched if k in raw and (holds(raw[k], equal) if having is None
                                                        else among(having[1], having[0](raw[k]))))
        if any(k not in index.place or k in kept.deleted for k in touched if k in keys):
            return [k for k in raw if k in keys]
        return index.in_order(keys)

    def matched(self, app: str, name: str, collection: Any, journal: CallJournal | None, words: list[str],
                fields: tuple[str, ...]) -> list[Any] | None:
        """The keys whose text over `fields` holds every one of `words`, in the map's order, when the index can
        say exactly (words asked, every record readable, no running write call has touched the map); else
        None, and the caller tests each candidate. A word has no space, so the distinct words that hold it
        find exactly the texts that do."""
        index = self.fresh(app, name, collection, journal) if words else None
        if index is None:
            return None
        text = index.text(fields)
        if text.odd:
            return None
        return index.in_order(text.candidates(words))

    def count(self, app: str, name: str, collection: Any, journal: CallJournal | None,
              equal: Mapping[str, Any], having: tuple[Callable[[Any], Iterable[Any]], Any] | None = None) -> int | None:
        """How many records hold `equal`'s values (or, `having`, a value a function reads off them), or None
        when the index cannot say exactly."""
        index = self.fresh(app, name, collection, journal)
        if index is None:
            return None
        if having is not None:
            for (grouping, _, _), sort in index.sorts.items():  # a sorted index of the same groups knows it too
                if grouping is having[0] and not sort.unordered:
                    return len(sort.groups.get(having[1], ()))
            derived = index.deriving(having[0]).postings.by_value
            return None if _ODD in derived else len(derived.get(having[1], ()))
        names, values = tuple(sorted(equal)), tuple(equal[f] for f in sorted(equal))
        if names not in index.fields:
            for (grouping, _, _), sort in index.sorts.items():  # a sorted index of the same fields knows it too
                if grouping == names and not sort.unordered:
                    return len(sort.groups.get(values, ()))
        fields = index.field(names)
        if fields.odd():
            return None
        return len(fields.hits(values))

    def held(self, app: str, name: str, collection: Any, journal: CallJournal | None,
             of: Callable[[Any], Iterable[Any]]) -> set[Any] | None:
        """The values `of` reads off some record (a sorted index's groups of that function, else its derived
        index's buckets), or None when the index cannot say exactly."""
        index = self.fresh(app, name, collection, journal)
        if index is None:
            return None
        for (grouping, _, _), sort in index.sorts.items():
            if grouping is of and not sort.unordered:
                return {value for value, group in sort.groups.items() if group}
        derived = index.deriving(of).postings.by_value
        return None if _ODD in derived else set(derived)

    def ordered(self, app: str, name: str, collection: Any, journal: CallJournal | None, by: SortBy,
                reverse: bool, equal: Mapping[str, Any], within: tuple[Any, Any],
                having: tuple[Callable[[Any], Iterable[Any]], Any] | None = None,
                keys: bool = False) -> Sequence[Any] | None:
        """The records holding `equal`'s values (or, `having`, a value a function reads off them; a list:
        any of its values, groups that share no record) whose first `by` value lies in `within` (`lo <= v <
        hi`, None open), sorted by `by`, as a sequence whose pages cost a page; None when the index cannot
        give it."""
        index = self.fresh(app, name, collection, journal)
        if index is None:
            return None
        if having is not None:
            sort, wanted = index.sort(having[0], by, reverse), having[1]
        else:
            sort, wanted = index.sort(tuple(sorted(equal)), by, reverse), tuple(equal[f] for f in sorted(equal))
        if sort.unordered:
            return None
        if type(wanted) is list:  # the groups no record is filed under add nothing (most, in a board of lists)
            groups = sort.groups
            return Merged([self._window(collection, sort, value, reverse, within, keys) for value in wanted
                           if value in groups], reverse)
        return self._window(collection, sort, wanted, reverse, within, keys)

    @staticmethod
    def _window(collection: Any, sort: SortedIndex, wanted: Any, reverse: bool, within: tuple[Any, Any],
                keys: bool) -> Ordered:
        group = sort.groups.get(wanted)
        if group is None:
            return Ordered(collection, _NOTHING, reverse, 0, 0, keys)
        lo, hi = within
        start = 0 if lo is None else group.bisect_left((lo,))
        stop = len(group) if hi is None else group.bisect_left((hi,))
        return Ordered(collection, group, reverse, start, max(start, stop), keys)


class _Window(Sequence[Any]):
    """A read-only sequence whose slices are computed (`_slice`); an index is a slice of one."""

    @overload
    def __getitem__(self, at: int) -> Any: ...
    @overload
    def __getitem__(self, at: slice) -> list[Any]: ...

    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, int):
            return self[at:at + 1 or None][0]
        return self._slice(*at.indices(len(self)))

    @abstractmethod
    def _slice(self, start: int, stop: int, step: int) -> list[Any]: ...


class Ordered(_Window):
    """A window `[start, stop)` of a sorted group, read by position: `len` and slices cost what they return
    (`paginate`)."""

    def __init__(self, collection: Any, entries: SortedList, reverse: bool, start: int, stop: int,
                 keys: bool = False) -> None:
        self._entries, self._reverse = entries, reverse
        self._start, self._stop = start, stop
        self._read: Callable[[Any], Any] = (lambda key: key) if keys else collection.__getitem__

    def __len__(self) -> int:
        return self._stop - self._start

    def __iter__(self) -> Iterator[Any]:
        return (self._read(entry[-1]) for entry in self.entries())

    def entries(self) -> Iterator[tuple[Any, ...]]:
        """The window's entries in reading order."""
        return iter(self._entries.islice(self._start, self._stop, reverse=self._reverse))

    def read(self, entry: tuple[Any, ...]) -> Any:
        return self._read(entry[-1])

    def _slice(self, start: int, stop: int, step: int) -> list[Any]:
        if step != 1:
            return list(self)[start:stop:step]
        if self._reverse:
            start, stop = self._stop - stop, self._stop - start
        else:
            start, stop = self._start + start, self._start + stop
        window = self._entries.islice(start, stop, reverse=self._reverse) if start < stop else ()
        return [self._read(entry[-1]) for entry in window]


class Merged(_Window):
    """Sorted windows of groups that share no record, read as one order (`heapq.merge`): a page costs the
    entries before it."""

    def __init__(self, parts: list[Ordered], reverse: bool) -> None:
        self._parts, self._reverse = parts, reverse

    def __len__(self) -> int:
        return sum(len(part) for part in self._parts)

    def __iter__(self) -> Iterator[Any]:
        """Read as far as the reader goes (a page off the front of a long merge costs the page)."""
        if not self._parts:
            return iter(())
        read = self._parts[0].read
        return (read(entry) for entry in heapq.merge(*(part.entries() for part in self._parts), reverse=self._reverse))

    def _slice(self, start: int, stop: int, step: int) -> list[Any]:
        if not self._parts:
            return []
        merged = heapq.merge(*(part.entries() for part in self._parts), reverse=self._reverse)
        read = self._parts[0].read
        return [read(entry) for entry in islice(merged, start, stop, step)] if start < stop else []
