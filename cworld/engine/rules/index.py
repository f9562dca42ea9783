"""Indexes over a seed's collections and the plan that answers a `list:` read from them.

A list read walked every record, evaluating its `where` on each: a world of 10,000 records answered a
hundred times slower than one of 100. The planner splits `where` into its `and` conjuncts and answers
the ones it can from indexes built over the seed's collection on first use (shared by every session of
the world, never changed): `it.F == v` / `v == it.F` / `v in (None, it.F)` (v not naming `it` or `key`)
from a hash index on the record side; `it.F` and `not it.F` from one on its truth; `matches(q, it.a,
it.b, ...)` from the text `matches` reads, each record's read once and kept (only the candidates' when
the other conjuncts narrow, hits exact; a token index after many searches); `v in it.L`
from an index of a list's or map's members, `it.M.get(k) == v` / `in (v, w)` from one of a map's entries,
`before(x, it.T)` / `before(it.T, x)` from the records' times in order, `any(P for v in it.L)` from an index
of the list's distinct elements, P tested once per element (`containers.py`); `i or X` with `i`
not naming the record is true when `i` is; any other `or` (and `X if c else Y`, which is `(c and X) or
(not c and Y)`) by the union of its alternatives' candidates when each has some; a conjunct not naming
the record is evaluated once. The rest of `where` is evaluated on the candidates only. A session's records differ from the seed's only at the keys it wrote (`cow.SessionStore.dirty`):
those are always evaluated in full, as are records whose indexed side could not be indexed (a missing
field, a list). Sorting takes the first page from the seed's order for the sort expression when most
records pass. Any error while planning or evaluating falls back to the full walk, which gives the
error the walk gives.
"""

from __future__ import annotations

import ast
import gc
import heapq
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, TypeVar

from cworld.engine.rules.containers import (
    Buckets,
    RecordFunction,
    Times,
    bucketed,
    elements,
    entries,
    entry_hits,
    indexable_value,
    members,
    some_hits,
)
from cworld.engine.rules.expr import FUNCTIONS, parsed
from cworld.engine.rules.safe import compiled, dot
from cworld.engine.rules.sequences import Numbered
from cworld.values import match_text, norm, text_of

_RECORD_NAMES = frozenset({"it", "key"})
_PURE_NAMES = _RECORD_NAMES | frozenset(FUNCTIONS)
#: kinds whose `value` is an expression of the caller's scope (evaluated once per plan)
_VALUED = frozenset({"eq", "text", "const", "member", "entry", "entries", "after", "until", "some"})
#: when at least this share of the records pass, the page comes from the seed's sorted order
_WALK_SHARE = 8
_NONE: dict[str, None] = {}
_NO_KEYS: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Conjunct:
    """One `and` part of a `where`: `kind` eq (record side == value side), truth (bool of the record
    side == value), text (`matches(value, *fields)`), member (value in the record side), some (an element of
    the record side passes the test `value` gives), entry / entries
    (the record side's map `.get(value)` == / in `fields[0]`), after / until (`before(value, record)` /
    `before(record, value)`), or (any of `alternatives`, each a conjunction), const, or None (evaluated per
    record). `guards`: parts of an `or` before it that do not name the record (true: the conjunct holds for
    every record)."""

    kind: str | None
    record: str = ""
    value: str = ""
    fields: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()
    optional: bool = False
    """eq written `v in (None, it.F)`: true for every record when v is None"""
    alternatives: tuple[tuple[Conjunct, ...], ...] = ()


@lru_cache(maxsize=4096)
def plan(where: str) -> tuple[Conjunct, ...]:
    """The conjuncts of a `where`, each classified (cached per expression text)."""
    return tuple(_classify(node) for node in _conjuncts(parsed(where)))


def _conjuncts(node: ast.AST) -> Iterator[ast.AST]:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for part in node.values:
            yield from _conjuncts(part)
    else:
        yield node


