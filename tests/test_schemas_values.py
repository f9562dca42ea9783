"""Offline values by meaning (Faker, drawn per record) and the compiled JSON Schema check."""

from __future__ import annotations

import copy
import json
import random
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.sandbox.catalog import all_apps
from cworld.sandbox.framework.server import tool_specs
from cworld.schemas.compiled import compile_schema
from cworld.schemas.fake import country_of, slug
from cworld.schemas.plausible import record_values, value_for_type
from cworld.schemas.realistic import RealisticValues, value_for_schema
from cworld.schemas.validation import conforms, validation_error
from cworld.schemas.walk import inline_refs
from cworld.seeding import derive_rng

ROOT = Path(__file__).resolve().parents[1]
CARDS = load_cards(ROOT / "category_cards")
SANDBOX = [t for app in all_apps() for t in tool_specs(app)]
REAL = [ToolSpec.model_validate(t) for t in json.loads((ROOT / "registry/recorded/real_tools.json").read_text())]
TOOLS = {t.id: t for t in SANDBOX + REAL}
ENTITIES = {(card.name, e.name): e for card in CARDS.values() for e in card.entities}
PHONE = re.compile(r"^\+1-\d{3}-\d{3}-\d{4}$")
URL = re.compile(r"^https://[a-z0-9.-]+\.[a-z]{2,}(/[\w./-]*)?$")
EMAIL = re.compile(r"^[a-z0-9.]+@[a-z0-9-]+\.[a-z]{2,}$")


def records(card: str, entity: str, n: int = 40) -> list[dict[str, Any]]:
    spec = ENTITIES[(card, entity)]
    return [record_values(spec.name, spec.fields, derive_rng(seed, "test:values")) for seed in range(n)]


def test_a_persons_email_phone_and_company_are_theirs() -> None:
    for contact in records("email", "contact") + records("crm", "contact"):
        first, last = contact["name"].split()[0], contact["name"].split()[-1]
        local, domain = contact["email"].split("@")
        assert local == f"{slug(first, '.')}.{slug(last, '.')}" and EMAIL.match(contact["email"])
        assert domain.split(".")[0].split("-")[0] == slug(contact["company"]).split("-")[0]
        assert PHONE.match(contact["phone"])
    names = {c["name"] for c in records("email", "contact", 60)}
    assert len(names) > 50  # a thousand surnames, not a dozen


def test_a_city_comes_with_its_own_country_and_time_zone() -> None:
    for card, entity, city_field in (("ecommerce", "address", "city"), ("travel", "airport", "city"),
                                     ("weather", "location", "name")):
        for record in records(card, entity):
            assert country_of(record[city_field]) == record["country"], record
    location = records("weather", "location", 1)[0]
    assert location["timezone"].count("/") >= 1 and -90 <= location["latitude"] <= 90


def test_a_knowledge_graph_entity_is_named_and_described_by_its_type() -> None:
    for entity in records("knowledge_graph", "entity", 60):
        kind, name, notes = entity["entityType"], entity["name"], entity["observations"]
        assert len(set(notes)) == len(notes)
        if kind == "person":
            assert len(name.split()) >= 2 and notes[0].startswith("Works at ")
        if kind == "place":
            assert country_of(name) is not None and notes[0] == f"City in {country_of(name)}"
        if kind == "organization":
            assert notes[0].startswith("Headquartered in ")
    assert {e["entityType"] for e in records("knowledge_graph", "entity", 60)} >= {"person", "place", "organization"}


def test_titles_fit_what_they_title_and_phones_and_urls_look_real() -> None:
    hotels = records("travel", "hotel")
    assert all(re.match(r"^(Hotel |The .+ Inn$|.+ Grand Hotel$|.+ Suites )", h["name"]) for h in hotels)
    assert all(a["name"].endswith("International Airport") for a in records("travel", "airport"))
    rng = random.Random(1)
    assert all(PHONE.match(value_for_type("phone", rng)) for _ in range(50))
    assert all(URL.match(value_for_type("url", rng, field="html_url")) for _ in range(50))
    traveller = records("travel", "traveller", 1)[0]
    assert traveller["first_name"] != traveller["last_name"] and " " not in traveller["first_name"]


def test_schema_made_objects_are_one_person() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"},
                                               "company": {"type": "string"}, "phone": {"type": "string"}}}
    for seed in range(20):
        made = RealisticValues(random.Random(seed)).value(schema, "contact")
        assert made["email"].split("@")[0] == ".".join(slug(p, ".") for p in (made["name"].split()[0], made["name"].split()[-1]))


