"""A write meets the business rules of what it uses: a record the task says has expired, a move to itself."""

from __future__ import annotations

from datetime import UTC, datetime

from cworld.data_model import Scenario, ScenarioEntity
from cworld.engine.cards.operations import entity_for, operation_kind
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.engine.schema.rules import is_past
from tests.test_engine_observed import CARDS, TOOLS, body, call, session

SHOP = Scenario(today="2026-04-24T10:45:00+00:00", entities=[
    ScenarioEntity(app="shop", kind="payment_method", id="pm_0001", attributes={
        "brand": "Visa", "last4": "2850", "expires": "2026-03", "holder": "Luca Reddy", "is_default": True}),
    ScenarioEntity(app="shop", kind="payment_method", id="pm_0002", attributes={
        "brand": "Mastercard", "last4": "3859", "expires": "2026-04", "holder": "Luca Reddy", "is_default": False}),
    ScenarioEntity(app="shop", kind="address", id="addr_0001", attributes={"label": "home", "city": "New York"}),
])

TRAVEL = Scenario(today="2026-03-18T10:15:00+00:00", entities=[
    ScenarioEntity(app="travel", kind="traveller", id="trv_0001", attributes={
        "first_name": "Johan", "last_name": "Harris", "passport_number": "K13936305", "passport_expires": "2033-11-27"}),
    ScenarioEntity(app="travel", kind="traveller", id="trv_0002", attributes={
        "first_name": "Eleni", "last_name": "Roberts", "passport_number": "P62177497", "passport_expires": "2025-11-12"}),
    ScenarioEntity(app="travel", kind="flight", id="KJ308-20260408", attributes={
        "origin": "AMS", "destination": "DEL", "depart_at": "2026-04-08T15:20:00Z", "cabin": "economy", "fare": 664.48}),
])

FINANCE = Scenario(today="2026-04-01T09:00:00+00:00", entities=[
    ScenarioEntity(app="finance", kind="account", id="acct_0001", attributes={"kind": "checking", "balance": 2083.0}),
    ScenarioEntity(app="finance", kind="payee", id="pay_0003", attributes={"name": "Chidi Lewis"}),
])


def test_checkout_with_a_card_the_task_says_expired_is_refused_and_a_valid_one_goes_through() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(SHOP)
    token = body(call(eng, log, "shop/login", {"email": "luca@example.com", "password": "pw"}))["token"]
    refused = call(eng, log, "shop/checkout", {"token": token, "address_id": "addr_0001", "payment_method_id": "pm_0001"})
    assert refused.error_class == "business" and "pm_0001" in refused.text and "list_payment_methods" in refused.text
    ok = call(eng, log, "shop/checkout", {"token": token, "address_id": "addr_0001", "payment_method_id": "pm_0002"})
    assert not ok.is_error, ok.text  # 2026-04 lasts to the end of April


def test_a_booking_waits_for_a_lapsed_passport_to_be_renewed() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(TRAVEL)
    booking = {"flight_id": "KJ308-20260408", "cabin": "economy", "traveller_ids": ["trv_0001", "trv_0002"]}
    refused = call(eng, log, "travel/book_flight", booking)
    assert refused.error_class == "business" and "passport" in refused.text
    body(call(eng, log, "travel/update_traveller_passport",
              {"traveller_id": "trv_0002", "passport_number": "M19605609", "passport_expires": "2035-03-16"}))
    assert body(call(eng, log, "travel/book_flight", booking))["flight_id"] == "KJ308-20260408"


def test_an_expiry_the_engine_drew_refuses_nothing() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=3)
    token = body(call(eng, log, "shop/login", {"email": "a@example.com", "password": "pw"}))["token"]
    methods = body(call(eng, log, "shop/list_payment_methods", {"token": token}))["payment_methods"]
    for method in methods:
        args = {"token": token, "address_id": "addr_0001", "payment_method_id": method["payment_method_id"]}
        assert call(eng, log, "shop/checkout", args).error_class != "business"


def test_a_transfer_to_its_own_source_account_is_invalid() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(FINANCE)
    token = body(call(eng, log, "finance/login", {"customer_id": "CU-1", "pin": "1234"}))["token"]
    same = call(eng, log, "finance/create_transfer",
                {"token": token, "from_account_id": "acct_0001", "to_id": "acct_0001", "amount": 20.0})
    assert same.error_class == "invalid_args" and "to_id" in same.text
    other = call(eng, log, "finance/create_transfer",
                 {"token": token, "from_account_id": "acct_0001", "to_id": "pay_0003", "amount": 20.0})
    assert not other.is_error, other.text


def test_an_expiry_lasts_to_the_end_of_its_month_or_day() -> None:
    now = datetime(2026, 4, 24, 10, 45, tzinfo=UTC)
    assert is_past("2026-03", now) and not is_past("2026-04", now)
    assert is_past("2026-04-23", now) and not is_past("2026-04-24", now)
    assert is_past("2026-04-24T10:00:00Z", now) and not is_past("2026-04-24T11:00:00", now)
    assert not is_past(None, now) and not is_past("soon", now)


def test_a_verbless_destructive_write_that_answers_a_new_id_makes_that_record() -> None:
    checkout = TOOLS["shop/checkout"]
    assert operation_kind(checkout) == "create" and entity_for(checkout, CARDS["ecommerce"]).name == "order"
    assert operation_kind(TOOLS["shop/delete_address"]) == "delete"


def test_a_cards_expired_flag_is_what_its_expiry_says() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(SHOP)
    token = body(call(eng, log, "shop/login", {"email": "luca@example.com", "password": "pw"}))["token"]
    for _ in range(2):  # the second listing reads the records the first one showed
        methods = body(call(eng, log, "shop/list_payment_methods", {"token": token}))["payment_methods"]
        assert {m["payment_method_id"]: m["expired"] for m in methods} == {"pm_0001": True, "pm_0002": False}
