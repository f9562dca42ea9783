"""The shop's seeded start state and the pricing rules checkout and the cart view share.

The customer is the seeded world's "you" (`framework.world`), so the shop account matches the mailbox.
The start state is deliberately messy, as a real account is: the cart already holds an out-of-stock
item and an expired coupon, the default card has expired, and past orders sit in every status (one
still cancellable, one past its return window).
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

from cworld.sandbox.apps._shared.auth import require_token
from cworld.sandbox.apps._shared.records import lookup
from cworld.sandbox.apps._shared.values import later, money, parse_iso
from cworld.sandbox.framework import SandboxApp, kb, world

CATALOG_SIZE = 48
FREE_SHIPPING_FROM = 50.0
SHIPPING_FEE = 4.99
RETURN_WINDOW_DAYS = 30
WORDS = ("harbor", "maple", "falcon", "copper", "juniper", "orbit", "meadow", "summit", "willow", "quartz")


def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    me = world.cast(app.session.seed)["me"]
    street = kb.sample("profiles", rng, 1)[0]["street"]
    person = {"name": me["name"], "street": street, "city": me["city"], "country": me["country"],
              "postcode": f"{rng.randrange(10000, 99999)}"}
    products = kb.sample("products", rng, CATALOG_SIZE)
    catalog = {p["sku"]: _stocked(p, i, rng) for i, p in enumerate(products)}
    holder = me["name"]
    state: dict[str, Any] = {
        "account": {
            "customer_id": f"C{rng.randrange(100000, 999999)}",
            "name": holder,
            "email": me["email"],
            "password": f"{rng.choice(WORDS)}{rng.randrange(10, 99)}!",
        },
        "auth": {"token": None},
        "catalog": catalog,
        "coupons": _coupons(app.now, rng, products),
        "addresses": _addresses(app, person),
        "payment_methods": _cards(app, rng, holder),
        "orders": {},
        "returns": {},
    }
    state["orders"] = _past_orders(app, rng, products[6:], state)
    expired_code = next(c for c, v in state["coupons"].items() if coupon_status(v, app.now) == "expired")
    state["cart"] = {
        "items": {
            app.new_id("ci"): {"product_id": products[3]["sku"], "quantity": 1, "added_at": later(app.now, days=-9)},
            app.new_id("ci"): {"product_id": products[0]["sku"], "quantity": 1, "added_at": later(app.now, days=-4)},
        },
        "coupon": expired_code,
    }
    return state


def _stocked(p: dict[str, Any], index: int, rng: random.Random) -> dict[str, Any]:
    """The first two products are sold out and the third nearly so: stock limits show up in every seed."""
    stock = 0 if index < 2 else 2 if index == 2 else rng.randrange(3, 40)
    keep = ("name", "brand", "category", "price", "rating", "reviews", "description", "max_per_order")
    return {**{k: p[k] for k in keep}, "stock": stock}


def _coupons(now: datetime, rng: random.Random, products: list[dict[str, Any]]) -> dict[str, Any]:
    category = products[4]["category"]
    tag = category.split("-")[0].upper()
    expired = rng.choice(["SPRING15", "FLASH15", "WEEKEND15"])
    active = rng.choice(["SAVE10", "THANKYOU10", "LOYAL10"])
    return {
        expired: _coupon("15% off everything", 15, 0, 0, None, later(now, days=-rng.randrange(1, 9))),
        active: _coupon("10% off orders of 40.00 or more", 10, 0, 40, None, later(now, days=rng.randrange(7, 30))),
        f"{tag}5": _coupon(f"5.00 off {category} of 20.00 or more", 0, 5, 20, category, later(now, days=30)),
        "FIRSTORDER": _coupon("10.00 off your first order", 0, 10, 0, None, later(now, days=60), used=True),
    }


def _coupon(desc: str, pct: float, amount: float, minimum: float, category: str | None, expires: str,
            used: bool = False) -> dict[str, Any]:
    return {"description": desc, "percent_off": pct, "amount_off": amount, "min_subtotal": minimum,
            "category": category, "expires_at": expires, "used": used}


def _addresses(app: SandboxApp, person: dict[str, Any]) -> dict[str, Any]:
    home = {"label": "home", "recipient": person["name"], "street": person["street"], "city": person["city"],
            "postcode": person["postcode"], "country": person["country"], "is_default": True}
    return {app.new_id("addr"): home}


def _cards(app: SandboxApp, rng: random.Random, holder: str) -> dict[str, Any]:
    """Two cards; the default one expired last month, so checkout must name the other."""
    now = app.now
    last_month = f"{now.year - (now.month == 1)}-{(now.month - 2) % 12 + 1:02d}"
    brands = rng.sample(["Visa", "Mastercard", "Amex"], 2)
    return {
        app.new_id("pm"): {"brand": brands[0], "last4": f"{rng.randrange(10000):04d}", "expires": last_month,
                           "holder": holder, "is_default": True},
        app.new_id("pm"): {"brand": brands[1], "last4": f"{rng.randrange(10000):04d}",
                           "expires": f"{now.year + 2}-{rng.randrange(1, 13):02d}", "holder": holder,
                           "is_default": False},
    }


def _past_orders(app: SandboxApp, rng: random.Random, pool: list[dict[str, Any]], state: dict[str, Any]
                 ) -> dict[str, Any]:
    """Orders in each status: delivered recently, delivered long ago, shipped, still processing."""
    address_id = next(iter(state["addresses"]))
    card_id = list(state["payment_methods"])[1]
    plans = [("delivered", -40, -36), ("delivered", -12, -8), ("shipped", -2, None), ("processing", -0.1, None)]
    orders: dict[str, Any] = {}
    for n, (status, placed, delivered) in enumerate(plans):
        picks = pool[2 * n : 2 * n + rng.randrange(1, 3)]
        items = [{"product_id": p["sku"], "name": p["name"], "quantity": 1, "unit_price": p["price"],
                  "returned_quantity": 0} for p in picks]
        subtotal = money(sum(i["unit_price"] for i in items))
        shipping = 0.0 if subtotal >= FREE_SHIPPING_FROM else SHIPPING_FEE
        orders[app.new_id("ord")] = {
            "status": status, "placed_at": later(app.now, days=placed),
            "delivered_at": later(app.now, days=delivered) if delivered is not None else None,
            "items": items, "subtotal": subtotal, "discount": 0.0, "shipping": shipping,
            "total": money(subtotal + shipping), "coupon": None, "address_id": address_id,
            "payment_method_id": card_id, "refunded": 0.0,
        }
    return orders


# --- rules shared by the cart view and checkout ----------------------------------------------
def coupon_status(coupon: dict[str, Any], now: datetime) -> str:
    if coupon["used"]:
        return "used"
    return "expired" if parse_iso(coupon["expires_at"]) <= now else "active"


def card_expired(card: dict[str, Any], now: datetime) -> bool:
    """A card works through the last day of its expiry month."""
    year, month = (int(x) for x in card["expires"].split("-"))
    return (year, month) < (now.year, now.month)


def line_problem(product: dict[str, Any], quantity: int) -> str | None:
    if product["stock"] == 0:
        return f"{product['name']} is out of stock: remove it with remove_cart_item"
    if quantity > product["stock"]:
        return f"only {product['stock']} of {product['name']} in stock: lower the quantity with update_cart_item"
    if quantity > product["max_per_order"]:
        return f"at most {product['max_per_order']} of {product['name']} per order: lower the quantity"
    return None


def coupon_problem(state: dict[str, Any], code: str, now: datetime) -> str | None:
    """Why `code` cannot discount the cart as it is now, or None when it can."""
    coupon = state["coupons"].get(code)
    if coupon is None:
        return f"coupon {code} is not in your wallet: list_coupons shows the codes you have"
    status = coupon_status(coupon, now)
    if status == "expired":
        return f"coupon {code} expired at {coupon['expires_at']}: remove it with remove_coupon or apply another"
    if status == "used":
        return f"coupon {code} was already used: remove it with remove_coupon or apply another"
    eligible = eligible_subtotal(state, coupon)
    if eligible < coupon["min_subtotal"] or eligible == 0:
        scope = f" in {coupon['category']}" if coupon["category"] else ""
        return (f"coupon {code} needs {coupon['min_subtotal']:.2f}{scope} in the cart (has {eligible:.2f}): "
                "add items first")
    return None


def eligible_subtotal(state: dict[str, Any], coupon: dict[str, Any]) -> float:
    total = 0.0
    for item in state["cart"]["items"].values():
        product = state["catalog"][item["product_id"]]
        if coupon["category"] in (None, product["category"]):
            total += product["price"] * item["quantity"]
    return money(total)


def totals(state: dict[str, Any], now: datetime) -> dict[str, float]:
    """subtotal, discount, shipping and total of the cart as it stands (an unusable coupon gives 0 off)."""
    subtotal = money(sum(state["catalog"][i["product_id"]]["price"] * i["quantity"]
                         for i in state["cart"]["items"].values()))
    discount = 0.0
    code = state["cart"]["coupon"]
    if code and coupon_problem(state, code, now) is None:
        coupon = state["coupons"][code]
        discount = money(min(eligible_subtotal(state, coupon) * coupon["percent_off"] / 100 + coupon["amount_off"],
                             subtotal))
    after = money(subtotal - discount)
    shipping = 0.0 if after >= FREE_SHIPPING_FROM or subtotal == 0 else SHIPPING_FEE
    return {"subtotal": subtotal, "discount": discount, "shipping": shipping, "total": money(after + shipping)}


class ShopBase(SandboxApp):
    """The look-ups both shop tool modules need (the login token, saved addresses)."""

    def _auth(self, token: str) -> None:
        require_token(self, self.state["auth"], token, "login")

    def _address(self, address_id: str) -> dict[str, Any]:
        return lookup(self.state["addresses"], address_id, f"no saved address '{address_id}': list_addresses "
                      "shows ids; add_address saves a new one")
