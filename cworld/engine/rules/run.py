"""Running one operation rule on a server's world: checks first (nothing changes when one fails), then
effects, then the answer. The world is the server's state in its own layout, mutated in place: the
caller hands in a session's copy, never the seed's world."""

from __future__ import annotations

import ast
import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any

from cworld.engine.rules.cow import SessionStore
from cworld.engine.rules.expr import FUNCTIONS, Evaluator, RuleExprError, cursor_position, parsed
from cworld.engine.rules.index import Indexes, sortable
from cworld.engine.rules.listing import Listing
from cworld.engine.rules.scans import ANY, IDS, SCAN, Scans, compiled_with_scans
from cworld.engine.rules.spec import Check, Def, Effect, ListRead, Rule, expressions
from cworld.engine.world.layout import SEP, at, catalog_named, catalog_path
from cworld.engine.world.shape import world_shaped
from cworld.engine.world.state import Outcome

_DEFAULT_MESSAGES = {
    "not_found": "no {kind} '{key}': list or search to find valid ids",
    "auth": "token is not valid for this account; log in again to get a fresh token",
}


@dataclass
class CallContext:
    """What a rule runs on: the server's (session) state, its kinds, id counters, constants, clock."""

    state: dict[str, Any]
    args: dict[str, Any]
    now: str
    kinds: dict[str, str] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    consts: dict[str, Any] = field(default_factory=dict)
    defs: dict[str, Def] = field(default_factory=dict)
    seed: int = 0
    #: collection -> the fields whose values key its records (`ServerWorld.keys`)
    keys: dict[str, list[str]] = field(default_factory=dict)
    #: moves the session's clock on by some seconds and gives the new `now` (an `advance` effect)
    advance: Callable[[int], str] | None = None
    #: the session's copy-on-write store: every write goes through it (None: write in place)
    store: SessionStore | None = None
    #: the seed's collections' indexes (None, or no store: every list read walks every record)
    indexes: Indexes | None = None
    #: how many records a list read evaluated its `where` on (what the indexes save)
    evaluations: int = 0


class RuleFailed(Exception):
    def __init__(self, error_class: str, message: str) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message


def collection_names(rule: Rule, state_keys: set[str]) -> set[str]:
    """The top-level state entries a rule's expressions name (`state` names them all): what a session
    must own a copy of before the rule runs, so writes never reach the seed's world."""
    return _names_of(id(rule), rule, frozenset(state_keys))


def _names_of(_rule_id: int, rule: Rule, state_keys: frozenset[str]) -> set[str]:
    found: set[str] = set()
    for text in [*expressions(rule), *_collections_named(rule)]:
        found |= identifiers(text)
    return set(state_keys) if "state" in found else found & state_keys


def _collections_named(rule: Rule) -> list[str]:
    """The `in` of finds (a collection named as text, not as an expression)."""
    return [c.in_ for c in rule.check if c.in_]


@lru_cache(maxsize=8192)
def identifiers(text: str) -> frozenset[str]:
    try:
        tree = parsed(text)
    except Exception:
        return frozenset({text})
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)) | frozenset(
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str))


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NEEDED: dict[tuple[int, int], tuple[Rule, dict[str, Def], list[tuple[str, Def]]]] = {}
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_CALLS: dict[int, tuple[Rule, frozenset[str]]] = {}


def called_names(rule: Rule) -> frozenset[str]:
    """The names a rule's text calls (`matches(`): where the world holds a collection of that name, the rule
    reads the function, and the collection through `coll` (a learned rule's `nights[...]` reads the ledger)."""
    found = _CALLS.get(id(rule))
    if found is None or found[0] is not rule:
        if len(_CALLS) > 4096:
            _CALLS.clear()
        found = _CALLS[id(rule)] = (rule, frozenset(_CALLED.findall(rule.model_dump_json())))
    return found[1]


