"""Shop: an online store with a catalog, a guest cart, coupons, an account (login, addresses, cards) and orders.

Browsing and the cart need no login; anything tied to the account (addresses, cards, coupons in the wallet,
checkout, orders, returns) needs the token `login` returns, which expires after 30 virtual minutes.
"""

from __future__ import annotations

from cworld.sandbox.apps._shared.records import produces
from cworld.sandbox.apps.shop.state import seed_state
from cworld.sandbox.apps.shop.tools import ShopTools
from cworld.sandbox.apps.shop.tools_orders import OrderTools
from cworld.sandbox.framework import Prerequisite

_ACCOUNT_TOOLS = ("list_coupons", "list_addresses", "add_address", "delete_address", "list_payment_methods",
                  "checkout", "list_orders", "get_order", "cancel_order", "request_return")


def _edges() -> tuple[Prerequisite, ...]:
    token = [Prerequisite("login", t, "produces", "token", "account tools need a live session token")
             for t in _ACCOUNT_TOOLS]
    flows = [
        ("list_categories", "search_products", "category"), ("search_products", "get_product", "product_id"),
        ("search_products", "add_to_cart", "product_id"), ("view_cart", "update_cart_item", "cart_item_id"),
        ("view_cart", "remove_cart_item", "cart_item_id"), ("list_coupons", "apply_coupon", "code"),
        ("list_addresses", "checkout", "address_id"), ("add_address", "checkout", "address_id"),
        ("list_addresses", "delete_address", "address_id"),
        ("list_payment_methods", "checkout", "payment_method_id"), ("checkout", "cancel_order", "order_id"),
        ("list_orders", "get_order", "order_id"), ("list_orders", "cancel_order", "order_id"),
        ("list_orders", "request_return", "order_id"), ("get_order", "request_return", "product_id"),
    ]
    produced = produces(flows)
    return (*token, *produced, Prerequisite("add_to_cart", "checkout", "requires", None, "checkout buys the cart"))


class ShopApp(ShopTools, OrderTools):
    name = "shop"
    volatile_paths = ("auth**",)
    title = "Shop"
    description = "Online store: search the catalog, fill a cart, apply coupons, check out, track, cancel and return orders."
    category = "shopping"
    entity_kinds = {"catalog": "product", "orders": "order", "cart": "cart_item", "addresses": "address", "payment_methods": "payment_method",
                    "coupons": "coupon"}
    prerequisites = _edges()

    initial_state = seed_state
