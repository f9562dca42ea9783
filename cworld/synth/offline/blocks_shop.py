"""Shop block: buy one product by a rating/price trade-off within budget, cleaning up a messy cart
(stale lines,
an expired coupon, an expired card) on the way."""

from __future__ import annotations

from typing import Any

from cworld.synth.offline.composer import Block, BlockFailed, Composer, Handle
from cworld.synth.offline.phrases import money, round_up

SHOP = "shop/"


def _product(c: Composer) -> tuple[dict[str, Any], str, float, str]:
    """(chosen product, its category, the price cap, the rule in words) for a real trade-off in the
    catalog.
    """
    catalog = c.state["shop"]["catalog"]
    categories: dict[str, list[dict[str, Any]]] = {}
    for pid, p in catalog.items():
        if p["stock"] > 0:
            categories.setdefault(p["category"], []).append({"product_id": pid, **p})
    usable = sorted(k for k, v in categories.items() if len(v) >= 2)
    if not usable:
        raise BlockFailed("no category with two products in stock")
    category = c.pick(usable)
    items = sorted(categories[category], key=lambda p: (p["price"], p["product_id"]))
    cap = round_up(items[-2]["price"] + 0.01, 5) if len(items) > 2 else round_up(items[-1]["price"] + 0.01, 5)
    affordable = [p for p in items if p["price"] <= cap]
    if c.rng.random() < 0.5:
        chosen = max(affordable, key=lambda p: (p["rating"], -p["price"]))
        rule = (
            f"Pick the best-rated one that costs at most {money(cap)}; a cheaper, lower-rated one won't do."
        )
    else:
        good = [p for p in affordable if p["rating"] >= 4.0] or affordable
        chosen = min(good, key=lambda p: (p["price"], p["product_id"]))
        rule = f"Get the cheapest one rated 4.0 or higher, and no more than {money(cap)}."
    return chosen, category, cap, rule


def purchase(c: Composer) -> None:
    chosen, category, cap, rule = _product(c)
    account = c.state["shop"]["account"]
    label = category.replace("-", " and ")
    c.subgoal("pick_product", f"Choose the {label} product")
    found = c.step(
        "products",
        SHOP + "search_products",
        {"category": category, "max_price": cap, "in_stock_only": True, "sort": "rating"},
        f"find {label} products in stock under the cap",
    )
    ref = found.ref(f"products[product_id={chosen['product_id']}].product_id")
    if c.wants(SHOP + "get_product"):
        c.step(
            "product",
            SHOP + "get_product",
            {"product_id": ref},
            f"check the chosen {label} product's stock and limits",
        )
    c.subgoal("checkout", f"Buy the {chosen['name']}", after=["pick_product"])
    cart = c.step("cart", SHOP + "view_cart", {}, "see what is already sitting in the cart before buying")
    for line in cart.value["items"]:
        c.step(
            "drop_line",
            SHOP + "remove_cart_item",
            {"cart_item_id": cart.ref(f"items[product_id={line['product_id']}].cart_item_id")},
            f"clear the old {line['name']} out of the cart so only the new purchase is bought",
        )
    added = c.step(
        "add",
        SHOP + "add_to_cart",
        {"product_id": ref, "quantity": 1},
        f"put the {chosen['name']} in the cart",
    )
    token = c.step(
        "login",
        SHOP + "login",
        {"email": account["email"], "password": account["password"]},
        "sign in to the store account, which checkout needs",
    ).ref("token")
    coupon = _coupon(c, token, added)
    addresses = c.step(
        "addresses",
        SHOP + "list_addresses",
        {"token": token},
        "get the delivery address the store order ships to",
    )
    cards = c.step(
        "cards",
        SHOP + "list_payment_methods",
        {"token": token},
        "pick a card that still works for the store order",
    )
    order = c.step(
        "order",
        SHOP + "checkout",
        {
            "token": token,
            "address_id": addresses.ref("addresses[is_default=true].address_id"),
            "payment_method_id": cards.ref("payment_methods[expired=false].payment_method_id"),
        },
        f"place the order for the {chosen['name']}",
    )
    limit = round_up(order.value["total"] * 1.1, 10)
    c.decide(
        "product",
        "trade_off",
        rule,
        {
            "kind": "argument_equals",
            "tool": SHOP + "add_to_cart",
            "argument": "product_id",
            "value": chosen["product_id"],
        },
        ["spend"],
    )
    c.decide(
        "spend",
        "budget",
        f"All in, with shipping, the order must come to less than {money(limit)}.",
        {"kind": "budget", "tool": SHOP + "checkout", "field": "total", "value": limit},
        ["product"],
    )
    expired = sorted(pid for pid, m in c.state["shop"]["payment_methods"].items() if _expired(c, m))
    if expired:
        c.decide(
            "card",
            "exclusion",
            "Don't try the card that has expired.",
            {
                "kind": "argument_excludes",
                "tool": SHOP + "checkout",
                "argument": "payment_method_id",
                "value": expired,
            },
        )
    c.say(
        f"I want to buy something from the {label} section of the online store. My cart has old things in "
        "it: "
        f"clear them out so only the new item is ordered. My store login is {account['email']} with password "
        f"{account['password']}.",
        f"Order me one {label} item from the online store (log in as {account['email']}, password "
        f"{account['password']}); only the new item should be in the order, so empty the cart of anything "
        "else.",
    )
    if coupon:
        c.say(
            "Use the best coupon I have that applies.",
            "If one of my coupons applies, use the one that saves most.",
        )
    c.hint(f"Ordered {chosen['name']} (order {order.ref('order_id')}) for {order.ref('total')}.")
    c.report("the order number", order.ref("order_id"))
    c.report("the order total", order.ref("total"))
    if coupon:
        c.report("the coupon used", coupon)
    c.facts.update(
        topic=f"the {chosen['name']} order",
        amount=(order.ref("total"), order.value["total"], "the order"),
        summary=f"I ordered the {chosen['name']} for {order.ref('total')} (order {order.ref('order_id')}).",
        when=(c.today.isoformat()),
    )


