"""The schema engine: the offline, deterministic World Engine.

It infers what a call does (operation kind and entity, from annotations, the name and the card), applies
it to a simulated world kept per session, and shapes the result to the tool's output schema (or the
card's pattern when there is none). Same seed and same call history => same responses.

The world is a function of the session log: it is kept between calls while the log grows as expected,
and rebuilt by replaying the log otherwise. A replayed create adopts the id the log shows, so the world
agrees with answers another engine (or a live server) gave.

When the session carries its public task, the world is grounded in it (`world/grounding.py`): the scenario's
entities are the records, ids the task names exist, searches it is about find something, dates fall near
the task's 'today'. The engine never sees the gold plan, hints or ground truth.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards.assign import CardIndex
from cworld.engine.cards.card import CategoryCard, EntityType
from cworld.engine.cards.operations import (
    entity_for,
    entity_named,
    name_tokens,
    operation_kind,
    singular_word,
)
from cworld.engine.protocol import LogEntry, SessionLog, canonical_json
from cworld.engine.pure import is_pure, pure_result
from cworld.engine.schema.handlers import apply
from cworld.engine.schema.patterns import ResponsePattern, render_text, response_pattern, text_template
from cworld.engine.schema.shaping import Shaper, single_text_property
from cworld.engine.world.changes import EntityChanges, before_write, note_write, world_changes
from cworld.engine.world.filters import BEFORE_ARGS
from cworld.engine.world.fresh import as_fields, freshen
from cworld.engine.world.grounding import LIST_NAMES, Grounding
from cworld.engine.world.idformat import IdFormat, hinted_formats
from cworld.engine.world.likeness import conform_new
from cworld.engine.world.state import Collection, Outcome, SimWorld, absorb, adopt_key, id_keys, mark_shown
from cworld.schemas.plausible import clock, focus_day, session_clock
from cworld.schemas.validation import validation_error
from cworld.schemas.walk import result_value
from cworld.seeding import derive_rng

_BARE_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NOT_A_DAY = re.compile(r"birth|dob|expir")


@dataclass(frozen=True)
class _ToolFacts:
    """What the engine infers about a tool once, not on every call: its card, operation kind and entity,
    its server's id formats, its response pattern (and what `_shaped` reads off it), its name's words."""

    tool: ToolSpec
    card: CategoryCard
    op: str
    entity: EntityType
    hints: dict[str, IdFormat]
    pattern: ResponsePattern
    template: tuple[str, str] | None
    text_prop: str | None
    name_words: frozenset[str]


@dataclass
class _View:
    """The world after `applied` log entries, plus the call just answered (expected to be logged next)."""

    applied: int
    world: SimWorld
    pending: str | None = None
    pending_error: bool = False


class SchemaEngine:
    name = "schema"

    def __init__(self, cards: dict[str, CategoryCard], tools: Iterable[ToolSpec] = ()) -> None:
        self.cards = cards
        self.index = CardIndex(cards)
        self._tools: dict[str, ToolSpec] = {}
        self._hints: dict[str, dict[str, IdFormat]] = {}
        self._facts: dict[str, _ToolFacts] = {}
        self.register(tools)

    def register(self, tools: Iterable[ToolSpec]) -> None:
        """Tools the engine may see in a session log (to replay it) and learn id formats from."""
        for tool in tools:
            self._tools[tool.id] = tool
            self._facts.pop(tool.id, None)
            self._hints.setdefault(tool.server, {}).update(hinted_formats(tool))

    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        return self.respond_sync(tool, arguments, session)

    def respond_sync(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        if tool.id not in self._tools:
            self.register([tool])
        grounding = self._grounding(session)
        with session_clock(grounding.clock if grounding else None):
            view = self._view_for(session)
            if (computed := pure_result(tool, arguments)) is not None:  # computed, never simulated (engine/pure.py)
                view.pending, view.pending_error = f"{tool.id}\x1f{canonical_json(arguments)}", computed.is_error
                return computed
            if grounding is not None:
                grounding.observe(session.entries)
            canon = canonical_json(arguments)  # once per call: the call's rng and its log fingerprint use it
            result = self._respond(view.world, tool, arguments, len(session.entries), canon=canon)
        view.pending = f"{tool.id}\x1f{canon}"  # what `LogEntry.fingerprint` gives the logged call
        view.pending_error = result.is_error
        return result

    def world_state(self, session: SessionLog) -> dict[str, Any]:
        grounding = self._grounding(session)
        with session_clock(grounding.clock if grounding else None):
            return self._view_for(session).world.snapshot()

    def world_changes(self, session: SessionLog) -> list[EntityChanges]:
        """What the session's writes created, updated and deleted, per (server, entity kind) (`changes.py`)."""
        grounding = self._grounding(session)
        with session_clock(grounding.clock if grounding else None):
            return world_changes(self._view_for(session).world)

    # --- the public task ------------------------------------------------------------------------------
    def _grounding(self, session: SessionLog) -> Grounding | None:
        """The session's public task, resolved once per session."""
        if session.context is None:
            return None
        key = f"{self.name}:{id(self)}:grounding"
        found: Grounding | None = session.view(key)
        if found is None or found.task is not session.context:
            found = Grounding(session.context)
            session.set_view(key, found)
        return found

    def card_for(self, tool: ToolSpec) -> CategoryCard:
        return self.index.card_for(tool)

    def _facts_for(self, tool: ToolSpec) -> _ToolFacts:
        """The tool's facts, inferred on its first call (again when another spec comes under its id)."""
        facts = self._facts.get(tool.id)
        if facts is not None and facts.tool is tool:
            return facts
        card, op = self.card_for(tool), operation_kind(tool)
        entity = entity_for(tool, card)
        pattern = response_pattern(tool, card, op, entity)
        facts = _ToolFacts(
            tool, card, op, entity, self._hints.setdefault(tool.server, {}), pattern, text_template(card, op, entity),
            single_text_property(pattern.schema) if pattern.from_output_schema else None,
            frozenset(map(singular_word, name_tokens(tool.name))),
        )
        self._facts[tool.id] = facts
        return facts

    # --- the world as a view of the log ------------------------------------------------------------
    def _view_for(self, session: SessionLog) -> _View:
        return session.replayed_view(f"{self.name}:{id(self)}",
                                     lambda: _View(applied=len(session.entries), world=self._replay(session)), _continues)

    def _replay(self, session: SessionLog) -> SimWorld:
        grounding = self._grounding(session)
        world = SimWorld(session.seed, grounding)
        for turn, entry in enumerate(session.entries):
            spec = self._tools.get(entry.tool)
            if spec is not None and not entry.result.is_error and not is_pure(spec):
                if grounding is not None:
                    grounding.observe(session.entries[:turn])
                self._respond(world, spec, entry.arguments, turn, recorded=entry.result)
        return world

    # --- one call ----------------------------------------------------------------------------------
    def _respond(self, world: SimWorld, tool: ToolSpec, arguments: dict[str, Any], turn: int,
                 recorded: ToolResult | None = None, canon: str | None = None) -> ToolResult:
        problem = validation_error(tool.input_schema, arguments) if tool.input_schema else None
        if problem:
            message = f"invalid_args: {tool.name}: {problem}. Check the tool's input schema and call again."
            return ToolResult.error("invalid_args", message, source="engine", engine=self.name)
        with focus_day(_asked_day(arguments)):
            return self._answer(world, tool, arguments, turn, recorded, canon)

    def _answer(self, world: SimWorld, tool: ToolSpec, arguments: dict[str, Any], turn: int,
                recorded: ToolResult | None, canon: str | None = None) -> ToolResult:
        facts = self._facts_for(tool)
        card, op, hints = facts.card, facts.op, facts.hints
        coll = world.collection(tool.server, card, facts.entity, hints)
        canon = canonical_json(arguments) if canon is None else canon
        rng = derive_rng(world.seed, f"engine:call:{turn}:{tool.id}:{canon}")
        existing = set(coll.records) if op == "create" else None
        before = before_write(coll, op)
        outcome = apply(coll, card, op, arguments, rng)
        if outcome.error_class:
            return ToolResult.error(outcome.error_class, outcome.message, source="engine", engine=self.name)  # type: ignore[arg-type]
        made = existing is not None and _freshened(coll, outcome, existing, facts.name_words, arguments)
        mark_shown(coll, outcome.payload)
        if recorded is not None:
            _adopt_recorded_key(coll, op, outcome, recorded)
        note_write(coll, before, _single_key(coll, outcome), arguments)  # the recorded answer's other fields are display
        if recorded is not None:
            absorb(coll, result_value(recorded))
        shaper = _shaper(world, tool.server, card, coll, hints, rng, made)
        shaper.given = arguments
        result = self._shaped(facts, outcome, coll, shaper)
        absorb(coll, result.structured_content)
        return result

    def _shaped(self, facts: _ToolFacts, outcome: Outcome, coll: Collection, shaper: Shaper) -> ToolResult:
        pattern, op = facts.pattern, facts.op
        many = op in ("list", "search")
        if pattern.kind == "text":
            return ToolResult.ok(None, text=render_text(pattern.template, pattern.header, outcome.payload, many),
                                 source="engine", engine=self.name, pattern="card")
        text_prop = facts.text_prop
        template = facts.template if coll.entity is facts.entity else text_template(facts.card, op, coll.entity)
        if text_prop and template is not None:
            text = render_text(template[0], template[1], outcome.payload, many)
            return ToolResult.ok({text_prop: text}, text=text, source="engine", engine=self.name)
        value = shaper.fill(pattern.schema, outcome.payload)
        valid = validation_error(pattern.schema, value) is None
        if not valid:  # the payload did not fit (an odd schema): a value made from the schema alone
            value = shaper.make(pattern.schema)
            valid = validation_error(pattern.schema, value) is None
        structured = value if isinstance(value, dict) else {"result": value}
        result = ToolResult.ok(structured, source="engine", engine=self.name, schema_valid=valid)
        if not pattern.from_output_schema:
            result.meta["pattern"] = "card"
        return result


