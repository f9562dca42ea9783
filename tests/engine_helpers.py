"""World Engine test helpers: a call as a backend makes it, a session over a scenario, an answer's body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cworld.data_model import PublicTask, Scenario, ToolResult, ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.world.base import ServerWorld, World
from cworld.environment import Environment
from cworld.registry.tools import sandbox_tools

TOOLS = sandbox_tools()


def call(engine: SchemaEngine, log: SessionLog, tool_id: str, args: dict[str, Any]) -> ToolResult:
    """What a backend does: ask the engine, then log the answer."""
    result = engine.respond_sync(TOOLS[tool_id], args, log)
    log.record(tool_id, args, result)
    return result


def rules_caller(server: str, card: str, state: dict[str, Any], kinds: dict[str, str],
                 tools: list[ToolSpec], reference: dict[str, Any] | None = None,
                 keys: dict[str, list[str]] | None = None, context: PublicTask | None = None,
                 named_kinds: list[dict[str, Any]] | None = None) -> Callable[..., ToolResult]:
    """`call(tool_name, **args)` on the category engine over one server's world (`state`, on `card`, with its
    read-only `reference` catalogs; `context` the public task the session serves; `named_kinds` the kinds its
    tools name that the card lacks, as `world/named.py` adds them), each answer logged as a
    backend logs it, so later calls see earlier ones."""
    world = World(seed=0, now="2026-08-01T09:00:00Z", servers={server: ServerWorld(
        server, state, kinds=kinds, card=card, reference=reference or {}, keys=keys or {},
        named_kinds=named_kinds or [])})
    engine = RulesEngine(load_cards(Environment.resolve().category_cards), tools, world=world)
    log = SessionLog(seed=0, context=context)

    def call(name: str, /, **args: Any) -> ToolResult:
        spec = next(t for t in tools if t.name == name)
        result = engine.respond_sync(spec, args, log)
        log.record(spec.id, args, result)
        return result
    call.engine, call.log = engine, log  # type: ignore[attr-defined]  # what a test reads the session's world through
    return call


def scenario_session(scenario: Scenario, query: str = "Sort it out.", seed: int = 1) -> SessionLog:
    """A session whose public task says only `query` and presumes `scenario`."""
    return SessionLog(seed=seed, context=PublicTask(id="t", query=query, scenario=scenario))


def body(result: ToolResult) -> dict[str, Any]:
    """A successful, schema-valid answer's structured content."""
    assert not result.is_error, result.text
    assert result.meta.get("schema_valid") is True
    return result.structured_content or {}


def tool_spec(server: str, name: str, props: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    """A tool written for a test: its arguments `props`, all required unless `required` says which."""
    return ToolSpec(server=server, name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props,
                                  "required": list(props) if required is None else required})
