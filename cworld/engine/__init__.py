"""The World Engine: category cards, the schema engine and the LLM engine (synthesized mode).

See docs/world-engine.md. `SchemaEngine` is the offline, deterministic default; `LLMEngine` asks the model
of role `engine` and falls back to the schema engine. Both answer `respond(tool, arguments, session)`.
"""

from cworld.engine.cards.assign import Assignment, CardIndex, assign_cards
from cworld.engine.cards.card import CategoryCard, load_cards
from cworld.engine.llm.engine import EngineStats, LLMEngine
from cworld.engine.protocol import LogEntry, SessionLog, WorldEngine
from cworld.engine.schema.engine import SchemaEngine

__all__ = [
    "Assignment",
    "CardIndex",
    "CategoryCard",
    "EngineStats",
    "LLMEngine",
    "LogEntry",
    "SchemaEngine",
    "SessionLog",
    "WorldEngine",
    "assign_cards",
    "load_cards",
]
