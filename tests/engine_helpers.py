"""World Engine test helpers: a call as a backend makes it, a session over a scenario, an answer's body."""

from __future__ import annotations

from typing import Any

from cworld.data_model import PublicTask, Scenario, ToolResult
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.registry.tools import sandbox_tools

TOOLS = sandbox_tools()


def call(engine: SchemaEngine, log: SessionLog, tool_id: str, args: dict[str, Any]) -> ToolResult:
    """What a backend does: ask the engine, then log the answer."""
    result = engine.respond_sync(TOOLS[tool_id], args, log)
    log.record(tool_id, args, result)
    return result


def scenario_session(scenario: Scenario, query: str = "Sort it out.", seed: int = 1) -> SessionLog:
    """A session whose public task says only `query` and presumes `scenario`."""
    return SessionLog(seed=seed, context=PublicTask(id="t", query=query, scenario=scenario))


def body(result: ToolResult) -> dict[str, Any]:
    """A successful, schema-valid answer's structured content."""
    assert not result.is_error, result.text
    assert result.meta.get("schema_valid") is True
    return result.structured_content or {}
