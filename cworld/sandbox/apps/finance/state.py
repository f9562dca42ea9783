"""The finance app's market (reference data per seed), trading hours, and its seeded, messy start state.

The market (which tickers trade, their prices today, their history) is a function of the seed, cached and
never mutated; prices hold still for the session. The state holds what tools change: accounts and their
transactions, positions, orders, transfers with their one-time codes, watchlists.

Messy on purpose: a stale transfer from days ago still awaits confirmation and holds checking funds, an
old limit order still reserves brokerage cash, and a watchlist follows a ticker that has been delisted.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from cworld.sandbox.apps._shared.auth import require_token, secret
from cworld.sandbox.apps._shared.records import lookup
from cworld.sandbox.apps._shared.values import iso, later, money
from cworld.sandbox.framework import AppError, SandboxApp, kb, world
from cworld.sandbox.framework.journal import for_reading
from cworld.seeding import derive_rng

MARKET_SIZE = 40
OPEN_AT, CLOSE_AT = (9, 30), (16, 0)
HOURS = "Monday-Friday 09:30-16:00 UTC"
CODE_MINUTES = 5


# --- market ------------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _market(seed: int) -> dict[str, Any]:
    rng = derive_rng(seed, "sandbox:finance:market")
    tickers = kb.sample("tickers", rng, MARKET_SIZE + 1)
    listed = {}
    for t in tickers[:MARKET_SIZE]:
        price = money(t["price"] * rng.uniform(0.7, 1.4))
        prev = money(price / (1 + rng.gauss(0, t["volatility"])))
        listed[t["symbol"]] = {**{k: t[k] for k in ("company", "sector", "exchange", "pe_ratio", "dividend_yield",
                                                     "market_cap_b", "volatility")}, "price": price,
                               "previous_close": prev}
    gone = tickers[MARKET_SIZE]
    return {"listed": listed, "delisted": {gone["symbol"]: {"company": gone["company"], "days_ago": rng.randrange(5, 40)}}}


def market(app: SandboxApp) -> dict[str, Any]:
    """This session's market (shared, read-only)."""
    return _market(app.session.seed)


def bid_ask(price: float) -> tuple[float, float]:
    half = max(0.01, round(price * 0.0003, 2))
    return money(price - half), money(price + half)


def history(app: SandboxApp, symbol: str, days: int) -> list[tuple[str, float]]:
    """Daily closes for the last `days` trading days, ending at the previous close; fixed per (seed, symbol)."""
    info = market(app)["listed"][symbol]
    rng = random.Random(f"{app.session.seed}|{symbol}|history")
    closes: list[tuple[str, float]] = []
    price, day = info["previous_close"], app.now.date()
    while len(closes) < days:
        day -= timedelta(days=1)
        if day.weekday() < 5:
            closes.append((day.isoformat(), money(price)))
            price = max(0.5, price / (1 + rng.gauss(0.0003, info["volatility"])))
    return closes[::-1]


def is_open(moment: datetime) -> bool:
    minutes = moment.hour * 60 + moment.minute
    return moment.weekday() < 5 and OPEN_AT[0] * 60 + OPEN_AT[1] <= minutes < CLOSE_AT[0] * 60 + CLOSE_AT[1]


def next_open(moment: datetime) -> datetime:
    day = moment.date()
    while True:
        start = datetime(day.year, day.month, day.day, *OPEN_AT, tzinfo=moment.tzinfo)
        if day.weekday() < 5 and start > moment:
            return start
        day += timedelta(days=1)


def closes_at(moment: datetime) -> datetime:
    return moment.replace(hour=CLOSE_AT[0], minute=CLOSE_AT[1], second=0, microsecond=0)


def one_time_code(app: SandboxApp, transfer_id: str, n: int) -> str:
    """A 6-digit code fixed by (seed, transfer, how many codes were sent): same seed, same codes."""
    return f"{int(secret(app, f'code:{transfer_id}:{n}', 12), 16) % 1_000_000:06d}"


