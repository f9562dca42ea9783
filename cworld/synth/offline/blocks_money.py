"""Money blocks: buy something within budget (cleaning up a messy cart), pay someone with a confirmed transfer,
review a stock and watch it, convert an amount into another currency."""

from __future__ import annotations

from typing import Any

from cworld.sandbox.framework import kb, world
from cworld.synth.offline.composer import Block, BlockFailed, Composer, Handle
from cworld.synth.offline.phrases import money, round_up

SHOP, FIN = "shop/", "finance/"


# --- shop -----------------------------------------------------------------------------------------------
def _product(c: Composer) -> tuple[dict[str, Any], str, float, str]:
    """(chosen product, its category, the price cap, the rule in words) for a real trade-off in the catalog."""
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
        rule = f"Pick the best-rated one that costs at most {money(cap)}; a cheaper, lower-rated one won't do."
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
    found = c.step("products", SHOP + "search_products", {"category": category, "max_price": cap, "in_stock_only": True,
                                                          "sort": "rating"}, f"find {label} products in stock under the cap")
    ref = found.ref(f"products[product_id={chosen['product_id']}].product_id")
    if c.wants(SHOP + "get_product"):
        c.step("product", SHOP + "get_product", {"product_id": ref}, f"check the chosen {label} product's stock and limits")
    c.subgoal("checkout", f"Buy the {chosen['name']}", after=["pick_product"])
    cart = c.step("cart", SHOP + "view_cart", {}, "see what is already sitting in the cart before buying")
    for line in cart.value["items"]:
        c.step("drop_line", SHOP + "remove_cart_item", {"cart_item_id": cart.ref(f"items[product_id={line['product_id']}].cart_item_id")},
               f"clear the old {line['name']} out of the cart so only the new purchase is bought")
    added = c.step("add", SHOP + "add_to_cart", {"product_id": ref, "quantity": 1}, f"put the {chosen['name']} in the cart")
    token = c.step("login", SHOP + "login", {"email": account["email"], "password": account["password"]},
                   "sign in to the store account, which checkout needs").ref("token")
    coupon = _coupon(c, token, added)
    addresses = c.step("addresses", SHOP + "list_addresses", {"token": token}, "get the saved delivery address for checkout")
    cards = c.step("cards", SHOP + "list_payment_methods", {"token": token}, "find a card that has not expired")
    order = c.step("order", SHOP + "checkout", {"token": token, "address_id": addresses.ref("addresses[is_default=true].address_id"),
                                                "payment_method_id": cards.ref("payment_methods[expired=false].payment_method_id")},
                   f"place the order for the {chosen['name']}")
    limit = round_up(order.value["total"] * 1.1, 10)
    c.decide("product", "trade_off", rule, {"kind": "argument_equals", "tool": SHOP + "add_to_cart",
                                            "argument": "product_id", "value": chosen["product_id"]}, ["spend"])
    c.decide("spend", "budget", f"All in, with shipping, the order must come to less than {money(limit)}.",
             {"kind": "budget", "tool": SHOP + "checkout", "field": "total", "value": limit}, ["product"])
    expired = sorted(pid for pid, m in c.state["shop"]["payment_methods"].items() if _expired(c, m))
    if expired:
        c.decide("card", "exclusion", "Don't try the card that has expired.",
                 {"kind": "argument_excludes", "tool": SHOP + "checkout", "argument": "payment_method_id", "value": expired})
    c.say(f"I want to buy something from the {label} section of the online store. My cart has old things in it: "
          f"clear them out so only the new item is ordered. My store login is {account['email']} with password "
          f"{account['password']}.",
          f"Order me one {label} item from the online store (log in as {account['email']}, password "
          f"{account['password']}); only the new item should be in the order, so empty the cart of anything else.")
    if coupon:
        c.say("Use the best coupon I have that applies.", "If one of my coupons applies, use the one that saves most.")
    c.hint(f"Ordered {chosen['name']} (order {order.ref('order_id')}) for {order.ref('total')}.")
    c.report("the order number", order.ref("order_id"))
    c.report("the order total", order.ref("total"))
    if coupon:
        c.report("the coupon used", coupon)
    c.facts.update(topic=f"the {chosen['name']} order", amount=(order.ref("total"), order.value["total"], "the order"),
                   summary=f"I ordered the {chosen['name']} for {order.ref('total')} (order {order.ref('order_id')}).",
                   when=(c.today.isoformat()))


def _expired(c: Composer, method: dict[str, Any]) -> bool:
    year, month = (int(x) for x in str(method.get("expires", "9999-12")).split("-")[:2])
    return (year, month) < (c.today.year, c.today.month)


