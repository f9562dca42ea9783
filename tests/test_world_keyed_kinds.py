"""Kinds a service names by a key its caller chooses (issue 33): eBay's inventory locations by
`merchantLocationKey`. The world holds such a kind once a tool's name names it; a create keeps the record under
the key given (a key taken is refused), a get or delete needs one that is there; a credential (`api_key`) is no
kind."""

from __future__ import annotations

from engine_helpers import rules_caller, tool_spec

from cworld.engine.cards.card import load_cards
from cworld.engine.world.build import generated_world
from cworld.engine.world.named import named_kinds
from cworld.environment import Environment

STR = {"type": "string"}
KEY = {"merchantLocationKey": STR}
TOOLS = [tool_spec("seller", "create_inventory_location", {**KEY, "name": STR}),
         tool_spec("seller", "get_inventory_location", KEY),
         tool_spec("seller", "delete_inventory_location", KEY),
         tool_spec("seller", "get_weather", {"city": STR, "api_key": STR})]


def test_a_location_is_kept_under_the_key_its_caller_gives() -> None:
    card = load_cards(Environment.resolve().category_cards)["ecommerce"]
    assert "merchant_location" in {k.name for k in named_kinds(card, TOOLS)}
    assert "api" not in {k.name for k in named_kinds(card, TOOLS)}
    world = generated_world("seller", card, seed=4, size=3, tools=TOOLS)
    call = rules_caller("seller", "ecommerce", world.state, world.kinds, TOOLS, named_kinds=world.named_kinds)
    assert call("get_inventory_location", merchantLocationKey="warehouse-7").error_class == "not_found"
    assert not call("create_inventory_location", merchantLocationKey="warehouse-7", name="Leeds DC").is_error
    assert "Leeds DC" in call("get_inventory_location", merchantLocationKey="warehouse-7").text
    taken = call("create_inventory_location", merchantLocationKey="warehouse-7", name="Again")
    assert taken.error_class in ("conflict", "business"), taken.text
    assert not call("delete_inventory_location", merchantLocationKey="warehouse-7").is_error
    assert call("get_inventory_location", merchantLocationKey="warehouse-7").error_class == "not_found"


def test_an_argument_naming_a_kind_by_itself_or_its_id_names_that_kind() -> None:
    """Alpaca's `symbol_or_id` names a symbol (its world had a kind "symbol or", records "Symbol or 4022")."""
    card = load_cards(Environment.resolve().category_cards)["finance"]
    tools = [tool_spec("broker", "get_asset", {"symbol_or_id": STR})]
    names = {k.name for k in named_kinds(card, tools)} | {e.name for e in card.entities}
    assert "symbol_or" not in names and "symbol" in names


def test_name_or_id_names_no_kind_called_name() -> None:
    """`get_deployment(nameOrId)` names a deployment by either: no kind "name" is held, so a create's `name`
    is the new record's, never a reference to a "name" that must exist."""
    card = load_cards(Environment.resolve().category_cards)["cloud_infrastructure"]
    tools = [tool_spec("host", "get_deployment", {"nameOrId": STR}),
             tool_spec("host", "create_project", {"name": STR, "framework": STR}, ["name"]),
             tool_spec("host", "list_projects", {}, [])]
    assert "name" not in {k.name for k in named_kinds(card, tools)}
    world = generated_world("host", card, seed=1, size=3, tools=tools)
    call = rules_caller("host", "cloud_infrastructure", world.state, world.kinds, tools, named_kinds=world.named_kinds)
    made = call("create_project", name="checkout-web", framework="nextjs")
    assert not made.is_error, made.text
    assert "checkout-web" in call("list_projects").text
