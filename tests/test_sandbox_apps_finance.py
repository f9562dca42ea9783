"""Finance app: PIN login with an expiring token, name -> symbol lookup, two-step transfers with one-time codes,
holds from stale items, market hours and order types by the virtual clock, watchlist cleanup, honest pages,
and business errors that change nothing."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from sandbox_results import err, ok

from cworld.sandbox.apps.finance import FinanceApp
from cworld.sandbox.apps.finance import state as fin
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import SandboxServer, build_server

SEED = 3


@pytest.fixture
def finance() -> SandboxServer:
    return build_server(SandboxSession(seed=SEED, apps=[FinanceApp]), "finance")


def set_clock(server: SandboxServer, weekday: int, hour: int) -> None:
    """Move the virtual clock forward to the next `weekday` (0 = Monday) at `hour`:00 UTC."""
    now = server.session.clock.now()
    day = now.date() + timedelta(days=1)
    while day.weekday() != weekday:
        day += timedelta(days=1)
    server.session.clock.set(datetime(day.year, day.month, day.day, hour, tzinfo=now.tzinfo))


def login(server: SandboxServer) -> str:
    customer = server.session.state["finance"]["customer"]
    return ok(server.call_tool_sync("login", {"customer_id": customer["customer_id"], "pin": customer["pin"]}))["token"]


def accounts(server: SandboxServer, token: str) -> dict[str, dict[str, Any]]:
    return {a["kind"]: a for a in ok(server.call_tool_sync("list_accounts", {"token": token}))["accounts"]}


def transfer(server: SandboxServer, token: str, source: str, target: str, amount: float) -> dict[str, Any]:
    """Create, read the code, confirm: the whole two-step flow."""
    created = ok(server.call_tool_sync("create_transfer", {"token": token, "from_account_id": source,
                                                           "to_id": target, "amount": amount}))
    code = next(c["code"] for c in ok(server.call_tool_sync("read_authenticator", {}))["codes"]
                if c["transfer_id"] == created["transfer_id"])
    return ok(server.call_tool_sync("confirm_transfer", {"token": token, "transfer_id": created["transfer_id"],
                                                         "code": code}))


def test_seeded_state_is_messy(finance: SandboxServer) -> None:
    token = login(finance)
    pending = ok(finance.call_tool_sync("list_transfers", {"token": token, "status": "pending_confirmation"}))
    stale = pending["transfers"][0]
    codes = ok(finance.call_tool_sync("read_authenticator", {}))["codes"]
    assert [c["expired"] for c in codes if c["transfer_id"] == stale["transfer_id"]] == [True]
    checking = accounts(finance, token)["checking"]
    assert checking["available"] == round(checking["balance"] - stale["amount"], 2)
    orders = ok(finance.call_tool_sync("list_orders", {"token": token, "status": "open"}))["orders"]
    assert orders and orders[0]["side"] == "buy"
    portfolio = ok(finance.call_tool_sync("get_portfolio", {"token": token}))
    assert portfolio["cash_available"] < portfolio["cash"]
    watched = [s for w in ok(finance.call_tool_sync("list_watchlists", {"token": token}))["watchlists"]
               for s in w["symbols"]]
    delisted = [s for s in watched if finance.call_tool_sync("get_quote", {"symbol": s}).is_error]
    assert len(delisted) == 1
    assert "delisted" in err(finance.call_tool_sync("get_quote", {"symbol": delisted[0]}), "not_found")


def test_company_names_resolve_to_symbols(finance: SandboxServer) -> None:
    symbol, info = next(iter(sorted(fin.market(finance.app)["listed"].items())))
    word = info["company"].split()[0]
    assert "find_symbol" in err(finance.call_tool_sync("get_quote", {"symbol": info["company"]}), "not_found")
    hits = ok(finance.call_tool_sync("find_symbol", {"query": word.lower()}))["matches"]
    assert symbol in [h["symbol"] for h in hits]
    quote = ok(finance.call_tool_sync("get_quote", {"symbol": symbol.lower()}))
    assert quote["bid"] < quote["price"] < quote["ask"]
    history = ok(finance.call_tool_sync("get_price_history", {"symbol": symbol, "days": 15}))["closes"]
    assert len(history) == 15 and history[-1]["close"] == info["previous_close"]
    assert all(datetime.fromisoformat(p["date"]).weekday() < 5 for p in history)


def test_login_token_expires_and_pin_is_checked(finance: SandboxServer) -> None:
    customer = finance.session.state["finance"]["customer"]
    err(finance.call_tool_sync("list_accounts", {"token": "nope"}), "auth")
    err(finance.call_tool_sync("login", {"customer_id": customer["customer_id"], "pin": "0000x"}), "auth")
    token = login(finance)
    ok(finance.call_tool_sync("list_accounts", {"token": token}))
    finance.session.clock.advance(11 * 60)
    assert "login" in err(finance.call_tool_sync("list_accounts", {"token": token}), "auth")


def test_transfer_moves_money_only_after_the_code(finance: SandboxServer) -> None:
    token = login(finance)
    acct = accounts(finance, token)
    savings, brokerage = acct["savings"]["account_id"], acct["brokerage"]["account_id"]
    created = ok(finance.call_tool_sync("create_transfer", {"token": token, "from_account_id": savings,
                                                            "to_id": brokerage, "amount": 500}))
    assert "read_authenticator" in created["next_step"]
    after_create = accounts(finance, token)
    assert after_create["savings"]["balance"] == acct["savings"]["balance"]
    assert after_create["savings"]["available"] == round(acct["savings"]["available"] - 500, 2)
    args = {"token": token, "transfer_id": created["transfer_id"], "code": "999999x"}
    assert "read_authenticator" in err(finance.call_tool_sync("confirm_transfer", args), "auth")
    done = transfer(finance, token, savings, brokerage, 250)
    assert done["status"] == "completed"
    final = accounts(finance, token)
    assert final["savings"]["balance"] == round(acct["savings"]["balance"] - 250, 2)
    assert final["brokerage"]["balance"] == round(acct["brokerage"]["balance"] + 250, 2)
    statement = ok(finance.call_tool_sync("list_transactions", {"token": token, "account_id": brokerage,
                                                                "page_size": 1}))["transactions"][0]
    assert statement["amount"] == 250 and statement["balance_after"] == final["brokerage"]["balance"]


def test_expired_code_needs_a_resend(finance: SandboxServer) -> None:
    token = login(finance)
    acct = accounts(finance, token)
    created = ok(finance.call_tool_sync("create_transfer", {"token": token, "from_account_id": acct["savings"][
        "account_id"], "to_id": acct["checking"]["account_id"], "amount": 100}))
    old_code = ok(finance.call_tool_sync("read_authenticator", {}))["codes"][0]["code"]
    finance.session.clock.advance(6 * 60)
    args = {"token": token, "transfer_id": created["transfer_id"], "code": old_code}
    assert "resend_transfer_code" in err(finance.call_tool_sync("confirm_transfer", args), "precondition")
    ok(finance.call_tool_sync("resend_transfer_code", {"token": token, "transfer_id": created["transfer_id"]}))
    new_code = ok(finance.call_tool_sync("read_authenticator", {}))["codes"][0]["code"]
    if new_code != old_code:
        err(finance.call_tool_sync("confirm_transfer", args), "auth")
    confirmed = ok(finance.call_tool_sync("confirm_transfer", {**args, "code": new_code}))
    assert confirmed["status"] == "completed"
    assert ok(finance.call_tool_sync("confirm_transfer", {**args, "code": new_code})) == confirmed


def test_stale_transfer_holds_funds_until_cancelled(finance: SandboxServer) -> None:
    token = login(finance)
    acct = accounts(finance, token)["checking"]
    stale = ok(finance.call_tool_sync("list_transfers", {"token": token, "status": "pending_confirmation"}))[
        "transfers"][0]
    payee = ok(finance.call_tool_sync("list_payees", {"token": token}))["payees"][1]["payee_id"]
    amount = round(acct["available"] + 50, 2)
    args = {"token": token, "from_account_id": acct["account_id"], "to_id": payee, "amount": amount}
    assert "held" in err(finance.call_tool_sync("create_transfer", args), "insufficient_funds")
    ok(finance.call_tool_sync("cancel_transfer", {"token": token, "transfer_id": stale["transfer_id"]}))
    assert ok(finance.call_tool_sync("create_transfer", args))["status"] == "pending_confirmation"
    err(finance.call_tool_sync("create_transfer", {**args, "amount": 6000}), "limit")
    err(finance.call_tool_sync("create_transfer", {**args, "to_id": "Maple Court Apartments"}), "not_found")


def test_market_hours_and_order_types(finance: SandboxServer) -> None:
    set_clock(finance, weekday=5, hour=11)
    token = login(finance)
    held = ok(finance.call_tool_sync("get_portfolio", {"token": token}))["positions"][0]
    buy = {"token": token, "symbol": held["symbol"], "side": "buy", "quantity": 1}
    status = ok(finance.call_tool_sync("get_market_status", {}))
    assert not status["open"] and status["next_open"] in err(finance.call_tool_sync("place_order", buy), "precondition")
    ask = ok(finance.call_tool_sync("get_quote", {"symbol": held["symbol"]}))["ask"]
    resting = ok(finance.call_tool_sync("place_order", {**buy, "order_type": "limit", "limit_price": ask}))
    assert resting["status"] == "open", "limit orders rest while the market is closed"
    set_clock(finance, weekday=2, hour=11)
    token = login(finance)
    status = ok(finance.call_tool_sync("get_market_status", {}))
    assert status["open"] and status["closes_at"].endswith("16:00:00Z")
    quote = ok(finance.call_tool_sync("get_quote", {"symbol": held["symbol"]}))
    filled = ok(finance.call_tool_sync("place_order", {**buy, "token": token}))
    assert filled["status"] == "filled" and filled["fill_price"] == quote["ask"]
    sell = {"token": token, "symbol": held["symbol"], "side": "sell"}
    err(finance.call_tool_sync("place_order", {**sell, "quantity": held["quantity"] + 2}), "limit")
    err(finance.call_tool_sync("place_order", {**sell, "quantity": 1, "order_type": "stop",
                                                "stop_price": quote["ask"]}), "invalid")
    stop = ok(finance.call_tool_sync("place_order", {**sell, "quantity": held["quantity"], "order_type": "stop",
                                                      "stop_price": round(quote["bid"] * 0.9, 2)}))
    assert stop["status"] == "open"
    position = next(p for p in ok(finance.call_tool_sync("get_portfolio", {"token": token}))["positions"]
                    if p["symbol"] == held["symbol"])
    assert position["quantity"] == held["quantity"] + 1 and position["reserved"] == held["quantity"]
    err(finance.call_tool_sync("place_order", {**sell, "quantity": 2}), "limit")
    ok(finance.call_tool_sync("cancel_order", {"token": token, "order_id": stop["order_id"]}))
    assert ok(finance.call_tool_sync("place_order", {**sell, "quantity": 2}))["status"] == "filled"


def test_buying_beyond_cash_needs_a_transfer_first(finance: SandboxServer) -> None:
    set_clock(finance, weekday=1, hour=10)
    token = login(finance)
    symbol = ok(finance.call_tool_sync("get_portfolio", {"token": token}))["positions"][0]["symbol"]
    ask = ok(finance.call_tool_sync("get_quote", {"symbol": symbol}))["ask"]
    acct = accounts(finance, token)
    quantity = int(acct["brokerage"]["available"] / ask) + 1
    order = {"token": token, "symbol": symbol, "side": "buy", "quantity": quantity}
    assert "create_transfer" in err(finance.call_tool_sync("place_order", order), "insufficient_funds")
    transfer(finance, token, acct["savings"]["account_id"], acct["brokerage"]["account_id"], ask * 2)
    assert ok(finance.call_tool_sync("place_order", order))["status"] == "filled"


def test_watchlist_cleanup(finance: SandboxServer) -> None:
    token = login(finance)
    lists = ok(finance.call_tool_sync("list_watchlists", {"token": token}))["watchlists"]
    gone = next(iter(fin.market(finance.app)["delisted"]))
    ideas = next(w for w in lists if gone in w["symbols"])
    args = {"token": token, "watchlist_id": ideas["watchlist_id"]}
    err(finance.call_tool_sync("add_to_watchlist", {**args, "symbol": gone}), "not_found")
    cleaned = ok(finance.call_tool_sync("remove_from_watchlist", {**args, "symbol": gone.lower()}))
    assert gone not in cleaned["symbols"]
    err(finance.call_tool_sync("remove_from_watchlist", {**args, "symbol": gone}), "not_found")
    extra = next(s for s in sorted(fin.market(finance.app)["listed"]) if s not in cleaned["symbols"])
    once = ok(finance.call_tool_sync("add_to_watchlist", {**args, "symbol": extra}))
    assert ok(finance.call_tool_sync("add_to_watchlist", {**args, "symbol": extra})) == once


def test_statement_pages_are_honest(finance: SandboxServer) -> None:
    token = login(finance)
    checking = accounts(finance, token)["checking"]["account_id"]
    seen, page = [], 1
    while True:
        result = ok(finance.call_tool_sync("list_transactions", {"token": token, "account_id": checking,
                                                                 "page": page, "page_size": 8}))
        seen += result["transactions"]
        if not result["has_more"]:
            break
        page += 1
    assert len(seen) == result["total"] > 30 and page == -(-result["total"] // 8)
    times = [t["at"] for t in seen]
    assert times == sorted(times, reverse=True)
    for newer, older in zip(seen, seen[1:], strict=False):
        assert round(older["balance_after"] + newer["amount"], 2) == newer["balance_after"]


def test_business_errors_change_nothing(finance: SandboxServer) -> None:
    token = login(finance)
    acct = accounts(finance, token)
    stale = ok(finance.call_tool_sync("list_transfers", {"token": token}))["transfers"][0]["transfer_id"]
    before = finance.session.snapshot()
    failing = [
        ("create_transfer", {"token": token, "from_account_id": acct["checking"]["account_id"],
                             "to_id": acct["savings"]["account_id"], "amount": 10**6}),
        ("confirm_transfer", {"token": token, "transfer_id": stale, "code": "123456"}),
        ("place_order", {"token": token, "symbol": "NOPE", "side": "buy", "quantity": 1}),
        ("place_order", {"token": token, "symbol": next(iter(fin.market(finance.app)["listed"])), "side": "buy",
                         "quantity": 100_000, "order_type": "limit", "limit_price": 1}),
        ("remove_from_watchlist", {"token": token, "watchlist_id": "wl_0404", "symbol": "X"}),
    ]
    for name, args in failing:
        assert finance.call_tool_sync(name, args).is_error, name
    assert finance.session.snapshot() == before


def test_same_seed_same_state_other_seed_other_entities() -> None:
    one, two = SandboxSession(SEED, apps=[FinanceApp]), SandboxSession(SEED, apps=[FinanceApp])
    assert one.snapshot() == two.snapshot()
    other = SandboxSession(SEED + 1, apps=[FinanceApp])
    assert other.snapshot()["finance"]["customer"] != one.snapshot()["finance"]["customer"]
    assert set(fin.market(other.app("finance"))["listed"]) != set(fin.market(one.app("finance"))["listed"])


def test_prerequisites_name_real_tools() -> None:
    names = {meta.name for meta, _ in FinanceApp.tool_methods()}
    assert len(names) >= 12
    for edge in FinanceApp.prerequisites:
        assert {edge.before, edge.after} <= names, edge
    assert any(e.before == "read_authenticator" and e.after == "confirm_transfer" for e in FinanceApp.prerequisites)


def test_ticker_knowledge_base_is_large_and_unique() -> None:
    from cworld.sandbox.framework import kb

    tickers = kb.load("tickers")
    assert len(tickers) >= 60 and len({t["symbol"] for t in tickers}) == len(tickers)
    assert len({t["company"] for t in tickers}) == len(tickers)


def test_statements_page_newest_first_in_a_grown_ledger(finance: SandboxServer) -> None:
    """list_transactions reads an account's entries sorted by time off the indexes: the same pages as sorting
    every entry of the account (and kind), newest first, ties by id."""
    state = finance.session.state["finance"]  # grown before any call, so the indexes are built over it
    rows = state["transactions"]
    for n, row in enumerate(list(rows.values()) * 5):
        rows[f"txn_9{n:04d}"] = {**row, "at": row["at"][:10] + "T00:00:00Z"}  # many entries share a time
    for account in state["accounts"]:
        for kind in (None, "card", "deposit"):
            token = login(finance)  # tokens expire on the virtual clock
            wanted = sorted((t for t, v in rows.items() if v["account_id"] == account and kind in (None, v["kind"])),
                            key=lambda t: (rows[t]["at"], t), reverse=True)
            seen, page = [], 1
            while True:
                arguments = {"token": token, "account_id": account, "page": page, "page_size": 9}
                answer = ok(finance.call_tool_sync("list_transactions", arguments | ({} if kind is None else {"kind": kind})))
                seen += [t["transaction_id"] for t in answer["transactions"]]
                if not answer["has_more"]:
                    break
                page += 1
            assert seen == wanted and answer["total"] == len(wanted)
