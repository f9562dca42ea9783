"""The harvested catalog: every tool has a category card, and the schema engine (no scenario) answers a
seeded random sample of harvested tools within their schemas."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cworld.engine.cards.assign import assign_cards
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.schema.preview import check_result
from cworld.environment import Environment
from cworld.registry.harvest.cards import SERVER_CARDS, TOOL_CARDS, named_cards, tool_card
from cworld.registry.harvest.catalog import harvested_specs
from cworld.registry.manifest import load_catalog
from cworld.registry.probe_args import generate_args
from cworld.registry.tools import environment_tools
from cworld.seeding import derive_rng

ROOT = Path(__file__).resolve().parents[1]
ENV = Environment.resolve(ROOT)
CARDS = load_cards(ROOT / "category_cards")
SPECS = harvested_specs(ENV)
TOOLS = [t for spec in SPECS for t in load_catalog(ENV, spec)]


def test_every_harvested_tool_has_a_card() -> None:
    assignments = assign_cards(TOOLS, CARDS, {s.id: s for s in SPECS})
    per_card = Counter(a.card for a in assignments)
    assert len(TOOLS) >= 5571 and len({t.server for t in TOOLS}) >= 276  # the paper's scale (issue 24)
    files = [json.loads((ENV.registry / "catalogs" / "harvested" / f"{s.id}.json").read_text()) for s in SPECS]
    assert all(isinstance(f.get("provenance"), dict) and f["provenance"] for f in files)  # each with provenance
    assert [a.tool_id for a in assignments if a.card == "generic"] == []
    assert {"browser_automation", "maps", "media", "devops", "education", "cloud_infrastructure"} <= set(per_card)


def test_every_card_a_harvest_rule_names_exists_and_every_rule_is_used() -> None:
    assert named_cards() - set(CARDS) == set()
    assert {t.category for t in TOOLS} <= set(CARDS) - {"generic"}
    servers = {s.id: s for s in SPECS}
    assert set(SERVER_CARDS) - set(servers) == set(), "a server rule names a server that was not harvested"
    for server, rules in TOOL_CARDS.items():
        names = [t.name for t in TOOLS if t.server == server]
        for pattern, card in rules:
            assert any(tool_card(server, "", n) == card for n in names), (server, pattern)


def test_a_mixed_server_splits_by_tool_and_a_misfiled_server_takes_its_own_card() -> None:
    card = {t.id: t.category for t in TOOLS}
    drive = "piotr-agier-google-drive-mcp"
    assert card[f"{drive}/appendSpreadsheetRows"] == "spreadsheets"
    assert card[f"{drive}/duplicateSlide"] == "presentations"
    assert card[f"{drive}/createCalendarEvent"] == "calendar"
    assert card[f"{drive}/readGoogleDoc"] == "documents"  # the server's card (its field is calendar)
    assert card["autocad-mcp-pro/entity_create_line"] == "cad_drawing"  # filed under ecommerce
    assert card["bycrawl-mcp/gmaps_get_place"] == "maps" and card["bycrawl-mcp/x_get_post"] == "social_media"


def test_every_card_has_a_tool_and_a_card_written_for_the_harvest_has_twenty() -> None:
    """Over the registry with the harvested catalog: no card is empty, and a card written for the harvest
    (its recognition names harvested servers only) has at least 20 harvested tools."""
    others = environment_tools(ENV).tools
    per_card = Counter(a.card for a in assign_cards(others, CARDS, environment_tools(ENV).servers))
    harvested = Counter(a.card for a in assign_cards(TOOLS, CARDS, {s.id: s for s in SPECS}))
    empty = sorted(set(CARDS) - {"generic"} - set(per_card) - set(harvested))
    assert empty == []
    harvested_servers = {s.id for s in SPECS}
    for_harvest = [c for c in CARDS.values() if c.recognition.servers
                   and set(c.recognition.servers) <= harvested_servers]
    assert len(for_harvest) >= 20
    thin = {c.name: harvested[c.name] for c in for_harvest if harvested[c.name] < 20}
    assert thin == {}


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
