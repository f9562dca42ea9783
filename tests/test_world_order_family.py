"""An order made from the cart (the e-commerce card): what online stores do, tried on a small store written for
these tests (its own names for its collections, its own order states, its own shipping policy), not our shop."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec
from cworld.engine.rules.policies import shipping_fee

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
    tool = ToolSpec(server="corner-store", name="place_order", description="Buy what the basket holds.",
                    input_schema={"type": "object", "required": ["card_id"], "properties": {"card_id": STR}},
                    output_schema=ORDER)
    kinds = {"product": "products", "cart_item": "basket", "order": "orders", "payment_method": "cards"}
    return rules_caller("corner-store", "ecommerce", state, kinds, [tool])


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
