"""Travel: airports, flights (fares, seats), hotels, traveller profiles, bookings, cancellations.

Flights are searched by IATA code, so a city name must be resolved with `find_airports` first (several
cities have more than one airport). Bookings need traveller profile ids; seats are chosen on a booking;
cancelling takes a fee quote first. All times are UTC.
"""

from __future__ import annotations

from typing import Any

from cworld.sandbox.apps._shared.records import produces
from cworld.sandbox.apps.travel import state as travel_state
from cworld.sandbox.apps.travel.state import seed_state
from cworld.sandbox.apps.travel.tools import TravelTools
from cworld.sandbox.apps.travel.tools_bookings import BookingTools
from cworld.sandbox.framework import Prerequisite
from cworld.sandbox.framework.session import plain_copy


def _edges() -> tuple[Prerequisite, ...]:
    flows = [
        ("find_airports", "search_flights", "code"), ("search_flights", "get_flight", "flight_id"),
        ("search_flights", "get_fare_rules", "flight_id"), ("search_flights", "get_seat_map", "flight_id"),
        ("search_flights", "book_flight", "flight_id"), ("list_travellers", "book_flight", "traveller_id"),
        ("add_traveller", "book_flight", "traveller_id"), ("list_travellers", "update_traveller_passport",
                                                           "traveller_id"),
        ("book_flight", "select_seat", "booking_id"), ("get_seat_map", "select_seat", "seat"),
        ("search_hotels", "get_hotel", "hotel_id"), ("search_hotels", "book_hotel", "hotel_id"),
        ("list_travellers", "book_hotel", "traveller_id"), ("list_bookings", "get_booking", "booking_id"),
        ("list_bookings", "quote_cancellation", "booking_id"), ("quote_cancellation", "cancel_booking", "quote_id"),
    ]
    produced = produces(flows)
    return (*produced,
            Prerequisite("update_traveller_passport", "book_flight", "requires", None,
                         "international flights need a passport valid on the day of travel"),
            Prerequisite("quote_cancellation", "cancel_booking", "requires", None,
                         "cancelling accepts the fee of a live quote (valid 15 minutes)"))


class TravelApp(TravelTools, BookingTools):
    name = "travel"
    volatile_paths = ("quotes**",)
    title = "Travel"
    description = ("Book trips: resolve airports, search flights and hotels, manage traveller profiles, book, "
                   "choose seats, view the itinerary and cancel with fees.")
    category = "travel"
    entity_kinds = {"travellers": "traveller", "bookings": "booking"}
    observed_kinds = {"flight": "flight_id", "hotel": "hotel_id", "airport": "code"}
    prerequisites = _edges()

    initial_state = seed_state

    def world_reference(self) -> dict[str, Any]:
        """The seed's routes and hotels: what flights, fares, seats and rooms are read from."""
        return {"NETWORK": plain_copy(travel_state.network(self))}