@dataclass
class _NestedLists:
    """A list inside a record's answer shows the world's records of the entity it names: a board's
    `lists` (those of this board, when lists know their board), a cart answer's `items` (its lines); for a
    list no card entity holds (a board's `members`), the scenario's entities related to the record."""

    world: SimWorld
    scope: str
    card: CategoryCard
    coll: Collection
    hints: dict[str, IdFormat]

    def __call__(self, prop: str, source: dict[str, Any], siblings: set[str]) -> list[dict[str, Any]] | None:
        entity = entity_named(self.card, singular_word(prop))
        if entity is None and prop in LIST_NAMES and not siblings & set(id_keys(self.coll.entity)):
            entity = self.coll.entity  # the answer is a container of this entity's records, not one of them
        key = str(source.get(self.coll.key_field))
        if entity is None and self.world.grounding is not None and prop not in LIST_NAMES:
            return self.world.grounding.related(self.scope, self.coll.entity, key, prop)
        if entity is None or entity is self.coll.entity and prop not in LIST_NAMES:
            return None
        target = self.world.collection(self.scope, self.card, entity, self.hints)
        records = list(reversed(target.records.values()))
        parent = f"{self.coll.entity.name}_id"
        if target is not self.coll and (parent in entity.fields or any(parent in r for r in records)):
            records = [r for r in records if str(r.get(parent)) == key]
        target.shown.update(str(r[target.key_field]) for r in records[:20])
        own_id = f"{entity.name}_id"  # a nested item names its key as the answer does (`lists[].list_id`)
        return [{own_id: r[target.key_field], **r} if target.key_field == "id" else dict(r) for r in records[:20]]


