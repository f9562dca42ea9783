"""Inference on a trip service written for the test (issue 33): a change for one of a record's members needs the
member on it (a seat for a traveller not on the booking is refused); an id of a kind the world holds no records
of, only references to, must have the form of the ids it shows (a service answers 404 for an id it never
issued); a create stores what a new record of its kind holds (its first state, the kind its name names)."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(name: str, props: dict[str, Any], answers: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(server="trip-desk", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props, "required": list(props)},
                    output_schema={"type": "object", "properties": answers} if answers else None)


TOOLS = [tool("select_seat", {"booking_id": STR, "traveller_id": STR, "seat": STR}),
         tool("book_flight", {"flight_id": STR, "traveller_ids": {"type": "array", "items": STR}},
              {"booking_id": STR, "status": STR}),
         tool("get_booking", {"booking_id": STR})]


def trips() -> Any:
    state = {"travellers": {"trv_1": {"first_name": "Ana"}, "trv_2": {"first_name": "Ben"}},
             "bookings": {"bk_1": {"kind": "flight", "status": "confirmed", "travellers": ["trv_1"],
                                   "flight_id": "QX101-20260902"},
                          "bk_2": {"kind": "flight", "status": "confirmed", "travellers": ["trv_2"],
                                   "flight_id": "LM7-20261001"}}}
    return rules_caller("trip-desk", "travel", state, {"traveller": "travellers", "booking": "bookings"}, TOOLS)


def test_a_seat_is_only_for_a_traveller_on_the_booking() -> None:
    call = trips()
    assert not call("select_seat", booking_id="bk_1", traveller_id="trv_1", seat="14C").is_error
    refused = call("select_seat", booking_id="bk_1", traveller_id="trv_2", seat="14C")
    assert refused.error_class == "not_found" and "not on booking" in refused.text


def test_an_id_only_referenced_must_look_like_the_ids_the_world_shows() -> None:
    call = trips()
    assert call("book_flight", flight_id="flight_9479", traveller_ids=["trv_1"]).error_class == "not_found"
    made = call("book_flight", flight_id="AB12-20261105", traveller_ids=["trv_1"])
    assert not made.is_error


def test_a_created_booking_holds_what_a_new_one_holds() -> None:
    call = trips()
    made = json.loads(call("book_flight", flight_id="QX101-20260902", traveller_ids=["trv_2"]).text)
    record = json.loads(call("get_booking", booking_id=made["booking_id"]).text)
    assert record["status"] == "confirmed" and record["kind"] == "flight" and record["travellers"] == ["trv_2"]


def test_a_child_named_with_its_parent_must_be_the_parents() -> None:
    """`list_cards(board_id, list_id)` on a board service: a list of another board is refused; moving a card
    to a list (the list written into the card) is not such a pair."""
    tools = [ToolSpec(server="team-board", name="list_cards", description="list cards",
                      input_schema={"type": "object", "properties": {"board_id": STR, "list_id": STR},
                                    "required": ["board_id"]})]
    state = {"boards": {"brd_1": {"name": "Ops"}, "brd_2": {"name": "Web"}},
             "lists": {"lst_1": {"board_id": "brd_1", "name": "To do"}, "lst_2": {"board_id": "brd_2", "name": "Done"}},
             "cards": {"crd_1": {"board_id": "brd_1", "list_id": "lst_1", "title": "Fix login"}}}
    call = rules_caller("team-board", "task_board", state, {"board": "boards", "list": "lists", "card": "cards"}, tools)
    assert not call("list_cards", board_id="brd_1", list_id="lst_1").is_error
    assert call("list_cards", board_id="brd_1", list_id="lst_2").error_class == "invalid_args"


def test_a_kind_only_referenced_is_read_by_an_id_of_its_shown_form() -> None:
    """`get_flight(flight_id)` where the world keeps no flights, only bookings naming them: an id of the form
    the bookings show is answered (what the world cannot know is made up, and the answer says so); another is
    `not_found`."""
    tools = [tool("get_flight", {"flight_id": STR}, {"flight_id": STR, "airline": STR})]
    state = {"bookings": {"bk_1": {"kind": "flight", "status": "confirmed", "flight_id": "QX101-20260902"}}}
    call = rules_caller("trip-desk", "travel", state, {"booking": "bookings"}, tools)
    found = call("get_flight", flight_id="AB12-20261105")
    assert not found.is_error and json.loads(found.text)["flight_id"] == "AB12-20261105"
    assert call("get_flight", flight_id="flight_9479").error_class == "not_found"
