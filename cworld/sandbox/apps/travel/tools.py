"""The travel app's airport, flight, hotel and traveller tools."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.records import Page, PageSize, paginate, paginate_in_order
from cworld.sandbox.apps._shared.values import iso, matches, norm, parse_day, suggest
from cworld.sandbox.apps.travel import state as world
from cworld.sandbox.apps.travel.models import (
    Airport,
    AirportCode,
    AirportList,
    CabinArg,
    CabinFare,
    Day,
    FareRules,
    Flight,
    FlightId,
    FlightOffer,
    FlightPage,
    Hotel,
    HotelId,
    HotelOffer,
    HotelPage,
    Name,
    Passport,
    SeatMap,
    Traveller,
    TravellerId,
    TravellerList,
)
from cworld.sandbox.apps.travel.state import TravelBase
from cworld.sandbox.framework import AppError, tool


class TravelTools(TravelBase):
    """Tools of the travel app (a mixin of `TravelApp`)."""

    # --- airports and flights -----------------------------------------------------------
    @tool(read_only=True)
    def find_airports(
        self, query: Annotated[str, Field(description="city, airport name, country or code, e.g. 'London'",
                                          min_length=1, max_length=100)],
        page: Page = 1,
        page_size: PageSize = 20,
    ) -> AirportList:
        """Resolve a city or airport name to IATA codes (a city may have several airports; 20 a page by default);
        search_flights needs the codes."""
        found = [a for a in world.airports().values()
                 if matches(query, a["city"], a["name"], a["country"]) or norm(query) == a["iata"].lower()]
        chunk, meta = paginate(found, page, page_size)
        return AirportList(airports=[Airport(code=a["iata"], name=a["name"], city=a["city"], country=a["country"])
                                     for a in chunk], **meta)

    @tool(read_only=True)
    def search_flights(
        self,
        origin: AirportCode,
        destination: AirportCode,
        date: Day,
        cabin: CabinArg = "economy",
        sort: Annotated[Literal["departure", "price"], Field(description="result order")] = "departure",
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> FlightPage:
        """Direct flights from one airport to another on a date (UTC), with the fare and seats left in a cabin."""
        start, end = self._code(origin, "origin"), self._code(destination, "destination")
        day = parse_day(date, "date")
        today = self.now.date()
        if not today <= day <= today + timedelta(days=world.SCHEDULE_DAYS):
            raise AppError("invalid", f"flights can be searched from {today} to "
                                      f"{today + timedelta(days=world.SCHEDULE_DAYS)}; {date} is outside that")
        key, net = f"{start}-{end}", world.network(self)
        route = net["routes"].get(key)
        flights = [world.build_flight(net, self.state, key, f["departs"], day) for f in route["flights"]] if route else []
        offers = [self._offer(f, cabin) for f in flights if f["depart_at"] > iso(self.now)]
        offers.sort(key=lambda o: (o.fare, o.depart_at) if sort == "price" else (o.depart_at, o.fare))
        chunk, meta = paginate(offers, page, page_size)
        return FlightPage(flights=chunk, note=self._search_note(route, offers, start, end), **meta)

    @tool(read_only=True)
    def get_flight(self, flight_id: FlightId) -> Flight:
        """One flight's schedule, aircraft and the fare and seats left in every cabin."""
        f = self._flight(flight_id)
        cabins = [CabinFare(cabin=c, **v) for c, v in f["cabins"].items()]
        return Flight(flight_number=f["number"], cabins=cabins, **{k: f[k] for k in (
            "flight_id", "airline", "origin", "destination", "depart_at", "arrive_at", "duration_minutes",
            "aircraft", "international")})

    @tool(read_only=True)
    def get_fare_rules(self, flight_id: FlightId, cabin: CabinArg) -> FareRules:
        """The fare conditions of a cabin: bags, cancellation fee and its free period, seat selection."""
        f = self._flight(flight_id)
        bags, fee = world.RULES[cabin]
        return FareRules(flight_id=f["flight_id"], cabin=cabin, fare=f["cabins"][cabin]["fare"], checked_bags=bags,
                         cancel_fee_percent=fee, free_cancellation_hours=world.FREE_CANCEL_HOURS,
                         seat_selection=True)

    @tool(read_only=True)
    def get_seat_map(self, flight_id: FlightId, cabin: CabinArg) -> SeatMap:
        """The free seats of a cabin, row by row; select_seat takes one of these labels."""
        f = self._flight(flight_id)
        taken = world.occupied_seats(self, f, cabin)
        rows, letters = world.CABINS[cabin]
        lines = []
        for row in rows:
            free = [c for c in letters if f"{row}{c}" not in taken]
            if free:
                lines.append(f"{row}: {' '.join(free)}")
        free_count = len(rows) * len(letters) - len(taken)
        return SeatMap(flight_id=f["flight_id"], cabin=cabin, rows=lines, free_seats=free_count)

    # --- hotels -------------------------------------------------------------------------
    @tool(read_only=True)
    def search_hotels(
        self,
        city: Annotated[str, Field(description="city name, e.g. 'Lisbon'", min_length=1, max_length=100)],
        check_in: Day,
        check_out: Day,
        min_stars: Annotated[int, Field(description="lowest star rating (1-5)", ge=1, le=5)] = 1,
        max_rate: Annotated[float | None, Field(description="highest nightly rate", ge=0, le=1e6)] = None,
        page: Page = 1,
        page_size: PageSize = 10,
    ) -> HotelPage:
        """Hotels in a city with the price of the stay and the rooms free on every night (0 means full)."""
        hotels = world.network(self)["hotels"]
        cities = sorted({h["city"] for h in hotels.values()})
        place = next((c for c in cities if norm(c) == norm(city)), None)
        if place is None:
            raise AppError("not_found", f"no hotels listed in '{city}'.{suggest(city, cities)} Cities with hotels: "
                                        f"{', '.join(cities)}")
        stay = self._stay(check_in, check_out)
        offers = [HotelOffer(hotel_id=h, name=v["name"], stars=v["stars"], area=v["area"],
                             nightly_rate=v["nightly_rate"], total=round(v["nightly_rate"] * len(stay), 2),
                             rooms_left=world.rooms_left(self, h, stay))
                  for h, v in hotels.items() if v["city"] == place and v["stars"] >= min_stars
                  and (max_rate is None or v["nightly_rate"] <= max_rate)]
        offers.sort(key=lambda o: (-o.stars, o.nightly_rate, o.hotel_id))
        chunk, meta = paginate(offers, page, page_size)
        return HotelPage(city=place, hotels=chunk, **meta)

    @tool(read_only=True)
    def get_hotel(self, hotel_id: HotelId) -> Hotel:
        """One hotel's details: stars, area, rate, rating, amenities and its free-cancellation period."""
        hotel = self._hotel(hotel_id)
        return Hotel(hotel_id=hotel_id, **{k: v for k, v in hotel.items() if k != "rooms"})

    # --- travellers ---------------------------------------------------------------------
    @tool(read_only=True)
    def list_travellers(self, page: Page = 1, page_size: PageSize = 20) -> TravellerList:
        """The traveller profiles on the account, with passport details (20 a page by default); bookings take
        their ids."""
        chunk, meta = paginate_in_order(self.state["travellers"].items(), page, page_size)
        return TravellerList(travellers=[Traveller(traveller_id=t, **v) for t, v in chunk], **meta)

    @tool(read_only=False)
    def add_traveller(
        self,
        first_name: Name,
        last_name: Name,
        date_of_birth: Day,
        nationality: Annotated[str, Field(description="country of citizenship", min_length=2, max_length=60)],
        passport_number: Annotated[str | None, Field(description="passport number (needed to fly abroad)",
                                                     min_length=5, max_length=20)] = None,
        passport_expires: Annotated[str | None, Field(description="passport expiry date as YYYY-MM-DD",
                                                      pattern=r"^\d{4}-\d{2}-\d{2}$")] = None,
    ) -> Traveller:
        """Create a traveller profile (a companion, a colleague) and get its traveller_id."""
        born = parse_day(date_of_birth, "date_of_birth")
        if born >= self.now.date():
            raise AppError("invalid", "date_of_birth must be in the past")
        if (passport_number is None) != (passport_expires is None):
            raise AppError("invalid", "give passport_number and passport_expires together, or neither")
        if passport_expires is not None:
            self._valid_expiry(passport_expires)
        record = {"first_name": first_name.strip(), "last_name": last_name.strip(), "date_of_birth": date_of_birth,
                  "nationality": nationality.strip(), "passport_number": passport_number,
                  "passport_expires": passport_expires, "is_primary": False}
        traveller_id = self.new_id("trv")
        self.state["travellers"][traveller_id] = record
        return Traveller(traveller_id=traveller_id, **record)

    @tool(read_only=False, destructive=True, idempotent=True)
    def update_traveller_passport(
        self,
        traveller_id: TravellerId,
        passport_number: Passport,
        passport_expires: Annotated[str, Field(description="expiry date as YYYY-MM-DD",
                                               pattern=r"^\d{4}-\d{2}-\d{2}$")],
    ) -> Traveller:
        """Record a traveller's new passport (replaces the old number and expiry date)."""
        person = self._traveller(traveller_id)
        self._valid_expiry(passport_expires)
        person["passport_number"] = passport_number.strip().upper()
        person["passport_expires"] = passport_expires
        return Traveller(traveller_id=traveller_id, **person)

    # --- helpers ------------------------------------------------------------------------
    def _code(self, code: str, field: str) -> str:
        wanted = code.strip().upper()
        ports = world.airports()
        if wanted in ports:
            return wanted
        in_city = [c for c, a in ports.items() if norm(a["city"]) == norm(code)]
        if in_city:
            raise AppError("invalid", f"{field} '{code}' is a city, not an airport code: use one of "
                                      f"{', '.join(in_city)} (find_airports lists them)")
        raise AppError("not_found", f"{field} '{code}' is not a known IATA code: find_airports resolves names")

    def _valid_expiry(self, expires: str) -> None:
        if parse_day(expires, "passport_expires") <= self.now.date():
            raise AppError("invalid", f"passport_expires {expires} is not in the future: give the new passport's date")

    def _offer(self, f: dict[str, Any], cabin: str) -> FlightOffer:
        return FlightOffer(flight_number=f["number"], cabin=cabin, **f["cabins"][cabin], **{k: f[k] for k in (
            "flight_id", "airline", "origin", "destination", "depart_at", "arrive_at", "duration_minutes")})

    def _search_note(self, route: dict[str, Any] | None, offers: list[FlightOffer], start: str, end: str) -> str:
        if route is None:
            return (f"no direct flights from {start} to {end}: other airports of the same cities (find_airports) "
                    "or a connection may work")
        if not offers:
            return "no more departures that day"
        if all(o.seats_left == 0 for o in offers):
            return "every flight that day is sold out in this cabin: try another cabin or date"
        return ""
