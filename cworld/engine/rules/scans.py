"""Comprehensions over a collection, answered from the seed's indexes (`index.py`).

Rules read collections through comprehensions in answers, lets and defs (mail's inbox, a folder's count
of documents per folder, a board's open cards): each walked every record, so a world of 10,000 records
answered a hundred times slower than one of 100. When an expression is compiled, a comprehension whose
first loop is `for v in C.values() if COND` or `for k, v in C.items() if COND` (C a name, or any expression
such as `coll('event')`) has that loop's iterable rewritten to `_scan(C, mode, where, texts, values,
functions)`. A second loop `for x in L(v) if Q` adds `any(True for x in L(v) if Q)` to COND's plan (a record
whose L holds nothing that passes Q gives nothing), and `any(E for v in C.values())` is compiled as `any(E
for v in C.values() if E)` (where `any` is the language's: a def of that name gets the loop as written).

- `where` is COND in the planner's language (`index.plan`): the loop's names renamed `it` and `key`;
- `texts`/`values`: the parts of COND the planner evaluates once (they name neither loop name), each as a
  function of the enclosing scope, called only while planning;
- `functions`: the language functions the record side calls, read where the comprehension runs, so a
  def or a collection shadowing one (`sum`) is seen and the scan walks instead.

At run time the scan (`Scans.scan`) gives the records that may pass: the indexes' candidates, the keys the
session wrote (`SessionStore.dirty`), records an index could not read and values that are not records,
in the collection's order. COND stays in the comprehension and decides on each of them, so the answer is
the walk's as long as every record left out fails COND - which is what the indexes prove for the seed's
records the session has not written. Whatever the scan cannot prove (C not a top-level collection, a
shadowed function, a value that fails while planning) iterates every record, as the walk does. As in
`list:` reads, an error the walk would raise on a record the indexes leave out is not reproduced. Candidates
that are nearly every record (`index.nearly_all`) are walked: listing them cost more than the walk.

`next_id([E for v in C.values()])` is compiled as `next_id(_ids(C, ...) or [E for v in C.values()])`: a few
of the seed's values that give the same id and the session's written records' (`sequences.py`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from functools import lru_cache
from types import CodeType
from typing import Any

from cworld.engine.rules.cow import SessionStore
from cworld.engine.rules.expr import FUNCTIONS
from cworld.engine.rules.index import (
    Indexes,
    _pure,
    independent_parts,
    nearly_all,
    plan,
    record_function,
    select,
)
from cworld.engine.rules.safe import checked_tree, compile_tree

SCAN = "_scan"
IDS = "_ids"
#: the language's `any`, to tell it from a def of that name where the expression runs
ANY = "_any"
_RECORD = ("it", "key")
#: candidates above 1/_SORT_SHARE of the collection are put in order by walking its keys, not by sorting
_SORT_SHARE = 4


@lru_cache(maxsize=16384)
def compiled_with_scans(text: str) -> CodeType:
    """The expression's bytecode (`safe.compiled`'s checks) with its comprehensions over collections
    reading through `_scan`."""
    return compile_tree(_Scans().visit(checked_tree(text)))


class _Scans(ast.NodeTransformer):
    """Rewrites the first loop of every comprehension the planner can narrow (inner ones first)."""

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> Any:
        self.generic_visit(node)
        first = node.generators[0]
        loop = _loop(first)
        inner = _inner_test(node.generators, loop[2]) if loop is not None else None
        if loop is None or not (first.ifs or inner) or first.is_async:
            return node
        coll, mode, names = loop
        parts = [*first.ifs, *([inner] if inner is not None else [])]
        condition = parts[0] if len(parts) == 1 else ast.BoolOp(ast.And(), parts)
        where = _renamed(condition, names)
        if where is None:
            return node
        conjuncts = plan(where)
        if all(part.kind is None for part in conjuncts):
            return node
        texts = sorted(independent_parts(conjuncts))
        used = sorted(_names(ast.parse(where, mode="eval")) & FUNCTIONS.keys())
        first.iter = ast.copy_location(ast.Call(ast.Name(SCAN, ast.Load()), [
            coll, ast.Constant(mode), ast.Constant(where), ast.Tuple([ast.Constant(t) for t in texts], ast.Load()),
            ast.Tuple([_thunk(ast.parse(t, mode="eval").body) for t in texts], ast.Load()),
            _functions(used),
        ], []), first.iter)
        return node

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Call(self, node: ast.Call) -> Any:
        if _is_call(node, "any") and isinstance(node.args[0], ast.ListComp | ast.GeneratorExp):
            return self._any(node)
        return self._next_id(node)

    def _any(self, node: ast.Call) -> Any:
        """`any(E for v in C.values())` -> `any(E for v in C.values() if E)` (true for the same records, so the
        scan narrows C by E), kept as written where `any` is a def of the server's."""
        comp = node.args[0]
        assert isinstance(comp, ast.ListComp | ast.GeneratorExp)
        if len(comp.generators) != 1 or comp.generators[0].ifs or _loop(comp.generators[0]) is None:
            self.generic_visit(node)
            return node
        written = _copy(node)
        narrowed = _copy(node)
        assert isinstance(narrowed, ast.Call) and isinstance(narrowed.args[0], ast.ListComp | ast.GeneratorExp)
        inner = narrowed.args[0]
        inner.generators[0].ifs = [_copy(inner.elt)]
        test = ast.Compare(ast.Name("any", ast.Load()), [ast.Is()], [ast.Name(ANY, ast.Load())])
        self.generic_visit(narrowed)
        self.generic_visit(written)
        return ast.copy_location(ast.IfExp(test, narrowed, written), node)

    def _next_id(self, node: ast.Call) -> Any:
        """`next_id([E for v in C.values()])` -> `next_id(_ids(C, ...) or [E for v in C.values()])`: a few values
        that give the same next id (`sequences.py`), or, when `_ids` cannot say (None), every record's."""
        self.generic_visit(node)
        if not (_is_call(node, "next_id") and isinstance(node.args[0], ast.ListComp | ast.GeneratorExp)):
            return node
        comp = node.args[0]
        loop = _loop(comp.generators[0]) if len(comp.generators) == 1 else None
        if loop is None or comp.generators[0].ifs or comp.generators[0].is_async:
            return node
        coll, mode, names = loop
        elt = _renamed(comp.elt, names)
        if elt is None or not _pure(ast.parse(elt, mode="eval").body):
            return node
        used = sorted((_names(ast.parse(elt, mode="eval")) & FUNCTIONS.keys()) | {"next_id"})
        ids = ast.Call(ast.Name(IDS, ast.Load()), [_copy(coll), ast.Constant(mode), ast.Constant(elt), _functions(used)], [])
        node.args = [ast.copy_location(ast.BoolOp(ast.Or(), [ids, comp]), comp)]
        return node


