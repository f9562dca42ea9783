"""Bank blocks: pay someone with a confirmed transfer; research a stock (with a calculator) and watch it."""

from __future__ import annotations

from cworld.sandbox.framework import kb, world
from cworld.synth.offline.composer import BlockFailed, Composer, anchor, tools
from cworld.synth.offline.people import involve, usable
from cworld.synth.offline.phrases import money

APP = "finance"
FIN = "finance/"


def _bank_login(c: Composer) -> str:
    if "bank_token" in c.facts:
        return c.facts["bank_token"]
    customer = c.state["finance"]["customer"]
    token = c.step(
        "bank_login", FIN + "login", {"customer_id": customer["customer_id"], "pin": customer["pin"]}
    ).ref("token")
    c.facts["bank_token"] = token
    return token


def transfer(c: Composer) -> None:
    customer = c.state["finance"]["customer"]
    payees = c.state["finance"].get("payees", {})
    cast = {p["name"] for p in world.cast(c.seed)["colleagues"]}
    people = sorted(pid for pid, p in payees.items() if p["name"] in cast and usable(c, p["name"]))
    payee = payees[c.pick(people or sorted(pid for pid, p in payees.items() if p["name"] not in cast))]
    involve(c, payee["name"])
    amount = round(c.rng.uniform(40, 400), 2)
    who, paid = payee["name"], money(amount)
    c.subgoal("pay", payee=who, amount=paid)
    token = _bank_login(c)
    accounts = c.step("accounts", FIN + "list_accounts", {"token": token})
    checking = [a for a in accounts.value["accounts"] if a["kind"] == "checking" and a["available"] >= amount]
    if not checking:
        raise BlockFailed("not enough available in checking")
    listed = c.step("payees", FIN + "list_payees", {"token": token}, payee=who)
    memo = c.rng.choice(c.variants("transfer.memos"))
    sent = c.step(
        "transfer",
        FIN + "create_transfer",
        {
            "token": token,
            "from_account_id": accounts.ref("accounts[kind=checking].account_id"),
            "to_id": listed.ref(f"payees[name={who}].payee_id"),
            "amount": amount,
            "memo": memo,
        },
        amount=paid,
        payee=who,
    )
    codes = c.step("codes", FIN + "read_authenticator", {})
    confirm = {"token": token, "transfer_id": sent.ref("transfer_id"), "code": codes.ref("codes.0.code")}
    c.step("confirm", FIN + "confirm_transfer", confirm)
    savings = [a["account_id"] for a in accounts.value["accounts"] if a["kind"] != "checking"]
    excluded = {"kind": "argument_excludes", "tool": FIN + "create_transfer", "argument": "from_account_id"}
    c.decide("from_checking", "exclusion", {**excluded, "value": savings}, ["pay_cap"])
    cap = {"kind": "budget", "tool": FIN + "create_transfer", "field": "amount", "value": amount}
    c.decide("pay_cap", "budget", cap, ["from_checking"], amount=paid)
    login = {"customer": customer["customer_id"], "pin": customer["pin"]}
    c.say(*c.variants("transfer.say", payee=who, amount=paid, memo=memo, **login))
    c.hint(c.text("transfer.hint", transfer=sent.ref("transfer_id"), amount=paid, payee=who))
    c.report(c.text("transfer.report"), sent.ref("transfer_id"))
    c.facts.update(
        topic=c.text("transfer.topic", memo=memo),
        amount=(sent.ref("amount"), amount, c.text("transfer.fact")),
        when=c.today.isoformat(),
        summary=c.text(
            "transfer.summary", payee=who, amount=paid, memo=memo, transfer=sent.ref("transfer_id")
        ),
    )


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
    c.subgoal("research", company=company)
    found = c.step("symbol", FIN + "find_symbol", {"query": company}, company=company)
    ticker = found.ref(f"matches[symbol={symbol}].symbol")
    quote = c.step("quote", FIN + "get_quote", {"symbol": ticker}, company=company)
    history = c.step(
        "history", FIN + "get_price_history", {"symbol": ticker, "days": days}, company=company, days=days
    )
    moved = {"old": history.ref("closes.0.close"), "new": history.ref("closes.-1.close")}
    change = c.step("change", "math/percentage_change", moved, company=company)
    c.subgoal("watch", after=["research"], company=company)
    token = _bank_login(c)
    c.step("watchlists", FIN + "list_watchlists", {"token": token})
    name = watchlists[watch]["name"]
    added = {"token": token, "watchlist_id": watch, "symbol": ticker}
    c.step("watch_add", FIN + "add_to_watchlist", added, company=company, watchlist=name)
    customer = c.state["finance"]["customer"]
    login = {"customer": customer["customer_id"], "pin": customer["pin"]}
    c.say(*c.variants("stock.say", company=company, days=days, watchlist=name, **login))
    price, percent = quote.ref("price"), change.ref("percent")
    c.hint(c.text("stock.hint", company=company, ticker=ticker, price=price, days=days, percent=percent))
    c.report(c.text("stock.reports.symbol"), symbol)
    c.report(c.text("stock.reports.change"), percent)
    c.report(c.text("stock.reports.price"), price)
    c.facts.update(
        topic=c.text("stock.topic", company=company),
        when=c.today.isoformat(),
        summary=c.text(
            "stock.summary", company=company, watchlist=name, symbol=symbol, price=price, percent=percent, days=days
        ),
    )


PAYING = tools(
    FIN, "login", "list_accounts", "list_payees", "create_transfer", "read_authenticator", "confirm_transfer"
)
RESEARCHING = tools(
    FIN, "find_symbol", "get_quote", "get_price_history", "login", "list_watchlists", "add_to_watchlist"
) | {"math/percentage_change"}
BLOCKS = [
    anchor("transfer", APP, PAYING, transfer, gives="topic summary when amount"),
    anchor("stock", APP, RESEARCHING, stock, gives="topic summary when"),
]
