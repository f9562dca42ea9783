"""A card's demonstrations checked against what the LLM engine demands of a real answer.

The engine shows a card's demonstrations as examples of its reply envelope. An example that breaks the
envelope (an error with no `error_class`) or its tool's response pattern (a search answering `products`
where the pattern wants `items`) teaches the model the wrong answer, so a card with one does not load.
A demonstration's tool is known by name only: its operation, entity and pattern are inferred as for any
tool of the card with no output schema, and a transient error (timeout, rate limit, outage) is refused as
for the engine's model: those are the controller's.
"""

from __future__ import annotations

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, Demonstration
from cworld.engine.cards.operations import entity_for, operation_kind
from cworld.engine.llm.prompts import demo_envelope, envelope_schema
from cworld.engine.schema.patterns import response_pattern
from cworld.schemas.validation import validation_error


def demonstration_problem(card: CategoryCard) -> str | None:
    """The first demonstration that contradicts the envelope or its tool's pattern, said in one line."""
    for index, demo in enumerate(card.demonstrations):
        problem = _problem(card, demo)
        if problem:
            return f"field 'demonstrations.{index}' ({demo.tool}): {problem}"
    return None


def _problem(card: CategoryCard, demo: Demonstration) -> str | None:
    if not demo.is_error and demo.error_class is not None:
        return "error_class is only for an error demonstration (is_error: true)"
    tool = ToolSpec(server=card.name, name=demo.tool, description="", input_schema={"type": "object"})
    op = operation_kind(tool)
    pattern = response_pattern(tool, card, op, entity_for(tool, card))
    envelope = envelope_schema(pattern.schema)
    branch = envelope["anyOf"][1 if demo.is_error else 0]
    problem = validation_error(branch, demo_envelope(demo))
    if problem is None:
        return None
    if demo.is_error:
        return f"an error demonstration needs an error_class the engine may answer and a message: {problem}"
    return f"the response breaks the card's {pattern.kind} pattern for a {op} call: {problem}"
