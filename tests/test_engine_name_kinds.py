"""Kinds a server's tool names name that its card lacks (issue 34, `engine/cards/kinds.py`): `list_charges`
lists charges and `get_customer(id)` reads a customer, so the server's world holds those kinds, with the
fields the tools' answers show, and the engine files the tools under them instead of the card's first
kind. The service is written for the test: a small booking service on the service_bookings card."""

from __future__ import annotations

from typing import Any

import pytest

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import CategoryCard, load_cards
from cworld.engine.cards.kinds import answer_fields, name_kinds, named_kind, server_prefix, singular_kind
from cworld.engine.rules import RulesEngine
from cworld.engine.world.base import World
from cworld.engine.world.build import generated_world
from cworld.engine.world.named import named_kinds, thin_kinds
from cworld.environment import Environment

SERVER = "salon-desk"
CHARGES_OUT = {"type": "object", "properties": {"charges": {"type": "array", "items": {"$ref": "#/$defs/Charge"}}},
               "$defs": {"Charge": {"type": "object", "properties": {
                   "id": {"type": "string"}, "description": {"type": "string"}, "amount": {"type": "number"},
                   "paid": {"type": "boolean"}, "created": {"type": "string", "format": "date-time"},
                   "trashed": {"type": "boolean"}, "api_token": {"type": "string"}, "lines": {"type": "array"}}}}}


