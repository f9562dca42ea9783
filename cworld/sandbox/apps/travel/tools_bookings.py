"""The travel app's booking tools, as a base class of `TravelApp` (one app, its tools split by concept).

Booking needs resolved ids (flight, cabin, traveller profiles); international flights need a passport valid
on the day; cancelling is two steps, a fee quote then `cancel_booking` with that quote, as real sites do.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.records import Page, PageSize, lookup, paginate, paginate_counted
from cworld.sandbox.apps._shared.values import iso, later, money, parse_iso
from cworld.sandbox.apps.travel import state as world
from cworld.sandbox.apps.travel.models import (
    Booking,
    BookingId,
    BookingPage,
    CabinArg,
    CancellationQuote,
    Day,
    FlightId,
    HotelId,
    Itinerary,
    TravellerId,
)
from cworld.sandbox.apps.travel.state import TravelBase
from cworld.sandbox.framework import AppError, tool
from cworld.sandbox.framework.index import BY_KEY
from cworld.sandbox.framework.journal import for_reading

QUOTE_MINUTES = 15
CHECK_IN_HOUR = 15

Seat = Annotated[str, Field(description="seat label such as 14C, from get_seat_map", min_length=2, max_length=4)]



def _riders(booking: dict[str, Any]) -> list[tuple[str | None, str]]:
    """(traveller, or None for everyone, the booking's status): the groups an itinerary reads in time order."""
    return [(None, booking["status"]), *((t, booking["status"]) for t in booking["travellers"])]

def _ends_at(booking: dict[str, Any]) -> str:
    """When a booking is behind us, as UTC text like `iso` writes (compared as text, nothing parsed): a
    flight once it departs, a hotel stay once its check-out morning (11:00) passes."""
    return booking["check_out"] + "T11:00:00Z" if booking["kind"] == "hotel" else booking["starts_at"]


def _by_end(key: str, booking: dict[str, Any]) -> tuple[str]:
    """Bookings ordered by when they are behind us: the sorted index whose window after now counts an
    itinerary, where reading each trip to test it cost the whole group a call."""
    return (_ends_at(booking),)


class BookingTools(TravelBase):
    """Booking, seats, itinerary and cancellation."""

    @tool(read_only=False, destructive=True)
    def book_flight(
        self,
        flight_id: FlightId,
        cabin: CabinArg,
        traveller_ids: Annotated[list[TravellerId], Field(description="traveller profile ids (1-6)", min_length=1,
                                                          max_length=6)],
    ) -> Booking:
        """Book seats on a flight for traveller profiles (ids from list_travellers), charged to the card on file.
        Seats are chosen afterwards with select_seat."""
        flight = self._flight(flight_id)
        self._not_departed(flight["depart_at"], flight["flight_id"])
        travellers = self._travellers_for(traveller_ids, flight)
        left = flight["cabins"][cabin]["seats_left"]
        if left < len(travellers):
            raise AppError("limit", f"only {left} {cabin} seat(s) left on {flight['flight_id']}: choose another "
                                    "cabin or flight")
        fid = flight["flight_id"]
        sold = self.state["sold"].setdefault(fid, {})
        sold[cabin] = sold.get(cabin, 0) + len(travellers)
        record = self._record("flight", travellers, money(flight["cabins"][cabin]["fare"] * len(travellers)),
                              flight["depart_at"], flight_id=fid, cabin=cabin)
        return self._store(record)

    @tool(read_only=False, destructive=True, idempotent=True)
    def select_seat(self, booking_id: BookingId, traveller_id: TravellerId, seat: Seat) -> Booking:
        """Choose (or change) one traveller's seat on a booked flight; get_seat_map shows the free seats."""
        booking = self._confirmed(booking_id, "flight")
        if traveller_id not in booking["travellers"]:
            raise AppError("not_found", f"traveller '{traveller_id}' is not on booking {booking_id} (travellers: "
                                        f"{', '.join(booking['travellers'])})")
        flight = self._flight(booking["flight_id"])
        self._not_departed(flight["depart_at"], booking["flight_id"])
        seat = seat.strip().upper()
        rows, letters = world.CABINS[booking["cabin"]]
        if not (seat[:-1].isdigit() and int(seat[:-1]) in rows and seat[-1] in letters):
            raise AppError("invalid", f"seat {seat} is not in {booking['cabin']} (rows {rows[0]}-{rows[-1]}, seats "
                                      f"{' '.join(letters)}): get_seat_map shows the free seats")
        if booking["seats"].get(traveller_id) != seat:
            if seat in world.occupied_seats(self, flight, booking["cabin"]):
                raise AppError("conflict", f"seat {seat} is taken: get_seat_map shows the free seats")
            booking["seats"][traveller_id] = seat
        return self._view(booking_id)

    @tool(read_only=False, destructive=True)
    def book_hotel(
        self,
        hotel_id: HotelId,
        check_in: Day,
        check_out: Day,
        traveller_id: Annotated[str, Field(description="traveller profile id of the guest", max_length=40)],
        rooms: Annotated[int, Field(description="rooms to book (1-4)", ge=1, le=4)] = 1,
    ) -> Booking:
        """Book hotel rooms for a stay (check-out day not included), charged to the card on file."""
        hotel = self._hotel(hotel_id)
        self._traveller(traveller_id)
        stay = self._stay(check_in, check_out)
        left = world.rooms_left(self, hotel_id, stay)
        if left < rooms:
            raise AppError("conflict", f"{hotel['name']} has {left} room(s) free on every night of that stay "
                                       f"(it is full or overbooked): search_hotels for another hotel in {hotel['city']}")
        booked = self.state["hotel_nights"].setdefault(hotel_id, {})
        for night in stay:
            booked[night] = booked.get(night, 0) + rooms
        start = later(datetime.fromisoformat(check_in + "T00:00:00+00:00"), hours=CHECK_IN_HOUR)
        record = self._record("hotel", [traveller_id], money(hotel["nightly_rate"] * len(stay) * rooms), start,
                              hotel_id=hotel_id, check_in=check_in, check_out=check_out, rooms=rooms)
        return self._store(record)

    @tool(read_only=True)
    def list_bookings(
        self,
        status: Annotated[Literal["confirmed", "cancelled"] | None, Field(description="only this status")] = None,
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> BookingPage:
        """All flight and hotel bookings in start-time order, optionally by status, paginated."""
        of_status: dict[str, Any] = {} if status is None else {"status": status}
        ids = self.ordered("bookings", ("starts_at", BY_KEY), keys=True, **of_status)
        chunk, meta = paginate(ids, page, page_size)
        return BookingPage(bookings=[self._view(b) for b in chunk], **meta)

    @tool(read_only=True)
    def get_booking(self, booking_id: BookingId) -> Booking:
        """One booking with its travellers, seats, amounts and status."""
        self._booking(booking_id)
        return self._view(booking_id)

    @tool(read_only=True)
    def get_itinerary(
        self,
        traveller_id: Annotated[str | None, Field(description="only this traveller's trips", max_length=40)] = None,
        page: Page = 1,
        page_size: PageSize = 20,
    ) -> Itinerary:
        """The confirmed flights and hotel stays still ahead, in time order (for one traveller or everyone), 20
        a page by default."""
        if traveller_id is not None:
            self._traveller(traveller_id)
        bookings, now = self.state["bookings"], iso(self.now)
        riders = (_riders, (traveller_id, "confirmed"))
        trips = self.ordered("bookings", ("starts_at", BY_KEY), keys=True, having=riders)
        ahead = self.ordered("bookings", _by_end, keys=True, having=riders, within=(now, None))
        found = (b for b in trips if _ends_at(bookings[b]) >= now)  # read up to the page's end, counted by `ahead`
        chunk, meta = paginate_counted(found, len(ahead), page, page_size)
        return Itinerary(traveller_id=traveller_id, segments=[self._view(b) for b in chunk], **meta)

    @tool(read_only=False)
    def quote_cancellation(self, booking_id: BookingId) -> CancellationQuote:
        """Step 1 of cancelling: the fee and refund for cancelling a booking now, as a quote valid 15 minutes."""
        booking = self._confirmed(booking_id, None)
        fee = self._cancel_fee(booking_id, booking)
        quote_id = self.new_id("q")
        quote = {"booking_id": booking_id, "fee": fee, "refund": money(booking["total"] - fee),
                 "expires_at": later(self.now, minutes=QUOTE_MINUTES)}
        self.state["quotes"][quote_id] = quote
        return CancellationQuote(quote_id=quote_id, **quote)

    @tool(read_only=False, destructive=True, idempotent=True)
    def cancel_booking(
        self,
        booking_id: BookingId,
        quote_id: Annotated[str, Field(description="quote id from quote_cancellation for this booking",
                                       max_length=40)],
    ) -> Booking:
        """Step 2 of cancelling: cancel a booking, accepting the fee of a live quote from quote_cancellation;
        the refund goes back to the card. Cancelling a cancelled booking changes nothing."""
        booking = self._booking(booking_id)
        if booking["status"] == "cancelled":
            return self._view(booking_id)
        quote = self.state["quotes"].get(quote_id)
        if quote is None or quote["booking_id"] != booking_id:
            raise AppError("precondition", f"'{quote_id}' is not a quote for {booking_id}: call quote_cancellation "
                                           "first and pass its quote_id")
        if parse_iso(quote["expires_at"]) <= self.now:
            raise AppError("precondition", f"quote {quote_id} expired at {quote['expires_at']}: call "
                                           "quote_cancellation again")
        self._release(booking)
        booking.update(status="cancelled", refund=quote["refund"])
        del self.state["quotes"][quote_id]
        return self._view(booking_id)

    # --- helpers ------------------------------------------------------------------------
    def _not_departed(self, depart_at: str, flight_id: str) -> None:
        if parse_iso(depart_at) <= self.now:
            raise AppError("conflict", f"flight {flight_id} departed at {depart_at}: pick a later flight")

    def _travellers_for(self, traveller_ids: list[str], flight: dict[str, Any]) -> list[str]:
        if len(set(traveller_ids)) != len(traveller_ids):
            raise AppError("invalid", "a traveller is listed twice: give each traveller id once")
        day = flight["depart_at"][:10]
        for tid in traveller_ids:
            person = self._traveller(tid)
            who = f"{person['first_name']} {person['last_name']} ({tid})"
            if flight["international"] and not person["passport_number"]:
                raise AppError("precondition", f"{who} has no passport on file and {flight['flight_id']} is "
                                               "international: add it with update_traveller_passport")
            if flight["international"] and (person["passport_expires"] or "") <= day:
                raise AppError("precondition", f"the passport of {who} expires {person['passport_expires']}, before "
                                               "the flight: record the new passport with update_traveller_passport")
            self._no_overlap(tid, who, flight)
        return traveller_ids

    def _no_overlap(self, tid: str, who: str, flight: dict[str, Any]) -> None:
        """No confirmed flight of the traveller's overlaps `flight`; the conflict named is the first booking in
        the map's order, as a walk finds it. The traveller's bookings are read off the itinerary's sorted
        index, each distinct flight tested once (however many bookings hold it)."""
        start, end = parse_iso(flight["depart_at"]), parse_iso(flight["arrive_at"])
        bookings = for_reading(self.state["bookings"])
        overlaps: dict[str, bool] = {}
        clashing: set[str] = set()
        for bid in self.ordered("bookings", ("starts_at", BY_KEY), keys=True, having=(_riders, (tid, "confirmed"))):
            b = bookings[bid]
            if b["kind"] != "flight":
                continue
            if b["flight_id"] not in overlaps:
                other = world.flight_on(self, b["flight_id"], since=date.min)
                overlaps[b["flight_id"]] = other is not None and parse_iso(other["depart_at"]) < end \
                    and start < parse_iso(other["arrive_at"])
            if overlaps[b["flight_id"]]:
                clashing.add(bid)
        if clashing:
            bid = next(k for k in bookings if k in clashing)
            raise AppError("conflict", f"{who} is already flying {bookings[bid]['flight_id']} at that time (booking "
                                       f"{bid}): cancel it first or choose another flight")

    def _booking(self, booking_id: str) -> dict[str, Any]:
        return lookup(self.state["bookings"], booking_id,
                      f"no booking '{booking_id}': list_bookings shows booking ids")

    def _confirmed(self, booking_id: str, kind: str | None) -> dict[str, Any]:
        booking = self._booking(booking_id)
        if booking["status"] != "confirmed":
            raise AppError("conflict", f"booking {booking_id} is {booking['status']}")
        if kind and booking["kind"] != kind:
            raise AppError("invalid", f"booking {booking_id} is a {booking['kind']} booking, not a {kind} booking")
        return booking

    def _cancel_fee(self, booking_id: str, booking: dict[str, Any]) -> float:
        start = parse_iso(booking["starts_at"])
        if start <= self.now:
            raise AppError("conflict", f"booking {booking_id} has already started ({booking['starts_at']}) and "
                                       "cannot be cancelled")
        if booking["kind"] == "flight":
            if self.now < parse_iso(booking["booked_at"]) + timedelta(hours=world.FREE_CANCEL_HOURS):
                return 0.0
            return money(booking["total"] * world.RULES[booking["cabin"]][1] / 100)
        hotel = world.network(self)["hotels"][booking["hotel_id"]]
        if self.now <= start - timedelta(days=hotel["free_cancellation_days"]):
            return 0.0
        return money(hotel["nightly_rate"] * booking["rooms"])

    def _release(self, booking: dict[str, Any]) -> None:
        if booking["kind"] == "flight":
            sold = self.state["sold"][booking["flight_id"]]
            sold[booking["cabin"]] -= len(booking["travellers"])
            return
        booked = self.state["hotel_nights"][booking["hotel_id"]]
        stay = world.nights(date.fromisoformat(booking["check_in"]), date.fromisoformat(booking["check_out"]))
        for night in stay:
            booked[night] -= booking["rooms"]

    def _record(self, kind: str, travellers: list[str], total: float, starts_at: str, **fields: Any
                ) -> dict[str, Any]:
        base = {"flight_id": None, "cabin": None, "hotel_id": None, "check_in": None, "check_out": None,
                "rooms": None}
        return {"kind": kind, "status": "confirmed", "booked_at": iso(self.now), "travellers": list(travellers),
                "total": total, "refund": 0.0, "seats": {}, **base, **fields, "starts_at": starts_at}

    def _store(self, record: dict[str, Any]) -> Booking:
        booking_id = self.new_id("bk")
        self.state["bookings"][booking_id] = record
        return self._view(booking_id)

    def _view(self, booking_id: str) -> Booking:
        return Booking(booking_id=booking_id, **self.state["bookings"][booking_id])
