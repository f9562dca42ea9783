"""What the travel app's tools take (argument types) and return (pydantic models: every tool has an output schema)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.records import Paged

Cabin = Literal["economy", "premium", "business"]
AirportCode = Annotated[str, Field(description="3-letter IATA airport code such as LIS; resolve city names with "
                                               "find_airports first", max_length=8)]
Day = Annotated[str, Field(description="date as YYYY-MM-DD", pattern=r"^\d{4}-\d{2}-\d{2}$")]
FlightId = Annotated[str, Field(description="flight id such as AU412-20260514, from search_flights",
                                max_length=40)]
CabinArg = Annotated[Cabin, Field(description="cabin class")]
TravellerId = Annotated[str, Field(description="traveller profile id such as trv_0001, from list_travellers",
                                   max_length=40)]
BookingId = Annotated[str, Field(description="booking id such as bk_0001, from list_bookings", max_length=40)]
HotelId = Annotated[str, Field(description="hotel id such as htl_0007, from search_hotels", max_length=40)]
Name = Annotated[str, Field(description="a name as printed in the passport", min_length=1, max_length=60)]
Passport = Annotated[str, Field(description="passport number", min_length=5, max_length=20)]


class Airport(BaseModel):
    code: str = Field(description="IATA code: what search_flights takes")
    name: str
    city: str
    country: str


class AirportList(Paged):
    airports: list[Airport]


class FlightOffer(BaseModel):
    flight_id: str
    airline: str
    flight_number: str
    origin: str
    destination: str
    depart_at: str = Field(description="UTC departure time")
    arrive_at: str = Field(description="UTC arrival time")
    duration_minutes: int
    cabin: str
    fare: float = Field(description="price per traveller in this cabin")
    seats_left: int


class FlightPage(Paged):
    flights: list[FlightOffer]
    note: str = Field(description="why the list may be empty (no route, sold out)")


class CabinFare(BaseModel):
    cabin: str
    fare: float
    seats_left: int


class Flight(BaseModel):
    flight_id: str
    airline: str
    flight_number: str
    origin: str
    destination: str
    depart_at: str
    arrive_at: str
    duration_minutes: int
    aircraft: str
    international: bool = Field(description="true when travellers need a passport valid on the day")
    cabins: list[CabinFare]


class FareRules(BaseModel):
    flight_id: str
    cabin: str
    fare: float
    checked_bags: int
    cancel_fee_percent: float = Field(description="share of the fare kept on cancellation after the free period")
    free_cancellation_hours: int = Field(description="hours after booking during which cancelling is free")
    seat_selection: bool


class SeatMap(BaseModel):
    flight_id: str
    cabin: str
    rows: list[str] = Field(description="one string per row: the seat labels still free, e.g. '14: A C F'")
    free_seats: int


class Traveller(BaseModel):
    traveller_id: str
    first_name: str
    last_name: str
    date_of_birth: str
    nationality: str
    passport_number: str | None
    passport_expires: str | None
    is_primary: bool


class TravellerList(Paged):
    travellers: list[Traveller]


class Hotel(BaseModel):
    hotel_id: str
    name: str
    city: str
    stars: int
    area: str
    nightly_rate: float
    rating: float
    amenities: list[str]
    free_cancellation_days: int = Field(description="cancel free of charge up to this many days before check-in")


class HotelOffer(BaseModel):
    hotel_id: str
    name: str
    stars: int
    area: str
    nightly_rate: float
    total: float = Field(description="price for the whole stay, one room")
    rooms_left: int = Field(description="rooms free on every night of the stay (0: cannot be booked)")


class HotelPage(Paged):
    city: str
    hotels: list[HotelOffer]


class Booking(BaseModel):
    booking_id: str
    kind: str = Field(description="flight or hotel")
    status: str = Field(description="confirmed or cancelled")
    booked_at: str
    travellers: list[str]
    total: float
    refund: float
    flight_id: str | None
    cabin: str | None
    seats: dict[str, str] = Field(description="traveller id -> seat, once chosen with select_seat")
    hotel_id: str | None
    check_in: str | None
    check_out: str | None
    rooms: int | None
    starts_at: str = Field(description="departure or check-in time (UTC)")


class BookingPage(Paged):
    bookings: list[Booking]


class CancellationQuote(BaseModel):
    quote_id: str = Field(description="pass to cancel_booking to accept the fee")
    booking_id: str
    fee: float
    refund: float
    expires_at: str = Field(description="the quote must be used before this time")


class Itinerary(Paged):
    traveller_id: str | None
    segments: list[Booking] = Field(description="confirmed bookings from now on, in time order")
