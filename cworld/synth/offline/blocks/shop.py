"""Online-store block: buy one product by a rating/price trade-off within budget, cleaning up a messy cart
(stale lines, an expired coupon, an expired card) on the way."""

from __future__ import annotations

from typing import Any

from cworld.synth.offline.composer import BlockFailed, Composer, Handle, anchor, on_argument, tools
from cworld.synth.offline.phrases import money, round_up

APP = "shop"
SHOP = "shop/"


def _product(c: Composer) -> tuple[dict[str, Any], str, float, str]:
    """(chosen product, its category, the price cap, the rule's template) for a real trade-off in the
    catalog."""
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
        rule = "best_rated"
    else:
        good = [p for p in affordable if p["rating"] >= 4.0] or affordable
        chosen = min(good, key=lambda p: (p["price"], p["product_id"]))
        rule = "cheapest_good"
    return chosen, category, cap, rule


def purchase(c: Composer) -> None:
    chosen, category, cap, rule = _product(c)
    account = c.state["shop"]["account"]
    label, product = category.replace("-", c.text("purchase.category_joiner")), chosen["name"]
    c.subgoal("pick_product", label=label)
    wanted = {"category": category, "max_price": cap, "in_stock_only": True, "sort": "rating"}
    found = c.step("products", SHOP + "search_products", wanted, label=label)
    ref = found.ref(f"products[product_id={chosen['product_id']}].product_id")
    if c.wants(SHOP + "get_product"):
        c.step("product", SHOP + "get_product", {"product_id": ref}, label=label)
    c.subgoal("checkout", after=["pick_product"], product=product)
    cart = c.step("cart", SHOP + "view_cart", {})
    for line in cart.value["items"]:
        dropped = {"cart_item_id": cart.ref(f"items[product_id={line['product_id']}].cart_item_id")}
        c.step("drop_line", SHOP + "remove_cart_item", dropped, item=line["name"])
    added = c.step("add", SHOP + "add_to_cart", {"product_id": ref, "quantity": 1}, product=product)
    signed_in = {"email": account["email"], "password": account["password"]}
    token = c.step("login", SHOP + "login", signed_in).ref("token")
    coupon = _coupon(c, token, added)
    addresses = c.step("addresses", SHOP + "list_addresses", {"token": token})
    cards = c.step("cards", SHOP + "list_payment_methods", {"token": token})
    paid = {
        "token": token,
        "address_id": addresses.ref("addresses[is_default=true].address_id"),
        "payment_method_id": cards.ref("payment_methods[expired=false].payment_method_id"),
    }
    order = c.step("order", SHOP + "checkout", paid, product=product)
    limit = round_up(order.value["total"] * 1.1, 10)
    picked = on_argument("argument_equals", SHOP + "add_to_cart", "product_id", chosen["product_id"])
    c.decide("product", "trade_off", picked, ["spend"], rule=rule, cap=money(cap))
    total = {"kind": "budget", "tool": SHOP + "checkout", "field": "total", "value": limit}
    c.decide("spend", "budget", total, ["product"], limit=money(limit))
    expired = sorted(pid for pid, m in c.state["shop"]["payment_methods"].items() if _expired(c, m))
    if expired:
        card = {"kind": "argument_excludes", "tool": SHOP + "checkout", "argument": "payment_method_id"}
        c.decide("card", "exclusion", {**card, "value": expired})
    c.say(*c.variants("purchase.say", label=label, **signed_in))
    if coupon:
        c.say(*c.variants("purchase.coupon_say"))
    order_id, paid_total = order.ref("order_id"), order.ref("total")
    c.hint(c.text("purchase.hint", product=product, order=order_id, total=paid_total))
    c.report(c.text("purchase.reports.order"), order_id)
    c.report(c.text("purchase.reports.total"), paid_total)
    if coupon:
        c.report(c.text("purchase.reports.coupon"), coupon)
    c.facts.update(
        topic=c.text("purchase.topic", product=product, label=label),
        amount=(paid_total, order.value["total"], c.text("purchase.fact")),
        summary=c.text("purchase.summary", product=product, label=label, total=paid_total, order=order_id),
        when=(c.today.isoformat()),
    )


def _expired(c: Composer, method: dict[str, Any]) -> bool:
    year, month = (int(x) for x in str(method.get("expires", "9999-12")).split("-")[:2])
    return (year, month) < (c.today.year, c.today.month)


def _coupon(c: Composer, token: str, cart: Handle) -> str | None:
    """Drop an expired coupon; apply the active wallet coupon that saves most on this cart (if any)."""
    if cart.value.get("coupon"):
        c.step("drop_coupon", SHOP + "remove_coupon", {})
    wallet = c.step("coupons", SHOP + "list_coupons", {"token": token})
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
    c.step("coupon", SHOP + "apply_coupon", {"code": best})
    return best


BUYING = tools(
    SHOP,
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
BLOCKS = [anchor("purchase", APP, BUYING, purchase, gives="topic summary when amount")]
