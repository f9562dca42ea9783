"""Travel app: city -> IATA resolution, traveller ids and passports before booking, seats, the two-step
cancellation with fees, the overbooked hotel, honest pages, and business errors that change nothing."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pytest
from sandbox_results import err, ok

from cworld.sandbox.apps._shared.values import iso
from cworld.sandbox.apps.travel import TravelApp
from cworld.sandbox.apps.travel import state as world
from cworld.sandbox.framework import SandboxSession
from cworld.sandbox.framework.server import SandboxServer, build_server

SEED = 5


@pytest.fixture
def travel() -> SandboxServer:
    return build_server(SandboxSession(seed=SEED, apps=[TravelApp]), "travel")


def travellers(travel: SandboxServer) -> dict[str, dict[str, Any]]:
    """'me', 'expired' (passport expired) and 'none' (no passport) -> traveller record."""
    found = ok(travel.call_tool_sync("list_travellers", {}))["travellers"]
    return {"me": next(t for t in found if t["is_primary"]),
            "expired": next(t for t in found if t["passport_expires"] and not t["is_primary"]),
            "none": next(t for t in found if t["passport_number"] is None)}


def existing_trip(travel: SandboxServer) -> dict[str, Any]:
    return ok(travel.call_tool_sync("list_bookings", {"status": "confirmed"}))["bookings"][0]


def international_flight(travel: SandboxServer, days: int = 3) -> dict[str, Any]:
    """A flight with free economy seats on an international route, `days` from today."""
    day = (travel.session.clock.now().date() + timedelta(days=days)).isoformat()
    for route in world.network(travel.app)["routes"].values():
        if route["international"]:
            args = {"origin": route["origin"], "destination": route["destination"], "date": day}
            for flight in ok(travel.call_tool_sync("search_flights", args))["flights"]:
                if flight["seats_left"] >= 3:
                    return flight
    raise AssertionError("no international flight with seats")


def test_seeded_state_is_messy(travel: SandboxServer) -> None:
    people = travellers(travel)
    assert date.fromisoformat(people["expired"]["passport_expires"]) < travel.session.clock.now().date()
    trip = existing_trip(travel)
    assert trip["kind"] == "flight" and trip["seats"] == {} and trip["travellers"] == [people["me"]["traveller_id"]]
    flight = ok(travel.call_tool_sync("get_flight", {"flight_id": trip["flight_id"]}))
    city = ok(travel.call_tool_sync("find_airports", {"query": flight["destination"]}))["airports"][0]["city"]
    day = date.fromisoformat(trip["starts_at"][:10])
    stay = {"city": city, "check_in": day.isoformat(), "check_out": (day + timedelta(days=2)).isoformat()}
    hotels = ok(travel.call_tool_sync("search_hotels", stay))["hotels"]
    assert any(h["rooms_left"] == 0 for h in hotels), "the destination has a full (overbooked) hotel"


def test_city_names_must_be_resolved_to_airport_codes(travel: SandboxServer) -> None:
    day = (travel.session.clock.now().date() + timedelta(days=2)).isoformat()
    text = err(travel.call_tool_sync("search_flights", {"origin": "London", "destination": "Paris", "date": day}),
               "invalid")
    assert "LHR" in text and "find_airports" in text
    codes = [a["code"] for a in ok(travel.call_tool_sync("find_airports", {"query": "london"}))["airports"]]
    assert set(codes) == {"LHR", "LGW", "STN"}
    assert ok(travel.call_tool_sync("find_airports", {"query": "Sao Paulo"}))["airports"], "accents are optional"
    err(travel.call_tool_sync("search_flights", {"origin": "XXQ", "destination": "LHR", "date": day}), "not_found")
    route = next(iter(world.network(travel.app)["routes"].values()))
    found = ok(travel.call_tool_sync("search_flights", {"origin": route["origin"].lower(),
                                                        "destination": route["destination"], "date": day}))
    assert found["total"] == len(route["flights"]) - sum(
        1 for f in route["flights"] if f"{day}T{f['departs']}:00Z" <= iso(travel.session.clock.now()))


def test_booking_needs_traveller_ids_and_valid_passports(travel: SandboxServer) -> None:
    people = travellers(travel)
    flight = international_flight(travel)
    args = {"flight_id": flight["flight_id"], "cabin": "economy"}
    assert "list_travellers" in err(travel.call_tool_sync("book_flight", {**args, "traveller_ids": ["Me"]}),
                                     "not_found")
    expired = people["expired"]["traveller_id"]
    pair = [people["me"]["traveller_id"], expired]
    text = err(travel.call_tool_sync("book_flight", {**args, "traveller_ids": pair}), "precondition")
    assert "update_traveller_passport" in text
    err(travel.call_tool_sync("book_flight", {**args, "traveller_ids": [people["none"]["traveller_id"]]}),
        "precondition")
    err(travel.call_tool_sync("update_traveller_passport", {
        "traveller_id": expired, "passport_number": "N1234567", "passport_expires": "2020-01-01"}), "invalid")
    ok(travel.call_tool_sync("update_traveller_passport", {
        "traveller_id": expired, "passport_number": "N1234567", "passport_expires": "2034-01-01"}))
    booking = ok(travel.call_tool_sync("book_flight", {**args, "traveller_ids": pair}))
    assert booking["total"] == round(flight["fare"] * 2, 2)
    after = ok(travel.call_tool_sync("get_flight", {"flight_id": flight["flight_id"]}))
    assert next(c for c in after["cabins"] if c["cabin"] == "economy")["seats_left"] == flight["seats_left"] - 2
    assert "already flying" in err(travel.call_tool_sync("book_flight", {**args, "traveller_ids": pair[:1]}),
                                   "conflict")


def test_seat_selection_on_a_booking(travel: SandboxServer) -> None:
    trip = existing_trip(travel)
    me = trip["travellers"][0]
    seat_map = ok(travel.call_tool_sync("get_seat_map", {"flight_id": trip["flight_id"], "cabin": "economy"}))
    free_seats = {f"{row}{c}" for line in seat_map["rows"] for row, letters in [line.split(": ")]
                  for c in letters.split()}
    assert len(free_seats) == seat_map["free_seats"]
    free = min(free_seats)
    taken = next(f"{r}{c}" for r in range(11, 41) for c in "ABCDEF" if f"{r}{c}" not in free_seats)
    err(travel.call_tool_sync("select_seat", {"booking_id": trip["booking_id"], "traveller_id": me, "seat": taken}),
        "conflict")
    err(travel.call_tool_sync("select_seat", {"booking_id": trip["booking_id"], "traveller_id": me, "seat": "2A"}),
        "invalid")
    booking = ok(travel.call_tool_sync("select_seat", {"booking_id": trip["booking_id"], "traveller_id": me,
                                                       "seat": free.lower()}))
    assert booking["seats"] == {me: free}
    again = ok(travel.call_tool_sync("get_seat_map", {"flight_id": trip["flight_id"], "cabin": "economy"}))
    assert again["free_seats"] == seat_map["free_seats"] - 1


def test_cancelling_takes_a_live_quote_and_charges_the_fee(travel: SandboxServer) -> None:
    trip = existing_trip(travel)
    assert "quote_cancellation" in err(travel.call_tool_sync(
        "cancel_booking", {"booking_id": trip["booking_id"], "quote_id": "q_0001"}), "precondition")
    quote = ok(travel.call_tool_sync("quote_cancellation", {"booking_id": trip["booking_id"]}))
    assert quote["fee"] == round(trip["total"] * world.RULES["economy"][1] / 100, 2), "booked days ago: fee due"
    travel.session.clock.advance(16 * 60)
    assert "expired" in err(travel.call_tool_sync(
        "cancel_booking", {"booking_id": trip["booking_id"], "quote_id": quote["quote_id"]}), "precondition")
    quote = ok(travel.call_tool_sync("quote_cancellation", {"booking_id": trip["booking_id"]}))
    seats = ok(travel.call_tool_sync("get_flight", {"flight_id": trip["flight_id"]}))["cabins"]
    done = ok(travel.call_tool_sync("cancel_booking", {"booking_id": trip["booking_id"], "quote_id": quote["quote_id"]}))
    assert done["status"] == "cancelled" and done["refund"] == round(trip["total"] - quote["fee"], 2)
    after = ok(travel.call_tool_sync("get_flight", {"flight_id": trip["flight_id"]}))["cabins"]
    economy = [next(c["seats_left"] for c in cabins if c["cabin"] == "economy") for cabins in (seats, after)]
    assert economy[1] == economy[0] + 1
    assert ok(travel.call_tool_sync("cancel_booking", {"booking_id": trip["booking_id"], "quote_id": "x"})) == done
    assert ok(travel.call_tool_sync("get_itinerary", {}))["segments"] == []


def test_fresh_booking_cancels_free_and_hotels_respect_capacity(travel: SandboxServer) -> None:
    trip = existing_trip(travel)
    flight = ok(travel.call_tool_sync("get_flight", {"flight_id": trip["flight_id"]}))
    city = ok(travel.call_tool_sync("find_airports", {"query": flight["destination"]}))["airports"][0]["city"]
    day = date.fromisoformat(trip["starts_at"][:10])
    stay = {"check_in": day.isoformat(), "check_out": (day + timedelta(days=2)).isoformat()}
    hotels = ok(travel.call_tool_sync("search_hotels", {"city": city.upper(), **stay}))["hotels"]
    me = trip["travellers"][0]
    full = next(h for h in hotels if h["rooms_left"] == 0)
    assert "search_hotels" in err(travel.call_tool_sync(
        "book_hotel", {"hotel_id": full["hotel_id"], "traveller_id": me, **stay}), "conflict")
    free = next(h for h in hotels if h["rooms_left"] > 0)
    booked = ok(travel.call_tool_sync("book_hotel", {"hotel_id": free["hotel_id"], "traveller_id": me, **stay}))
    assert booked["total"] == free["total"]
    hotels_after = ok(travel.call_tool_sync("search_hotels", {"city": city, **stay}))["hotels"]
    assert next(h for h in hotels_after if h["hotel_id"] == free["hotel_id"])["rooms_left"] == free["rooms_left"] - 1
    quote = ok(travel.call_tool_sync("quote_cancellation", {"booking_id": booked["booking_id"]}))
    hotel = ok(travel.call_tool_sync("get_hotel", {"hotel_id": free["hotel_id"]}))
    free_until = day - timedelta(days=hotel["free_cancellation_days"])
    assert (quote["fee"] == 0) == (travel.session.clock.now().date() < free_until)
    past = {"check_in": "2020-01-01", "check_out": "2020-01-03"}
    err(travel.call_tool_sync("book_hotel", {"hotel_id": free["hotel_id"], "traveller_id": me, **past}), "invalid")
    err(travel.call_tool_sync("search_hotels", {"city": "Atlantis", **stay}), "not_found")


def test_list_bookings_pages_are_honest(travel: SandboxServer) -> None:
    me = travellers(travel)["me"]["traveller_id"]
    hotel = next(iter(world.network(travel.app)["hotels"]))
    start = travel.session.clock.now().date() + timedelta(days=20)
    for n in range(3):
        stay = {"check_in": (start + timedelta(days=3 * n)).isoformat(),
                "check_out": (start + timedelta(days=3 * n + 1)).isoformat()}
        ok(travel.call_tool_sync("book_hotel", {"hotel_id": hotel, "traveller_id": me, **stay}))
    pages = [ok(travel.call_tool_sync("list_bookings", {"page": p, "page_size": 3})) for p in (1, 2)]
    assert [p["total"] for p in pages] == [4, 4] and [p["has_more"] for p in pages] == [True, False]
    ids = [b["booking_id"] for p in pages for b in p["bookings"]]
    assert len(set(ids)) == 4
    starts = [b["starts_at"] for p in pages for b in p["bookings"]]
    assert starts == sorted(starts)


def test_business_errors_change_nothing(travel: SandboxServer) -> None:
    people = travellers(travel)
    flight = international_flight(travel)
    trip = existing_trip(travel)
    before = travel.session.snapshot()
    failing = [
        ("book_flight", {"flight_id": flight["flight_id"], "cabin": "economy",
                         "traveller_ids": [people["me"]["traveller_id"], people["expired"]["traveller_id"]]}),
        ("book_flight", {"flight_id": "ZZ999-20260101", "cabin": "economy", "traveller_ids": ["trv_0001"]}),
        ("cancel_booking", {"booking_id": trip["booking_id"], "quote_id": "q_9999"}),
        ("select_seat", {"booking_id": trip["booking_id"], "traveller_id": "trv_0404", "seat": "12A"}),
        ("add_traveller", {"first_name": "A", "last_name": "B", "date_of_birth": "2999-01-01",
                           "nationality": "Chile"}),
    ]
    for name, args in failing:
        assert travel.call_tool_sync(name, args).is_error, name
    assert travel.session.snapshot() == before


def test_same_seed_same_state_other_seed_other_entities() -> None:
    one, two = SandboxSession(SEED, apps=[TravelApp]), SandboxSession(SEED, apps=[TravelApp])
    assert one.snapshot() == two.snapshot()
    other = SandboxSession(SEED + 1, apps=[TravelApp])
    assert other.snapshot() != one.snapshot()
    assert world.network(other.app("travel"))["routes"].keys() != world.network(one.app("travel"))["routes"].keys()


def test_prerequisites_name_real_tools() -> None:
    names = {meta.name for meta, _ in TravelApp.tool_methods()}
    assert len(names) >= 12
    for edge in TravelApp.prerequisites:
        assert {edge.before, edge.after} <= names, edge
    assert any(e.before == "find_airports" and e.after == "search_flights" for e in TravelApp.prerequisites)


def test_knowledge_base_covers_every_city_people_live_in() -> None:
    from cworld.sandbox.framework import kb

    ports = kb.load("airports")
    assert len(ports) >= 40 and len({a["iata"] for a in ports}) == len(ports)
    cities = {a["city"] for a in ports}
    assert {p["city"] for p in kb.load("people")} <= cities, "every cast member's city has an airport"
    assert {h["city"] for h in kb.load("hotels")} <= cities
    assert world.home_airports({"city": "London", "country": "United Kingdom"}) == ["LGW", "LHR", "STN"]
    assert world.home_airports({"city": "Nowhere", "country": "Japan"}) == ["HND", "NRT"]
    assert world.home_airports({"city": "Nowhere", "country": "Atlantis"}) == [min(a["iata"] for a in ports)]


def every_booking(travel: SandboxServer, tool: str, key: str, arguments: dict[str, Any]) -> list[str]:
    seen, page = [], 1
    while True:
        answer = ok(travel.call_tool_sync(tool, {**arguments, "page": page, "page_size": 7}))
        seen += [b["booking_id"] for b in answer[key]]
        if not answer["has_more"]:
            assert answer["total"] == len(seen)
            return seen
        page += 1


def test_bookings_and_itineraries_in_a_grown_world(travel: SandboxServer) -> None:
    """list_bookings and get_itinerary read bookings sorted by start per status (and traveller): the same
    answers as sorting every booking, ties by id, past trips and other travellers' left out."""
    state = travel.session.state["travel"]  # grown before any call, so the indexes are built over it
    bookings = state["bookings"]
    for n, booking in enumerate(list(bookings.values()) * 6):
        key = f"bk_9{99 - n:02d}"  # ties at a start: ids against the map's order
        bookings[key] = {**booking, "status": ("confirmed", "cancelled")[n % 4 == 3],
                         "travellers": booking["travellers"][: 1 + n % 2]}
    in_order = sorted(bookings, key=lambda b: (bookings[b]["starts_at"], b))
    for status in (None, "confirmed", "cancelled"):
        arguments = {} if status is None else {"status": status}
        assert every_booking(travel, "list_bookings", "bookings", arguments) == [
            b for b in in_order if status in (None, bookings[b]["status"])]
    now = iso(travel.session.clock.now())
    people = {t for b in bookings.values() for t in b["travellers"]}
    for who in (None, *sorted(people)):
        wanted = [b for b in in_order if bookings[b]["status"] == "confirmed" and who in (None, *bookings[b]["travellers"])
                  and (bookings[b]["check_out"] + "T11:00:00Z" if bookings[b]["kind"] == "hotel"
                       else bookings[b]["starts_at"]) >= now]
        arguments = {} if who is None else {"traveller_id": who}
        assert every_booking(travel, "get_itinerary", "segments", arguments) == wanted, who