def needed_defs(rule: Rule, defs: dict[str, Def]) -> list[tuple[str, Def]]:
    """The defs a rule may call: those a word of its text names (expressions and message templates), and
    those they name, transitively. A call defines these only, not the server's every def."""
    if not defs:  # most servers have none (only an override file declares defs): nothing to look for
        return []
    found = _NEEDED.get((id(rule), id(defs)))
    if found is not None and found[0] is rule and found[1] is defs:
        return found[2]
    words = set(_WORD.findall(json.dumps(rule.model_dump(by_alias=True, exclude_none=True), default=str)))
    todo, seen = [w for w in words if w in defs], set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(w for w in _WORD.findall(defs[name].expr) if w in defs)
    needed = [(name, fn) for name, fn in defs.items() if name in seen]
    if len(_NEEDED) > 4096:
        _NEEDED.clear()
    _NEEDED[(id(rule), id(defs))] = (rule, defs, needed)
    return needed


_KEY = re.compile(r"^([A-Za-z][A-Za-z-]*)_\d{4}$")


def _keys_prefix(coll: dict[str, Any]) -> str | None:
    """The prefix every key of the collection shares, where they read `<prefix>_0001` (a few looked at)."""
    found = {m.group(1) if (m := _KEY.match(str(k))) else None for k in islice(coll, 20)}
    return next(iter(found)) if len(found) == 1 and None not in found else None