def _classify(node: ast.AST) -> Conjunct:
    if _independent(node):
        return Conjunct("const", value=ast.unparse(node))
    one = _classify_one(node, ())
    if one.kind is not None:
        return one
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        *first, last = node.values
        if all(_independent(g) for g in first):  # `i or X`: X's kind, or none (evaluated) unless `i` holds
            one = _classify_one(last, tuple(ast.unparse(g) for g in first))
            if one.kind is not None:
                return one
        either = _either([_conjunction(v) for v in node.values])
        return either if either.kind is not None else one
    if isinstance(node, ast.IfExp):  # passes only where (test and body) or (not test and orelse) does
        return _either([_conjunction(ast.BoolOp(ast.And(), [node.test, node.body])),
                        _conjunction(ast.BoolOp(ast.And(), [ast.UnaryOp(ast.Not(), node.test), node.orelse]))])
    return one


def _conjunction(node: ast.AST) -> tuple[Conjunct, ...]:
    return tuple(_classify(part) for part in _conjuncts(node))


def _either(alternatives: list[tuple[Conjunct, ...]]) -> Conjunct:
    """An `or` the union of its alternatives' candidates answers: each must have a part that may narrow."""
    if any(all(part.kind is None for part in alt) for alt in alternatives):
        return Conjunct(None)
    return Conjunct("or", alternatives=tuple(alternatives))


def _classify_one(node: ast.AST, guards: tuple[str, ...]) -> Conjunct:
    if _independent(node):
        return Conjunct("const", value=ast.unparse(node), guards=guards)
    found = _indexable(node)
    if found is None:
        return Conjunct(None, guards=guards)
    optional = found[0] == "eq" and isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In)
    return Conjunct(found[0], found[1], found[2], found[3], guards, optional)


def _indexable(node: ast.AST) -> tuple[str, str, str, tuple[str, ...]] | None:
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if isinstance(op, ast.Eq):
            for rec, val in ((left, right), (right, left)):
                if _pure(rec) and _independent(val):
                    return "eq", ast.unparse(rec), ast.unparse(val), ()
                entry = _map_get(rec)
                if entry is not None and _independent(val):
                    return "entry", entry[0], entry[1], (ast.unparse(val),)
        if isinstance(op, ast.In) and isinstance(right, ast.Tuple) and len(right.elts) == 2 and _independent(left):
            none, rec = right.elts
            if isinstance(none, ast.Constant) and none.value is None and _pure(rec):
                return "eq", ast.unparse(rec), ast.unparse(left), ()
        if isinstance(op, ast.In) and _independent(left) and _pure(right):
            return "member", ast.unparse(right), ast.unparse(left), ()
        entry = _map_get(left)
        if isinstance(op, ast.In) and entry is not None and _independent(right):
            return "entries", entry[0], entry[1], (ast.unparse(right),)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and _pure(node.operand):
        return "truth", ast.unparse(node.operand), "False", ()
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "matches" and node.args \
            and not node.keywords and _independent(node.args[0]) and all(_pure(a) for a in node.args[1:]) \
            and not any(isinstance(a, ast.Starred) for a in node.args):
        return "text", "", ast.unparse(node.args[0]), tuple(ast.unparse(a) for a in node.args[1:])
    moment = _before(node)
    if moment is not None:
        return moment
    some = _some(node)
    if some is not None:
        return some
    if _pure(node) and _reads_record(node):
        return "truth", ast.unparse(node), "True", ()
    return None


def _map_get(node: ast.AST) -> tuple[str, str] | None:
    """(M, k) of `M.get(k)`, M read off the record and k not."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred) \
            and _pure(node.func.value) and _independent(node.args[0]):
        return ast.unparse(node.func.value), ast.unparse(node.args[0])
    return None


def _before(node: ast.AST) -> tuple[str, str, str, tuple[str, ...]] | None:
    """`before(x, it.T)` (after: the record's time is later than x) or `before(it.T, x)` (until)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "before"
            and len(node.args) == 2 and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)):
        return None
    first, second = node.args
    if _independent(first) and _pure(second):
        return "after", ast.unparse(second), ast.unparse(first), ()
    if _pure(first) and _independent(second):
        return "until", ast.unparse(first), ast.unparse(second), ()
    return None


