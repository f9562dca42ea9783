"""Bank blocks: pay someone with a confirmed transfer, research a stock and watch it, convert an amount into
another currency."""

from __future__ import annotations

from cworld.sandbox.framework import kb, world
from cworld.synth.offline.composer import Block, BlockFailed, Composer
from cworld.synth.offline.people import involve, usable
from cworld.synth.offline.phrases import money

FIN = "finance/"


def _bank_login(c: Composer) -> str:
    if "bank_token" in c.facts:
        return c.facts["bank_token"]
    customer = c.state["finance"]["customer"]
    token = c.step(
        "bank_login",
        FIN + "login",
        {"customer_id": customer["customer_id"], "pin": customer["pin"]},
        "sign in to the bank with my customer id and PIN",
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
    c.subgoal("pay", f"Pay {payee['name']} {money(amount)}")
    token = _bank_login(c)
    accounts = c.step(
        "accounts", FIN + "list_accounts", {"token": token}, "see which bank account has the money to pay it"
    )
    checking = [a for a in accounts.value["accounts"] if a["kind"] == "checking" and a["available"] >= amount]
    if not checking:
        raise BlockFailed("not enough available in checking")
    listed = c.step("payees", FIN + "list_payees", {"token": token}, f"get {payee['name']}'s payee id")
    memo = c.rng.choice(
        ["offsite deposit", "team lunch", "conference ticket", "shared taxi", "gift collection"]
    )
    sent = c.step(
        "transfer",
        FIN + "create_transfer",
        {
            "token": token,
            "from_account_id": accounts.ref("accounts[kind=checking].account_id"),
            "to_id": listed.ref(f"payees[name={payee['name']}].payee_id"),
            "amount": amount,
            "memo": memo,
        },
        f"set up the {money(amount)} transfer to {payee['name']}",
    )
    codes = c.step(
        "codes", FIN + "read_authenticator", {}, "read the one-time code that confirms the payment transfer"
    )
    c.step(
        "confirm",
        FIN + "confirm_transfer",
        {"token": token, "transfer_id": sent.ref("transfer_id"), "code": codes.ref("codes.0.code")},
        "confirm the transfer so the money moves",
    )
    savings = [a["account_id"] for a in accounts.value["accounts"] if a["kind"] != "checking"]
    c.decide(
        "from_checking",
        "exclusion",
        "Pay it from my checking account; don't touch savings or the brokerage cash.",
        {
            "kind": "argument_excludes",
            "tool": FIN + "create_transfer",
            "argument": "from_account_id",
            "value": savings,
        },
        ["pay_cap"],
    )
    c.decide(
        "pay_cap",
        "budget",
        f"Send exactly {money(amount)}, not a cent more.",
        {"kind": "budget", "tool": FIN + "create_transfer", "field": "amount", "value": amount},
        ["from_checking"],
    )
    c.say(
        f"Pay {payee['name']} {money(amount)} for the {memo} (bank login: customer "
        f"{customer['customer_id']}, "
        f"PIN {customer['pin']}), and make sure the transfer is confirmed.",
        f"Send {money(amount)} to {payee['name']} for the {memo}; my bank customer id is "
        f"{customer['customer_id']} "
        f"and the PIN is {customer['pin']}. It only counts once it's confirmed.",
    )
    c.hint(f"Transfer {sent.ref('transfer_id')} of {money(amount)} to {payee['name']} is confirmed.")
    c.report("the transfer's reference", sent.ref("transfer_id"))
    c.facts.update(
        topic=f"the {memo} payment",
        amount=(sent.ref("amount"), amount, "the payment"),
        when=c.today.isoformat(),
        summary=f"I sent {payee['name']} {money(amount)} for the {memo} "
        f"(transfer {sent.ref('transfer_id')}).",
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
    c.subgoal("research", f"Check how {company} has done")
    found = c.step("symbol", FIN + "find_symbol", {"query": company}, f"look up {company}'s ticker symbol")
    ticker = found.ref(f"matches[symbol={symbol}].symbol")
    quote = c.step("quote", FIN + "get_quote", {"symbol": ticker}, f"get {company}'s price today")
    history = c.step(
        "history",
        FIN + "get_price_history",
        {"symbol": ticker, "days": days},
        f"get {company}'s closing prices over the last {days} trading days",
    )
    change = c.step(
        "change",
        "math/percentage_change",
        {"old": history.ref("closes.0.close"), "new": history.ref("closes.-1.close")},
        f"work out {company}'s percentage change over the period",
    )
    c.subgoal("watch", f"Add {company} to the watchlist", after=["research"])
    token = _bank_login(c)
    c.step("watchlists", FIN + "list_watchlists", {"token": token}, "find the watchlist to put the stock on")
    c.step(
        "watch_add",
        FIN + "add_to_watchlist",
        {"token": token, "watchlist_id": watch, "symbol": ticker},
        f"add {company} to my '{watchlists[watch]['name']}' watchlist",
    )
    customer = c.state["finance"]["customer"]
    c.say(
        f"Look up how {company} has moved over the last {days} trading days, and add it to my "
        f"'{watchlists[watch]['name']}' watchlist (bank customer {customer['customer_id']}, PIN "
        f"{customer['pin']}).",
        f"I'm curious about {company}: how much has it changed over the past {days} trading days? Put it on "
        "my "
        f"'{watchlists[watch]['name']}' watchlist too; customer id {customer['customer_id']}, PIN "
        f"{customer['pin']}.",
    )
    c.hint(
        f"{company} ({ticker}) trades at {quote.ref('price')}; change over {days} days: "
        f"{change.ref('percent')}%."
    )
    c.report("the ticker symbol", symbol)
    c.report("the percentage change", change.ref("percent"))
    c.report("today's price", quote.ref("price"))
    c.facts.update(
        topic=f"{company} stock",
        when=c.today.isoformat(),
        summary=f"{company} ({symbol}) is at {quote.ref('price')}, {change.ref('percent')}% over {days} "
        "trading days; I added it to the watchlist.",
    )


def currency(c: Composer) -> None:
    ref, value, label = c.facts["amount"]
    target = c.rng.choice(["EUR", "GBP", "JPY", "CAD", "CHF"])
    c.subgoal("convert", f"Convert {label} into {target}")
    converted = c.step(
        "convert",
        "units/convert_currency",
        {"amount": ref, "from_currency": "USD", "to_currency": target},
        f"convert the cost of {label} from US dollars into {target}",
    )
    c.say(
        f"Also tell me what {label} comes to in {target} (prices are in US dollars).",
        f"I'll need the cost of {label} in {target} as well; everything is priced in US dollars.",
    )
    c.hint(f"{label.capitalize()} in {target}: {converted.ref('amount')}.")
    c.report(f"the amount in {target}", converted.ref("amount"))
    c.quote_in_summary(f"That is {converted.ref('amount')} {target}.")


BLOCKS = [
    Block(
        "transfer",
        True,
        frozenset(
            FIN + n
            for n in (
                "login",
                "list_accounts",
                "list_payees",
                "create_transfer",
                "read_authenticator",
                "confirm_transfer",
            )
        ),
        transfer,
        gives=frozenset({"topic", "summary", "when", "amount"}),
    ),
    Block(
        "stock",
        True,
        frozenset(
            [
                *(
                    FIN + n
                    for n in (
                        "find_symbol",
                        "get_quote",
                        "get_price_history",
                        "login",
                        "list_watchlists",
                        "add_to_watchlist",
                    )
                ),
                "math/percentage_change",
            ]
        ),
        stock,
        gives=frozenset({"topic", "summary", "when"}),
    ),
    Block("currency", False, frozenset({"units/convert_currency"}), currency, needs=frozenset({"amount"})),
]
