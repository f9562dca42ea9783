"""An order made from the cart (the e-commerce card): what online stores do, tried on a small store written for
these tests (its own names for its collections, its own order states, its own shipping policy), not our shop."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec
from cworld.engine.rules.policies import shipping_fee, stated_shipping

STR: dict[str, Any] = {"type": "string"}
ORDER: dict[str, Any] = {"type": "object", "properties": {
    "order_id": STR, "status": {"type": "string", "description": "received, packed, shipped or delivered"},
    "items": {"type": "array", "items": {"type": "object"}}, "subtotal": {"type": "number"},
    "shipping": {"type": "number"}, "total": {"type": "number"}}}


def _store(basket: dict[str, Any]) -> Any:
    """A store whose past orders paid 3.50 shipping below 60.00 and none above, each line keeping what was
    refunded of it; the basket holds `basket`."""
    orders = {
        "o_0001": {"status": "delivered", "items": [{"product_id": "P1", "quantity": 1, "unit_price": 20.0,
                                                    "refunded_qty": 0}], "subtotal": 20.0, "shipping": 3.5, "total": 23.5},
        "o_0002": {"status": "delivered", "items": [{"product_id": "P2", "quantity": 2, "unit_price": 45.0,
                                                    "refunded_qty": 1}], "subtotal": 90.0, "shipping": 0.0, "total": 90.0},
        "o_0003": {"status": "shipped", "items": [{"product_id": "P2", "quantity": 1, "unit_price": 45.0,
                                                  "refunded_qty": 0}], "subtotal": 60.0, "shipping": 0.0, "total": 60.0},
    }
    state = {"products": {"P1": {"name": "Mug", "price": 20.0, "stock": 5}, "P2": {"name": "Lamp", "price": 45.0, "stock": 3}},
             "basket": basket, "orders": orders,
             "cards": {"c_1": {"brand": "Visa", "last4": "4242", "expires": "2029-01"}}}
    for order in orders.values():
        order["amount_refunded"] = 0.0
    orders["o_0004"] = {"status": "received", "items": [{"product_id": "P2", "quantity": 1, "unit_price": 45.0,
                                                          "refunded_qty": 0}], "subtotal": 45.0, "shipping": 3.5,
                        "total": 48.5, "amount_refunded": 0.0}
    orders["o_0001"]["delivered_at"] = "2026-07-25T10:00:00Z"  # a week before the clock's 1 August
    orders["o_0002"]["delivered_at"] = "2026-07-01T10:00:00Z"
    state["returns"] = {}
    state["products"]["P3"] = {"name": "Rug", "price": 70.0, "stock": 0, "category": "home"}
    for product in ("P1", "P2"):
        state["products"][product]["category"] = "kitchen" if product == "P1" else "home"
    tools = [_tool("place_order", "Buy what the basket holds.", {"card_id": STR}, ORDER),
             _tool("return_item", "Send back units of a delivered item within 14 days of delivery.",
                   {"order_id": STR, "product_id": STR, "quantity": {"type": "integer"}, "reason": STR}),
             _tool("find_products", "Products by category.", {"category": STR}),
             _tool("cancel_order", "Cancel an order before it ships.", {"order_id": STR})]
    kinds = {"product": "products", "cart_item": "basket", "order": "orders", "payment_method": "cards"}
    return rules_caller("corner-store", "ecommerce", state, kinds, tools)


def _tool(name: str, description: str, props: dict[str, Any], answer: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(server="corner-store", name=name, description=description, output_schema=answer,
                    input_schema={"type": "object", "required": list(props), "properties": props})


def _changed(call: Any, name: str) -> dict[str, Any]:
    """The records of a collection the session changed, as the engine hands them to the grader."""
    return call.engine.end_state(call.log)["_world"]["corner-store"][name]["after"]


def test_an_order_below_the_stores_free_shipping_pays_its_fee_in_the_first_state_it_lists() -> None:
    call = _store({"b_1": {"product_id": "P1", "quantity": 2}})
    made = call("place_order", card_id="c_1")
    assert made.meta.get("rule") == "family", made.text
    order = made.structured_content or {}
    assert order["subtotal"] == 40.0 and order["shipping"] == 3.5 and order["total"] == 43.5
    assert order["status"] == "received"
    assert order["items"] == [{"product_id": "P1", "name": "Mug", "quantity": 2, "unit_price": 20.0, "refunded_qty": 0}]


def test_an_order_from_the_free_shipping_value_ships_free() -> None:
    call = _store({"b_1": {"product_id": "P2", "quantity": 2}})
    order = call("place_order", card_id="c_1").structured_content or {}
    assert order["shipping"] == 0.0 and order["total"] == 90.0


def test_shipping_is_read_off_the_stores_past_orders() -> None:
    orders = {"a": {"subtotal": 30.0, "shipping": 4.99}, "b": {"subtotal": 55.0, "discount": 10.0, "shipping": 4.99},
              "c": {"subtotal": 80.0, "shipping": 0.0}, "d": {"subtotal": 12.0, "shipping": 6.0}}
    assert shipping_fee(orders, 45.0) == 4.99  # the fee most charged orders paid
    assert shipping_fee(orders, 80.0) == 0.0 and shipping_fee(orders, 120.0) == 0.0
    assert shipping_fee({"c": {"subtotal": 80.0, "shipping": 0.0}}, 5.0) == 0.0  # never charged: nothing to copy
    assert shipping_fee({}, 5.0) == 0.0 and shipping_fee(None, 5.0) == 0.0


def test_shipping_the_store_states_comes_before_its_orders() -> None:
    said = "Buy the cart. Shipping costs 4.99, free from 50.00 after discounts."
    assert stated_shipping(said, 26.99) == 4.99 and stated_shipping(said, 50.0) == 0.0
    assert stated_shipping("Delivery fee of $6; free delivery on orders over $35.", 35.0) == 6.0  # over: not at 35
    assert stated_shipping("Delivery fee of $6; free delivery on orders over $35.", 35.01) == 0.0
    assert stated_shipping("Place the order.", 10.0) is None  # states nothing: the orders decide
    free_orders = {"c": {"subtotal": 80.0, "shipping": 0.0}}
    assert shipping_fee(free_orders, 26.99, said) == 4.99 and shipping_fee(free_orders, 26.99, "") == 0.0


def test_a_return_is_of_a_delivered_item_within_the_stated_window_for_the_price_paid() -> None:
    call = _store({})
    made = call("return_item", order_id="o_0001", product_id="P1", quantity=1, reason="chipped")
    assert made.meta.get("rule") == "family", made.text
    assert (made.structured_content or {})["refund"] == 20.0
    order = _changed(call, "orders")["o_0001"]
    assert order["items"][0]["refunded_qty"] == 1 and order["amount_refunded"] == 20.0  # in the store's own fields
    (filed,) = _changed(call, "returns").values()
    assert filed["order_id"] == "o_0001" and filed["quantity"] == 1 and filed["refund"] == 20.0
    assert call("return_item", order_id="o_0003", product_id="P2", quantity=1, reason="x").error_class == "business"
    late = call("return_item", order_id="o_0002", product_id="P2", quantity=1, reason="x")  # delivered 31 days ago
    assert late.error_class == "business" and "14 days" in late.text
    assert call("return_item", order_id="o_0001", product_id="P2", quantity=1, reason="x").error_class == "not_found"
    assert call("return_item", order_id="o_0001", product_id="P1", quantity=1, reason="x").error_class == "business"


def test_a_search_by_a_category_the_catalog_does_not_list_is_not_found() -> None:
    call = _store({})
    assert not call("find_products", category="kitchen").is_error
    missing = call("find_products", category="garden")
    assert missing.error_class == "not_found" and "home" in missing.text


def test_an_order_cancelled_before_it_ships_is_refunded_and_restocked() -> None:
    call = _store({})
    refused = call("cancel_order", order_id="o_0003")
    assert refused.error_class == "business", refused.text  # shipped
    assert not call("cancel_order", order_id="o_0004").is_error
    assert _changed(call, "orders")["o_0004"]["amount_refunded"] == 48.5
    assert _changed(call, "products")["P2"]["stock"] == 4  # 3 + the one unit back
