"""A collection kept inside a value the service holds once (a cart's lines, beside its coupon) is named by the
world's layout (`cart_item: cart.lines`) and the card's rules run on it as on any collection: found, added,
changed and removed in the session's copy, the seed's world untouched, and the cart shown with its lines.
The service is written for the test (its cart keeps `lines` and a `promo`, not the shop app's names)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import rules_caller

from cworld.data_model import ToolSpec
from cworld.engine.cards.card import load_cards
from cworld.engine.world.base import ServerWorld
from cworld.engine.world.build import load_records_file
from cworld.engine.world.layout import at, resolved
from cworld.environment import Environment
from cworld.errors import UsageError

STR = {"type": "string"}
INT = {"type": "integer"}


def tool(name: str, props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(server="corner-shop", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)})


TOOLS = [tool("get_cart", {}), tool("add_cart_item", {"product_id": STR, "quantity": INT}),
         tool("update_cart_item", {"cart_item_id": STR, "quantity": INT}),
         tool("remove_cart_item", {"cart_item_id": STR})]


def shop_state() -> dict[str, Any]:
    return {"catalog": {"SKU-1": {"name": "Kettle", "price": 40.0}, "SKU-2": {"name": "Mug", "price": 8.5}},
            "cart": {"lines": {"ci_0001": {"product_id": "SKU-1", "quantity": 1}}, "promo": "SPRING"}}


def test_the_layout_names_the_collection_inside_a_value_held_once() -> None:
    state = shop_state()
    world = ServerWorld("corner-shop", state, kinds={"cart_item": "cart", "product": "catalog"}, card="ecommerce")
    assert world.kinds["cart_item"] == "cart.lines" and world.kinds["product"] == "catalog"
    assert world.collection("cart_item") == state["cart"]["lines"]
    assert at(state, "cart.promo") == "SPRING" and at(state, "cart.nothing.here") is None
    # a value held once with no single map of records inside stays as it is
    assert resolved({"settings": {"theme": "dark"}}, {"setting": "settings"}) == {"setting": "settings"}


def test_cart_lines_are_found_added_changed_and_removed_as_any_collection() -> None:
    state = shop_state()
    seed_copy = json.loads(json.dumps(state))
    call = rules_caller("corner-shop", "ecommerce", state, {"cart_item": "cart", "product": "catalog"}, TOOLS)
    shown = json.loads(call("get_cart").text)
    assert [line["cart_item_id"] for line in shown["lines"]] == ["ci_0001"] and shown["promo"] == "SPRING"
    assert call("remove_cart_item", cart_item_id="ci_9999").error_class == "not_found"
    assert not call("update_cart_item", cart_item_id="ci_0001", quantity=3).is_error
    added = call("add_cart_item", product_id="SKU-2", quantity=2)
    assert not added.is_error
    assert call("add_cart_item", product_id="SKU-404", quantity=1).error_class == "not_found"
    lines = {line["cart_item_id"]: line for line in json.loads(call("get_cart").text)["lines"]}
    assert lines["ci_0001"]["quantity"] == 3 and len(lines) == 2
    new_id = next(k for k in lines if k != "ci_0001")
    assert lines[new_id]["product_id"] == "SKU-2"
    assert not call("remove_cart_item", cart_item_id="ci_0001").is_error
    after = json.loads(call("get_cart").text)
    assert [line["cart_item_id"] for line in after["lines"]] == [new_id] and after["promo"] == "SPRING"
    assert state == seed_copy  # the seed's world never changes: the session wrote its own copy


def test_a_loaded_world_names_its_nested_collection_in_layout(tmp_path: Path) -> None:
    card = load_cards(Environment.resolve().category_cards)["ecommerce"]
    path = tmp_path / "shop.yaml"
    path.write_text("products: [{id: SKU-1, name: Kettle, price: 40.0}]\n"
                    "state: {cart: {lines: [{id: ci_0001, product_id: SKU-1, quantity: 2}], promo: null}}\n"
                    "layout: {cart_item: cart.lines}\n", encoding="utf-8")
    world = load_records_file("corner-shop", path, card)
    assert world.kinds["cart_item"] == "cart.lines"
    assert world.collection("cart_item") == {"ci_0001": {"id": "ci_0001", "product_id": "SKU-1", "quantity": 2}}
    path.write_text("state: {cart: {lines: [{id: ci_0001, quantity: two}]}}\nlayout: {cart_item: cart.lines}\n",
                    encoding="utf-8")
    with pytest.raises(UsageError, match="quantity"):
        load_records_file("corner-shop", path, card)
    path.write_text("state: {cart: {}}\nlayout: {cart_item: basket.lines}\n", encoding="utf-8")
    with pytest.raises(UsageError, match="names no object"):
        load_records_file("corner-shop", path, card)


def test_checkout_buys_the_cart_and_adding_a_product_again_raises_its_line() -> None:
    state = {"catalog": {"SKU-1": {"name": "Kettle", "price": 40.0, "stock": 3},
                         "SKU-2": {"name": "Mug", "price": 8.5, "stock": 0}},
             "cart": {"lines": {}, "coupon": None},
             "coupons": {"TENOFF": {"code": "TENOFF", "percent_off": 10, "min_subtotal": 50.0, "used": False,
                                    "expires_at": "2026-12-31T00:00:00Z"}},
             "orders": {},
             "payment_methods": {"pm_1": {"brand": "Visa", "last4": "4242", "expires": "2026-03"},
                                 "pm_2": {"brand": "Visa", "last4": "1881", "expires": "2029-01"}}}
    kinds = {"cart_item": "cart", "product": "catalog", "coupon": "coupons", "order": "orders",
             "payment_method": "payment_methods"}
    tools = [*TOOLS, tool("apply_coupon", {"code": STR}), tool("checkout", {"payment_method_id": STR}),
             tool("get_product", {"product_id": STR})]
    call = rules_caller("corner-shop", "ecommerce", state, kinds, tools)
    assert call("checkout", payment_method_id="pm_2").error_class == "business"  # the cart is empty
    assert call("add_cart_item", product_id="SKU-2", quantity=1).error_class == "business"  # none in stock
    assert not call("add_cart_item", product_id="SKU-1", quantity=1).is_error
    assert call("apply_coupon", code="TENOFF").error_class == "business"  # 40.00 is under its 50.00 minimum
    assert not call("add_cart_item", product_id="SKU-1", quantity=1).is_error
    assert [line["quantity"] for line in json.loads(call("get_cart").text)["lines"]] == [2]  # one line, raised
    assert call("add_cart_item", product_id="SKU-1", quantity=2).error_class == "business"  # 4 > 3 in stock
    assert not call("apply_coupon", code="TENOFF").is_error
    assert call("checkout", payment_method_id="pm_1").error_class == "business"  # expired in 2026-03
    order = json.loads(call("checkout", payment_method_id="pm_2").text)
    assert order["items"] == [{"product_id": "SKU-1", "name": "Kettle", "quantity": 2, "unit_price": 40.0}]
    assert (order["subtotal"], order["discount"], order["total"]) == (80.0, 8.0, 72.0)
    cart = json.loads(call("get_cart").text)
    assert cart["lines"] == [] and cart["coupon"] is None
    assert json.loads(call("get_product", product_id="SKU-1").text)["stock"] == 1
