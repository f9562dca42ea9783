"""The schema engine: the offline, deterministic World Engine.

It infers what a call does (operation kind and entity, from annotations, the name and the card), applies
it to a simulated world kept per session, and shapes the result to the tool's output schema (or the
card's pattern when there is none). Same seed and same call history ⇒ same responses.
"""

from __future__ import annotations

import json
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.engine.cards import CategoryCard
from cworld.engine.jsonschema_utils import inline_refs, validation_error
from cworld.engine.operations import entity_for, operation_kind
from cworld.engine.protocol import SessionLog
from cworld.engine.shaping import fill
from cworld.engine.values import value_for_schema
from cworld.engine.world import Outcome, SimWorld, apply
from cworld.seeding import derive_rng


class SchemaEngine:
    name = "schema"

    def __init__(self, cards: dict[str, CategoryCard]) -> None:
        self.cards = cards
        self._worlds: dict[int, tuple[int, SimWorld]] = {}
        self._tools: dict[str, ToolSpec] = {}

    async def respond(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        return self.respond_sync(tool, arguments, session)

    def respond_sync(self, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog) -> ToolResult:
        self._tools[tool.id] = tool
        world = self._world_for(session)
        result = self._respond(world, tool, arguments, len(session.entries))
        self._worlds[id(session)] = (len(session.entries) + 1, world)
        return result

    def world_state(self, session: SessionLog) -> dict[str, Any]:
        return self._world_for(session).snapshot()

    def card_for(self, tool: ToolSpec) -> CategoryCard:
        return self.cards.get(tool.category or "generic") or self.cards["generic"]

    # --- internals ---------------------------------------------------------------------
    def _world_for(self, session: SessionLog) -> SimWorld:
        """The session's world; rebuilt by replaying the log when this engine has not seen it all."""
        applied, world = self._worlds.get(id(session), (-1, None))  # type: ignore[arg-type]
        if world is not None and applied == len(session.entries):
            return world
        world = SimWorld(session.seed)
        for n, entry in enumerate(session.entries):
            spec = self._tools.get(entry.tool)
            if spec is not None and not entry.result.is_error:
                self._respond(world, spec, entry.arguments, n)
        self._worlds[id(session)] = (len(session.entries), world)
        return world

    def _respond(self, world: SimWorld, tool: ToolSpec, arguments: dict[str, Any], turn: int) -> ToolResult:
        card = self.card_for(tool)
        problem = validation_error(tool.input_schema, arguments) if tool.input_schema else None
        if problem:
            return ToolResult.error("invalid_args", f"Invalid arguments for {tool.name}: {problem}", source="engine")
        rng = derive_rng(world.seed, f"engine:call:{turn}:{tool.id}:{json.dumps(arguments, sort_keys=True, default=str)}")
        outcome = apply(world, card, entity_for(tool, card), operation_kind(tool), arguments, rng)
        if outcome.error_class:
            return ToolResult.error(outcome.error_class, outcome.message, source="engine")  # type: ignore[arg-type]
        return self._shaped(tool, outcome, rng)

    def _shaped(self, tool: ToolSpec, outcome: Outcome, rng: Any) -> ToolResult:
        if not tool.output_schema:
            payload = outcome.payload if isinstance(outcome.payload, dict) else {"result": outcome.payload}
            return ToolResult.ok(payload, source="engine", op="card-pattern")
        schema = inline_refs(tool.output_schema)
        value = fill(schema, outcome.payload, rng)
        if validation_error(schema, value) is not None:
            value = value_for_schema(schema, rng)
        valid = validation_error(schema, value) is None
        structured = value if isinstance(value, dict) else {"result": value}
        return ToolResult.ok(structured, source="engine", schema_valid=valid)
