"""The world engine: every simulated call is an operation on the seed's world, by declared rules.

A session starts from the world of its seed (`engine/world/base.py`), built before any task; the
session owns a copy of a collection only once a write may touch it, so sessions never see each other's
writes and the seed's world never changes. A call runs, in order: a pure tool computed by cworld's own
implementation; input validation; the tool's rule (a per-tool override from
`category_cards/_operations/<server>.yaml`, else its card's family rule, else one inferred from its
name and schema, `infer.py`) - checks, effects, answer. A tool no rule covers is answered by the schema
engine and marked `simulated`. The world decides existence, errors and effects; the graded end state is
the world's (`end_state`). Like every engine, the world is a function of the session log: a log that
did not grow by the call just answered is replayed.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, overload

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.assign import CardIndex
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import entity_for, operation_kind
from cworld.engine.protocol import LogEntry, SessionLog, canonical_json
from cworld.engine.rules.cow import SeedMaps, SessionStore
from cworld.engine.rules.dispatch import operation_variants
from cworld.engine.rules.family import family_guards, fitted_family
from cworld.engine.rules.formats import format_error
from cworld.engine.rules.index import Indexes
from cworld.engine.rules.infer import guard_rule, infer_rule, snake
from cworld.engine.rules.offers import offers
from cworld.engine.rules.run import CallContext, collection_names, identifiers, run_rule
from cworld.engine.rules.spec import Def, Rule, ServerRules
from cworld.engine.rules.wrappers import unwrapped, unwrapped_arguments
from cworld.engine.schema.patterns import ResponsePattern, render_text, response_pattern
from cworld.engine.schema.shaping import Shaper, schema_types
from cworld.engine.world.base import ServerWorld, World
from cworld.engine.world.changes import EntityChanges
from cworld.engine.world.layout import head
from cworld.engine.world.named import with_named_kinds
from cworld.engine.world.shape import signed_in
from cworld.engine.world.state import Outcome
from cworld.registry.harvest.entries import PLACEHOLDER_PREFIX
from cworld.sandbox.framework.session import SECONDS_PER_CALL
from cworld.sandbox.framework.tools import ERROR_CLASS_OF_KIND
from cworld.sandbox.statediff.world import WORLD_KEY, world_delta
from cworld.schemas.validation import conforms, validation_error
from cworld.seeding import derive_rng
from cworld.values import iso

_RESULT_CLASSES = frozenset({"invalid_args", "not_found", "auth", "rate_limit", "timeout", "unavailable", "business",
                             "server_crash"})


@dataclass
class _Server:
    """A session's view of one server's world: the seed's state with the collections it may write copied."""

    base: ServerWorld
    state: dict[str, Any]
    ids: dict[str, int] = field(default_factory=dict)
    maps: SeedMaps | None = None
    store: SessionStore = field(init=False)

    def __post_init__(self) -> None:
        self.store = SessionStore(self.base.state, self.state, self.maps)

    @property
    def owned(self) -> set[str]:
        return self.store.owned

    def own(self, names: Iterable[str]) -> None:
        for name in names:
            self.store.own(name)


@dataclass
class _Session:
    seed: int
    start: datetime
    servers: dict[str, _Server] = field(default_factory=dict)
    ticks: int = 0
    slept: int = 0
    applied: int = 0
    pending: tuple[str, dict[str, Any]] | None = None
    """the call just answered (tool id, arguments), until the session log records it"""
    clock: tuple[int, str] = (-1, "")
    fallback_log: SessionLog | None = None
    """the calls the schema fallback answered (tools no rule covers), its session"""
    """(seconds since the start, the ISO time then): `now` formatted once per tick"""
    offers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """server -> the task's offers its world holds no records of (`rules/offers.py`), read only"""

    def now(self) -> str:
        seconds = SECONDS_PER_CALL * self.ticks + self.slept
        if self.clock[0] != seconds:
            self.clock = (seconds, iso(self.start + timedelta(seconds=seconds)))
        return self.clock[1]

    def advance(self, seconds: int) -> str:
        self.slept += max(0, seconds)
        return self.now()