def tool(name: str, props: dict[str, Any], required: list[str] | None = None,
         output: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(server=SERVER, name=name, description=name.replace("_", " "), output_schema=output,
                    input_schema={"type": "object", "properties": props, "required": required or list(props)})


TOOLS = [
    tool("list_charges", {"limit": {"type": "integer"}}, [], CHARGES_OUT),
    tool("get_customer", {"id": {"type": "integer"}}),
    tool("list_tasks", {"limit": {"type": "integer"}}, []),
    tool("list_names", {"limit": {"type": "integer"}}, []),
    tool("db-cluster-get", {"id": {"type": "string"}}),
    tool("db-cluster-get-user", {"id": {"type": "string"}, "user": {"type": "string"}}),
    tool("db-cluster-list-users", {"id": {"type": "string"}}),
    tool("list_statuses", {"limit": {"type": "integer"}}, []),
]


@pytest.fixture(scope="module")
def cards() -> dict[str, CategoryCard]:
    return load_cards(Environment.resolve().category_cards)


@pytest.fixture(scope="module")
def card(cards: dict[str, CategoryCard]) -> CategoryCard:
    return cards["service_bookings"]


def by_name(name: str) -> ToolSpec:
    return next(t for t in TOOLS if t.name == name)


def test_a_list_and_a_read_by_a_bare_id_name_their_kinds(card: CategoryCard) -> None:
    assert {e.name for e in card.entities}.isdisjoint({"charge", "customer"})  # the card lacks both
    assert named_kind(by_name("list_charges"), card, None) == "charge"
    assert named_kind(by_name("get_customer"), card, None) == "customer"


def test_no_kind_for_a_synonym_of_a_card_kind_a_generic_word_or_a_singular_list(
        cards: dict[str, CategoryCard]) -> None:
    board = cards["task_board"]  # holds cards: a task board's `tasks` are its cards
    assert named_kind(by_name("list_tasks"), board, None) is None
    assert named_kind(by_name("list_names"), board, None) is None
    singular = tool("list_profit_and_loss", {"limit": {"type": "integer"}}, [])
    assert named_kind(singular, board, None) is None  # a report, not a list of records
    assert singular_kind("buses") == "bus" and singular_kind("statuses") == "status"


def test_a_bare_id_of_a_parent_names_no_kind_of_its_own(card: CategoryCard) -> None:
    kinds = name_kinds(card, TOOLS)
    assert "cluster" in kinds  # db-cluster-get(id) reads a cluster
    assert "user" not in kinds  # db-cluster-get-user(id, user) and db-cluster-list-users(id) take the cluster's id


def test_the_prefix_most_tool_names_start_with_is_no_noun() -> None:
    tools = [tool(name, {"id": {"type": "string"}}) for name in ("boond_absences_get", "boond_expenses_get", "boond_get")]
    assert server_prefix(tools) == "boond"
    assert server_prefix(tools[:2]) is None  # too few tools to tell
    assert [named_kind(t, CategoryCard.model_validate(_EMPTY), "boond") for t in tools] == ["absence", "expense", None]


_EMPTY: dict[str, Any] = {"name": "empty", "title": "Empty", "description": "no kinds", "entities": []}


def test_a_lists_item_properties_are_its_kinds_fields_without_ids_secrets_or_guard_flags() -> None:
    fields = answer_fields(by_name("list_charges"), many=True)
    assert fields == {"description": "text", "amount": "float", "paid": "bool", "created": "datetime"}


def test_the_world_holds_the_named_kinds_and_the_engine_files_the_tools_under_them(
        cards: dict[str, CategoryCard], card: CategoryCard) -> None:
    kinds = {k.name: k for k in named_kinds(card, TOOLS)}
    assert kinds["customer"].id_format == "{n}"  # `get_customer(id: integer)` takes numbers
    assert "amount" in kinds["charge"].fields and "name" in kinds["charge"].fields  # a person names a record
    world = generated_world(SERVER, card, 0, size=12, tools=TOOLS)
    assert "charge" not in thin_kinds(world) and "customer" in thin_kinds(world)  # the answers show no customer
    engine = RulesEngine(cards, TOOLS, world=World(seed=0, now="2026-08-01T09:00:00Z", servers={SERVER: world}))
    rule, origin = engine.rule_for(by_name("list_charges"))
    assert origin == "inferred" and rule is not None and rule.list_ is not None
    assert rule.list_.from_ == world.kinds["charge"]  # not the card's first kind
    read, _ = engine.rule_for(by_name("get_customer"))
    assert read is not None and any(c.find == "target" and c.in_ == world.kinds["customer"] for c in read.check)


PIPELINE_TOOLS = [
    tool("list_pipelines", {"organizationId": {"type": "string"}}),
    tool("get_organization", {"organizationId": {"type": "string"}}),
    tool("get_pipeline", {"organizationId": {"type": "string"}, "pipelineId": {"type": "string"}}),
]


def test_a_kind_listed_under_another_holds_a_reference_to_it_and_the_list_shows_its_records(
        cards: dict[str, CategoryCard]) -> None:
    card = cards["devops"]
    kinds = {k.name: k for k in named_kinds(card, PIPELINE_TOOLS)}
    assert kinds["pipeline"].fields.get("organization_id") == "id"  # each pipeline is some organization's
    assert "pipeline_id" not in kinds["organization"].fields  # an organization is under nothing
    world = generated_world(SERVER, card, 0, size=12, tools=PIPELINE_TOOLS)
    assert "pipeline" in thin_kinds(world)  # a reference is no field to decide on
    pipelines = world.collection("pipeline") or {}
    organizations = world.collection("organization") or {}
    assert all(str(p["organization_id"]) in organizations for p in pipelines.values())
    engine = RulesEngine(cards, PIPELINE_TOOLS, world=World(seed=0, now="2026-08-01T09:00:00Z",
                                                            servers={SERVER: world}))
    owner = str(next(iter(pipelines.values()))["organization_id"])
    from cworld.engine import SessionLog

    answer = engine.respond_sync(PIPELINE_TOOLS[0], {"organizationId": owner}, SessionLog(seed=0))
    listed = answer.structured_content or {}
    items = next(v for v in listed.values() if isinstance(v, list))
    assert items and all(str(i.get("organization_id")) == owner for i in items)


def test_a_kind_keyed_by_its_name_takes_its_names_from_its_vocabulary(cards: dict[str, CategoryCard]) -> None:
    world = generated_world("gcs", cards["cloud_infrastructure"], 3, size=30)
    names = set(world.collection("bucket") or {})
    vocabulary = set(cards["cloud_infrastructure"].entity("bucket").vocabulary)  # type: ignore[union-attr]
    assert len(names & vocabulary) >= 15  # 'analytics-exports', not the lorem word 'job'
    assert generated_world("gcs", cards["cloud_infrastructure"], 3, size=30).collection("bucket") == \
        world.collection("bucket")  # the same seed names them alike


def test_a_filter_whose_value_is_all_lists_every_record(cards: dict[str, CategoryCard]) -> None:
    from cworld.engine import SessionLog

    devices = tool("list_devices", {"platform": {"type": "string", "enum": ["all", "android", "ios"],
                                                 "default": "all"}}, [])
    card = cards["devices"]
    world = generated_world(SERVER, card, 0, size=12, tools=[devices])
    engine = RulesEngine(cards, [devices], world=World(seed=0, now="2026-08-01T09:00:00Z", servers={SERVER: world}))

    def listed(args: dict[str, Any]) -> list[Any]:
        answer = engine.respond_sync(devices, args, SessionLog(seed=0)).structured_content or {}
        return next(v for v in answer.values() if isinstance(v, list))

    every = listed({"platform": "all"})  # a device farm lists every device, not those of a platform 'all'
    assert len(every) == 12
    assert 0 < len(listed({"platform": "ios"})) < 12
