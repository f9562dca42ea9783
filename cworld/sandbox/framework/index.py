"""Indexes over an app's collections, so a look-up costs the records it finds, not the collection.

A tool that wants the messages of one thread, or the people whose name holds a word, walked every record:
10 ms at 10,000 records where 100 took 0.1 ms. `Indexes` (one per session) keeps, per top-level `{key:
record}` map of an app's state and on first use: a hash index per field asked (`value -> keys`), a token
index per tuple of text fields (each token of `match_text` over the fields -> keys), and every key's place
in the map's order, so answers come back in the order a walk gives.

They stay true through the write calls' journals (`journal.py`): a write call keeps every record it reads
or writes by key, so when it ends (done or undone) only those keys are filed again; a call that walked the
whole map, a map replaced (a reset, a restore) or one whose size changed behind the journal's back is
indexed afresh on its next use. While a write call runs, the keys it has touched so far are candidates too.
The apps never change their state outside a tool call, and read-only tools never change it; that is what
the indexes rest on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import islice
from typing import Any, overload

from sortedcontainers import SortedList

from cworld.sandbox.framework.journal import CallJournal, CollectionView
from cworld.values import match_text

_MISSING = object()
#: The bucket of records a field index cannot file (not a dict, an unhashable value): always candidates.
_ODD = object()


def _tokens(record: Any, fields: tuple[str, ...]) -> frozenset[str]:
    if type(record) is not dict:
        return frozenset((_ODD_TOKEN,))
    values = tuple(record.get(f) for f in fields)
    if all(type(v) is str for v in values):
        return _text_tokens(values)
    return frozenset(match_text(*values).split())


@lru_cache(maxsize=1 << 16)
def _text_tokens(texts: tuple[str, ...]) -> frozenset[str]:
    """The tokens of plain texts, cached as the apps' `matches` caches its haystacks: records share texts
    (a sender's name, a status), and normalizing is most of an index's build."""
    return frozenset(match_text(*texts).split())


#: The token of a record a text index cannot read: every query finds it as a candidate.
_ODD_TOKEN = "\x00"


class _Postings:
    """`value -> {key: None}` and each key's value, refiled key by key."""

    __slots__ = ("by_value", "filed")

    def __init__(self) -> None:
        self.by_value: dict[Any, dict[Any, None]] = {}
        self.filed: dict[Any, Any] = {}

    def add(self, key: Any, values: Iterable[Any]) -> None:
        values = tuple(values)
        self.filed[key] = values
        for value in values:
            self.by_value.setdefault(value, {})[key] = None

    def remove(self, key: Any) -> None:
        for value in self.filed.pop(key, ()):
            bucket = self.by_value[value]
            del bucket[key]
            if not bucket:
                del self.by_value[value]


def _group(record: Any, fields: tuple[str, ...]) -> Any:
    """The record's values of `fields` (a missing one as `_MISSING`), or `_ODD` when they cannot be filed."""
    if type(record) is not dict:
        return _ODD
    values = tuple([record.get(f, _MISSING) for f in fields])
    try:
        hash(values)
    except TypeError:
        return _ODD
    return values


class FieldIndex:
    """Keys by some fields' values (`record.get(field)` each); records it cannot file are always candidates."""

    def __init__(self, fields: tuple[str, ...], raw: Mapping[Any, Any]) -> None:
        self.fields = fields
        self.postings = _Postings()
        for key, record in raw.items():
            self.refile(key, record)

    def refile(self, key: Any, record: Any = _MISSING) -> None:
        self.postings.remove(key)
        if record is not _MISSING:
            self.postings.add(key, (_group(record, self.fields),))

    def hits(self, values: tuple[Any, ...]) -> dict[Any, None]:
        return self.postings.by_value.get(values, {})

    def odd(self) -> dict[Any, None]:
        return self.postings.by_value.get(_ODD, {})


class SortedIndex:
    """Per group of `FieldIndex` values, the keys ordered by the values of `by` (which end in a field no two
    records share, an id, so nothing ties). A group whose values cannot be ordered is left to the caller."""

    def __init__(self, fields: tuple[str, ...], by: tuple[str, ...], raw: Mapping[Any, Any]) -> None:
        self.fields, self.by = fields, by
        self.groups: dict[Any, SortedList] = {}
        self.filed: dict[Any, tuple[Any, Any]] = {}
        self.unordered: set[Any] = set()
        grouped: dict[Any, list[tuple[Any, Any]]] = {}
        for key, record in raw.items():  # one sort per group, not one insertion per record
            group = _group(record, fields)
            if group is _ODD:
                self.unordered.add(key)
                continue
            entry = (tuple([record.get(f) for f in by]), key)
            grouped.setdefault(group, []).append(entry)
            self.filed[key] = (group, entry)
        for group, entries in grouped.items():
            try:
                self.groups[group] = SortedList(entries)
            except TypeError:  # values that do not compare: this group is sorted by the caller
                self.unordered.update(key for _, key in entries)
                for _, key in entries:
                    del self.filed[key]

    def refile(self, key: Any, record: Any = _MISSING) -> None:
        old = self.filed.pop(key, None)
        if old is not None:
            self.groups[old[0]].remove(old[1])
        self.unordered.discard(key)
        if record is _MISSING:
            return
        group = _group(record, self.fields)
        entry = (tuple(record.get(f) for f in self.by), key) if type(record) is dict else None
        try:
            if group is _ODD or entry is None:
                raise TypeError("unfiled")
            self.groups.setdefault(group, SortedList()).add(entry)
        except TypeError:  # values that do not compare with the others: this map is sorted by the caller
            self.unordered.add(key)
            return
        self.filed[key] = (group, entry)


class TextIndex:
    """Keys by the tokens of `match_text` over some fields: a query word lies inside one token of the text
    `matches` reads, so the records holding a token that contains every word are a superset of the matches."""

    def __init__(self, fields: tuple[str, ...], raw: Mapping[Any, Any]) -> None:
        self.fields = fields
        self.postings = _Postings()
        self._containing: dict[str, list[str]] = {}
        for key, record in raw.items():
            self.refile(key, record)

    def refile(self, key: Any, record: Any = _MISSING) -> None:
        self.postings.remove(key)
        if record is not _MISSING:
            tokens = _tokens(record, self.fields)
            if any(t not in self.postings.by_value for t in tokens):
                self._containing.clear()
            self.postings.add(key, tokens)

    def candidates(self, words: list[str]) -> set[Any]:
        found: set[Any] | None = None
        for word in sorted(words, key=len, reverse=True):
            keys = self._with(word)
            found = keys if found is None else found & keys
            if not found:
                break
        return (found or set()) | set(self.postings.by_value.get(_ODD_TOKEN, ()))

    def _with(self, word: str) -> set[Any]:
        tokens = self._containing.get(word)
        if tokens is None:
            tokens = self._containing[word] = [t for t in self.postings.by_value if word in t]
        by_value = self.postings.by_value
        return {key for t in tokens for key in by_value.get(t, ())}


class CollectionIndex:
    """The indexes of one `{key: record}` map and each key's place in its order."""

    def __init__(self, raw: dict[Any, Any]) -> None:
        self.raw = raw
        self.place = {key: n for n, key in enumerate(raw)}
        self._next = len(raw)
        self.fields: dict[tuple[str, ...], FieldIndex] = {}
        self.texts: dict[tuple[str, ...], TextIndex] = {}
        self.sorts: dict[tuple[tuple[str, ...], tuple[str, ...]], SortedIndex] = {}

    def field(self, names: tuple[str, ...]) -> FieldIndex:
        found = self.fields.get(names)
        if found is None:
            found = self.fields[names] = FieldIndex(names, self.raw)
        return found

    def sort(self, names: tuple[str, ...], by: tuple[str, ...]) -> SortedIndex:
        found = self.sorts.get((names, by))
        if found is None:
            found = self.sorts[(names, by)] = SortedIndex(names, by, self.raw)
        return found

    def text(self, fields: tuple[str, ...]) -> TextIndex:
        found = self.texts.get(fields)
        if found is None:
            found = self.texts[fields] = TextIndex(fields, self.raw)
        return found

    def refile(self, keys: set[Any], moved: set[Any]) -> bool:
        """File `keys` again as the map holds them now. A key added, or deleted on the way (`moved`) and
        back, stands at the end of the map's order, as a dict puts it: those keys are the map's last ones,
        placed in that order. False when they are not (the index must be built afresh)."""
        raw = self.raw
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
            for sort in self.sorts.values():
                sort.refile(key, record)
        return True

    def in_order(self, keys: set[Any]) -> list[Any]:
        place = self.place
        return sorted(keys, key=place.__getitem__)


class Indexes:
    """The session's indexes, per (app, collection name), brought up to date when each write call ends."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        """False: every look-up walks its map (what the tests compare the indexes with)"""
        self._of: dict[tuple[str, str], CollectionIndex] = {}

    def of(self, app: str, name: str, raw: dict[Any, Any]) -> CollectionIndex:
        found = self._of.get((app, name))
        if found is None or found.raw is not raw or len(found.place) != len(raw):
            found = self._of[(app, name)] = CollectionIndex(raw)
        return found

    def after_write(self, app: str, journal: CallJournal) -> None:
        """File again what a write call touched (after it is done or undone)."""
        for (owner, _), index in list(self._of.items()):
            if owner != app:
                continue
            kept = journal.kept_of(index.raw)
            if kept is None:
                continue
            if kept.walked or not index.refile(kept.touched, kept.deleted):
                del self._of[(owner, _)]

    def select(self, app: str, name: str, collection: Any, journal: CallJournal | None, *,
               equal: Mapping[str, Any], words: list[str] | None, fields: tuple[str, ...]) -> list[Any]:
        """Keys of `collection` (the app's map `name`, or a write call's view of it), in the map's order, that
        may hold `equal`'s values and every one of `words` in `fields`: index hits, and what the running
        write call touched."""
        raw = collection._raw if type(collection) is CollectionView else collection
        kept = journal.kept_of(raw) if journal is not None else None
        if not self.enabled or (kept is not None and kept.walked):
            return list(raw)
        index = self.of(app, name, raw)
        found: set[Any] | None = None
        if equal:
            fields_of = index.field(tuple(sorted(equal)))
            found = set(fields_of.hits(tuple(equal[f] for f in sorted(equal)))) | set(fields_of.odd())
        if words:
            hits = index.text(fields).candidates(words)
            found = hits if found is None else found & hits
        keys = set(raw) if found is None else found
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

    def count(self, app: str, name: str, collection: Any, journal: CallJournal | None,
              equal: Mapping[str, Any]) -> int | None:
        """How many records hold `equal`'s values, or None when the index cannot say exactly."""
        index = self.fresh(app, name, collection, journal)
        if index is None:
            return None
        fields = index.field(tuple(sorted(equal)))
        if fields.odd():
            return None
        return len(fields.hits(tuple(equal[f] for f in sorted(equal))))

    def ordered(self, app: str, name: str, collection: Any, journal: CallJournal | None, by: tuple[str, ...],
                reverse: bool, equal: Mapping[str, Any]) -> Ordered | None:
        """The records holding `equal`'s values sorted by `by` as a sequence whose pages cost a page, or None
        when the index cannot give it (the caller sorts)."""
        index = self.fresh(app, name, collection, journal)
        if index is None:
            return None
        sort = index.sort(tuple(sorted(equal)), by)
        if sort.unordered:
            return None
        group = sort.groups.get(tuple(equal[f] for f in sorted(equal)))
        return Ordered(collection, group if group is not None else SortedList(), reverse)


class Ordered(Sequence[Any]):
    """A sorted group of records read by position: `len` and slices cost what they return (`paginate`)."""

    def __init__(self, collection: Any, entries: SortedList, reverse: bool) -> None:
        self._collection, self._entries, self._reverse = collection, entries, reverse

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Any]:
        entries = reversed(self._entries) if self._reverse else iter(self._entries)
        return (self._collection[key] for _, key in entries)

    @overload
    def __getitem__(self, at: int) -> Any: ...
    @overload
    def __getitem__(self, at: slice) -> list[Any]: ...

    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, int):
            return self[at:at + 1 or None][0]
        start, stop, step = at.indices(len(self))
        if step != 1:
            return list(self)[at]
        n = len(self._entries)
        entries = self._entries[n - stop:n - start][::-1] if self._reverse else self._entries[start:stop]
        return [self._collection[key] for _, key in entries]
