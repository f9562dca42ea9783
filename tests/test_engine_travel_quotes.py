"""The travel card's quoted cancellation and passport pair (issue 33), on a trip service written for the test: a
cancel takes a quote of its own booking that still holds, and uses it up; a passport is kept with its number and
expiry together."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(name: str, props: dict[str, Any], required: list[str] | None = None) -> ToolSpec:
    return ToolSpec(server="trip-desk", name=name, description=name.replace("_", " "),
                    input_schema={"type": "object", "properties": props,
                                  "required": list(props) if required is None else required})


TOOLS = [tool("quote_cancellation", {"booking_id": STR}), tool("cancel_booking", {"booking_id": STR, "quote_id": STR}),
         tool("add_traveller", {"first_name": STR, "last_name": STR, "passport_number": STR, "passport_expires": STR},
              ["first_name", "last_name"])]


def desk() -> Any:
    bookings = {b: {"kind": "flight", "status": "confirmed", "total": 400.0, "refund": 120.0, "travellers": ["trv_0001"]}
                for b in ("bk_0001", "bk_0002")}
    travellers = {"trv_0001": {"first_name": "Ana", "last_name": "Reyes", "passport_number": "X1",
                               "passport_expires": "2031-01-01"}}
    return rules_caller("trip-desk", "travel", {"bookings": bookings, "travellers": travellers, "quotes": {}},
                        {"booking": "bookings", "traveller": "travellers"}, TOOLS)


def test_a_cancel_takes_its_own_bookings_quote_once() -> None:
    call = desk()
    quote = json.loads(call("quote_cancellation", booking_id="bk_0001").text)
    assert quote["booking_id"] == "bk_0001" and quote["quote_id"]
    other = json.loads(call("quote_cancellation", booking_id="bk_0002").text)["quote_id"]
    assert call("cancel_booking", booking_id="bk_0001", quote_id=other).error_class == "business"
    assert call("cancel_booking", booking_id="bk_0001", quote_id="q_nope").error_class == "business"
    done = call("cancel_booking", booking_id="bk_0001", quote_id=quote["quote_id"])
    assert not done.is_error and json.loads(done.text)["status"] == "cancelled"
    assert call("cancel_booking", booking_id="bk_0001", quote_id=quote["quote_id"]).is_error  # used up


def test_a_passport_is_given_with_its_number_and_expiry_together() -> None:
    call = desk()
    assert call("add_traveller", first_name="Bo", last_name="Lind", passport_number="Y2").error_class == "invalid_args"
    assert not call("add_traveller", first_name="Bo", last_name="Lind").is_error
    assert not call("add_traveller", first_name="Cy", last_name="Moss", passport_number="Z3",
                    passport_expires="2030-05-05").is_error


def test_an_international_flight_needs_passports_and_no_one_flies_it_twice() -> None:
    network = {"routes": {"LIS-YYZ": {"origin": "LIS", "destination": "YYZ", "international": True,
                                      "flights": [{"number": "TP259", "departs": "10:00"}]},
                          "LIS-OPO": {"origin": "LIS", "destination": "OPO", "international": False,
                                      "flights": [{"number": "TP1944", "departs": "08:00"}]}}}
    travellers = {"trv_0001": {"first_name": "Ana", "passport_number": "X1", "passport_expires": "2031-01-01"},
                  "trv_0002": {"first_name": "Bo", "passport_number": None, "passport_expires": None}}
    book = tool("book_flight", {"flight_id": STR, "traveller_ids": {"type": "array", "items": STR}})
    book = book.model_copy(update={"description": "Book seats on a flight for travellers; answers the booking.",
                                   "output_schema": {"type": "object", "properties": {"booking_id": STR}}})
    earlier = {"bk_0001": {"kind": "flight", "status": "cancelled", "flight_id": "TP259-20260801", "travellers": ["trv_0001"],
                           "total": 300.0}}
    call = rules_caller("trip-desk", "travel", {"bookings": earlier, "travellers": travellers},
                        {"booking": "bookings", "traveller": "travellers"}, [book], reference={"NETWORK": network})
    assert call("book_flight", flight_id="TP259-20260902", traveller_ids=["trv_0002"]).error_class == "business"
    assert not call("book_flight", flight_id="TP1944-20260902", traveller_ids=["trv_0002"]).is_error  # domestic
    assert not call("book_flight", flight_id="TP259-20260902", traveller_ids=["trv_0001"]).is_error
    assert call("book_flight", flight_id="TP259-20260902", traveller_ids=["trv_0001"]).error_class == "business"
