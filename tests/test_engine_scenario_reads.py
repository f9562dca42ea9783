"""What a plan reads off an answer is there when the scenario holds it, as a live app would show it:
securities found by name and quoted from the scenario, a board's members with their roles, an unexpired
card, free slots as [start, end] pairs of the asked length. Scenarios are written as the synthesizer
writes them (`cworld/synth/scenario.py`)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from engine_helpers import body, call
from engine_helpers import scenario_session as session

from cworld.data_model import Scenario, ScenarioEntity, ScenarioRelation
from cworld.engine.cards.card import load_cards
from cworld.engine.schema.engine import SchemaEngine
from cworld.registry.tools import sandbox_tools

ROOT = Path(__file__).resolve().parents[1]
CARDS = load_cards(ROOT / "category_cards")
TOOLS = sandbox_tools()

MARKET = Scenario(today="2026-07-27T09:15:00+00:00", entities=[
    ScenarioEntity(app="finance", kind="symbol", id="PODC", attributes={
        "company": "Podcastle Audio", "sector": "Communication Services", "exchange": "NASDAQ", "price": 108.98,
        "previous_close": 108.55, "closes": [{"date": "2026-07-23", "close": 107.1}, {"date": "2026-07-24", "close": 108.98}]}),
    ScenarioEntity(app="finance", kind="symbol", id="KRNL", attributes={
        "company": "Kernel Labs", "sector": "Technology", "exchange": "NYSE"}),
])

BOARD = Scenario(
    today="2026-04-24T10:45:00+00:00",
    entities=[
        ScenarioEntity(app="taskboard", kind="board", id="brd_0001", attributes={
            "name": "Q3 budget", "description": "Tasks for the q3 budget.",
            "roles": {"person_110": "admin", "person_243": "normal"},
            "labels": {"lbl_0001": {"name": "urgent", "color": "red"}}}),
        ScenarioEntity(app="taskboard", kind="board", id="brd_0002", attributes={
            "name": "Website redesign", "description": "Tasks for the website.", "roles": {"person_110": "observer"}}),
        ScenarioEntity(app="taskboard", kind="member", id="person_110", attributes={"name": "Luca Reddy", "username": "lucar"}),
        ScenarioEntity(app="taskboard", kind="member", id="person_243", attributes={
            "name": "Christopher Rogers", "username": "christopherr"}),
        ScenarioEntity(app="taskboard", kind="member", id="person_031", attributes={"name": "Dev Sato", "username": "devs"}),
    ],
    relations=[
        ScenarioRelation(subject="taskboard/board/brd_0001", relation="roles", object="taskboard/member/person_110"),
        ScenarioRelation(subject="taskboard/board/brd_0001", relation="roles", object="taskboard/member/person_243"),
        ScenarioRelation(subject="taskboard/board/brd_0002", relation="roles", object="taskboard/member/person_110"),
    ],
    notes=["The user is taskboard/member/person_110 on taskboard."],
)

CARDS_ON_FILE = Scenario(today="2026-06-17T14:15:00+00:00", entities=[
    ScenarioEntity(app="shop", kind="payment_method", id="pm_0001", attributes={
        "brand": "Visa", "last4": "1994", "expires": "2026-05", "holder": "Rania Romano", "is_default": True}),
    ScenarioEntity(app="shop", kind="payment_method", id="pm_0002", attributes={
        "brand": "Mastercard", "last4": "7106", "expires": "2026-06", "holder": "Rania Romano", "is_default": False}),
])




def test_a_security_is_found_by_name_and_quoted_from_the_scenario() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(MARKET, "How has Podcastle Audio done?")
    found = body(call(eng, log, "finance/find_symbol", {"query": "Podcastle Audio"}))["matches"]
    assert found == [{"symbol": "PODC", "company": "Podcastle Audio", "sector": "Communication Services",
                      "exchange": "NASDAQ"}]
    quote = body(call(eng, log, "finance/get_quote", {"symbol": "PODC"}))
    assert (quote["symbol"], quote["company"], quote["price"], quote["previous_close"]) == ("PODC", "Podcastle Audio", 108.98, 108.55)
    history = body(call(eng, log, "finance/get_price_history", {"symbol": "PODC", "days": 2}))
    assert [p["close"] for p in history["closes"]] == [107.1, 108.98]
    assert body(call(eng, log, "finance/find_symbol", {"query": "Zebra Foods"}))["matches"] == []
    assert call(eng, log, "finance/get_quote", {"symbol": "ZZZZ"}).error_class == "not_found"


def test_a_board_lists_its_members_with_their_roles_and_yours() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(BOARD)
    boards = body(call(eng, log, "taskboard/list_boards", {}))["boards"]
    assert {b["board_id"]: b["your_role"] for b in boards} == {"brd_0001": "admin", "brd_0002": "observer"}
    board = body(call(eng, log, "taskboard/get_board", {"board_id": "brd_0001"}))
    assert board["your_role"] == "admin"
    assert sorted((m["member_id"], m["name"], m["username"], m["role"]) for m in board["members"]) == [
        ("person_110", "Luca Reddy", "lucar", "admin"), ("person_243", "Christopher Rogers", "christopherr", "normal")]
    assert board["labels"] == [{"label_id": "lbl_0001", "name": "urgent", "color": "red"}]


def test_a_card_has_expired_when_its_month_is_over() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(CARDS_ON_FILE)
    cards = body(call(eng, log, "shop/list_payment_methods", {"token": "t"}))["payment_methods"]
    assert {c["payment_method_id"]: c["expired"] for c in cards} == {"pm_0001": True, "pm_0002": False}


def test_free_slots_are_pairs_of_the_asked_length_on_the_asked_day() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(Scenario(today="2026-05-09T14:15:00+00:00"))
    args = {"person_ids": ["person_165", "person_058"], "date": "2026-05-18", "duration_minutes": 60}
    slots = body(call(eng, log, "calendar/find_free_slots", args))["slots"]
    assert slots
    for start, end in slots:
        begin, finish = datetime.fromisoformat(start), datetime.fromisoformat(end)
        assert begin.date().isoformat() == "2026-05-18"
        assert (finish - begin).total_seconds() == 3600