def _expired(c: Composer, method: dict[str, Any]) -> bool:
    year, month = (int(x) for x in str(method.get("expires", "9999-12")).split("-")[:2])
    return (year, month) < (c.today.year, c.today.month)


def _coupon(c: Composer, token: str, cart: Handle) -> str | None:
    """Drop an expired coupon; apply the active wallet coupon that saves most on this cart (if any)."""
    if cart.value.get("coupon"):
        c.step("drop_coupon", SHOP + "remove_coupon", {}, "take the expired coupon off the cart")
    wallet = c.step(
        "coupons",
        SHOP + "list_coupons",
        {"token": token},
        "check whether a coupon in my wallet lowers the store order",
    )
    subtotal = cart.value["subtotal"]
    category = {item["product_id"]: item for item in cart.value["items"]}
    best, saving = None, 0.0
    for coupon in wallet.value["coupons"]:
        if coupon["status"] != "active" or subtotal < coupon["min_subtotal"]:
            continue
        if coupon["category"] and not any(
            c.state["shop"]["catalog"][p]["category"] == coupon["category"] for p in category
        ):
            continue
        value = max(coupon["amount_off"], subtotal * coupon["percent_off"] / 100)
        if value > saving:
            best, saving = coupon["code"], value
    if best is None:
        return None
    c.step(
        "coupon", SHOP + "apply_coupon", {"code": best}, "apply the coupon that saves the most on this order"
    )
    return best


BLOCKS = [
    Block(
        "purchase",
        True,
        frozenset(
            SHOP + n
            for n in (
                "search_products",
                "get_product",
                "view_cart",
                "remove_cart_item",
                "add_to_cart",
                "login",
                "remove_coupon",
                "list_coupons",
                "apply_coupon",
                "list_addresses",
                "list_payment_methods",
                "checkout",
            )
        ),
        purchase,
        gives=frozenset({"topic", "summary", "when", "amount"}),
    ),
]