def test_values_are_deterministic_per_rng() -> None:
    spec = ENTITIES[("email", "message")]
    assert record_values("message", spec.fields, random.Random(7)) == record_values("message", spec.fields, random.Random(7))
    assert record_values("message", spec.fields, random.Random(7)) != record_values("message", spec.fields, random.Random(8))


def test_the_session_keeps_a_persons_name_and_email() -> None:
    engine, session = SchemaEngine(CARDS, list(TOOLS.values())), SessionLog(seed=3)
    first = engine.respond_sync(TOOLS["mail/search_contacts"], {"query": ""}, session)
    session.record("mail/search_contacts", {"query": ""}, first)
    contact = (first.structured_content or {})["contacts"][0]
    again = engine.respond_sync(TOOLS["mail/get_contact"], {"contact_id": contact["contact_id"]}, session)
    got = (again.structured_content or {}).get("contact", again.structured_content) or {}
    assert (got["name"], got["email"]) == (contact["name"], contact["email"])


def test_an_answer_echoes_the_asked_value_the_world_does_not_hold() -> None:
    engine, session = SchemaEngine(CARDS, list(TOOLS.values())), SessionLog(seed=0)
    args = {"city": "Madrid", "check_in": "2026-03-10", "check_out": "2026-03-12"}
    assert (engine.respond_sync(TOOLS["travel/search_hotels"], args, session).structured_content or {})["city"] == "Madrid"


# --- the compiled check agrees with jsonschema ---------------------------------------------------------
def _variants(value: Any, rng: random.Random) -> list[Any]:
    """The value and some broken copies: a field dropped, retyped, nulled, stretched."""
    out = [value, None, 3, "x", [], {}]
    if isinstance(value, dict) and value:
        for key in list(value)[:4]:
            for bad in (None, 7, 1.5, "", "z" * 300, True, [1], {"a": 1}):
                changed = copy.deepcopy(value)
                changed[key] = bad
                out.append(changed)
            dropped = copy.deepcopy(value)
            dropped.pop(key)
            out.append(dropped)
        out.append({**value, "unexpected": rng.random()})
    return out


@pytest.mark.parametrize("side", ["input_schema", "output_schema"])
def test_compiled_checks_agree_with_jsonschema_on_every_tool(side: str) -> None:
    rng, compared = random.Random(0), 0
    for spec in TOOLS.values():
        schema = getattr(spec, side)
        if not schema:
            continue
        check = compile_schema(schema)
        reference = jsonschema.validators.validator_for(schema)(schema)
        for value in _variants(RealisticValues(rng).value(inline_refs(schema)), rng):
            expected = reference.is_valid(value)
            if check is not None:
                assert check(value) == expected, (spec.id, value)
                compared += 1
            assert (validation_error(schema, value) is None) == expected, (spec.id, value)
            assert conforms(schema, value) == expected, (spec.id, value)
    assert compared > 1000


def test_compiled_checks_follow_jsonschemas_edge_rules() -> None:
    cases = [({"type": "integer"}, 1.0, True), ({"type": "integer"}, True, False), ({"enum": [1]}, True, False),
             ({"const": 1}, 1.0, True), ({"minimum": 2}, "a", True), ({"type": "number", "minimum": 2}, 1, False), ({"maxLength": 2}, "abc", False),
             ({"pattern": "^a"}, "ba", False), ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 2, False),
             ({"$defs": {"n": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/n"}}}, {"a": 1}, False)]
    for schema, value, valid in cases:
        check = compile_schema(schema)
        assert check is not None and check(value) is valid, schema
        assert jsonschema.validators.validator_for(schema)(schema).is_valid(value) is valid
    assert compile_schema({"uniqueItems": True}) is None and compile_schema({"not": {}}) is None


@pytest.mark.parametrize("field", ["created", "modified", "last_updated", "published", "expires"])
def test_a_bare_timestamp_name_is_a_moment_not_a_word(field: str) -> None:
    """A token list's `created: "enjoy"` read as made up at once: a field named for when it happened is a time."""
    made = value_for_schema({"type": "string"}, random.Random(3), field=field)
    assert isinstance(made, str) and datetime.fromisoformat(made)


@pytest.mark.parametrize(("field", "pattern"), [("start_date", r"^\d{4}-\d{2}-\d{2}$"), ("homepage_url", r"^https://"),
                                                ("commit_sha", r"^[0-9a-f]{40}$"), ("name", r"^[a-z]+$")])
def test_a_card_string_field_takes_what_its_name_says(field: str, pattern: str) -> None:
    """A project's `start_date: "guess"` read as made up; a bare `name` stays a word (no person's name)."""
    assert re.match(pattern, str(value_for_type("string", random.Random(5), field=field)))
