"""The finance card's transfers and a world's reference catalogs, each checked on a service written for the test.

- A transfer goes from an account to another account or to a saved payee (a payee id was checked as an
  account), waits for its one-time code, and moves the money once confirmed with the current code.
- A kind the state holds no collection of is read from the world's reference (what a service knows from the
  seed alone: a network's hotels, a market's securities), found by the fields its records hold."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller, tool_spec

from cworld.data_model import ToolResult
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.rules import RulesEngine
from cworld.engine.world.base import ServerWorld, World
from cworld.engine.world.layout import catalog_path
from cworld.environment import Environment

STR = {"type": "string"}
NUM = {"type": "number"}

tool = tool_spec


def bank_state(with_codes: bool = True) -> dict[str, Any]:
    state: dict[str, Any] = {
        "accounts": {"acct_1": {"kind": "checking", "name": "Everyday", "balance": 500.0},
                     "acct_2": {"kind": "savings", "name": "Rainy day", "balance": 100.0}},
        "payees": {"pay_1": {"name": "Corner Bakery", "bank": "Union Trust", "account": "****1234"}},
        "transfers": {}, "transactions": {}}
    if with_codes:
        state["codes"] = {}
    return state


BANK = [tool("harbor-bank", "create_transfer", {"from_account_id": STR, "to_id": STR, "amount": NUM, "memo": STR},
             ["from_account_id", "to_id", "amount"]),
        tool("harbor-bank", "read_authenticator", {}),
        tool("harbor-bank", "confirm_transfer", {"transfer_id": STR, "code": STR}),
        tool("harbor-bank", "resend_transfer_code", {"transfer_id": STR}),
        tool("harbor-bank", "get_account", {"account_id": STR}), tool("harbor-bank", "list_transactions", {})]
KINDS = {"account": "accounts", "payee": "payees", "transfer": "transfers", "transaction": "transactions"}


def balance(call: Any, account: str) -> float:
    return float(json.loads(call("get_account", account_id=account).text)["balance"])


def test_a_transfer_to_a_payee_waits_for_its_code_and_moves_the_money_once_confirmed() -> None:
    call = rules_caller("harbor-bank", "finance", bank_state(), KINDS, BANK)
    assert call("create_transfer", from_account_id="acct_1", to_id="pay_404", amount=5.0).error_class == "not_found"
    made = call("create_transfer", from_account_id="acct_1", to_id="pay_1", amount=120.0, memo="bread")
    assert not made.is_error, made.text
    transfer = json.loads(made.text)
    assert transfer["status"] == "pending_confirmation" and transfer["memo"] == "bread"
    assert balance(call, "acct_1") == 500.0  # nothing moves before the code
    # the pending transfer holds its money: a second one over what is left is refused
    assert call("create_transfer", from_account_id="acct_1", to_id="acct_2", amount=400.0).error_class == "business"
    codes = json.loads(call("read_authenticator").text)["codes"]
    code = next(c["code"] for c in codes if c["transfer_id"] == transfer["transfer_id"])
    assert call("confirm_transfer", transfer_id=transfer["transfer_id"], code="000000" if code != "000000"
                else "111111").error_class == "auth"
    assert not call("confirm_transfer", transfer_id=transfer["transfer_id"], code=code).is_error
    assert balance(call, "acct_1") == 380.0
    posted = json.loads(call("list_transactions").text)
    rows = next(v for v in posted.values() if isinstance(v, list))
    assert [(r["account_id"], r["amount"], r["balance_after"]) for r in rows] == [("acct_1", -120.0, 380.0)]
    again = call("confirm_transfer", transfer_id=transfer["transfer_id"], code=code)  # a retried request
    assert not again.is_error and balance(call, "acct_1") == 380.0
    assert call("resend_transfer_code", transfer_id=transfer["transfer_id"]).error_class == "business"


def test_between_accounts_without_codes_the_money_reaches_the_destination_on_confirmation() -> None:
    call = rules_caller("harbor-bank", "finance", bank_state(with_codes=False), KINDS, BANK)
    made = json.loads(call("create_transfer", from_account_id="acct_1", to_id="acct_2", amount=50.0).text)
    assert call("create_transfer", from_account_id="acct_1", to_id="acct_1", amount=5.0).error_class == "invalid_args"
    assert not call("confirm_transfer", transfer_id=made["transfer_id"], code="123456").is_error
    assert (balance(call, "acct_1"), balance(call, "acct_2")) == (450.0, 150.0)


HOTELS = {"htl_001": {"name": "Harbour Inn", "city": "Lisbon", "stars": 3, "rating": 8.1, "nightly_rate": 120.0},
          "htl_002": {"name": "Old Town Rooms", "city": "Porto", "stars": 4, "rating": 8.8, "nightly_rate": 150.0}}


def test_a_kind_without_a_collection_is_read_from_the_reference_catalog_that_holds_its_fields() -> None:
    reference = {"NETWORK": {"routes": {"LIS-OPO": {"origin": "LIS", "destination": "OPO"}}, "hotels": HOTELS}}
    assert catalog_path(["name", "city", "stars", "price_per_night", "rating", "rooms_left"], reference) == \
        "NETWORK.hotels"
    assert catalog_path(["name", "city", "country"], reference) is None  # a name and a city are not enough
    tools = [tool("trip-desk", "get_hotel", {"hotel_id": STR}), tool("trip-desk", "search_hotels", {"city": STR})]
    state = {"bookings": {}}
    world = World(seed=0, now="2026-08-01T09:00:00Z", servers={"trip-desk": ServerWorld(
        "trip-desk", state, kinds={"booking": "bookings"}, card="travel", reference=reference)})
    engine, log = RulesEngine(load_cards(Environment.resolve().category_cards), tools, world=world), SessionLog(seed=0)

    def call(name: str, **args: Any) -> ToolResult:
        spec = next(t for t in tools if t.name == name)
        result = engine.respond_sync(spec, args, log)
        log.record(spec.id, args, result)
        return result
    shown = json.loads(call("get_hotel", hotel_id="htl_002").text)
    assert shown["hotel_id"] == "htl_002" and shown["name"] == "Old Town Rooms"
    assert call("get_hotel", hotel_id="htl_404").error_class == "not_found"
    found = json.loads(call("search_hotels", city="Lisbon").text)
    listed = next(v for v in found.values() if isinstance(v, list))  # under the list key the rule names
    assert [h["hotel_id"] for h in listed] == ["htl_001"]
    assert reference["NETWORK"]["hotels"] == HOTELS  # read only: every session shares it


def test_a_hotel_search_names_a_city_the_catalog_lists() -> None:
    reference = {"NETWORK": {"hotels": HOTELS}}
    tools = [tool("trip-desk", "search_hotels", {"city": STR})]
    world = World(seed=0, now="2026-08-01T09:00:00Z", servers={"trip-desk": ServerWorld(
        "trip-desk", {"bookings": {}}, kinds={"booking": "bookings"}, card="travel", reference=reference)})
    engine, log = RulesEngine(load_cards(Environment.resolve().category_cards), tools, world=world), SessionLog(seed=0)
    refused = engine.respond_sync(tools[0], {"city": "Gernika"}, log)
    assert refused.error_class == "not_found" and "Lisbon, Porto" in refused.text
    assert not engine.respond_sync(tools[0], {"city": "porto"}, log).is_error


def test_an_order_trades_a_listed_symbol_and_a_market_order_names_no_price() -> None:
    market = {"MARKET": {"listed": {"NWSC": {"company": "Northwind Semiconductors", "sector": "Technology",
                                             "exchange": "NASDAQ", "price": 70.9, "previous_close": 70.1}}}}
    order = tool("harbor-bank", "place_order", {"account_id": STR, "symbol": STR, "side": STR, "quantity": {
        "type": "integer"}, "order_type": STR, "limit_price": NUM}, ["account_id", "symbol", "side", "quantity"])
    state = {"accounts": {"acct_1": {"kind": "brokerage", "name": "Brokerage", "balance": 900.0}}, "orders": {}}
    world = World(seed=0, now="2026-08-01T09:00:00Z", servers={"harbor-bank": ServerWorld(
        "harbor-bank", state, kinds={"account": "accounts", "order": "orders"}, card="finance", reference=market)})
    engine, log = RulesEngine(load_cards(Environment.resolve().category_cards), [order], world=world), SessionLog(seed=0)
    ask = {"account_id": "acct_1", "side": "buy", "quantity": 1}
    assert engine.respond_sync(order, {**ask, "symbol": "YARD"}, log).error_class == "not_found"
    assert engine.respond_sync(order, {**ask, "symbol": "NWSC", "limit_price": 60.0}, log).error_class == "invalid_args"
    assert not engine.respond_sync(order, {**ask, "symbol": "NWSC", "order_type": "limit", "limit_price": 60.0}, log).is_error


def test_an_order_that_names_no_symbol_is_not_refused_for_one() -> None:
    """A multi-leg option order names its symbols in its legs: no `symbol` is no unknown symbol."""
    market = {"MARKET": {"listed": {"NWSC": {"company": "Northwind Semiconductors", "sector": "Technology",
                                             "exchange": "NASDAQ", "price": 70.9, "previous_close": 70.1}}}}
    order = tool("harbor-bank", "place_order", {"symbol": {"anyOf": [STR, {"type": "null"}]}, "qty": STR}, ["qty"])
    world = World(seed=0, now="2026-08-01T09:00:00Z", servers={"harbor-bank": ServerWorld(
        "harbor-bank", {"orders": {}}, kinds={"order": "orders"}, card="finance", reference=market)})
    engine, log = RulesEngine(load_cards(Environment.resolve().category_cards), [order], world=world), SessionLog(seed=0)
    assert not engine.respond_sync(order, {"qty": "10"}, log).is_error
    assert engine.respond_sync(order, {"qty": "10", "symbol": "YARD"}, log).error_class == "not_found"


def test_the_authenticator_shows_a_page_of_codes_newest_first() -> None:
    """A phone that has received 45 codes shows them 20 at a time, newest first (it answered all of them)."""
    state = bank_state()
    state["codes"] = {f"trf_{n:04d}": {"code": f"{n:06d}", "expires_at": "2026-01-01T00:00:00Z"} for n in range(1, 46)}
    paged = tool("harbor-bank", "read_authenticator", {"page": {"type": "integer", "default": 1},
                                                        "page_size": {"type": "integer", "default": 20}}, [])
    call = rules_caller("harbor-bank", "finance", state, KINDS, [paged])
    first, third = (json.loads(call("read_authenticator", page=p).text) for p in (1, 3))
    assert [c["transfer_id"] for c in first["codes"]][:2] == ["trf_0045", "trf_0044"] and len(first["codes"]) == 20
    assert first["total"] == 45 and first["has_more"] and len(third["codes"]) == 5 and not third["has_more"]