def _some(node: ast.AST) -> tuple[str, str, str, tuple[str, ...]] | None:
    """`any(P for v in it.L if Q)`, P and Q of v and the caller's names: value `lambda v: Q and P`, a test
    of one element."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "any"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.GeneratorExp | ast.ListComp)
            and len(node.args[0].generators) == 1):
        return None
    comp = node.args[0]
    gen = comp.generators[0]
    if gen.is_async or not isinstance(gen.target, ast.Name) or gen.target.id in _PURE_NAMES or not _pure(gen.iter):
        return None
    test = ast.BoolOp(ast.And(), [*gen.ifs, comp.elt]) if gen.ifs else comp.elt
    if not _independent(test):
        return None
    return "some", ast.unparse(gen.iter), f"lambda {gen.target.id}: {ast.unparse(test)}", ()


def independent_parts(conjuncts: tuple[Conjunct, ...]) -> set[str]:
    """The expressions a plan evaluates in the caller's scope (values, guards, alternatives' values)."""
    out: set[str] = set()
    for part in conjuncts:
        out.update(part.guards)
        if part.kind in _VALUED:
            out.add(part.value)
        if part.kind in ("entry", "entries"):
            out.add(part.fields[0])
        for alt in part.alternatives:
            out |= independent_parts(alt)
    return out


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _reads_record(node: ast.AST) -> bool:
    return bool(_names(node) & _RECORD_NAMES)


def _pure(node: ast.AST) -> bool:
    """Reads only the record (`it`, `key`) and the language's functions: a value fixed per record."""
    return _reads_record(node) and _names(node) <= _PURE_NAMES and not any(
        isinstance(n, ast.Lambda | ast.comprehension) for n in ast.walk(node))


def _independent(node: ast.AST) -> bool:
    return not _reads_record(node) and not any(isinstance(n, ast.Lambda | ast.comprehension) for n in ast.walk(node))


_Built = TypeVar("_Built")


def built_at_once(build: Callable[..., _Built]) -> Callable[..., _Built]:
    """An index build with the collector paused: it makes one small object per record and none of them in a
    cycle, and in a process holding a large world each collection it set off walked that world (an order of
    10,000 records built in 16 ms alone took 150 ms in a replay)."""
    def paused(*args: Any) -> _Built:
        with _collector_paused():
            return build(*args)
    return paused


@contextmanager
def _collector_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@lru_cache(maxsize=4096)
def record_function(expr: str) -> Callable[[dict[str, Any], str], Any]:
    """`expr` (of `it` and `key` only) as a function of (record, key)."""
    scope: dict[str, Any] = {"__builtins__": {}, "_dot": dot, **FUNCTIONS}
    fn: Callable[[dict[str, Any], str], Any] = eval(compiled(f"lambda it, key: ({expr})"), scope)  # noqa: S307
    return fn


def _values(keys: list[str], records: dict[str, Any], fn: RecordFunction) -> tuple[Buckets, set[str]]:
    """Value -> keys whose `fn` value it is (a hash index); residual: keys whose value a hash would not find
    as `==` does, or that fail."""
    return bucketed(keys, records, fn, indexable_value, None)