def _coupon(c: Composer, token: str, cart: Handle) -> str | None:
    """Drop an expired coupon; apply the active wallet coupon that saves most on this cart (if any)."""
    if cart.value.get("coupon"):
        c.step("drop_coupon", SHOP + "remove_coupon", {}, "take the expired coupon off the cart")
    wallet = c.step("coupons", SHOP + "list_coupons", {"token": token}, "see which coupons in my wallet could apply")
    subtotal = cart.value["subtotal"]
    category = {item["product_id"]: item for item in cart.value["items"]}
    best, saving = None, 0.0
    for coupon in wallet.value["coupons"]:
        if coupon["status"] != "active" or subtotal < coupon["min_subtotal"]:
            continue
        if coupon["category"] and not any(c.state["shop"]["catalog"][p]["category"] == coupon["category"] for p in category):
            continue
        value = max(coupon["amount_off"], subtotal * coupon["percent_off"] / 100)
        if value > saving:
            best, saving = coupon["code"], value
    if best is None:
        return None
    c.step("coupon", SHOP + "apply_coupon", {"code": best}, "apply the coupon that saves the most on this order")
    return best


# --- bank ---------------------------------------------------------------------------------------------------
def _bank_login(c: Composer) -> str:
    if "bank_token" in c.facts:
        return c.facts["bank_token"]
    customer = c.state["finance"]["customer"]
    token = c.step("bank_login", FIN + "login", {"customer_id": customer["customer_id"], "pin": customer["pin"]},
                   "sign in to the bank, which every account tool needs").ref("token")
    c.facts["bank_token"] = token
    return token


def transfer(c: Composer) -> None:
    customer = c.state["finance"]["customer"]
    payees = c.state["finance"].get("payees", {})
    cast = {p["name"] for p in world.cast(c.seed)["colleagues"]}
    people = sorted(pid for pid, p in payees.items() if p["name"] in cast) or sorted(payees)
    payee = payees[c.pick(people)]
    amount = round(c.rng.uniform(40, 400), 2)
    c.subgoal("pay", f"Pay {payee['name']} {money(amount)}")
    token = _bank_login(c)
    accounts = c.step("accounts", FIN + "list_accounts", {"token": token}, "see which account has the money available")
    checking = [a for a in accounts.value["accounts"] if a["kind"] == "checking" and a["available"] >= amount]
    if not checking:
        raise BlockFailed("not enough available in checking")
    listed = c.step("payees", FIN + "list_payees", {"token": token}, f"get {payee['name']}'s payee id")
    memo = c.rng.choice(["offsite deposit", "team lunch", "conference ticket", "shared taxi", "gift collection"])
    sent = c.step("transfer", FIN + "create_transfer", {
        "token": token, "from_account_id": accounts.ref("accounts[kind=checking].account_id"),
        "to_id": listed.ref(f"payees[name={payee['name']}].payee_id"), "amount": amount, "memo": memo},
        f"set up the {money(amount)} transfer to {payee['name']}")
    codes = c.step("codes", FIN + "read_authenticator", {}, "read the one-time code that confirms the transfer")
    c.step("confirm", FIN + "confirm_transfer", {"token": token, "transfer_id": sent.ref("transfer_id"),
                                                 "code": codes.ref("codes.0.code")}, "confirm the transfer so the money moves")
    savings = [a["account_id"] for a in accounts.value["accounts"] if a["kind"] != "checking"]
    c.decide("from_checking", "exclusion", "Pay it from my checking account; don't touch savings or the brokerage cash.",
             {"kind": "argument_excludes", "tool": FIN + "create_transfer", "argument": "from_account_id",
              "value": savings}, ["pay_cap"])
    c.decide("pay_cap", "budget", f"Send exactly {money(amount)}, not a cent more.",
             {"kind": "budget", "tool": FIN + "create_transfer", "field": "amount", "value": amount}, ["from_checking"])
    c.say(f"Pay {payee['name']} {money(amount)} for the {memo} (bank login: customer {customer['customer_id']}, "
          f"PIN {customer['pin']}), and make sure the transfer is confirmed.",
          f"Send {money(amount)} to {payee['name']} for the {memo}; my bank customer id is {customer['customer_id']} "
          f"and the PIN is {customer['pin']}. It only counts once it's confirmed.")
    c.hint(f"Transfer {sent.ref('transfer_id')} of {money(amount)} to {payee['name']} is confirmed.")
    c.report("the transfer's reference", sent.ref("transfer_id"))
    c.facts.update(topic=f"the {memo} payment", amount=(sent.ref("amount"), amount, "the payment"), when=c.today.isoformat(),
                   summary=f"I sent {payee['name']} {money(amount)} for the {memo} (transfer {sent.ref('transfer_id')}).")