@dataclass
class RuleStats:
    calls: int = 0
    by_rule: dict[str, int] = field(default_factory=lambda: {"override": 0, "family": 0, "inferred": 0,
                                                             "simulated": 0, "pure": 0})
    rule_errors: list[str] = field(default_factory=list)


class RulesEngine:
    """The World Engine that executes operations on a seed's world (docs/world-engine.md)."""

    name = "world"

    def __init__(self, cards: dict[str, CategoryCard], tools: Iterable[ToolSpec] = (), *,
                 worlds: Callable[[int], World] | None = None, world: World | None = None,
                 operations: dict[str, ServerRules] | None = None, overrides: bool = True,
                 fallback: Any = None) -> None:
        """`worlds` gives the world of a seed (built or loaded); `world` is one world for every session
        (a benchmark's, a test's). `overrides=False` leaves per-tool rules out: card rules alone."""
        if worlds is None and world is None:
            raise TypeError("RulesEngine needs worlds= (seed -> World) or world=")
        self.cards = cards
        self.index = CardIndex(cards)
        self.worlds: Callable[[int], World] = worlds if worlds is not None else (lambda seed: world)  # type: ignore[assignment,return-value]
        self.operations = operations or {}
        self.overrides = overrides
        self.stats = RuleStats()
        self._fallback = fallback
        self._tools: dict[str, ToolSpec] = {}
        self._rules: dict[str, tuple[Rule | None, str]] = {}
        self._variants: dict[str, tuple[str, dict[str, ToolSpec]]] = {}
        self._unwrapped: dict[str, tuple[ToolSpec, str] | None] = {}
        self._names: dict[int, set[str]] = {}
        self._patterns: dict[str, ResponsePattern] = {}
        self._guards: dict[str, Rule] = {}
        self._world_cache: dict[int, World] = {}
        self._server_cards: dict[str, tuple[CategoryCard, CategoryCard]] = {}
        self._tool_names: dict[str, frozenset[str]] = {}
        self.indexes = Indexes()
        """the seed worlds' collections' indexes, built on first use, shared by every session"""
        self.seed_maps = SeedMaps()
        """where the seed records' containers are, for copy on write, shared by every session"""
        self.register(tools)

    def register(self, tools: Iterable[ToolSpec]) -> None:
        tools = list(tools)
        for tool in tools:
            self._tools[tool.id] = tool
            self._tool_names.pop(tool.server, None)
            self._rules.pop(tool.id, None)
            self._variants.pop(tool.id, None)
            self._unwrapped.pop(tool.id, None)
            self._patterns.pop(tool.id, None)
        if self._fallback is not None:
            self._fallback.register(tools)

    # --- the protocol -----------------------------------------------------------------------------
    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        return self.respond_sync(tool, arguments, session)

    def respond_sync(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        if tool.id not in self._tools:
            self.register([tool])
        state = self._session(session)
        result = self._call(state, tool, arguments, session)
        state.pending = (tool.id, arguments)
        return result

    def world(self, seed: int) -> World:
        found = self._world_cache.get(seed)
        if found is None:
            found = self._world_cache[seed] = self.worlds(seed)
        return found

    def rule_for(self, tool: ToolSpec, arguments: dict[str, Any] | None = None) -> tuple[Rule | None, str]:
        """(the rule a tool runs, where it came from: override, family, inferred or simulated). A tool whose
        `action`/`operation` argument picks the operation runs the rule of the one `arguments` pick."""
        return self._rule_of(*self._as_own(tool, arguments))

    def _rule_of(self, tool: ToolSpec, arguments: dict[str, Any] | None) -> tuple[Rule | None, str]:
        """`rule_for` of a tool whose arguments are already its own (unwrapped)."""
        if arguments is not None:
            variants = self._variants.get(tool.id)
            if variants is None:
                variants = self._variants[tool.id] = operation_variants(tool) or ("", {})
            chosen = variants[1].get(str(arguments.get(variants[0]))) if variants[0] else None
            if chosen is not None and not self._overridden(tool):
                return self.rule_for(chosen)
        found = self._rules.get(tool.id)
        if found is None:
            found = self._rules[tool.id] = self._find_rule(tool)
        return found

    @overload
    def _as_own(self, tool: ToolSpec, arguments: dict[str, Any]) -> tuple[ToolSpec, dict[str, Any]]: ...

    @overload
    def _as_own(self, tool: ToolSpec, arguments: None) -> tuple[ToolSpec, None]: ...

    def _as_own(self, tool: ToolSpec, arguments: dict[str, Any] | None) -> tuple[ToolSpec, dict[str, Any] | None]:
        """The tool and the call's arguments as a rule reads them: `get_room(path={room_id})` as
        `get_room(room_id)` (`_flat`); any other tool as it is."""
        flat = self._flat(tool)
        if flat is None:
            return tool, arguments
        return flat[0], unwrapped_arguments(arguments, flat[1]) if arguments is not None else None

    def _flat(self, tool: ToolSpec) -> tuple[ToolSpec, str] | None:
        """(the tool with its wrapped arguments as its own, the wrapper's name), for a tool whose arguments come
        in one object (`wrappers.py`); None for any other. A per-tool rule file reads the tool as it is."""
        if tool.id not in self._unwrapped:
            self._unwrapped[tool.id] = unwrapped(tool) if not self._overridden(tool) else None
        return self._unwrapped[tool.id]

    def _overridden(self, tool: ToolSpec) -> bool:
        server_rules = self.operations.get(tool.server)
        return self.overrides and server_rules is not None and tool.name in server_rules.tools

    def _find_rule(self, tool: ToolSpec) -> tuple[Rule | None, str]:
        if self._overridden(tool):
            return self.operations[tool.server].tools[tool.name], "override"
        world = self._server_world(tool.server)
        card = self._card_of(tool, world)
        family = fitted_family(tool, card, world)
        if family is not None:
            return family, "family"
        inferred = infer_rule(tool, card, world) if world is not None else None
        return (inferred, "inferred") if inferred is not None else (None, "simulated")

    def card_of(self, tool: ToolSpec) -> CategoryCard:
        """The card the tool's rules read: its server's, with the kinds the server's tools name beside it."""
        return self._card_of(tool, self._server_world(tool.server))

    def _card_of(self, tool: ToolSpec, world: ServerWorld | None) -> CategoryCard:
        """One card per server: the one its world was generated for (the card most of its tools get), so a
        tool reads the kinds its server's world holds, with the kinds its tools name that the card lacks
        (`world/named.py`); the tool's own card for a world in its own layout."""
        if world is None or world.card not in self.cards:
            return self.index.card_for(tool)
        card = self.cards[world.card]  # type: ignore[index]
        if not world.named_kinds:
            return card
        found = self._server_cards.get(world.server)
        if found is None or found[0] is not card:
            named = [EntityType.model_validate(k) for k in world.named_kinds]
            found = self._server_cards[world.server] = (card, with_named_kinds(card, named))
        return found[1]

    def _server_world(self, server: str) -> ServerWorld | None:
        """The server's world, from any seed's world (rules depend on its layout, never on its records)."""
        world = next(iter(self._world_cache.values()), None) or self.world(0)
        return world.server(server)

    # --- the session ------------------------------------------------------------------------------
    def _session(self, session: SessionLog) -> _Session:
        return session.replayed_view(f"{self.name}:{id(self)}", lambda: self._replay(session), _is_pending)

    def _fresh(self, seed: int) -> _Session:
        world = self.world(seed)
        return _Session(seed, datetime.fromisoformat(world.now))

    def _replay(self, session: SessionLog) -> _Session:
        state = self._fresh(session.seed)
        state.offers = offers(session.context, self.world(session.seed))
        for entry in session.entries:
            spec = self._tools.get(entry.tool)
            if spec is not None:
                self._call(state, spec, entry.arguments, None)
        state.applied = len(session.entries)
        return state

    def _server(self, state: _Session, server: str) -> _Server | None:
        found = state.servers.get(server)
        if found is None:
            base = self.world(state.seed).server(server)
            if base is None:
                return None
            found = state.servers[server] = _Server(base, dict(base.state), ids=dict(base.ids), maps=self.seed_maps)
        return found

    # --- one call ---------------------------------------------------------------------------------
    def _call(self, state: _Session, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog | None) -> ToolResult:
        self.stats.calls += 1
        computed = _pure(tool, arguments)
        if computed is not None:
            self.stats.by_rule["pure"] += 1
            return computed
        problem = (validation_error(tool.input_schema, arguments) or format_error(tool.input_schema, arguments)) \
            if tool.input_schema else None
        if problem:
            return ToolResult.error("invalid_args", f"invalid_args: {tool.name}: {problem}. Check the tool's input "
                                    "schema and call again.", source="engine", engine=self.name)
        ruled, given = self._as_own(tool, arguments)  # a rule reads wrapped arguments as the tool's own
        rule, origin = self._rule_of(ruled, given)
        server = self._server(state, tool.server) if rule is not None else None
        if rule is None or server is None:
            return self._guarded(state, ruled, given) or self._simulated(state, tool, arguments, session)
        self.stats.by_rule[origin] += 1
        return self._run(state, server, ruled, rule, origin, given)

    def _context(self, state: _Session, server: _Server, tool: ToolSpec, arguments: dict[str, Any]) -> CallContext:
        """What a rule runs on for this call: every schema property in `args` (None when not given)."""
        props = tool.input_schema.get("properties") or {}
        own = self.operations.get(tool.server)
        return CallContext(server.state, {**_defaults(props, server.state), **arguments}, state.now(), kinds=server.base.kinds,
                           ids=server.ids, consts={**(own.consts if own else {}), **server.base.reference,
                                                   **state.offers.get(server.base.server, {})},
                           defs=own.defs if own else {}, seed=state.seed, advance=state.advance, store=server.store,
                           indexes=self.indexes, keys=server.base.keys)

    def _run(self, state: _Session, server: _Server, tool: ToolSpec, rule: Rule, origin: str,
             arguments: dict[str, Any]) -> ToolResult:
        read_only = bool(tool.annotations.read_only_hint) if tool.annotations.read_only_hint is not None else not rule.writes
        if not read_only:
            server.own(self._touched(rule, server))
        state.ticks += 1
        ids_before = dict(server.ids)
        outcome = run_rule(rule, self._context(state, server, tool, arguments),
                           on_error=lambda exc: self._rule_error(tool, exc))
        if outcome.error_class:
            if not read_only:  # a refused write changes nothing but the clock (its time passed, as live)
                server.ids.clear()
                server.ids.update(ids_before)
            return _error(outcome, self.name, origin, self._names_on(tool.server))
        # keyed by the call, not by when it came: the same read asked again fills the same values (a page asked
        # twice is the same page), and a value the world cannot know stays put across calls
        rng = lambda: derive_rng(state.seed, f"engine:world:shape:{tool.id}:{canonical_json(arguments)}")  # noqa: E731
        return _shaped(tool, self._pattern(tool), outcome, self.name, origin, rng, arguments,
                       lambda: _signed_in_keys(server.state))

    def guard_for(self, tool: ToolSpec) -> Rule:
        """The checks a tool no rule covers runs before the schema engine answers it (`infer.guard_rule` and the
        card's family guards): what `cworld world rules` shows beside the simulated tools."""
        tool = self._as_own(tool, None)[0]
        guard = self._guards.get(tool.id)
        if guard is None:
            world = self._server_world(tool.server)
            card = self._card_of(tool, world)
            guard = guard_rule(tool, card, world) if world is not None else Rule(origin="inferred")
            guard = self._guards[tool.id] = guard.model_copy(update={"check": [*guard.check, *family_guards(tool, card)]})
        return guard

    def _guarded(self, state: _Session, tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult | None:
        """The refusal of a tool no rule covers, where its token or an id it names contradicts the world
        (`infer.guard_rule`); None when its checks pass (or it has none) and the schema engine answers."""
        guard = self.guard_for(tool)
        server = self._server(state, tool.server) if guard.check else None
        if server is None:
            return None
        outcome = run_rule(guard, self._context(state, server, tool, arguments),
                           on_error=lambda exc: self._rule_error(tool, exc))
        if not outcome.error_class:
            return None
        self.stats.by_rule["inferred"] += 1
        return _error(outcome, self.name, "inferred", self._names_on(tool.server))

    def _names_on(self, server: str) -> frozenset[str]:
        """The names of the server's tools: what a refusal's hint may name."""
        names = self._tool_names.get(server)
        if names is None:
            names = self._tool_names[server] = frozenset(t.name for t in self._tools.values() if t.server == server)
        return names

    def _pattern(self, tool: ToolSpec) -> ResponsePattern:
        """The tool's output schema, or its card's response pattern when it declares none (the server's card,
        with the kinds its tools name: a sitemap is shown as a sitemap, not as the card's search result)."""
        found = self._patterns.get(tool.id)
        if found is None:
            card = self.card_of(tool)
            found = self._patterns[tool.id] = response_pattern(tool, card, operation_kind(tool), entity_for(tool, card))
        return found

    def _touched(self, rule: Rule, server: _Server) -> set[str]:
        """The state entries a writing rule may change: those it names, and those the defs it calls name
        (transitively), so a write never reaches the seed's shared world."""
        names = self._names.get(id(rule))
        if names is None:
            keys = set(server.base.state) | set(server.base.kinds)
            defs = self.operations[server.base.server].defs if server.base.server in self.operations else {}
            found = collection_names(rule, keys | set(defs))
            for fn in _called_defs(found, defs):
                found |= identifiers(defs[fn].expr) & keys
            names = self._names[id(rule)] = {head(server.base.kinds.get(n, n)) for n in found if n in keys}
        return names

    def _rule_error(self, tool: ToolSpec, exc: Exception) -> None:
        if len(self.stats.rule_errors) < 100:
            self.stats.rule_errors.append(f"{tool.id}: {exc}")

    def _simulated(self, state: _Session, tool: ToolSpec, arguments: dict[str, Any],
                   session: SessionLog | None) -> ToolResult:
        """No rule covers the tool: the schema engine answers, and the answer says it was simulated."""
        self.stats.by_rule["simulated"] += 1
        if self._fallback is None:
            return ToolResult.error("unavailable", f"unavailable: no world rule covers {tool.id}", source="engine",
                                    engine=self.name, simulated=True)
        # the fallback's own log holds the calls it answered, so it moves on by one per call instead of
        # re-simulating every call the world answered (quadratic in the episode's length)
        if state.fallback_log is None:
            state.fallback_log = SessionLog(seed=state.seed, context=session.context if session is not None else None)
        answer: ToolResult = self._fallback.respond_sync(tool, arguments, state.fallback_log)
        state.fallback_log.record(tool.id, arguments, answer)
        answer.meta["simulated"] = True
        return answer

    # --- what the session did -----------------------------------------------------------------------
    def end_state(self, session: SessionLog) -> dict[str, Any]:
        """The world's state for the sandbox apps (their own layout: the state the grader diffs, as a live
        run's) and, under `_world`, the records the session changed on other servers, before and after
        (`sandbox/statediff/world.py`): graded with the apps, never set aside."""
        state = self._session(session)
        world = self.world(session.seed)
        out: dict[str, Any] = {}
        other: dict[str, Any] = {}
        for name, base in world.servers.items():
            mine = state.servers.get(name)
            current = mine.state if mine is not None else base.state
            if base.source == "sandbox":
                out[name] = current
            elif mine is not None and mine.owned:
                changed = world_delta(base.state, current, mine.owned)
                if changed:
                    other[name] = changed
        if other:
            out[WORLD_KEY] = other
        return out

    def world_state(self, session: SessionLog) -> dict[str, Any]:
        return self.end_state(session)

    def world_changes(self, session: SessionLog) -> list[EntityChanges]:
        """What the session's writes created, updated and deleted, per (server, collection)."""
        state = self._session(session)
        found = []
        for name, mine in sorted(state.servers.items()):
            reverse = {v: k for k, v in mine.base.kinds.items()}
            for coll in sorted(mine.owned):
                change = _diff(name, mine.base.card or name, reverse.get(coll, coll), mine.base.state.get(coll),
                               mine.state.get(coll))
                if change:
                    found.append(change)
        return found


def _called_defs(names: set[str], defs: dict[str, Def]) -> set[str]:
    """The defs among `names`, and every def those call, transitively."""
    todo, seen = [n for n in names if n in defs], set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(n for n in identifiers(defs[name].expr) if n in defs)
    return seen


def _diff(server: str, card: str, kind: str, before: Any, after: Any) -> EntityChanges:
    out = EntityChanges(server, card, kind, "id")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return out
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key), after.get(key)
        if was == now:
            continue
        if was is None and isinstance(now, dict):
            out.created[key] = now
        elif now is None:
            out.deleted.append(key)
        elif isinstance(was, dict) and isinstance(now, dict):
            out.updated[key] = now
            out.changed_fields[key] = sorted(f for f in was.keys() | now.keys() if was.get(f) != now.get(f))
    return out


def _defaults(props: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """Every schema property, at its schema default where it declares one (what a service fills in), else None;
    an id's default only where it is a key the world holds (`calendar_id: cal_mine`), else it stays None: an
    alias the service resolves (`calendarId: primary`) is no record's key. A harvest placeholder
    (`project: cworld-placeholder-...`) stands for the user's configured value, which the world does not name:
    None, as an argument not given."""
    out = {}
    for p, s in props.items():
        default = s.get("default") if isinstance(s, dict) else None
        if default is not None and (_names_an_id(p) or str(default).startswith(PLACEHOLDER_PREFIX)) \
                and not _a_key(default, state):
            default = None
        out[p] = default
    return out


def _a_key(value: Any, state: dict[str, Any]) -> bool:
    return isinstance(value, str) and any(isinstance(c, dict) and value in c for c in state.values())


def _names_an_id(prop: str) -> bool:
    name = snake(prop)
    return name in ("id", "ids") or name.endswith(("_id", "_ids"))


def _signed_in_keys(state: dict[str, Any]) -> frozenset[str]:
    """The signed-in user's key where the world keeps one (what `is_member` and `your_role` are about)."""
    user = signed_in(state)
    return frozenset({str(user[0])}) if user is not None and user[0] else frozenset()


def _error(outcome: Outcome, engine: str, origin: str, tools: frozenset[str] = frozenset()) -> ToolResult:
    kind = outcome.error_class or "business"
    error_class = kind if kind in _RESULT_CLASSES else ERROR_CLASS_OF_KIND.get(kind, "business")
    message = own_hint(outcome.message, tools) if tools else outcome.message
    return ToolResult.error(error_class, message, source="engine", engine=engine, rule=origin,  # type: ignore[arg-type]
                            kind=kind)


#: A card message's hint naming tools: "; list_accounts, list_transfers or list_orders give ids".
_HINT = re.compile(r"; ([\w.-]+(?:, [\w.-]+)*(?: (?:or|and) [\w.-]+)?) give ids")


def own_hint(message: str, tools: frozenset[str]) -> str:
    """A refusal whose hint names only the server's own tools: a card's message is written for the category, and
    a service never points at a tool it lacks (Stripe's 404 does not say "list_orders"); the hint goes where
    none of its tools is the server's."""
    found = _HINT.search(message)
    if found is None:
        return message
    named = [n for n in re.split(r", | or | and ", found.group(1)) if n in tools]
    hint = "" if not named else f"; {' or '.join(named)} give{'s' if len(named) == 1 else ''} ids"
    return message[:found.start()] + hint + message[found.end():]


def _shaped(tool: ToolSpec, pattern: ResponsePattern, outcome: Outcome, engine: str, origin: str,
            rng: Callable[[], random.Random], arguments: dict[str, Any],
            me: Callable[[], frozenset[str]] = frozenset) -> ToolResult:
    """The answer as the tool's output schema has it: the payload (a record view or a page) when it fits;
    otherwise filled to the schema from the payload where it fits (`Shaper`: values the world does not
    hold are made up for display, never written to the world). The text is the JSON. A text service's answer
    is the rule's own string when the rule wrote one, else the card's rendering of the records."""
    payload = outcome.payload
    if pattern.kind == "text":  # a service that answers in text (git, sqlite)
        if isinstance(payload, str):  # a rule that wrote the service's own words: they are the answer
            return ToolResult.ok(None, text=payload, source="engine", engine=engine, rule=origin, pattern="rule")
        text = render_text(pattern.template, pattern.header, payload, outcome.many)  # records: the card renders
        return ToolResult.ok(None, text=text, source="engine", engine=engine, rule=origin, pattern="card")
    schema = pattern.schema
    if not pattern.from_output_schema and isinstance(payload, dict):  # no declared output: the world's facts as
        text = json.dumps(payload, ensure_ascii=False, default=str)  # the rule gave them; a card's shape is a guess
        return ToolResult.ok(payload, text=text, source="engine", engine=engine, rule=origin)
    props = schema.get("properties") if isinstance(schema, dict) else None
    payload = aligned(wrapped(payload, schema), schema)
    if isinstance(payload, dict) and props and schema.get("additionalProperties") is False:
        payload = {k: v for k, v in payload.items() if k in props}
    structured = payload if isinstance(payload, dict) else {"result": payload}
    valid = conforms(schema, structured) if props else True
    invented: list[str] = []
    if not valid:
        filled = Shaper(rng(), given=arguments, me=me()).fill(schema, payload)  # `is_member`: whether I am
        if isinstance(filled, dict) and conforms(schema, filled):
            invented = made_up(filled, (payload, arguments))
            structured, valid = filled, True
    text = json.dumps(structured, ensure_ascii=False, default=str)
    # `invented`: where the answer holds values the world cannot know (made up to fit the schema, never stored)
    return ToolResult.ok(structured, text=text, source="engine", engine=engine, rule=origin, schema_valid=valid,
                         **({"shaped": True, "invented": invented} if invented else {}))


def wrapped(payload: Any, schema: Any) -> Any:
    """The world's answer inside an output schema of one property (FastMCP's `{result: ...}`, a service's
    `{data: ...}`): the whole answer goes in it, as JSON text where the property is a string; inside an
    object of several fields, in the field named for what it is (`{status, message, memory}` -> memory)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or len(props) != 1 or payload is None:
        return payload
    ((name, sub),) = props.items()
    if isinstance(payload, dict) and name in payload or not isinstance(sub, dict):
        return payload
    types = schema_types(sub)
    if "string" in types and not isinstance(payload, str):
        return {name: json.dumps(payload, ensure_ascii=False, default=str)}
    if "array" in types:
        return {name: _items_of(payload)}
    if "object" in types:
        return {name: _in_record_field(payload, sub)}
    return payload


def _items_of(payload: Any) -> list[Any]:
    if isinstance(payload, list):
        return payload
    if isinstance(payload, dict):
        found = next((v for v in payload.values() if isinstance(v, list)), None)
        return found if found is not None else [payload]
    return [payload]


def _in_record_field(payload: Any, schema: dict[str, Any]) -> Any:
    """A record placed in the one object field of `schema` it does not already fill (`memory`, `event`)."""
    props = schema.get("properties")
    if not isinstance(props, dict) or not isinstance(payload, dict) or set(props) & set(payload):
        return payload
    holders = [n for n, sub in props.items() if isinstance(sub, dict) and "object" in schema_types(sub)]
    return {holders[0]: payload} if len(holders) == 1 else payload


def made_up(answer: Any, known: tuple[Any, ...]) -> list[str]:
    """The paths of `answer`'s values that neither the world's payload nor the call's arguments hold."""
    held = {str(v) for v in _scalars(known)}
    out: list[str] = []
    if isinstance(answer, dict | list | tuple):
        _unheld(answer, "$", held, out)
    elif str(answer) not in held and answer not in _EMPTY:
        out.append("$")
    return out[:50]


_EMPTY: tuple[Any, ...] = (None, "", [], {})


def _scalars(value: Any) -> list[Any]:
    """Every value inside `value` that is no map or list (an empty one holds none)."""
    out, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        else:
            out.append(item)
    return out


def _unheld(value: dict[str, Any] | list[Any] | tuple[Any, ...], path: str, held: set[str], out: list[str]) -> None:
    """Appends the paths under `value` (a map or list at `path`) whose values `held` lacks, in document order;
    a path string is built only for a value that is out of it, or for a map or list to walk into."""
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    for k, v in pairs:
        if isinstance(v, dict | list | tuple):
            _unheld(v, f"{path}.{k}" if isinstance(value, dict) else f"{path}[{k}]", held, out)
        elif str(v) not in held and v not in _EMPTY:
            out.append(f"{path}.{k}" if isinstance(value, dict) else f"{path}[{k}]")


def aligned(value: Any, schema: Any, field: str = "") -> Any:
    """The world's values under the names the output schema uses: a record's key shown as `<kind>_id` is the
    schema's `id` (or `orderId`), a field `due_date` its `dueDate`; page items likewise. Only names the
    payload lacks are added, so a shown id is the stored id, never one the shaper made up. `field`: the name
    the value is shown under (a list of strings named `pmids` shows the records' keys, not their names)."""
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        return [aligned(v, items, field) for v in value]
    if isinstance(value, dict) and isinstance(schema, dict) and schema.get("type") == "string":
        key = _ID_LIST.search(snake(field)) and (value.get("id") or next(
            (v for k, v in value.items() if k.endswith("_id")), None))
        return str(key) if key else record_name(value)  # never made-up words
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(value, dict) or not isinstance(props, dict):
        return value
    out = {k: aligned(v, props.get(k), k) if isinstance(v, dict | list) else v for k, v in value.items()}  # a scalar stays
    plain = {snake(k): k for k in out}
    first_id = next((k for k in out if k.endswith("_id")), None)
    for name in props:
        if name in out:
            continue
        if snake(name) in plain:
            out[name] = out[plain[snake(name)]]
        elif name == "id" and first_id is not None:
            out[name] = out[first_id]
    return out


#: A list of strings that names records by their ids (`pmids`, `ids`, `user_ids`): it shows their keys.
_ID_LIST = re.compile(r"(^|_)(pm|u|g)?ids$")

#: The fields a service shows when it lists records as plain strings, most telling first.
_NAME_FIELDS = ("name", "title", "path", "full_name", "display_name", "username", "email", "subject", "label", "key",
                "slug", "url", "code", "symbol")


def record_name(record: dict[str, Any]) -> str:
    """How a record reads as one string: its name (or title, path, ...), else its id."""
    found = next((record[f] for f in _NAME_FIELDS if isinstance(record.get(f), str) and record[f]), None)
    if found is None:
        found = next((v for k, v in record.items() if (k == "id" or k.endswith("_id")) and v is not None), "")
    return str(found)


def _pure(tool: ToolSpec, arguments: dict[str, Any]) -> ToolResult | None:
    """A stateless sandbox tool computed by its implementation (`engine/pure.py`), if it is one."""
    try:
        from cworld.engine.pure import pure_result
    except ImportError:  # pragma: no cover - until engine/pure.py lands
        return None
    return pure_result(tool, arguments)


def _is_pending(state: _Session, entry: LogEntry) -> bool:
    """Whether the log's last entry is the call this session just answered: same tool, equal arguments
    (compared as values; the log holds its own copy, and a canonical JSON of both cost a fifth of a call)."""
    return state.pending is not None and entry.tool == state.pending[0] and entry.arguments == state.pending[1]