class CollectionIndexes:
    """The indexes of one seed's collection (never changed: the seed's world is not written)."""

    def __init__(self, records: dict[str, Any]) -> None:
        self.records = records
        self.keys = [k for k, v in records.items() if type(v) is dict]
        self.key_set = set(self.keys)
        self.others = set(records).difference(self.key_set) if len(self.keys) < len(records) else set()
        """keys of values that are not records: no index reads them, a comprehension's condition does"""
        self.position = dict(zip(records, range(len(records)), strict=True))
        self._hash: dict[str, tuple[Buckets, set[str]]] = {}
        self._texts: dict[tuple[str, ...], _Texts] = {}
        self._unreadable: dict[tuple[str, ...], set[str]] = {}
        self._orders: dict[tuple[str, bool], Iterable[tuple[Any, int, str]] | None] = {}
        self._members: dict[str, tuple[Buckets, set[str]]] = {}
        self._entries: dict[str, tuple[Buckets, set[str]]] = {}
        self._times: dict[str, Times] = {}
        self._numbered: dict[str, Numbered] = {}
        self._elements: dict[str, tuple[Buckets, set[str]]] = {}

    def equal(self, expr: str, value: Any) -> tuple[dict[str, None], set[str]]:
        """(keys whose `expr` == value, in the collection's order, keys `expr` could not be indexed for)."""
        buckets, residual = self._built(self._hash, expr, _values)
        return buckets.get(value, _NONE), residual

    def member(self, expr: str, value: Any) -> tuple[Collection[str], set[str]]:
        """(keys whose `expr` holds value as `in` finds it, keys `expr` could not be indexed for)."""
        buckets, residual = self._built(self._members, expr, members)
        return buckets.get(value, _NONE), residual

    def some(self, expr: str, test: Callable[[Any], Any]) -> tuple[set[str], set[str]]:
        """(keys with an element of `expr` that passes `test`, keys `expr` could not be indexed for)."""
        buckets, residual = self._built(self._elements, expr, elements)
        return some_hits(buckets, test), residual

    def entry(self, expr: str, key: Any, wanted: Any, many: bool) -> tuple[Collection[str] | None, set[str]]:
        """(keys whose map `expr` gives `wanted` for `key` - one of them when `many` -, None: no look-up
        answers it; keys `expr` could not be indexed for)."""
        buckets, residual = self._built(self._entries, expr, entries)
        return entry_hits(buckets, key, wanted, many), residual

    def times(self, expr: str) -> Times:
        """The records' times for `expr`, in order (`before` read as a slice)."""
        return self._built(self._times, expr, Times)

    def numbered(self, expr: str) -> Numbered:
        """The numbered values of `expr` over the records (`next_id` read off a few of them)."""
        return self._built(self._numbered, expr, Numbered)

    def _built(self, cache: dict[str, _Built], expr: str, build: Callable[..., _Built]) -> _Built:
        """The index `build` makes over the records for `expr`, built on first use (collector paused) and kept."""
        found = cache.get(expr)
        if found is None:
            found = cache[expr] = built_at_once(build)(self.keys, self.records, record_function(expr))
        return found

    def text(self, fields: tuple[str, ...], words: list[str],
             within: Collection[str] | None = None) -> tuple[set[str], set[str]]:
        """(keys whose `matches` text holds every word, exactly as `matches` tests it, keys whose fields could
        not be read). `within`: only these keys can pass (what the other conjuncts left); unless they are
        nearly all, only their texts are read (and kept), so a search another condition narrows never
        flattens the whole collection."""
        found = self._texts.get(fields)
        if found is None:
            found = self._texts[fields] = _Texts(self.records, fields)
        if within is not None and not nearly_all(len(within), len(self.keys)):
            hits = found.among([k for k in within if k in self.key_set], words)
            return hits, found.residual if found.complete else found.residual | self.unreadable(fields)
        if not found.complete:
            built_at_once(found.fill)(self.keys)
        wanted = sorted((w for w in words if len(w) >= 3), key=len, reverse=True)  # the longest is the rarest
        if not wanted:  # only short words, in most texts: one substring test per text, no token index
            return found.scanned(words), found.residual
        hits = found.holding(wanted)
        short = [w for w in words if len(w) < 3]
        if short:  # too common to narrow by, tested on the hits' texts only
            texts = found.texts
            hits = {k for k in hits if all(w in texts[k] for w in short)}
        return hits, found.residual

    def unreadable(self, fields: tuple[str, ...]) -> set[str]:
        """Keys whose `fields` cannot be read (a missing field): `matches` raises on them."""
        found = self._unreadable.get(fields)
        if found is None:
            fns = [record_function(f) for f in fields]
            found = self._unreadable[fields] = set()
            for key in self.keys if any(f != "it" for f in fields) else ():  # the record itself is always read
                try:
                    [fn(self.records[key], key) for fn in fns]
                except Exception:
                    found.add(key)
        return found

    def order(self, sort: str, desc: bool) -> Iterable[tuple[Any, int, str]] | None:
        """Every record as (sort value, position, key) in the order a stable sort by `sort` gives (None
        when a record's value cannot be computed or compared: the caller sorts its rows itself)."""
        if (sort, desc) not in self._orders:
            self._orders[(sort, desc)] = self._build_order(sort, desc)
        return self._orders[(sort, desc)]

    @built_at_once
    def _build_order(self, sort: str, desc: bool) -> Iterable[tuple[Any, int, str]] | None:
        fn = record_function(sort)
        try:
            values = [fn(self.records[k], k) for k in self.keys]
            texts = _texts_kind(values)
            position = self.position
            rows = [(v if texts else sortable(v), position[k], k) for v, k in zip(values, self.keys, strict=True)]
            rows.sort(key=itemgetter(0), reverse=desc)
        except Exception:
            return None
        return rows if texts is None else SeedOrder(rows, texts)