def _inner_test(generators: list[ast.comprehension], names: dict[str, str]) -> ast.expr | None:
    """`any(True for v in L if Q)` of a second loop `for v in L if Q` (a record whose L has no element passing Q
    gives nothing): what the first loop's records are narrowed by too; None where there is no such loop."""
    if len(generators) < 2:
        return None
    second = generators[1]
    if not second.ifs or second.is_async or not isinstance(second.target, ast.Name) or second.target.id in names:
        return None
    loop = ast.comprehension(target=_copy(second.target), iter=_copy(second.iter), ifs=[_copy(c) for c in second.ifs],
                             is_async=0)
    return ast.Call(ast.Name("any", ast.Load()), [ast.GeneratorExp(ast.Constant(True), [loop])], [])


def _is_call(node: ast.Call, name: str) -> bool:
    """`name(x)`: one positional argument, nothing else."""
    return isinstance(node.func, ast.Name) and node.func.id == name and len(node.args) == 1 and not node.keywords \
        and not isinstance(node.args[0], ast.Starred)


def _loop(gen: ast.comprehension) -> tuple[ast.expr, str, dict[str, str]] | None:
    """(C, 'values' or 'items', loop name -> planner name) of `for v in C.values()` / `for k, v in C.items()`.
    C is any expression (a name, `coll('event')`): it is evaluated where the comprehension's first iterable
    is, and the scan narrows it only when it is a top-level collection of the session."""
    it = gen.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
            and not it.args and not it.keywords and it.func.attr in ("values", "items")):
        return None
    target = gen.target
    if it.func.attr == "values" and isinstance(target, ast.Name):
        return it.func.value, "values", {target.id: "it"}
    if it.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2 \
            and all(isinstance(e, ast.Name) for e in target.elts):
        key, value = (e.id for e in target.elts if isinstance(e, ast.Name))
        return (it.func.value, "items", {key: "key", value: "it"}) if key != value else None
    return None


