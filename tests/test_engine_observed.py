"""Scenario records of kinds no sandbox state collection holds (flights, hotels, airports keyed by `code`)
seed the engine's world, and a record's own lock and secret decide calls before any handler runs."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import body, call, scenario_session

from cworld.data_model import Scenario, ScenarioEntity
from cworld.engine.cards.card import load_cards
from cworld.engine.protocol import SessionLog
from cworld.engine.schema.engine import SchemaEngine
from cworld.registry.tools import sandbox_tools

ROOT = Path(__file__).resolve().parents[1]
CARDS = load_cards(ROOT / "category_cards")
TOOLS = sandbox_tools()

TRAVEL = Scenario(today="2026-04-05T08:15:00+00:00", entities=[
    ScenarioEntity(app="travel", kind="airport", id="BOM",
                   attributes={"name": "Chhatrapati Shivaji Maharaj International Airport", "city": "Mumbai",
                               "country": "India"}),
    ScenarioEntity(app="travel", kind="airport", id="SYD", attributes={"name": "Sydney Kingsford Smith Airport",
                                                                      "city": "Sydney", "country": "Australia"}),
    ScenarioEntity(app="travel", kind="flight", id="OA314-20260426", attributes={
        "airline": "Orient Arc", "origin": "SYD", "destination": "BOM", "depart_at": "2026-04-26T20:10:00Z",
        "arrive_at": "2026-04-27T09:08:00Z", "cabin": "economy", "fare": 984.03, "seats_left": 47}),
    ScenarioEntity(app="travel", kind="hotel", id="htl_064", attributes={
        "name": "Riverside Warsaw Lodge", "stars": 3, "nightly_rate": 229.53, "city": "Warsaw"}),
])

DOCS = Scenario(today="2026-04-24T10:45:00+00:00", entities=[
    ScenarioEntity(app="docs", kind="document", id="doc_0001", attributes={
        "title": "Q3 budget draft", "owner": "person_220", "content": "# Q3", "version": 2, "locked": True,
        "password": "harbor-cobalt-48", "unlocked": False}),
    ScenarioEntity(app="docs", kind="document", id="doc_0002", attributes={
        "title": "Website redesign brief", "owner": "person_110", "content": "# Web", "version": 2, "locked": False,
        "password": None, "unlocked": False}),
])


def session(scenario: Scenario) -> SessionLog:
    return scenario_session(scenario, "Book it.")




def test_airports_keyed_by_code_are_the_scenarios() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(TRAVEL)
    found = body(call(eng, log, "travel/find_airports", {"query": "Mumbai"}))["airports"]
    assert [(a["code"], a["country"]) for a in found] == [("BOM", "India")]
    assert body(call(eng, log, "travel/find_airports", {"query": "Zanzibar"}))["airports"] == []


def test_the_scenarios_flight_and_hotel_answer_reads_by_id() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(TRAVEL)
    flights = body(call(eng, log, "travel/search_flights", {"origin": "SYD", "destination": "BOM", "date": "2026-04-26"}))
    assert [(f["flight_id"], f["fare"], f["seats_left"]) for f in flights["flights"]] == [("OA314-20260426", 984.03, 47)]
    rules = body(call(eng, log, "travel/get_fare_rules", {"flight_id": "OA314-20260426", "cabin": "economy"}))
    assert (rules["flight_id"], rules["fare"]) == ("OA314-20260426", 984.03)
    assert body(call(eng, log, "travel/get_seat_map", {"flight_id": "OA314-20260426", "cabin": "economy"}))["flight_id"] == "OA314-20260426"
    hotel = body(call(eng, log, "travel/get_hotel", {"hotel_id": "htl_064"}))
    assert (hotel["name"], hotel["stars"], hotel["city"]) == ("Riverside Warsaw Lodge", 3, "Warsaw")
    assert call(eng, log, "travel/get_flight", {"flight_id": "OA999-20260426"}).error_class == "not_found"


def test_a_locked_document_refuses_until_its_password_unlocks_it() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), session(DOCS)
    assert call(eng, log, "docs/get_document", {"document_id": "doc_0001"}).error_class == "business"
    assert call(eng, log, "docs/append_to_document", {"document_id": "doc_0001", "text": "x"}).error_class == "business"
    wrong = call(eng, log, "docs/unlock_document", {"document_id": "doc_0001", "password": "summit19!"})
    assert wrong.error_class == "auth"
    assert call(eng, log, "docs/append_to_document", {"document_id": "doc_0001", "text": "x"}).is_error
    body(call(eng, log, "docs/unlock_document", {"document_id": "doc_0001", "password": "harbor-cobalt-48"}))
    assert body(call(eng, log, "docs/get_document", {"document_id": "doc_0001"}))["document_id"] == "doc_0001"
    body(call(eng, log, "docs/append_to_document", {"document_id": "doc_0001", "text": "Checked."}))
    body(call(eng, log, "docs/append_to_document", {"document_id": "doc_0002", "text": "Checked."}))  # never locked


def test_a_lock_the_task_does_not_state_blocks_nothing() -> None:
    eng, log = SchemaEngine(CARDS, TOOLS.values()), SessionLog(seed=4)
    listed = body(call(eng, log, "docs/list_documents", {}))["documents"]
    for doc in listed:  # card-seeded documents draw `locked` at random: none of them refuses a read
        assert not call(eng, log, "docs/get_document", {"document_id": doc["document_id"]}).is_error