def stock(c: Composer) -> None:
    watchlists = c.state["finance"]["watchlists"]
    held = {s for w in watchlists.values() for s in w["symbols"]}
    tickers = [t for t in kb.load("tickers") if t["symbol"] not in held]
    c.rng.shuffle(tickers)
    listed = next((t for t in tickers if c.peek(FIN + "get_quote", symbol=t["symbol"]) is not None), None)
    if listed is None:
        raise BlockFailed("no listed symbol to research")
    symbol, company = listed["symbol"], listed["company"]
    days = c.rng.choice([5, 10, 20])
    watch = c.pick(sorted(watchlists))
    c.subgoal("research", f"Check how {company} has done")
    found = c.step("symbol", FIN + "find_symbol", {"query": company}, f"look up {company}'s ticker symbol")
    ticker = found.ref(f"matches[symbol={symbol}].symbol")
    quote = c.step("quote", FIN + "get_quote", {"symbol": ticker}, f"get {company}'s price today")
    history = c.step("history", FIN + "get_price_history", {"symbol": ticker, "days": days},
                     f"get {company}'s closing prices over the last {days} trading days")
    change = c.step("change", "math/percentage_change", {"old": history.ref("closes.0.close"),
                                                        "new": history.ref("closes.-1.close")},
                    f"work out {company}'s percentage change over the period")
    c.subgoal("watch", f"Add {company} to the watchlist", after=["research"])
    token = _bank_login(c)
    c.step("watchlists", FIN + "list_watchlists", {"token": token}, "find the watchlist to add the symbol to")
    c.step("watch_add", FIN + "add_to_watchlist", {"token": token, "watchlist_id": watch, "symbol": ticker},
           f"add {company} to my '{watchlists[watch]['name']}' watchlist")
    customer = c.state["finance"]["customer"]
    c.say(f"Look up how {company} has moved over the last {days} trading days, and add it to my "
          f"'{watchlists[watch]['name']}' watchlist (bank customer {customer['customer_id']}, PIN {customer['pin']}).",
          f"I'm curious about {company}: how much has it changed over the past {days} trading days? Put it on my "
          f"'{watchlists[watch]['name']}' watchlist too; customer id {customer['customer_id']}, PIN {customer['pin']}.")
    c.hint(f"{company} ({ticker}) trades at {quote.ref('price')}; change over {days} days: {change.ref('percent')}%.")
    c.report("the ticker symbol", symbol)
    c.report("the percentage change", change.ref("percent"))
    c.report("today's price", quote.ref("price"))
    c.facts.update(topic=f"{company} stock", when=c.today.isoformat(),
                   summary=f"{company} ({symbol}) is at {quote.ref('price')}, {change.ref('percent')}% over {days} "
                           "trading days; I added it to the watchlist.")


def currency(c: Composer) -> None:
    ref, value, label = c.facts["amount"]
    target = c.rng.choice(["EUR", "GBP", "JPY", "CAD", "CHF"])
    c.subgoal("convert", f"Convert {label} into {target}")
    converted = c.step("convert", "units/convert_currency", {"amount": ref, "from_currency": "USD", "to_currency": target},
                       f"convert the cost of {label} from US dollars into {target}")
    c.say(f"Also tell me what {label} comes to in {target} (prices are in US dollars).",
          f"I'll need the cost of {label} in {target} as well; everything is priced in US dollars.")
    c.hint(f"{label.capitalize()} in {target}: {converted.ref('amount')}.")
    c.report(f"the amount in {target}", converted.ref("amount"))
    c.facts["summary"] = f"{c.facts['summary']} That is {converted.ref('amount')} {target}."


BLOCKS = [
    Block("purchase", True, frozenset(SHOP + n for n in ("search_products", "get_product", "view_cart", "remove_cart_item",
                                                         "add_to_cart", "login", "remove_coupon", "list_coupons",
                                                         "apply_coupon", "list_addresses", "list_payment_methods",
                                                         "checkout")), purchase,
          gives=frozenset({"topic", "summary", "when", "amount"})),
    Block("transfer", True, frozenset(FIN + n for n in ("login", "list_accounts", "list_payees", "create_transfer",
                                                        "read_authenticator", "confirm_transfer")), transfer,
          gives=frozenset({"topic", "summary", "when", "amount"})),
    Block("stock", True, frozenset([*(FIN + n for n in ("find_symbol", "get_quote", "get_price_history", "login",
                                                        "list_watchlists", "add_to_watchlist")),
                                    "math/percentage_change"]), stock, gives=frozenset({"topic", "summary", "when"})),
    Block("currency", False, frozenset({"units/convert_currency"}), currency, needs=frozenset({"amount"})),
]