def _renamed(condition: ast.expr, names: dict[str, str]) -> str | None:
    """COND with the loop's names as `it`/`key`; None when that would be ambiguous (COND names an outer
    `it` or `key`, or a loop name is a language function or shadows one)."""
    used = _names(condition)
    if (used & set(_RECORD)) - set(names) or set(names) & FUNCTIONS.keys() or _binds_function(condition):
        return None

    class Rename(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> Any:
            return ast.copy_location(ast.Name(names.get(node.id, node.id), node.ctx), node)

    return ast.unparse(Rename().visit(_copy(condition)))


def _binds_function(node: ast.AST) -> bool:
    """A lambda or loop inside COND binds a language function's name (the planner would read it as the
    function)."""
    bound = {a.arg for n in ast.walk(node) if isinstance(n, ast.arguments) for a in (*n.args, *n.kwonlyargs)}
    bound |= {t.id for n in ast.walk(node) if isinstance(n, ast.comprehension) for t in ast.walk(n.target)
              if isinstance(t, ast.Name)}
    return bool(bound & FUNCTIONS.keys())


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _copy(node: ast.expr) -> ast.expr:
    return ast.parse(ast.unparse(node), mode="eval").body


def _functions(names: list[str]) -> ast.Lambda:
    """A thunk giving (name, what the name is where the expression runs) for each language function named."""
    return _thunk(ast.Tuple([ast.Tuple([ast.Constant(f), ast.Name(f, ast.Load())], ast.Load()) for f in names],
                            ast.Load()))


def _thunk(body: ast.expr) -> ast.Lambda:
    args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.Lambda(args, body)


class Scans:
    """The `_scan` of one call: the session's store, the seed's indexes, a counter of records read."""

    def __init__(self, store: SessionStore | None, indexes: Indexes | None, counted: Callable[[int], None]) -> None:
        self.store, self.indexes, self.counted = store, indexes, counted

    def scan(self, coll: Any, mode: str, where: str, texts: tuple[str, ...], values: tuple[Callable[[], Any], ...],
             functions: Callable[[], tuple[tuple[str, Any], ...]]) -> Iterable[Any]:
        """The records of `coll` that may pass `where` (as `coll.values()` or `coll.items()` would give them)."""
        everything = coll.items() if mode == "items" else coll.values()
        keys = self._candidates(coll, where, dict(zip(texts, values, strict=True)), functions)
        if keys is None:
            self.counted(len(coll))
            return everything
        self.counted(len(keys))
        records = map(coll.__getitem__, keys)  # lazily: a list of 10,000 pairs set off collections over the world
        return zip(keys, records, strict=True) if mode == "items" else records

    def ids(self, coll: Any, mode: str, elt: str, functions: Callable[[], tuple[tuple[str, Any], ...]]) -> list[Any] | None:
        """Values of `elt` whose `next_id` is that of every record of `coll` (the seed's representatives and the
        session's written records' values); None when they cannot stand for them (the caller reads every record)."""
        store, indexes, found = self.store, self.indexes, self._seeded(coll, functions)
        if found is None or store is None or indexes is None:
            return None
        name, base = found
        try:
            ix = indexes.of(base)
            seeded = ix.numbered(elt)
            if seeded.failed or ix.others:
                return None
            dirty = store.dirty.get(name, set()) if coll is not base else set()
            fn = record_function(elt)
            mine = [fn(coll[k], k) for k in dirty if k in coll]
        except Exception:  # a record the expression fails on: every record's value, as written, fails the same way
            return None
        self.counted(len(mine))
        return seeded.representatives(dirty) + mine

    def _seeded(self, coll: Any, functions: Callable[[], tuple[tuple[str, Any], ...]]) -> tuple[str, Any] | None:
        """(the collection's name, the seed's records under it) where indexes can answer for `coll`: a collection
        of the session, read with the language's own functions (a def shadowing one reads otherwise)."""
        store = self.store
        found = store.overlay(coll) if store is not None and self.indexes is not None and type(coll) is dict else None
        try:
            shadowed = found is not None and any(fn is not FUNCTIONS[f] for f, fn in functions())
        except Exception:  # a function the expression names fails to resolve: the walk reads it as written
            return None
        return None if shadowed else found

    def _candidates(self, coll: Any, where: str, values: dict[str, Callable[[], Any]],
                    functions: Callable[[], tuple[tuple[str, Any], ...]]) -> list[str] | None:
        """The keys to evaluate COND on, in the collection's order; None: every key."""
        store, indexes, found = self.store, self.indexes, self._seeded(coll, functions)
        if found is None or store is None or indexes is None:
            return None
        name, base = found
        try:
            chosen = select(indexes.of(base), plan(where), lambda text: values[text](), decided=True)
        except Exception:  # a value fails while planning: the walk evaluates (and fails) where it would
            return None
        if chosen.keys is None or nearly_all(len(chosen.keys) + len(chosen.always), len(coll)):
            return None
        ix = indexes.of(base)
        keys = chosen.keys | chosen.always | ix.others
        appended: dict[str, int] = {}
        if coll is not base:
            keys |= store.dirty.get(name, set())
            appended = store.appended.get(name, {})
        if len(keys) * _SORT_SHARE > len(coll):  # most keys: the collection's own order is cheaper than a sort
            return [k for k in coll if k in keys]
        end = len(ix.position)
        try:
            placed = sorted((end + appended[k] if k in appended else ix.position[k], k) for k in keys if k in coll)
        except KeyError:  # a key that is neither the seed's nor one the session added: walk
            return None
        return [k for _, k in placed]