# --- seeded state ------------------------------------------------------------------------------
def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    me = world.cast(app.session.seed)["me"]
    state: dict[str, Any] = {
        "customer": {"customer_id": f"CU-{rng.randrange(100000, 999999)}", "name": me["name"],
                     "pin": f"{rng.randrange(10000):04d}"},
        "auth": {"token": None},
        "accounts": {}, "transactions": {}, "payees": _payees(app, rng), "positions": {}, "orders": {},
        "transfers": {}, "codes": {}, "watchlists": {},
    }
    for kind, name, opening in (("checking", "Everyday Checking", rng.randrange(1800, 4200)),
                                ("savings", "High-Yield Savings", rng.randrange(6000, 25000)),
                                ("brokerage", "Individual Brokerage", rng.randrange(900, 3500))):
        account_id = app.new_id("acct")
        state["accounts"][account_id] = {"kind": kind, "name": name, "number": f"****{rng.randrange(10000):04d}",
                                         "balance": float(opening)}
        _history_of(app, rng, state, account_id, kind)
    _holdings(app, rng, state)
    _stale_items(app, rng, state)
    return state


def _payees(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    cast = world.cast(app.session.seed)
    names = [("Maple Court Apartments", "First Harbor Bank"), ("City Power & Light", "Union Trust"),
             (cast["colleagues"][3]["name"], rng.choice(["Northgate Credit Union", "Summit Bank"])),
             (cast["externals"][0]["company"], "Meridian Commercial Bank")]
    return {app.new_id("pay"): {"name": n, "bank": b, "account": f"****{rng.randrange(10000):04d}"}
            for n, b in names}


_SPENDING = {
    "checking": [("card", "Grocerly Market", -20, -140), ("card", "Coffee corner", -3, -9),
                 ("bill", "City Power & Light", -60, -160), ("card", "Streamly subscription", -12, -16),
                 ("deposit", "Payroll", 2400, 3800), ("card", "Pharmacy", -8, -60)],
    "savings": [("interest", "Monthly interest", 8, 60), ("deposit", "Transfer from checking", 200, 800)],
    "brokerage": [("dividend", "Dividend", 4, 40), ("deposit", "Transfer from checking", 300, 1200)],
}


def _history_of(app: SandboxApp, rng: random.Random, state: dict[str, Any], account_id: str, kind: str) -> None:
    """Past transactions, written backwards from today's balance so every balance_after adds up and never
    dips below 100; when nothing fits any more, the account's opening deposit ends the history."""
    count = {"checking": 34, "savings": 8, "brokerage": 7}[kind]
    balance = state["accounts"][account_id]["balance"]
    moment = app.now - timedelta(hours=rng.randrange(2, 30))
    rows = []
    for _ in range(count):
        fits = [(k, label, money(rng.uniform(lo, hi))) for k, label, lo, hi in _SPENDING[kind]]
        fits = [row for row in fits if balance - row[2] >= 100]
        txn_kind, label, amount = rng.choice(fits) if fits else ("deposit", "Opening deposit", money(balance))
        rows.append({"account_id": account_id, "at": iso(moment), "kind": txn_kind, "description": label,
                     "amount": amount, "balance_after": money(balance)})
        balance -= amount
        moment -= timedelta(hours=rng.randrange(6, 80))
        if not fits:
            break
    for row in reversed(rows):
        state["transactions"][app.new_id("txn")] = row


def _holdings(app: SandboxApp, rng: random.Random, state: dict[str, Any]) -> None:
    listed = market(app)["listed"]
    for symbol in rng.sample(sorted(listed), rng.randrange(4, 7)):
        state["positions"][symbol] = {"quantity": rng.randrange(3, 80),
                                      "average_cost": money(listed[symbol]["price"] * rng.uniform(0.6, 1.3))}


def _stale_items(app: SandboxApp, rng: random.Random, state: dict[str, Any]) -> None:
    accounts = list(state["accounts"])
    checking, brokerage = accounts[0], accounts[2]
    listed = market(app)["listed"]
    # an old limit order far below the market: never filled, still reserving cash
    symbol = rng.choice(sorted(s for s in listed if s not in state["positions"]))
    limit = money(listed[symbol]["price"] * 0.8)
    quantity = max(1, int(state["accounts"][brokerage]["balance"] * 0.5 / limit))
    state["orders"][app.new_id("trd")] = {
        "account_id": brokerage, "symbol": symbol, "side": "buy", "order_type": "limit", "quantity": quantity,
        "limit_price": limit, "stop_price": None, "status": "open", "placed_at": later(app.now, days=-6),
        "filled_at": None, "fill_price": None}
    # a transfer to the landlord created days ago and never confirmed: it holds most of checking
    rent = money(state["accounts"][checking]["balance"] * rng.uniform(0.55, 0.75))
    transfer_id = app.new_id("trf")
    created = app.now - timedelta(days=rng.randrange(2, 6), hours=3)
    state["transfers"][transfer_id] = {
        "from_account_id": checking, "to_id": next(iter(state["payees"])), "amount": rent,
        "memo": "rent", "status": "pending_confirmation", "created_at": iso(created), "completed_at": None,
        "codes_sent": 1}
    state["codes"][transfer_id] = {"code": one_time_code(app, transfer_id, 1),
                                   "expires_at": iso(created + timedelta(minutes=CODE_MINUTES))}
    held = sorted(state["positions"])
    gone = next(iter(market(app)["delisted"]))
    tech = [s for s in sorted(listed) if listed[s]["sector"] == "Technology"][:3]
    state["watchlists"][app.new_id("wl")] = {"name": "Ideas", "symbols": [*tech, gone]}
    state["watchlists"][app.new_id("wl")] = {"name": "Holdings to watch", "symbols": held[:3]}


# --- derived numbers ---------------------------------------------------------------------------
def holds(app: SandboxApp, account_id: str) -> float:
    """Money set aside: pending transfers out of the account, open buy orders against it (from the indexes,
    summed in the maps' order as a walk sums them)."""
    transfers, orders = for_reading(app.state["transfers"]), for_reading(app.state["orders"])
    pending = sum(transfers[k]["amount"]
                  for k in app.keys_where("transfers", status="pending_confirmation", from_account_id=account_id))
    buys = sum(orders[k]["quantity"] * orders[k]["limit_price"]
               for k in app.keys_where("orders", status="open", side="buy", account_id=account_id))
    return money(pending + buys)


def reserved_shares(app: SandboxApp, symbol: str) -> int:
    """Shares of `symbol` that open sell orders hold (from the index, summed in the map's order)."""
    orders = for_reading(app.state["orders"])
    return sum(orders[k]["quantity"] for k in app.keys_where("orders", status="open", side="sell", symbol=symbol))


def delisted_on(app: SandboxApp, symbol: str) -> date | None:
    gone = market(app)["delisted"].get(symbol)
    return app.now.date() - timedelta(days=gone["days_ago"]) if gone else None


# --- lookups every finance tool shares ---------------------------------------------------------
def require_login(app: SandboxApp, token: str) -> None:
    require_token(app, app.state["auth"], token, "login")


def account(app: SandboxApp, account_id: str) -> dict[str, Any]:
    return lookup(app.state["accounts"], account_id,
                  f"no account '{account_id}': list_accounts shows account ids")


def available(app: SandboxApp, account_id: str) -> float:
    return money(app.state["accounts"][account_id]["balance"] - holds(app, account_id))


def brokerage_id(state: dict[str, Any]) -> str:
    return next(a for a, v in for_reading(state["accounts"]).items() if v["kind"] == "brokerage")


def listed(app: SandboxApp, symbol: str) -> tuple[str, dict[str, Any]]:
    """(normalised symbol, market data), or a not_found that says what to do (delisted, or look it up)."""
    wanted = symbol.strip().upper()
    info = market(app)["listed"].get(wanted)
    if info is not None:
        return wanted, info
    gone = delisted_on(app, wanted)
    if gone is not None:
        raise AppError("not_found", f"{wanted} was delisted on {gone} and no longer trades: remove it from "
                                    "watchlists with remove_from_watchlist")
    raise AppError("not_found", f"no listed symbol '{symbol}': find_symbol looks symbols up by company name")


def post(app: SandboxApp, account_id: str, kind: str, description: str, amount: float) -> None:
    """Move money on an account and write the transaction that explains it."""
    acct = app.state["accounts"][account_id]
    acct["balance"] = money(acct["balance"] + amount)
    app.state["transactions"][app.new_id("txn")] = {
        "account_id": account_id, "at": iso(app.now), "kind": kind, "description": description,
        "amount": money(amount), "balance_after": acct["balance"]}
