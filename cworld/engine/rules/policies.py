"""A store's policies as its records show them: what a new order is charged for shipping.

Online stores charge a flat shipping fee below an order value from which they ship free (Shopify's and
WooCommerce's free-shipping threshold). No card can know one store's fee or threshold, but the store's past
orders show both: the fee the smaller orders paid, and the smallest order that shipped free. A family rule
reads them here (`shipping_fee(coll('order'), amount)`), so a new order is charged as the old ones were.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

#: The fields an order keeps its amounts in, as stores name them.
_SUBTOTAL = ("subtotal", "items_total", "amount")
_SHIPPING = ("shipping", "shipping_fee", "shipping_cost", "delivery_fee")


def shipping_fee(orders: Any, amount: Any) -> float:
    """The shipping a new order of `amount` (after its discount) is charged, as the store's orders show: free from
    the smallest order value that shipped free, else the fee most of the charged orders paid; 0.0 where no order
    was ever charged (or the store keeps no orders)."""
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