class SeedOrder(Iterable[tuple[Any, int, str]]):
    """A seed's order whose values are texts (`kind` "text") or tuples of texts ("tuple"), sorted as they
    are and read as `sortable` rows: each text wrapped as (False, text) while it is read, in C (zip and map,
    no Python call per row). Wrapping 10,000 rows up front cost more than sorting them; a page reads few."""

    def __init__(self, rows: list[tuple[Any, int, str]], kind: str) -> None:
        self.rows, self.kind = rows, kind

    def __iter__(self) -> Iterator[tuple[Any, int, str]]:
        rows = self.rows
        values = map(_FIRST, rows)
        wrapped = (zip(repeat(False), values, strict=False) if self.kind == "text"
                   else map(tuple, map(zip, repeat(_FALSES), values)))
        return zip(wrapped, map(_SECOND, rows), map(_THIRD, rows), strict=True)


_FIRST, _SECOND, _THIRD = itemgetter(0), itemgetter(1), itemgetter(2)


#: (False, text) is `sortable` of a text, and `sortable` of a tuple of texts is the tuple of those pairs: zipped
#: element by element with a tuple of texts (`SeedOrder`), this gives them (it never runs out, so it is shared)
_FALSES = repeat(False)


def _texts_kind(values: list[Any]) -> str | None:
    """"text" when every value is a text, "tuple" when every one is a tuple of texts, else None. Such values
    hold nothing `sortable` rewrites (None, lists): it wraps each text as (False, text), which orders as the
    text does, so they are sorted as they are and wrapped when read (`SeedOrder`)."""
    kinds = set(map(type, values))
    if kinds == {str}:
        return "text"
    if kinds == {tuple} and set(map(type, chain.from_iterable(values))) <= {str}:
        return "tuple"
    return None


class _Texts:
    """Each record's `matches` text over some fields (cached for plain texts, which records share), read on
    first need: a search narrowed by another condition reads only its candidates' texts, any other search
    every record's (`fill`). The first full searches scan them (one substring test per record); after
    `TOKENS_AFTER` searches, a token index answers (each token -> the keys holding it; a query word lies
    inside one token). The token index made each search ~17x cheaper but cost ~10x the texts to build
    (10,000 documents: 137 ms against 13 ms, a search 0.07 ms against 1.2 ms), more than one session's
    searches save; a world searched by many sessions gets it.

    A key whose text cannot be made (its fields fail) is `residual`; `text_of` itself cannot fail on the
    JSON values a seed's record holds, so a text not read yet is not a failure missed."""

    def __init__(self, records: dict[str, Any], fields: tuple[str, ...]) -> None:
        self.records, self.fns = records, tuple(record_function(f) for f in fields)
        self.whole = fields == ("it",)
        """the text of the whole record (`matches(q, it)`, what inferred searches read): `match_text` of it"""
        self.texts: dict[str, str] = {}
        self.residual: set[str] = set()
        self.complete = False
        """every record's text is read (`fill`)"""
        self.asked = 0
        self.tokens: dict[str, set[str]] | None = None

    def fill(self, keys: list[str]) -> None:
        """Read the text of every key not read yet."""
        texts, residual = self.texts, self.residual
        for key in keys:
            if key not in texts and key not in residual:
                self._read(key)
        self.complete = True

    def _read(self, key: str) -> str | None:
        record = self.records[key]
        try:
            text = self.texts[key] = (match_text(record) if self.whole
                                      else text_of(tuple([fn(record, key) for fn in self.fns])))
        except Exception:
            self.residual.add(key)
            return None
        return text

    def among(self, keys: list[str], words: list[str]) -> set[str]:
        """The keys of `keys` whose text holds every word (their texts read if not yet)."""
        texts, residual, out = self.texts, self.residual, set()
        for key in keys:
            text = texts.get(key)
            if text is None:
                if key in residual:
                    continue
                text = self._read(key)
                if text is None:
                    continue
            if all(w in text for w in words):
                out.add(key)
        return out

    def holding(self, words: list[str]) -> set[str]:
        self.asked += 1
        if self.tokens is None and self.asked > TOKENS_AFTER:
            self.tokens = {}
            for key, text in self.texts.items():
                for token in set(text.split()):
                    self.tokens.setdefault(token, set()).add(key)
        if self.tokens is not None:
            lists = sorted((self._with(word) for word in words), key=len)  # the rarest first
            out = set(lists[0])
            for hits in lists[1:]:
                out &= hits
            return out
        first, *rest = words
        found = {key for key, text in self.texts.items() if first in text}
        for word in rest:
            found = {key for key in found if word in self.texts[key]}
        return found

    def scanned(self, words: list[str]) -> set[str]:
        """The keys whose text holds every word, each text tested."""
        return {key for key, text in self.texts.items() if all(w in text for w in words)}

    def _with(self, word: str) -> set[str]:
        """The keys whose text holds `word` inside one of its tokens (`meet` in `meeting`)."""
        assert self.tokens is not None
        hits = set(self.tokens.get(word, ()))
        for token, keys in self.tokens.items():
            if word in token and token != word:
                hits |= keys
        return hits


