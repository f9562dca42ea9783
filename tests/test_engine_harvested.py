"""The harvested catalog: every tool has a category card, and the schema engine (no scenario) answers a
seeded random sample of harvested tools within their schemas."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from cworld.engine.cards.assign import assign_cards
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.schema.preview import check_result
from cworld.environment import Environment
from cworld.registry.harvest.catalog import harvested_specs
from cworld.registry.manifest import load_catalog
from cworld.registry.probe_args import generate_args
from cworld.seeding import derive_rng

ROOT = Path(__file__).resolve().parents[1]
ENV = Environment.resolve(ROOT)
CARDS = load_cards(ROOT / "category_cards")
SPECS = harvested_specs(ENV)
TOOLS = [t for spec in SPECS for t in load_catalog(ENV, spec)]


def test_every_harvested_tool_has_a_card() -> None:
    assignments = assign_cards(TOOLS, CARDS, {s.id: s for s in SPECS})
    per_card = Counter(a.card for a in assignments)
    assert len(TOOLS) > 3000
    assert [a.tool_id for a in assignments if a.card == "generic"] == []
    assert {"browser_automation", "maps", "media", "devops", "education", "cloud_infrastructure"} <= set(per_card)


@pytest.mark.parametrize("seed", [0])
def test_engine_try_is_schema_valid_on_a_sample_of_harvested_tools(seed: int) -> None:
    """What `cworld engine try` does, on 50 tools: generated arguments, no scenario, one fresh session each."""
    sample = derive_rng(seed, "harvested-try-sample").sample(TOOLS, 50)
    engine = SchemaEngine(CARDS, sample)
    invalid, successes = [], 0
    for tool in sample:
        result = engine.respond_sync(tool, generate_args(tool), SessionLog(seed=seed))
        validates, problem, _ = check_result(tool, engine.index.card_for(tool), result)
        if not validates:
            invalid.append(f"{tool.id}: {problem}")
        if result.is_error:
            assert result.error_class in ("not_found", "invalid_args", "business"), (tool.id, result.text)
        else:
            successes += 1
    assert invalid == []
    assert successes >= 40, f"only {successes} of 50 calls succeeded"


def test_every_harvested_tool_gets_an_answer() -> None:
    """No harvested schema makes the engine crash (old-style tuple `items`, say); almost all answers
    fit their schema (the known misses: remembered datetimes against `...Z`-only patterns)."""
    engine = SchemaEngine(CARDS, TOOLS)
    invalid = []
    for tool in TOOLS:
        result = engine.respond_sync(tool, generate_args(tool), SessionLog(seed=0))
        if not check_result(tool, engine.index.card_for(tool), result)[0]:
            invalid.append(tool.id)
    assert len(invalid) <= len(TOOLS) // 100, invalid