def _shaper(world: SimWorld, scope: str, card: CategoryCard, coll: Collection, hints: dict[str, IdFormat],
            rng: random.Random, made: bool) -> Shaper:
    """A shaper that knows the world: existing ids, nested lists, names behind ids, a new record's time."""
    ids = lambda stem: world.keys(scope, card, stem, hints)  # noqa: E731
    lookup = lambda key: world.find(scope, card, key)  # noqa: E731
    nested = _NestedLists(world, scope, card, coll, hints)
    me = frozenset(world.grounding.user_keys(scope)) if world.grounding is not None else frozenset()
    return Shaper(rng, _aliases(coll), ids, nested, lookup, fresh=clock() if made else None, me=me)


def _freshened(coll: Collection, outcome: Outcome, existing: set[str], name_words: frozenset[str],
               arguments: dict[str, Any]) -> bool:
    """A record this create made (not one it rewrote) gets a new record's values (fresh.py)."""
    payload = outcome.payload
    key = str(payload.get(coll.key_field)) if isinstance(payload, dict) and not outcome.many else None
    if key is None or key in existing or key not in coll.records:
        return False
    record = coll.records[key]
    given = set(as_fields(coll.entity, arguments))
    freshen(record, coll.entity, given, set(name_words), clock())
    conform_new(coll, record, given)
    outcome.payload = dict(record)
    return True


def _asked_day(arguments: dict[str, Any]) -> date | None:
    """The one day a call is about (`date`, `day`, a start date), if it names one."""
    for key, value in arguments.items():
        if isinstance(value, str) and _BARE_DAY.match(value) and key not in BEFORE_ARGS and not _NOT_A_DAY.search(key):
            try:
                return date.fromisoformat(value)
            except ValueError:
                return None
    return None


def _aliases(coll: Collection) -> dict[str, str]:
    return {alias: coll.key_field for alias in id_keys(coll.entity)}


def _continues(view: _View, last: LogEntry) -> bool:
    """The log grew by exactly the call this engine just answered, with an answer of the same kind."""
    return view.pending == last.fingerprint() and view.pending_error == last.result.is_error


def _single_key(coll: Collection, outcome: Outcome) -> str | None:
    """The key of the one record an answer is about, if it is about one."""
    payload = outcome.payload
    key = payload.get(coll.key_field) if isinstance(payload, dict) and not outcome.many else None
    return None if key is None else str(key)


def _adopt_recorded_key(coll: Collection, op: str, outcome: Outcome, recorded: ToolResult) -> None:
    data = result_value(recorded)
    if data is not None and op == "create" and isinstance(outcome.payload, dict):
        ours = outcome.payload.get(coll.key_field)
        if ours is not None:
            adopt_key(coll, str(ours), data)