class RuleRun:
    """One call of one rule."""

    def __init__(self, rule: Rule, ctx: CallContext) -> None:
        self.rule = rule
        self.ctx = ctx
        names: dict[str, Any] = dict(ctx.state)
        for name in ctx.state.keys() & FUNCTIONS.keys():  # a collection named as a function: rarely any
            if name in called_names(rule):  # a sports world's `matches` under a search calling `matches(q, it)`
                del names[name]
        names.update(ctx.consts)
        names.update({"state": ctx.state, "args": ctx.args, "now": ctx.now, "consts": ctx.consts,
                      "seed": ctx.seed, "server_ids": ctx.ids})
        self.ev = Evaluator(names, compile_expr=compiled_with_scans)
        self.ev.define("coll", self.collection)
        self.ev.define("holds", self.holds)
        self.ev.define("records_of", self.records_of)
        scans = Scans(ctx.store, ctx.indexes, self._count)
        self.ev.define(SCAN, scans.scan)
        self.ev.define(IDS, scans.ids)
        self.ev.define(ANY, any)
        for name, fn in needed_defs(rule, ctx.defs):
            self.ev.define(name, self.ev.function(fn.params, fn.expr))
        self.first_found: tuple[str, str, dict[str, Any]] | None = None
        self.last_made: tuple[str, str, dict[str, Any]] | None = None
        self.read_only: set[int] = set()
        """ids of the reference catalogs this call read, and of their records: shared by every session"""

    # --- the run ----------------------------------------------------------------------------------
    def __call__(self) -> Outcome:
        try:
            for check in self.rule.check:
                self._check(check)
            for effect in self.rule.do:
                self._effect(effect)
            return self._answer()
        except RuleFailed as failed:
            return Outcome(error_class=failed.error_class, message=failed.message)

    def collection(self, ref: str) -> dict[str, Any]:
        """A collection by state name, card kind (through the server's kinds) or expression."""
        path = self.ctx.kinds.get(ref, ref)
        found = at(self.ctx.state, path)  # a layout path too (`cart.items`)
        if isinstance(found, dict):
            return found
        catalog = at(self.ctx.consts, path) if SEP in path else None  # the world's reference: read only
        if isinstance(catalog, dict):
            self.read_only.add(id(catalog))
            self.read_only.update(id(r) for r in catalog.values())
            return catalog
        value = self.ev(ref)
        if not isinstance(value, dict):
            raise RuleExprError(f"{ref!r} is not a collection of this server's world")
        return value

    def holds(self, ref: str) -> bool:
        """Whether the world holds a collection by this state name or card kind: a family written for several
        layouts asks before it reads one (`coll` of a kind the world lacks fails the call)."""
        return isinstance(at(self.ctx.state, self.ctx.kinds.get(ref, ref)), dict)

    def records_of(self, ref: str, fields: list[str] | None = None) -> dict[str, Any]:
        """A kind's records wherever the world keeps them: its collection (a layout path too), else the reference
        catalog named for it (`layout.catalog_named`: a travel network's hotels) or holding its `fields`
        (`layout.catalog_path`: a market's listed securities), else none ({}): a family reads an optional kind."""
        try:
            return self.collection(ref)
        except RuleExprError:
            path = catalog_named(ref, self.ctx.consts) or (catalog_path(fields, self.ctx.consts) if fields else None)
        return self.collection(path) if path is not None else {}

    def _kind_of(self, ref: str) -> str:
        name = self.ctx.kinds.get(ref, ref)
        reverse = {v: k for k, v in self.ctx.kinds.items()}
        kind = reverse.get(name, name.rpartition(SEP)[2])  # a catalog's path: its records' name (`NETWORK.hotels`)
        return kind[:-1] if kind.endswith("s") and not kind.endswith("ss") else kind

    # --- checks -----------------------------------------------------------------------------------
    def _check(self, step: Check) -> None:
        if step.if_ is not None and not self.ev(step.if_):
            return
        if step.auth is not None:
            self._auth(step)
        elif step.find is not None:
            self._find(step)
        elif step.fail is not None:
            if self.ev(step.fail):
                raise RuleFailed(step.error or "business", self.ev.text(step.message or f"refused: {step.fail}"))
        elif step.let is not None:
            for name, expr in step.let.items():
                self.ev.bind(name, self.ev(expr))

    def _auth(self, step: Check) -> None:
        token = self.ctx.args.get(step.auth or "")
        live: Any = self.ctx.state
        for part in step.store.split("."):
            live = live.get(part) if isinstance(live, dict) else None
        message = step.message or _DEFAULT_MESSAGES["auth"]
        if not isinstance(live, dict) or not token or live.get("value") != token:
            raise RuleFailed("auth", self.ev.text(message))
        expires = live.get("expires_at")
        if expires and str(expires) <= self.ctx.now:
            template = step.expired_message or "token expired at {expires}; log in again for a new one"
            self.ev.bind("expires", expires)
            raise RuleFailed("auth", self.ev.text(template))

    def _find(self, step: Check) -> None:
        name = step.find or ""
        coll = self.collection(step.in_ or "")
        key = self.ev(step.key) if step.key else self.ctx.args.get(f"{name}_id")
        if key is None and step.optional:
            self.ev.bind(name, None)
            self.ev.bind(f"{name}_key", None)
            return
        record = coll.get(str(key)) if key is not None else None
        if not isinstance(record, dict):
            self.ev.bind(f"{name}_key", key)
            template = step.message or _DEFAULT_MESSAGES["not_found"].replace("{kind}", name.replace("_", " "))
            raise RuleFailed(step.error or "not_found", self.ev.text(template.replace("{key}", str(key))))
        self.ev.bind(name, record)
        self.ev.bind(f"{name}_key", str(key))
        if self.first_found is None or name == "target":  # the record the tool is about, not one it refers to
            self.first_found = (step.in_ or "", str(key), record)

    # --- effects ----------------------------------------------------------------------------------
    def _effect(self, effect: Effect) -> None:
        if effect.if_ is not None and not self.ev(effect.if_):
            return
        if effect.set is not None or effect.add is not None or effect.append is not None:
            self._write(effect)
        elif effect.create is not None:
            self._create(effect)
        elif effect.delete is not None:
            self._delete(effect)
        elif effect.each is not None:
            for item in list(self.ev(effect.each)):
                self.ev.bind(effect.as_ or "it", item)
                for inner in effect.do or []:
                    self._effect(inner)
        elif effect.let is not None:
            for name, expr in effect.let.items():
                self.ev.bind(name, self.ev(expr))
        elif effect.advance is not None and self.ctx.advance is not None:
            self.ev.bind("now", self.ctx.advance(int(self.ev(effect.advance))))

    def _writable(self, target: Any) -> Any:
        if id(target) in self.read_only:
            raise RuleExprError("a write reached the world's reference catalog, which rules only read")
        store = self.ctx.store
        return target if store is None else store.writable(target, self.ev.names)

    def _adopted(self, value: Any) -> Any:
        store = self.ctx.store
        return value if store is None else store.adopt(value, self.ev.names)

    def _stored(self, coll: dict[str, Any], key: str, was_there: bool) -> None:
        if self.ctx.store is not None:
            self.ctx.store.stored(coll, key, coll[key], was_there)

    def _write(self, effect: Effect) -> None:
        target = self.ev(effect.set or effect.add or effect.append)
        if not isinstance(target, dict):
            raise RuleExprError(f"the target {effect.set or effect.add or effect.append!r} is not a record")
        target = self._writable(target)
        fields = dict(effect.to or {})
        pairs = [(str(self.ev(effect.key)), effect.value)] if effect.key is not None else list(fields.items())
        for name, expr in pairs:
            value = self.ev(expr)
            was_there = name in target
            if effect.set is not None:
                target[name] = self._adopted(value)
            elif effect.add is not None:
                total = (target.get(name) or 0) + value
                target[name] = round(total, 2) if isinstance(total, float) else total
            else:
                target.setdefault(name, []).append(self._adopted(value))
            self._stored(target, name, was_there)

    def _delete(self, effect: Effect) -> None:
        coll = self._writable(self.collection(effect.delete or ""))
        key = str(self.ev(effect.key))
        if key in coll:
            del coll[key]
            if self.ctx.store is not None:
                self.ctx.store.removed(coll, key)

    def _create(self, effect: Effect) -> None:
        coll = self._writable(self.collection(effect.create or ""))
        # keyed by what it holds where the world keys the collection so (`from|relationType|to`), else the next
        # key of the sequence
        by = self.ctx.keys.get(self.ctx.kinds.get(effect.create or "", effect.create or ""))
        key = str(self.ev(effect.key)) if effect.key else None if by else self._fresh_key(coll, effect.id or "rec")
        name = effect.as_ or self._kind_of(effect.create or "")
        if key is not None:
            self.ev.bind(f"{name}_key", key)  # a record may hold its own key
        record = self.ev(effect.record) if effect.record is not None else {}
        if not isinstance(record, dict):
            raise RuleExprError(f"create {effect.create!r}: the record is not a mapping")
        if key is None:
            key = "|".join(str(record.get(f)) for f in by or [])
            self.ev.bind(f"{name}_key", key)
        record = world_shaped(record, key, coll, self.ctx.state, self.ctx.now)
        was_there = key in coll
        coll[key] = record = self._adopted(record)
        self._stored(coll, key, was_there)
        self.ev.bind(name, record)
        self.last_made = (effect.create or "", key, record)

    def _fresh_key(self, coll: dict[str, Any], prefix: str) -> str:
        """The next key of the prefix's sequence that no record holds (a loaded world may hold keys past the
        counter); where the service numbers its records (`101`, `102`), the next number."""
        numbered = bool(coll) and next(iter(coll)).isdigit()
        prefix = _keys_prefix(coll) or prefix  # the world's own format (`D_0001`) over the card's (`dm`)
        counter = f"{prefix}#" if numbered else prefix
        number = self.ctx.ids.get(counter)
        if number is None:
            number = max((int(k) for k in coll if k.isdigit()), default=0) if numbered else 0
        while True:
            number += 1
            key = str(number) if numbered else f"{prefix}_{number:04d}"
            if key not in coll:
                self.ctx.ids[counter] = number
                return key

    # --- the answer -------------------------------------------------------------------------------
    def _answer(self) -> Outcome:
        if self.rule.list_ is not None:
            return Outcome(payload=self._page(self.rule.list_), many=True)
        if self.rule.answer is not None:
            return Outcome(payload=self.ev(self.rule.answer))
        made = self.last_made or self.first_found
        if made is None:
            return Outcome(payload={"ok": True})
        ref, key, record = made
        if self.ctx.store is not None:
            record = self.ctx.store.current(record)
        return Outcome(payload=self.view(ref, key, record))

    def view(self, ref: str, key: str, record: dict[str, Any]) -> dict[str, Any]:
        """A record as services show it: its key under `<kind>_id`, then its fields."""
        return {f"{self._kind_of(ref)}_id": key, **record}

    def _page(self, spec: ListRead) -> dict[str, Any]:
        source = self.collection(spec.from_)
        size = _positive(self.ctx.args.get(spec.size or ""), spec.page_size)
        if spec.max_page_size:
            size = min(size, spec.max_page_size)
        start = self._start(spec, size)
        page = start // size + (spec.page_base if spec.page else 1)  # as the service numbers its pages
        found = self._indexed(spec, source, start + size)
        total, chunk = found if found is not None else self._walked(spec, source, start + size)
        chunk = chunk[start : start + size]
        items = [self._with_item(k, source[k], spec.item) if spec.item else self.view(spec.from_, k, source[k])
                 for k in chunk]
        out: dict[str, Any] = {spec.into: items}
        if spec.meta:
            out.update(page=page, page_size=size, total=total, has_more=start + size < total)
            if spec.offset:
                out["offset"] = start
            if spec.cursor:
                out["next_cursor"] = _cursor(start + size) if start + size < total else None
        return out

    def _start(self, spec: ListRead, size: int) -> int:
        """The first item's position: from an item offset, a cursor, or a page number (1- or 0-based)."""
        args = self.ctx.args
        if spec.offset and isinstance(args.get(spec.offset), int) and not isinstance(args.get(spec.offset), bool):
            return max(0, args[spec.offset])
        if spec.cursor and args.get(spec.cursor):
            return _from_cursor(args[spec.cursor])
        page = args.get(spec.page or "")
        if isinstance(page, int) and not isinstance(page, bool) and page >= spec.page_base:
            return (page - spec.page_base) * size
        return 0

    def _walked(self, spec: ListRead, source: dict[str, Any], first: int) -> tuple[int, list[str]]:
        """(how many pass, the keys in answer order): every record evaluated (the reference path)."""
        rows = [(k, v) for k, v in source.items() if isinstance(v, dict)]
        self.ctx.evaluations += len(rows) if spec.where is not None else 0
        rows = [(k, v) for k, v in rows if spec.where is None or self._with_item(k, v, spec.where)]
        if spec.sort:
            rows.sort(key=lambda kv: _sortable(self._with_item(kv[0], kv[1], spec.sort or "")), reverse=spec.desc)
        elif spec.desc:
            rows.reverse()
        return len(rows), [k for k, _ in rows[:first]]

    def _indexed(self, spec: ListRead, source: dict[str, Any], first: int) -> tuple[int, list[str]] | None:
        """The same from the seed's indexes (`listing.py`), None when they cannot answer it exactly."""
        store, indexes = self.ctx.store, self.ctx.indexes
        overlay = store.overlay(source) if store is not None and indexes is not None else None
        if overlay is None or indexes is None or store is None:
            return None
        name, base = overlay
        mine = source is not base
        found = Listing(spec, source, indexes.of(base), store.dirty.get(name, set()) if mine else set(),
                        store.appended.get(name, {}) if mine else {}, self.ev, self._with_item, self._count)
        try:
            return found.rows(first)
        except Exception:  # an expression failed: the walk gives the walk's answer (or error)
            return None

    def _count(self, evaluated: int) -> None:
        self.ctx.evaluations += evaluated

    def _with_item(self, key: str, record: dict[str, Any], expr: str) -> Any:
        self.ev.bind("it", record)
        self.ev.bind("key", key)
        return self.ev(expr)


def _cursor(position: int) -> str:
    """An opaque cursor, as services give them: the position, encoded."""
    return base64.urlsafe_b64encode(f"at:{position}".encode()).decode().rstrip("=")


def _from_cursor(cursor: Any) -> int:
    """The position a cursor of `_cursor` holds; one this world never gave (a rule that does not refuse it)
    starts at the beginning."""
    return cursor_position(cursor) or 0


def _positive(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


_sortable = sortable


def run_rule(rule: Rule, ctx: CallContext, on_error: Callable[[Exception], None] | None = None) -> Outcome:
    """Run `rule`; a content error in an expression is a `server_crash` answer (a real service's 500),
    reported to `on_error` so rule authors see it, never raised into the episode."""
    try:
        return RuleRun(rule, ctx)()
    except RuleExprError as exc:
        if on_error is not None:
            on_error(exc)
        return Outcome(error_class="server_crash", message=f"internal error: {exc}")
