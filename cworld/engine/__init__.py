"""The World Engine: category cards, the schema engine and the LLM engine (synthesized mode).

See docs/world-engine.md. The sub-packages, by concern: `cards/` (category cards, which card a tool gets,
what its call does), `world/` (a session's simulated world and its grounding in the task), `schema/` (the
offline, deterministic `SchemaEngine`), `llm/` (`LLMEngine`, which asks the model of role `engine` and
falls back to the schema engine). Both answer `respond(tool, arguments, session)` (`protocol.py`).
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
