"""`cworld engine try`: one call through an engine, and whether the answer fits what the tool promises."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cworld.data_model import ToolResult, ToolSpec
from cworld.data_model.jsonl import write_text_atomic
from cworld.engine.cards.assign import CardIndex
from cworld.engine.cards.card import CategoryCard
from cworld.engine.cards.operations import entity_for, operation_kind
from cworld.engine.protocol import SessionLog, WorldEngine
from cworld.engine.schema.patterns import response_pattern
from cworld.errors import UsageError
from cworld.schemas.validation import validation_error


def parse_arguments(text: str) -> dict[str, Any]:
    """`--args` as a JSON object, or a one-line UsageError saying what is wrong."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--args is not valid JSON: {exc.msg} at char {exc.pos}; e.g. --args '{{\"query\": \"invoice\"}}'") from None
    if not isinstance(value, dict):
        raise UsageError(f"--args must be a JSON object, not {type(value).__name__}; e.g. --args '{{}}'")
    return value


def check_result(tool: ToolSpec, card: CategoryCard, result: ToolResult) -> tuple[bool, str | None, str]:
    """(validates, problem, against): errors are valid tool answers; successes must fit the schema or pattern."""
    pattern = response_pattern(tool, card, operation_kind(tool), entity_for(tool, card))
    against = "output_schema" if pattern.from_output_schema else f"card_pattern:{pattern.kind}"
    if result.is_error:
        return True, None, "error_result"
    if pattern.kind == "text":
        ok = bool(result.text.strip())
        return ok, None if ok else "empty text answer", against
    problem = validation_error(pattern.schema, result.structured_content)
    return problem is None, problem, against


async def preview(engine: WorldEngine, tool: ToolSpec, arguments: dict[str, Any], session: SessionLog,
                  cards: dict[str, CategoryCard]) -> dict[str, Any]:
    card = CardIndex(cards).card_for(tool)
    result = await engine.respond(tool, arguments, session)
    validates, problem, against = check_result(tool, card, result)
    return {
        "tool": tool.id,
        "engine": engine.name,
        "card": card.name,
        "operation": operation_kind(tool),
        "arguments": arguments,
        "result": result.model_dump(mode="json"),
        "validates": validates,
        "validated_against": against,
        "validation_error": problem,
    }


def save_session(session: SessionLog, path: Path) -> None:
    write_text_atomic(path, session.model_dump_json(indent=1))