#: Searches over one collection's texts before a token index is built for them (`_Texts`).
TOKENS_AFTER = 32


class Indexes:
    """Every seed collection's indexes, by the collection (kept alive, so its id is never reused)."""

    def __init__(self) -> None:
        self._of: dict[int, tuple[dict[str, Any], CollectionIndexes]] = {}

    def of(self, records: dict[str, Any]) -> CollectionIndexes:
        found = self._of.get(id(records))
        if found is None or found[0] is not records:
            found = self._of[id(records)] = (records, CollectionIndexes(records))
        return found[1]


def sortable(value: Any) -> Any:
    """Sort keys that never compare None with a string: (is-missing, value) pairs, tuples element-wise."""
    if isinstance(value, tuple | list):  # a list, not a generator: an order of 10,000 records builds 30,000 of these
        return tuple([sortable(v) if isinstance(v, tuple | list) else (v is None, "" if v is None else v) for v in value])
    return (value is None, "" if value is None else value)


def merged(base: Iterator[tuple[Any, int, str]], mine: list[tuple[Any, int, str]], desc: bool) -> Iterator[str]:
    """Keys of two runs, each in sort order (value, then position; value descending when `desc`)."""
    if desc:
        rows = heapq.merge(base, mine, key=lambda row: (row[0], -row[1]), reverse=True)
    else:
        rows = heapq.merge(base, mine, key=lambda row: (row[0], row[1]))
    return (row[2] for row in rows)


@dataclass
class Selection:
    """Which of the seed's records may pass a `where`: `keys` (None: every one), `exact` when those pass
    without evaluating it, `always`: keys to evaluate in full whatever the indexes say."""

    keys: set[str] | None
    exact: bool
    always: set[str]


def select(ix: CollectionIndexes, conjuncts: tuple[Conjunct, ...], value_of: Callable[[str], Any],
           decided: bool = False) -> Selection:
    """Narrow the seed's records by every conjunct an index answers (`value_of` evaluates the parts that
    do not name the record; it may raise, and the caller then walks every record). The hits are
    intersected from the smallest, so a rare value costs its own bucket, not the largest one's. A text
    search is answered last, among what the other conjuncts left (its words evaluated in their turn).
    `decided`: the caller evaluates the condition on every candidate whatever the indexes say (a scan)."""
    out = Selection(None, True, set())
    hits: list[Collection[str]] = []
    searches: list[tuple[Conjunct, list[str]]] = []
    for part in conjuncts:
        if any(value_of(g) for g in part.guards):  # the conjunct holds for every record
            continue
        if part.kind is None:
            out.exact = False
            continue
        if part.kind == "const":
            if not value_of(part.value):
                out.keys = set()
                return out
            continue
        if part.kind == "text":
            searches.append((part, norm(value_of(part.value)).split()))
            continue
        found = _found(ix, part, value_of, out)
        if found is not None:
            hits.append(found)
    for part, words in searches:
        within = _intersection([(h, _NO_KEYS) for h in hits]) if hits else None
        found = _searched(ix, part, words, within, out)
        if found is not None:
            hits.append(found)
    if hits and not ((decided or not out.exact) and nearly_all(min(map(len, hits)), len(ix.keys))):
        out.keys = _intersection([(h, _NO_KEYS) for h in hits])
    return out  # no keys: nearly every record is a candidate, and the condition decides on each


