"""Shop app: messy seeded cart and wallet, login -> token -> checkout chain, stock limits, coupons, honest pages,
order cancel/return rules, and business errors that change nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sandbox_results import err, ok

from cworld.sandbox.apps.shop import ShopApp
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import SandboxServer, build_server

SEED = 7


@pytest.fixture
def shop() -> SandboxServer:
    return build_server(SandboxSession(seed=SEED, apps=[ShopApp]), "shop")


def login(shop: SandboxServer) -> str:
    account = shop.session.state["shop"]["account"]
    return ok(shop.call_tool_sync("login", {"email": account["email"], "password": account["password"]}))["token"]


def clean_cart(shop: SandboxServer) -> None:
    cart = ok(shop.call_tool_sync("view_cart", {}))
    for line in cart["items"]:
        if line["problem"]:
            ok(shop.call_tool_sync("remove_cart_item", {"cart_item_id": line["cart_item_id"]}))
    ok(shop.call_tool_sync("remove_coupon", {}))


def cards(shop: SandboxServer, token: str) -> tuple[str, str]:
    """(expired default card, valid card)."""
    methods = ok(shop.call_tool_sync("list_payment_methods", {"token": token}))["payment_methods"]
    expired = next(m["payment_method_id"] for m in methods if m["expired"])
    valid = next(m["payment_method_id"] for m in methods if not m["expired"])
    return expired, valid


def test_seeded_state_is_messy(shop: SandboxServer) -> None:
    cart = ok(shop.call_tool_sync("view_cart", {}))
    assert len(cart["items"]) == 2 and not cart["ready_for_checkout"]
    assert any("out of stock" in (line["problem"] or "") for line in cart["items"])
    assert cart["coupon"] and any("expired" in p for p in cart["problems"])
    token = login(shop)
    methods = ok(shop.call_tool_sync("list_payment_methods", {"token": token}))["payment_methods"]
    assert [m["expired"] for m in methods if m["is_default"]] == [True], "the default card has expired"
    statuses = {c["status"] for c in ok(shop.call_tool_sync("list_coupons", {"token": token}))["coupons"]}
    assert statuses == {"active", "expired", "used"}
    orders = ok(shop.call_tool_sync("list_orders", {"token": token}))["orders"]
    assert {o["status"] for o in orders} == {"processing", "shipped", "delivered"}


def test_checkout_fails_until_each_prerequisite_is_met(shop: SandboxServer) -> None:
    address = next(iter(shop.session.state["shop"]["addresses"]))
    err(shop.call_tool_sync("checkout", {"token": "guess", "address_id": address, "payment_method_id": "pm_0001"}),
        "auth")
    token = login(shop)
    expired, valid = cards(shop, token)
    text = err(shop.call_tool_sync("checkout", {"token": token, "address_id": address, "payment_method_id": expired}),
               "conflict")
    assert "expired" in text and "list_payment_methods" in text
    text = err(shop.call_tool_sync("checkout", {"token": token, "address_id": address, "payment_method_id": valid}),
               "conflict")
    assert "out of stock" in text and "remove_coupon" in text
    err(shop.call_tool_sync("checkout", {"token": token, "address_id": "addr_9999", "payment_method_id": valid}),
        "not_found")
    clean_cart(shop)
    line = ok(shop.call_tool_sync("view_cart", {}))["items"][0]
    stock_before = shop.session.state["shop"]["catalog"][line["product_id"]]["stock"]
    order = ok(shop.call_tool_sync("checkout", {"token": token, "address_id": address, "payment_method_id": valid}))
    assert order["status"] == "processing" and order["total"] > 0
    # the adapter swaps in a restored copy after a failed call: always read state through the session
    assert shop.session.state["shop"]["catalog"][line["product_id"]]["stock"] == stock_before - line["quantity"]
    assert ok(shop.call_tool_sync("view_cart", {}))["items"] == []
    assert "add_to_cart" in err(shop.call_tool_sync(
        "checkout", {"token": token, "address_id": address, "payment_method_id": valid}), "precondition")


def test_a_new_address_is_usable_at_checkout(shop: SandboxServer) -> None:
    token = login(shop)
    _, valid = cards(shop, token)
    clean_cart(shop)
    added = ok(shop.call_tool_sync("add_address", {
        "token": token, "label": "office", "recipient": "Front desk", "street": "1 Quay St", "city": "Dublin",
        "postcode": "D02", "country": "Ireland", "make_default": True}))
    addresses = ok(shop.call_tool_sync("list_addresses", {"token": token}))["addresses"]
    assert [a["address_id"] for a in addresses if a["is_default"]] == [added["address_id"]]
    order = ok(shop.call_tool_sync("checkout", {"token": token, "address_id": added["address_id"],
                                                "payment_method_id": valid}))
    assert order["address_id"] == added["address_id"]


def test_token_expires_by_the_virtual_clock(shop: SandboxServer) -> None:
    token = login(shop)
    ok(shop.call_tool_sync("list_orders", {"token": token}))
    shop.session.clock.advance(timedelta(minutes=31).total_seconds())
    text = err(shop.call_tool_sync("list_orders", {"token": token}), "auth")
    assert "expired" in text and "login" in text
    ok(shop.call_tool_sync("list_orders", {"token": login(shop)}))
    err(shop.call_tool_sync("login", {"email": shop.session.state["shop"]["account"]["email"], "password": "x"}),
        "auth")


def test_stock_and_per_order_limits(shop: SandboxServer) -> None:
    catalog = shop.session.state["shop"]["catalog"]
    sold_out = next(p for p, v in catalog.items() if v["stock"] == 0)
    assert "out of stock" in err(shop.call_tool_sync("add_to_cart", {"product_id": sold_out}), "limit")
    low = next(p for p, v in catalog.items() if v["stock"] == 2)
    err(shop.call_tool_sync("add_to_cart", {"product_id": low, "quantity": 3}), "limit")
    ok(shop.call_tool_sync("add_to_cart", {"product_id": low, "quantity": 1}))
    cart = ok(shop.call_tool_sync("add_to_cart", {"product_id": f" {low.lower()}", "quantity": 1}))
    assert [line["quantity"] for line in cart["items"] if line["product_id"] == low] == [2], "same product merges"
    err(shop.call_tool_sync("add_to_cart", {"product_id": low}), "limit")
    capped = next(p for p, v in catalog.items() if v["stock"] > v["max_per_order"] and p != low)
    err(shop.call_tool_sync("add_to_cart", {"product_id": capped, "quantity": catalog[capped]["max_per_order"] + 1}),
        "limit")
    assert "search_products" in err(shop.call_tool_sync("get_product", {"product_id": "Blue kettle"}), "not_found")


def test_coupon_rules(shop: SandboxServer) -> None:
    coupons = shop.session.state["shop"]["coupons"]
    expired = next(c for c, v in coupons.items() if v["percent_off"] == 15)
    err(shop.call_tool_sync("apply_coupon", {"code": expired}), "conflict")
    err(shop.call_tool_sync("apply_coupon", {"code": "FIRSTORDER"}), "conflict")
    err(shop.call_tool_sync("apply_coupon", {"code": "NOPE"}), "not_found")
    clean_cart(shop)
    active = next(c for c, v in coupons.items() if v["percent_off"] == 10)
    catalog = shop.session.state["shop"]["catalog"]
    pricey = max((p for p, v in catalog.items() if v["stock"] > 2), key=lambda p: catalog[p]["price"])
    ok(shop.call_tool_sync("add_to_cart", {"product_id": pricey}))
    cart = ok(shop.call_tool_sync("apply_coupon", {"code": active.lower()}))
    assert cart["coupon"] == active and cart["discount"] == round(cart["subtotal"] * 0.10, 2)
    assert cart["total"] == round(cart["subtotal"] - cart["discount"] + cart["shipping"], 2)


def test_search_pages_are_honest(shop: SandboxServer) -> None:
    seen: list[str] = []
    page, total = 1, None
    while True:
        result = ok(shop.call_tool_sync("search_products", {"page": page, "page_size": 7, "sort": "price_asc"}))
        total = result["total"]
        seen += [p["product_id"] for p in result["products"]]
        if not result["has_more"]:
            break
        page += 1
    assert len(seen) == len(set(seen)) == total == len(shop.session.state["shop"]["catalog"])
    prices = [shop.session.state["shop"]["catalog"][p]["price"] for p in seen]
    assert prices == sorted(prices)
    category = ok(shop.call_tool_sync("list_categories", {}))["categories"][0]
    hits = ok(shop.call_tool_sync("search_products", {"category": category["category"], "page_size": 50}))
    assert hits["total"] == category["products"]
    assert "list_categories" in err(shop.call_tool_sync("search_products", {"category": "gadgets"}), "not_found")


ORDER_KEYS = {"price_asc": lambda pid, p: (p["price"], pid), "price_desc": lambda pid, p: (-p["price"], pid),
              "rating": lambda pid, p: (-p["rating"], pid), "relevance": lambda pid, p: (-p["rating"] / 10, pid)}


def all_products(shop: SandboxServer, arguments: dict[str, Any]) -> list[str]:
    seen, page = [], 1
    while True:
        answer = ok(shop.call_tool_sync("search_products", {**arguments, "page": page, "page_size": 9}))
        seen += [p["product_id"] for p in answer["products"]]
        if not answer["has_more"]:
            assert answer["total"] == len(seen)
            return seen
        page += 1


@pytest.mark.parametrize("sort", sorted(ORDER_KEYS))
def test_a_search_without_words_pages_the_documented_order(shop: SandboxServer, sort: str) -> None:
    """Read off sorted indexes per category and stock, a search without words answers what filtering and
    sorting the whole catalog gives, ties (cloned prices and ratings) by product id."""
    catalog = shop.session.state["shop"]["catalog"]  # grown before any call, so the indexes are built over it
    for n, product in enumerate(list(catalog.values())):
        catalog[f"zz_{n:03d}"] = {**product, "id": f"zz_{n:03d}", "stock": n % 3}
        product["stock"] = 0 if n % 4 == 0 else product["stock"]
    prices = sorted(p["price"] for p in catalog.values())
    category = next(iter(catalog.values()))["category"]
    for arguments in ({}, {"in_stock_only": True}, {"category": category},
                      {"category": category, "in_stock_only": True},
                      {"min_price": prices[5], "max_price": prices[-5]}, {"max_price": prices[len(prices) // 2]}):
        wanted = [pid for pid, p in catalog.items() if arguments.get("category", p["category"]) == p["category"]
                  and (not arguments.get("in_stock_only") or p["stock"] > 0)
                  and p["price"] >= arguments.get("min_price", 0) and p["price"] <= arguments.get("max_price", 1e9)]
        assert all_products(shop, {**arguments, "sort": sort}) == sorted(wanted, key=lambda pid: ORDER_KEYS[sort](
            pid, catalog[pid])), arguments


def test_cancel_and_return_rules(shop: SandboxServer) -> None:
    token = login(shop)
    orders = {o["status"]: o["order_id"] for o in
              reversed(ok(shop.call_tool_sync("list_orders", {"token": token}))["orders"])}
    processing = ok(shop.call_tool_sync("get_order", {"token": token, "order_id": orders["processing"]}))
    cancelled = ok(shop.call_tool_sync("cancel_order", {"token": token, "order_id": orders["processing"]}))
    assert cancelled["status"] == "cancelled" and cancelled["refunded"] == processing["total"]
    assert ok(shop.call_tool_sync("cancel_order", {"token": token, "order_id": orders["processing"]})) == cancelled
    assert "request_return" in err(shop.call_tool_sync(
        "cancel_order", {"token": token, "order_id": orders["shipped"]}), "conflict")
    delivered = [o for o in ok(shop.call_tool_sync("list_orders", {"token": token, "status": "delivered"}))["orders"]]
    recent, old = delivered[0]["order_id"], delivered[-1]["order_id"]
    old_item = ok(shop.call_tool_sync("get_order", {"token": token, "order_id": old}))["items"][0]
    assert "window" in err(shop.call_tool_sync("request_return", {
        "token": token, "order_id": old, "product_id": old_item["product_id"], "quantity": 1, "reason": "late"}),
        "conflict")
    item = ok(shop.call_tool_sync("get_order", {"token": token, "order_id": recent}))["items"][0]
    args = {"token": token, "order_id": recent, "product_id": item["product_id"], "quantity": 1, "reason": "broken"}
    ret = ok(shop.call_tool_sync("request_return", args))
    assert ret["refund"] == item["unit_price"] and ret["status"] == "approved"
    err(shop.call_tool_sync("request_return", args), "limit")


def test_business_errors_change_nothing(shop: SandboxServer) -> None:
    token = login(shop)
    address = next(iter(shop.session.state["shop"]["addresses"]))
    before = shop.session.snapshot()
    failing = [
        ("checkout", {"token": token, "address_id": address, "payment_method_id": cards(shop, token)[1]}),
        ("add_to_cart", {"product_id": "SKU-0000"}),
        ("apply_coupon", {"code": "FIRSTORDER"}),
        ("cancel_order", {"token": token, "order_id": "ord_0003"}),
        ("update_cart_item", {"cart_item_id": "ci_0001", "quantity": 0}),
    ]
    for name, args in failing:
        assert shop.call_tool_sync(name, args).is_error, name
    assert shop.session.snapshot() == before


def test_same_seed_same_state_other_seed_other_entities() -> None:
    one, two = SandboxSession(SEED, apps=[ShopApp]), SandboxSession(SEED, apps=[ShopApp])
    assert one.snapshot() == two.snapshot()
    other = SandboxSession(SEED + 1, apps=[ShopApp]).snapshot()["shop"]
    assert set(other["catalog"]) != set(one.snapshot()["shop"]["catalog"])
    assert other["account"] != one.snapshot()["shop"]["account"]


def test_prerequisites_name_real_tools() -> None:
    names = {meta.name for meta, _ in ShopApp.tool_methods()}
    assert len(names) >= 12
    for edge in ShopApp.prerequisites:
        assert {edge.before, edge.after} <= names, edge
    assert any(e.before == "login" and e.after == "checkout" and e.via == "token" for e in ShopApp.prerequisites)


def test_catalog_knowledge_base_is_large_and_unique() -> None:
    from cworld.sandbox.framework import kb

    products = kb.load("products")
    assert len(products) >= 120 and len({p["sku"] for p in products}) == len(products)
    assert len({p["category"] for p in products}) >= 10


def test_checkout_states_the_shipping_it_charges() -> None:
    """The shipping policy is public (a buyer within a budget needs it): the words are the app's constants."""
    from cworld.sandbox.apps.shop.state import FREE_SHIPPING_FROM, SHIPPING_FEE
    from cworld.sandbox.framework.binding import app_bindings
    said = next(b.tool.description or "" for b in app_bindings(ShopApp) if b.meta.name == "checkout")
    assert f"Shipping costs {SHIPPING_FEE:.2f}, free from {FREE_SHIPPING_FROM:.2f}" in said
