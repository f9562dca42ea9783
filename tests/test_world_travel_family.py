"""Stays, flight offers, seats and ledgers (the travel card): what travel services do, tried on a small trip
service written for these tests (camelCase tool names, its own names for its collections and ledgers), not our
app. (Its id arguments are snake case where a tool's name names no kind of the card: the card's kind is then read
off the argument, which camelCase does not give yet.)"""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import PublicTask, Scenario, ScenarioEntity, ToolSpec
from cworld.engine.rules.ledgers import counted, form, ledger_of
from cworld.engine.rules.spans import nights

STR: dict[str, Any] = {"type": "string"}
IDS: dict[str, Any] = {"type": "array", "items": STR}


#: What the service answers for a booking.
BOOKING: dict[str, Any] = {"type": "object", "title": "Booking", "properties": {
    "booking_id": STR, "kind": STR, "status": STR, "travellers": IDS, "total": {"type": "number"}, "starts_at": STR,
    "seats": {"type": "object", "additionalProperties": STR}}}


def _tool(name: str, props: dict[str, Any], required: list[str], answer: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(server="trips", name=name, description=name, input_schema={
        "type": "object", "properties": props, "required": required}, output_schema=answer)


TOOLS = [
    _tool("bookHotel", {"hotelId": STR, "checkIn": STR, "checkOut": STR, "travellerId": STR,
                        "rooms": {"type": "integer", "default": 1}}, ["hotelId", "checkIn", "checkOut", "travellerId"],
          BOOKING),
    _tool("createFlightBooking", {"flightId": STR, "cabin": {"type": "string", "enum": ["economy", "business"]},
                                  "passengerIds": IDS}, ["flightId", "cabin", "passengerIds"], BOOKING),
    _tool("assignSeat", {"booking_id": STR, "passenger_id": STR, "seat_number": STR},
          ["booking_id", "passenger_id", "seat_number"], BOOKING),
    _tool("getFlight", {"flightId": STR}, ["flightId"]),
    _tool("updatePassport", {"traveller_id": STR, "passport_number": STR, "passport_expires": STR},
          ["traveller_id", "passport_number", "passport_expires"]),
    _tool("quoteCancellation", {"booking_id": STR}, ["booking_id"]),
    _tool("cancelBooking", {"booking_id": STR, "quote_id": STR}, ["booking_id", "quote_id"], BOOKING),
    _tool("searchFlights", {"origin": STR, "destination": STR, "date": STR}, ["origin", "destination", "date"]),
    _tool("findHotels", {"city": STR, "checkIn": STR, "checkOut": STR, "maxPrice": {"type": "number"}},
          ["city", "checkIn", "checkOut"], {"type": "object", "properties": {"hotels": {"type": "array", "items": {
              "type": "object", "properties": {"hotel_id": STR, "name": STR, "total": {"type": "number"},
                                               "rooms_left": {"type": "integer"}}}}}}),
]


def _trips(context: PublicTask | None = None) -> Any:
    """A trip service: two profiles, one flight reservation with a seat taken, a ledger of rooms taken per hotel
    and night and one of seats sold per flight and cabin; its hotels are a read-only catalog."""
    state = {
        "profiles": {"p_1": {"first_name": "Ana", "last_name": "Lee"}, "p_2": {"first_name": "Bo", "last_name": "Kim"},
                     "p_3": {"first_name": "Cy", "last_name": "Ng"}},
        "reservations": {"r_0001": {"kind": "flight", "status": "confirmed", "travellers": ["p_2", "p_3"],
                                    "total": 300.0, "starts_at": "2026-09-01T07:00:00Z", "flight_id": "ZX100-20260901",
                                    "hotel_id": None, "seats": {"p_3": "12A"}, "cabin": "economy", "refund": 0.0}},
        "rooms_taken": {"h_9": {"2026-08-20": 2}},
        "seats_sold": {"ZX100-20260901": {"economy": 2}},
        "quotes": {},
    }
    reference = {"CATALOG": {"hotels": {
        "h_9": {"name": "Harbour Inn", "city": "Porto", "stars": 3, "price_per_night": 120.0, "check_in_time": "14:00",
                "rooms": 5},
        "h_2": {"name": "Hill House", "city": "Porto", "stars": 4, "nightly_rate": 80.5}}}}
    return rules_caller("trips", "travel", state, {"traveller": "profiles", "booking": "reservations"}, TOOLS,
                        reference=reference, context=context)


def test_a_stay_books_each_night_at_the_nightly_rate_from_the_hotels_check_in_hour() -> None:
    call = _trips()
    made = call("bookHotel", hotelId="h_9", checkIn="2026-08-20", checkOut="2026-08-23", travellerId="p_1", rooms=2)
    assert made.meta.get("rule") == "family", made.text
    booking = made.structured_content or {}
    assert booking["total"] == 720.0  # 120 a night x 3 nights x 2 rooms
    assert booking["starts_at"] == "2026-08-20T14:00:00Z"
    assert booking["travellers"] == ["p_1"] and "traveller_id" not in booking and "travellerId" not in booking
    other = call("bookHotel", hotelId="h_2", checkIn="2026-08-21", checkOut="2026-08-22", travellerId="p_2")
    assert (other.structured_content or {})["starts_at"] == "2026-08-21T15:00:00Z"  # the usual hour: none stated
    assert (other.structured_content or {})["total"] == 80.5


def test_a_stay_counts_its_nights_in_the_hotels_ledger_and_is_at_least_one_night() -> None:
    call = _trips()
    call("bookHotel", hotelId="h_9", checkIn="2026-08-20", checkOut="2026-08-22", travellerId="p_1", rooms=2)
    call("bookHotel", hotelId="h_2", checkIn="2026-08-21", checkOut="2026-08-22", travellerId="p_2")
    ledger = _ledger(call, "rooms_taken")
    assert ledger == {"h_9": {"2026-08-20": 4, "2026-08-21": 2}, "h_2": {"2026-08-21": 1}}
    refused = call("bookHotel", hotelId="h_9", checkIn="2026-08-22", checkOut="2026-08-22", travellerId="p_1")
    assert refused.is_error and refused.error_class == "invalid_args", refused.text


def test_a_hotel_search_quotes_the_whole_stay_and_the_rooms_free_every_night_within_the_cap() -> None:
    call = _trips()
    found = call("findHotels", city="Porto", checkIn="2026-08-19", checkOut="2026-08-21")
    assert found.meta.get("rule") == "family", found.text
    hotels = {h["hotel_id"]: h for h in (found.structured_content or {})["hotels"]}
    assert hotels["h_9"]["total"] == 240.0 and hotels["h_9"]["rooms_left"] == 3  # 5 rooms, 2 taken on the 20th
    assert hotels["h_2"]["total"] == 161.0
    capped = call("findHotels", city="Porto", checkIn="2026-08-19", checkOut="2026-08-21", maxPrice=100)
    assert [h["hotel_id"] for h in (capped.structured_content or {})["hotels"]] == ["h_2"]


def test_a_flight_booked_is_the_offer_found_at_its_fare_times_the_party_and_its_seats_are_sold() -> None:
    offer = ScenarioEntity(app="trips", kind="flight", id="ZX101-20260902", attributes={
        "origin": "OPO", "destination": "AMS", "depart_at": "2026-09-02T18:40:00Z", "cabin": "economy", "fare": 99.9})
    call = _trips(PublicTask(id="t", query="Fly us to Amsterdam.", scenario=Scenario(entities=[offer])))
    made = call("createFlightBooking", flightId="ZX101-20260902", cabin="economy", passengerIds=["p_1", "p_2"])
    assert made.meta.get("rule") == "family", made.text
    booking = made.structured_content or {}
    assert booking["total"] == 199.8 and booking["starts_at"] == "2026-09-02T18:40:00Z"
    assert _ledger(call, "seats_sold") == {"ZX101-20260902": {"economy": 2}}  # the rows the session changed


def test_without_the_offer_a_booking_leaves_what_the_world_cannot_know_unset() -> None:
    call = _trips()
    made = call("createFlightBooking", flightId="ZX100-20260901", cabin="economy", passengerIds=["p_1"])
    assert not made.is_error, made.text
    booking = _ledger(call, "reservations")[(made.structured_content or {})["booking_id"]]
    assert booking["total"] is None and booking["starts_at"] is None  # no fare or departure to copy
    assert booking["travellers"] == ["p_1"]
    assert _ledger(call, "seats_sold") == {"ZX100-20260901": {"economy": 3}}  # the seat still counts


def test_a_seat_is_kept_per_traveller_as_a_row_and_letter_not_one_taken_on_the_flight() -> None:
    call = _trips()
    chosen = call("assignSeat", booking_id="r_0001", passenger_id="p_2", seat_number="14C")
    assert chosen.meta.get("rule") == "family", chosen.text
    assert (chosen.structured_content or {})["seats"] == {"p_3": "12A", "p_2": "14C"}
    taken = call("assignSeat", booking_id="r_0001", passenger_id="p_2", seat_number="12A")
    assert taken.is_error and taken.error_class == "business", taken.text
    assert call("assignSeat", booking_id="r_0001", passenger_id="p_2", seat_number="window").error_class == "invalid_args"
    stranger = call("assignSeat", booking_id="r_0001", passenger_id="p_1", seat_number="window")
    assert stranger.error_class == "not_found", stranger.text  # not on the booking: that first


def test_a_flight_id_whose_date_part_is_no_date_names_no_flight() -> None:
    call = _trips()
    assert call("getFlight", flightId="ZX100-20261345").error_class == "not_found"
    assert not call("getFlight", flightId="ZX100-20260901").is_error


def test_ledgers_are_found_by_the_forms_of_their_keys() -> None:
    state = {"rooms_taken": {"h_9": {"2026-08-20": 2}}, "seats_sold": {"ZX100-20260901": {"economy": 2}},
             "profiles": {"p_1": {"name": "Ana"}}}
    assert form("ZX100-20260901") == form("AB7-20270101") == "A9-9" and form("economy") == "a"
    assert ledger_of(state, "h_3", "2026-09-01") == "rooms_taken"
    assert ledger_of(state, "QQ1-20260101", "business") == "seats_sold"
    assert ledger_of(state, "h_3", "economy") is None and ledger_of({}, "h_3", "2026-09-01") is None
    assert counted(state, "rooms_taken", "h_9", "2026-08-20") == 2 and counted(state, None, "h_9", "x") == 0
    assert nights("2026-08-30", "2026-09-02") == ["2026-08-30", "2026-08-31", "2026-09-01"]
    assert nights("2026-08-30", "2026-08-30") == [] and nights("soon", "later") == []


def _ledger(call: Any, name: str) -> Any:
    """The records or ledger rows the session changed, as the engine hands them to the grader."""
    return call.engine.end_state(call.log)["_world"]["trips"][name]["after"]


def test_a_flight_search_no_rule_covers_still_refuses_what_is_no_airport_code() -> None:
    call = _trips()
    refused = call("searchFlights", origin="Porto", destination="AMS", date="2026-09-02")
    assert refused.error_class == "not_found" and "find_airports" in refused.text
    passed = call("searchFlights", origin="OPO", destination="AMS", date="2026-09-02")
    assert passed.error_class == "unavailable" and passed.meta.get("simulated")  # on to the schema engine (none here)


def test_a_passport_number_is_kept_in_capitals() -> None:
    call = _trips()
    assert not call("updatePassport", traveller_id="p_1", passport_number="x1234567",
                         passport_expires="2031-01-01").is_error
    assert _ledger(call, "profiles")["p_1"]["passport_number"] == "X1234567"


def test_a_cancelled_booking_gives_back_its_seats_and_its_nights() -> None:
    call = _trips()
    stay = call("bookHotel", hotelId="h_9", checkIn="2026-08-20", checkOut="2026-08-22", travellerId="p_1")
    for booking in ("r_0001", (stay.structured_content or {})["booking_id"]):
        quote = call("quoteCancellation", booking_id=booking)
        assert not quote.is_error, quote.text
        done = call("cancelBooking", booking_id=booking, quote_id=(quote.structured_content or {})["quote_id"])
        assert not done.is_error, done.text
    assert _ledger(call, "seats_sold") == {"ZX100-20260901": {"economy": 0}}
    assert _ledger(call, "rooms_taken") == {"h_9": {"2026-08-20": 2, "2026-08-21": 0}}