def nearly_all(count: int, total: int) -> bool:
    """At least nine in ten: candidates so many that walking every record costs less than listing them."""
    return count * 10 >= total * 9


def _intersection(parts: list[tuple[Collection[str], Collection[str]]]) -> set[str]:
    """The keys in every part's hits or its unknowns (keys its index could not read), smallest first."""
    parts.sort(key=lambda part: len(part[0]) + len(part[1]))
    hits, unknown = parts[0]
    keys = set(hits) | set(unknown) if unknown else set(hits)
    for hits, unknown in parts[1:]:
        if not keys:
            break
        if isinstance(hits, set) and not unknown:
            keys &= hits
        else:
            keys = {k for k in keys if k in hits or k in unknown}
    return keys


def _narrowed(ix: CollectionIndexes, conjuncts: tuple[Conjunct, ...], value_of: Callable[[str], Any]) -> set[str] | None:
    """The keys that may pass one alternative of an `or` (None: no part of it narrows). Keys an index could
    not read stay candidates of that part only, so a part another one rules out (`isinstance(it.M, dict) and
    it.M.get(p) == v` over records whose M is a list) does not bring them back. A text search is answered
    last, among what the other parts left, as in `select`."""
    parts: list[tuple[Collection[str], Collection[str]]] = []
    searches: list[tuple[Conjunct, list[str]]] = []
    for part in conjuncts:
        if part.kind is None or any(value_of(g) for g in part.guards):  # says nothing, or holds for every record
            continue
        if part.kind == "const":
            if not value_of(part.value):
                return set()
            continue
        if part.kind == "text":
            searches.append((part, norm(value_of(part.value)).split()))
            continue
        mine = Selection(None, True, set())
        found = _found(ix, part, value_of, mine)
        if found is not None:
            parts.append((found, mine.always))
    for part, words in searches:
        mine = Selection(None, True, set())
        found = _searched(ix, part, words, _intersection(list(parts)) if parts else None, mine)
        if found is not None:
            parts.append((found, mine.always))
    return _intersection(parts) if parts else None


def _searched(ix: CollectionIndexes, part: Conjunct, words: list[str], within: Collection[str] | None,
              out: Selection) -> set[str] | None:
    """The hits of `matches(words, *fields)` (exact: they hold every word as `matches` tests it), among
    `within` when given; None when the query has no word (every readable record passes)."""
    hits, residual = ix.text(part.fields, words, within) if words else (None, ix.unreadable(part.fields))
    out.always |= residual
    return hits


def _found(ix: CollectionIndexes, part: Conjunct, value_of: Callable[[str], Any],
           out: Selection) -> Collection[str] | None:
    if part.kind in ("or", "member", "entry", "entries", "after", "until", "some"):
        out.exact = False  # the condition decides on the candidates
        return _container_hits(ix, part, value_of, out)
    value = value_of(part.value) if part.kind == "eq" else part.value == "True"
    if part.optional and value is None:  # `None in (None, it.F)`: every record whose field can be read
        out.always |= ix.equal(part.record, None)[1]
        return None
    if not indexable_value(value):
        out.exact = False
        return None
    bucket, residual = ix.equal(part.record if part.kind == "eq" else f"bool({part.record})", value)
    out.always |= residual
    return bucket


def _container_hits(ix: CollectionIndexes, part: Conjunct, value_of: Callable[[str], Any],
                    out: Selection) -> Collection[str] | None:
    """Candidates of an `or` (the union of its alternatives'), a membership, a map's entry or a time window."""
    if part.kind == "or":
        union: set[str] = set()
        for alt in part.alternatives:
            keys = _narrowed(ix, alt, value_of)
            if keys is None:
                return None
            union |= keys
        return union
    if part.kind == "some":
        hits, residual = ix.some(part.record, value_of(part.value))
        out.always |= residual
        return hits
    if part.kind in ("after", "until"):
        times = ix.times(part.record)
        out.always |= times.residual
        return times.window(value_of(part.value), part.kind == "after")
    value = value_of(part.value)
    if not indexable_value(value):
        return None
    if part.kind == "member":
        bucket, residual = ix.member(part.record, value)
    else:
        found, residual = ix.entry(part.record, value, value_of(part.fields[0]), part.kind == "entries")
        if found is None:
            return None
        bucket = found
    out.always |= residual
    return bucket
