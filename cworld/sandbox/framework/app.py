"""The one template every sandbox app follows.

An app is a subclass of `SandboxApp` with: class metadata (name, category, description), a
`initial_state(rng)` that samples its seeded state from the knowledge base, `@tool` methods that read
and write `self.state`, and `prerequisites`: the tool-order edges the registry's dependency graph reads.
An app object is bound to one `SandboxSession`; state lives in the session, never on the app.

Composition, one rule for every app: each tool module defines ONE mixin class of `@tool` methods
(`class TradingTools(SandboxApp)`, or over the app's own base of shared look-ups, `TravelBase` in its
`state.py`, when several tool modules need them), and the app class lists its mixins and holds only
metadata: `class FinanceApp(FinanceTools, TradingTools, TransferTools)`. `tool_methods` reads the MRO
from the base up, so the published listing shows the LAST mixin's tools first and the first mixin's last
(the stateless servers follow the same rule: `class CryptoServer(EncodingTools, CipherTools, SandboxApp)`).
A stateful app is a package `cworld/sandbox/apps/<app>/`: `__init__.py` (the app class), `models.py`
(pydantic answers), `state.py` (`seed_state(app, rng)` and state helpers), `tools.py` and, for a large
app, `tools_<topic>.py`; what several apps share is in `cworld/sandbox/apps/_shared/`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from cworld.sandbox.framework.index import BY_KEY, SortBy, among, holds, read_path
from cworld.sandbox.framework.journal import for_reading
from cworld.sandbox.framework.tools import ToolMeta, tool_meta
from cworld.values import matches, norm

if TYPE_CHECKING:
    from cworld.sandbox.framework.session import SandboxSession


@dataclass(frozen=True)
class Prerequisite:
    """`before` must run before `after` ("requires"), or `before` produces what `after` consumes ("produces").

    `via` names the field that flows (e.g. `message_id`), `note` says why, for people reading the graph.
    """

    before: str
    after: str
    kind: Literal["requires", "produces"] = "requires"
    via: str | None = None
    note: str = ""


class SandboxApp:
    name: ClassVar[str]
    title: ClassVar[str] = ""
    description: ClassVar[str]
    category: ClassVar[str]
    stateful: ClassVar[bool] = True
    prerequisites: ClassVar[tuple[Prerequisite, ...]] = ()
    #: State paths stamped from the clock or otherwise not reproducible by a gold plan (globs such as
    #: `messages.*.date`, relative to the app's state); the state diff ignores them.
    volatile_paths: ClassVar[tuple[str, ...]] = ()
    #: State collections (`{id: record}` maps at the top of the app's state) by the entity kind their
    #: category card names them (`{"catalog": "product"}`). Scenario entities are written from these, and a
    #: synthesized episode's end state is put back into them (docs/task-synthesis.md, "Scenario").
    entity_kinds: ClassVar[dict[str, str]] = {}

    def world_reference(self) -> dict[str, Any]:
        """What the service knows beyond its state and derives from the seed alone (finance's market and
        price history): part of the seed's world for the world engine's rules (as named constants)."""
        return {}
    #: Entity kinds of the category card that no state collection holds but answers show (flights and
    #: hotels of the knowledge base), each with the field that keys its records in answers
    #: (`{"flight": "flight_id", "airport": "code"}`). A scenario holds the records the verified run's
    #: answers showed under `<kind>` or its plural, in a generic list (`matches`, `results`) of records
    #: with the key field, or as the whole answer of a read naming the record (docs/task-synthesis.md,
    #: "Scenario").
    observed_kinds: ClassVar[dict[str, str]] = {}

    def __init__(self, session: SandboxSession) -> None:
        self.session = session

    # --- state --------------------------------------------------------------------------
    def initial_state(self, rng: random.Random) -> dict[str, Any]:
        """The app's seeded start state (JSON-like: dicts, lists, str, int, float, bool, None)."""
        return {}

    @property
    def state(self) -> dict[str, Any]:
        """The app's state; during a write call, the same state seen through the call's journal (which keeps
        what the call touches so a failure can undo it) and used as the dict it stands for."""
        journal = self.session.journals.get(self.name)
        if journal is None:
            return self.session.state[self.name]
        return cast("dict[str, Any]", journal.view)

    def keys_where(self, name: str, /, **equal: Any) -> list[Any]:
        """The keys of the map `name` whose records' fields equal `equal` (`record.get(field) == value`), in
        the map's order, from the session's indexes: a look-up costs what it finds, not the collection."""
        if equal:
            found = self.session.indexes.exact(self.name, name, self.state[name], self.session.journals.get(self.name),
                                               equal)
            if found is not None:
                return found
        raw = for_reading(self.state[name])
        return [k for k in self._keys(name, equal, None, ()) if holds(raw[k], equal)]

    def keys_having(self, name: str, of: Callable[[Any], Iterable[Any]], *values: Any) -> list[Any]:
        """The keys of the map `name` whose records hold one of `values` among the values `of(record)` reads
        (`of` a module-level function, the index's name: an event's people), in the map's order."""
        found = self.session.indexes.exact(self.name, name, self.state[name], self.session.journals.get(self.name),
                                           {}, (of, values))
        if found is not None:
            return found
        raw = for_reading(self.state[name])
        return [k for k in self._keys(name, {}, None, (), (of, values)) if among(values, of(raw[k]))]

    def where(self, name: str, /, **equal: Any) -> list[Any]:
        """The records of `keys_where` (through a write call's view, which keeps them for its undo)."""
        collection = self.state[name]
        return [collection[k] for k in self.keys_where(name, **equal)]

    def keys_matching(self, name: str, query: Any, fields: tuple[str, ...], /, **equal: Any) -> list[Any]:
        """`keys_where(name, **equal)` narrowed to the records that may hold every word of `query` in `fields`
        (as `matches` reads them; a field may be dotted, `from.name`): a superset, in the map's order, that
        the tool's own `matches` decides."""
        keys = self._keys(name, equal, norm(query).split(), fields)
        if not equal:
            return keys
        raw = for_reading(self.state[name])
        return [k for k in keys if type(raw[k]) is not dict or holds(raw[k], equal)]

    def matched(self, name: str, query: Any, fields: tuple[str, ...], /) -> list[Any]:
        """The records of the map `name` whose `fields` (dotted ones read inside) hold every word of `query` as
        `cworld.values.matches` reads them, in the map's order: the index's answer when it is exact, else
        `matching`'s candidates tested (a search that tested its 8,000 hits again paid a third of its time)."""
        collection = self.state[name]
        found = self.session.indexes.matched(self.name, name, collection, self.session.journals.get(self.name),
                                             norm(query).split(), fields)
        if found is not None:
            return [collection[k] for k in found]
        paths = [tuple(f.split(".")) for f in fields]
        return [r for r in self.matching(name, query, fields) if matches(query, *[read_path(r, p) for p in paths])]

    def matching(self, name: str, query: Any, fields: tuple[str, ...], /, **equal: Any) -> list[Any]:
        """The records of `keys_matching` (through a write call's view)."""
        collection = self.state[name]
        return [collection[k] for k in self.keys_matching(name, query, fields, **equal)]

    def count(self, name: str, /, **equal: Any) -> int:
        """`len(keys_where(name, **equal))`, from the index's bucket when it can say exactly."""
        found = self.session.indexes.count(self.name, name, self.state[name], self.session.journals.get(self.name),
                                           equal)
        return len(self.keys_where(name, **equal)) if found is None else found

    def count_having(self, name: str, of: Callable[[Any], Iterable[Any]], value: Any, /) -> int:
        """`len(keys_having(name, of, value))`, from the index's bucket when it can say exactly."""
        found = self.session.indexes.count(self.name, name, self.state[name], self.session.journals.get(self.name),
                                           {}, (of, value))
        return len(self.keys_having(name, of, value)) if found is None else found

    def held(self, name: str, of: Callable[[Any], Iterable[Any]], /) -> set[Any]:
        """The values `of` reads off some record of the map `name` (the groups that are not empty), from the
        index's groups when it can say exactly: a board's lists that hold cards, without asking each list."""
        found = self.session.indexes.held(self.name, name, self.state[name], self.session.journals.get(self.name), of)
        if found is not None:
            return found
        return {value for record in for_reading(self.state[name]).values() for value in of(record)}

    def ordered(self, name: str, by: SortBy, /, reverse: bool = False, within: tuple[Any, Any] = (None, None),
                having: tuple[Callable[[Any], Iterable[Any]], Any] | None = None, keys: bool = False,
                **equal: Any) -> Sequence[Any]:
        """`where(name, **equal)` (or, `having` = (of, value), the records of `keys_having(name, of, value)`;
        a list of values: of any of them, values no record holds two of)
        with the first value of `by` in `within` (`lo <= v < hi`, None open), as `sorted` orders them by the
        values of the fields `by` (`BY_KEY`: the record's key; or by what a module-level function of (key,
        record) gives), or their `keys`: a sequence whose pages (`paginate`) cost a page."""
        found = self.session.indexes.ordered(self.name, name, self.state[name], self.session.journals.get(self.name),
                                             by, reverse, equal, within, having, keys)
        if found is not None:
            return found
        lo, hi = within
        raw = for_reading(self.state[name])

        def values(key: Any) -> tuple[Any, ...]:
            if callable(by):
                return by(key, raw[key])
            return tuple([key if f == BY_KEY else raw[key].get(f) for f in by])

        if having is None:
            chosen = self.keys_where(name, **equal)
        else:  # a list of values: any of them
            of, wanted = having
            chosen = self.keys_having(name, of, *(wanted if type(wanted) is list else [wanted]))
        inside = [k for k in chosen if (lo is None or lo <= values(k)[0]) and (hi is None or values(k)[0] < hi)]
        ordered = sorted(inside, key=values, reverse=reverse)
        collection = self.state[name]
        return ordered if keys else [collection[k] for k in ordered]

    def _keys(self, name: str, equal: dict[str, Any], words: list[str] | None, fields: tuple[str, ...],
              having: tuple[Callable[[Any], Iterable[Any]], tuple[Any, ...]] | None = None) -> list[Any]:
        return self.session.indexes.select(self.name, name, self.state[name], self.session.journals.get(self.name),
                                           equal=equal, words=words, fields=fields, having=having)

    @property
    def now(self) -> datetime:
        return self.session.clock.now()

    def new_id(self, prefix: str) -> str:
        """A deterministic id, unique in the session: `prefix_0001`, `prefix_0002`, ..."""
        return self.session.new_id(prefix)

    # --- tools --------------------------------------------------------------------------
    @classmethod
    def tool_methods(cls) -> list[tuple[ToolMeta, str]]:
        """(metadata, attribute name) for every `@tool` method, in definition order."""
        found: list[tuple[ToolMeta, str]] = []
        seen: set[str] = set()
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                meta = tool_meta(value)
                if meta is not None and attr not in seen:
                    seen.add(attr)
                    found.append((meta, attr))
        names = [m.name for m, _ in found]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:
            raise TypeError(f"app {cls.__name__} defines tools twice: {sorted(dupes)}")
        return found

    def bound_tools(self) -> list[tuple[ToolMeta, Callable[..., Any]]]:
        return [(meta, getattr(self, attr)) for meta, attr in self.tool_methods()]
