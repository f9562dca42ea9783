"""A store's policies as its records show them: what a new order is charged for shipping.

Online stores charge a flat shipping fee below an order value from which they ship free (Shopify's and
WooCommerce's free-shipping threshold). No card can know one store's fee or threshold, but a store states
them ("Shipping costs 4.99, free from 50.00") and its past orders show them: the fee the smaller orders paid,
and the smallest order that shipped free. A family rule reads them here
(`shipping_fee(coll('order'), amount, tool_description)`): what the store states first, else what its orders
were charged.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

#: The fields an order keeps its amounts in, as stores name them.
_SUBTOTAL = ("subtotal", "items_total", "amount")
_SHIPPING = ("shipping", "shipping_fee", "shipping_cost", "delivery_fee")


#: "shipping costs 4.99", "delivery fee of $6", "shipping is 4.99": the flat fee a store states.
_STATED_FEE = re.compile(r"\b(?:shipping|delivery)\s+(?:fee\s+)?(?:is|costs?|of)?\s*\$?(\d+(?:\.\d{1,2})?)", re.I)
#: "free from 50.00", "free shipping on orders over $35", "free delivery of 40 or more": where it ships free.
_STATED_FREE = re.compile(
    r"\bfree\s+(?:shipping\s+|delivery\s+)?(?:(?:on|for)\s+orders\s+)?(from|over|above|of)\s+\$?(\d+(?:\.\d{1,2})?)", re.I)


def shipping_fee(orders: Any, amount: Any, said: Any = "") -> float:
    """The shipping a new order of `amount` (after its discount) is charged: as the store states it in `said`
    (its tool's description), else as its orders show it (free from the smallest order value that shipped free,
    else the fee most of the charged orders paid); 0.0 where neither shows a fee."""
    stated = stated_shipping(str(said or ""), amount)
    if stated is not None:
        return stated
    rows = [row for row in (_amounts(o) for o in (orders.values() if isinstance(orders, dict) else [])) if row]
    paid = Counter(fee for _, fee in rows if fee > 0)
    if not paid or not isinstance(amount, (int, float)):
        return 0.0
    free_from = min((value for value, fee in rows if fee == 0), default=None)
    return 0.0 if free_from is not None and amount >= free_from else paid.most_common(1)[0][0]


def _amounts(order: Any) -> tuple[float, float] | None:
    """(the order's value after its discount, its shipping), None where it shows no such amounts."""
    if not isinstance(order, dict):
        return None
    subtotal = next((order[f] for f in _SUBTOTAL if isinstance(order.get(f), (int, float))), None)
    fee = next((order[f] for f in _SHIPPING if isinstance(order.get(f), (int, float))), None)
    if subtotal is None or fee is None:
        return None
    discount = order["discount"] if isinstance(order.get("discount"), (int, float)) else 0
    return round(float(subtotal) - float(discount), 2), float(fee)


def stated_shipping(said: str, amount: Any) -> float | None:
    """The shipping an order of `amount` pays by the store's own words; None where they state no fee."""
    fee = _STATED_FEE.search(said)
    if fee is None or not isinstance(amount, (int, float)):
        return None
    free = _STATED_FREE.search(said)
    if free is not None:
        word, threshold = free.group(1).lower(), float(free.group(2))
        if amount > threshold or (amount == threshold and word in ("from", "of")):
            return 0.0
    return float(fee.group(1))
