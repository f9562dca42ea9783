"""The travel app's seeded world and the rules that turn it into flights, fares, seats and hotel rooms.

The route network and the hotel directory are reference data: sampled once per seed (`network`, cached,
never mutated) and kept out of the state, which holds only what tools change: travellers, bookings (with
chosen seats), quotes, and the seats and rooms sold. A flight on a given day is computed from its route,
the day and the route's own seed, so ~90 days of schedule exist while a write call stays cheap to
checkpoint.

The user and two colleagues are the cast of the seeded world (`framework.world`), shared with mail and
calendar. Messy on purpose: the user already has a trip booked (no seat chosen), the destination's
best-rated hotel is overbooked for those nights, and a colleague's passport has expired.
"""

from __future__ import annotations

import math
import random
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any

from cworld.sandbox.apps._shared.records import lookup
from cworld.sandbox.apps._shared.values import iso, later, money, parse_day
from cworld.sandbox.framework import AppError, SandboxApp, kb, world
from cworld.sandbox.framework.journal import for_reading
from cworld.seeding import derive_rng

SCHEDULE_DAYS = 90
ROUTE_PAIRS = 32
HOTELS_PER_CITY = 2
SLOTS = ("06:40", "08:15", "10:05", "12:30", "15:20", "17:45", "20:10")
AIRCRAFT = ("A320neo", "A321neo", "737 MAX 8", "A350-900", "787-9", "E195-E2")
CABINS: dict[str, tuple[range, str]] = {  # rows, seat letters
    "business": (range(1, 5), "ACDF"),
    "premium": (range(6, 10), "ABCDEF"),
    "economy": (range(11, 41), "ABCDEF"),
}
FARE_FACTOR = {"economy": 1.0, "premium": 1.9, "business": 3.6}
RULES = {  # checked bags, cancel fee percent after the free period
    "economy": (0, 50.0),
    "premium": (1, 25.0),
    "business": (2, 0.0),
}
FREE_CANCEL_HOURS = 24


def airports() -> dict[str, dict[str, Any]]:
    return {a["iata"]: a for a in kb.load("airports")}


@lru_cache(maxsize=64)
def _network(seed: int) -> dict[str, Any]:
    rng = derive_rng(seed, "sandbox:travel:network")
    routes = _routes(rng, home_airports(world.cast(seed)["me"]))
    cities = sorted({airports()[r["destination"]]["city"] for r in routes.values()})
    return {"routes": routes, "hotels": _hotels(rng, cities)}


def network(app: SandboxApp) -> dict[str, Any]:
    """The session's routes and hotels (shared, read-only: tools copy out what they return)."""
    return _network(app.session.seed)


def seed_state(app: SandboxApp, rng: random.Random) -> dict[str, Any]:
    cast = world.cast(app.session.seed)
    people = [cast["me"], *cast["colleagues"][:2]]
    state: dict[str, Any] = {
        "travellers": _travellers(app, rng, people),
        "sold": {},
        "hotel_nights": {},
        "bookings": {},
        "quotes": {},
    }
    _existing_trip(app, rng, state, home_airports(people[0]))
    return state


def home_airports(person: dict[str, Any]) -> list[str]:
    """The airports of the user's city; failing that, of their country; failing that, the first one listed."""
    ports = airports()
    for key, value in (("city", person["city"]), ("country", person["country"])):
        found = sorted(c for c, a in ports.items() if a[key] == value)
        if found:
            return found
    return [min(ports)]


def _routes(rng: random.Random, home: list[str]) -> dict[str, Any]:
    ports = airports()
    codes = sorted(ports)
    home_cities = {ports[h]["city"] for h in home}
    pairs: set[tuple[str, str]] = set()
    for h in home:
        for d in rng.sample([c for c in codes if ports[c]["city"] not in home_cities], 10):
            pairs.add((min(h, d), max(h, d)))
    while len(pairs) < ROUTE_PAIRS:
        a, b = rng.sample(codes, 2)
        if ports[a]["city"] != ports[b]["city"]:
            pairs.add((min(a, b), max(a, b)))
    numbers: set[str] = set()
    routes: dict[str, Any] = {}
    for a, b in sorted(pairs):
        airline = _airline(rng, ports[a]["region"], ports[b]["region"])
        for origin, dest in ((a, b), (b, a)):
            routes[f"{origin}-{dest}"] = _route(rng, ports, origin, dest, airline, numbers)
    return routes


def _airline(rng: random.Random, *regions: str) -> dict[str, Any]:
    carriers = [x for x in kb.load("airlines") if x["home_region"] in regions]
    return rng.choice(carriers or list(kb.load("airlines")))


def _route(rng: random.Random, ports: dict[str, Any], origin: str, dest: str, airline: dict[str, Any],
           numbers: set[str]) -> dict[str, Any]:
    km = _km(ports[origin], ports[dest])
    flights = []
    for slot in sorted(rng.sample(SLOTS, rng.randint(1, 3))):
        number = f"{airline['code']}{rng.randrange(100, 1000)}"
        while number in numbers:
            number = f"{airline['code']}{rng.randrange(100, 1000)}"
        numbers.add(number)
        flights.append({"number": number, "departs": slot})
    return {"origin": origin, "destination": dest, "airline": airline["name"],
            "duration_minutes": int(35 + km / 820 * 60), "base_fare": money(45 + 0.075 * km),
            "aircraft": rng.choice(AIRCRAFT), "load": round(rng.uniform(0.35, 0.95), 2),
            "international": ports[origin]["country"] != ports[dest]["country"],
            "seed": rng.randrange(2**31), "flights": flights}


def _km(a: dict[str, Any], b: dict[str, Any]) -> float:
    p1, p2 = math.radians(a["lat"]), math.radians(b["lat"])
    dlon = math.radians(b["lon"] - a["lon"])
    c = math.sin(p1) * math.sin(p2) + math.cos(p1) * math.cos(p2) * math.cos(dlon)
    return 6371 * math.acos(max(-1.0, min(1.0, c)))


def _travellers(app: SandboxApp, rng: random.Random, people: list[dict[str, Any]]) -> dict[str, Any]:
    """You (valid passport), a colleague whose passport expired, and one with no passport on file."""
    today = app.now.date()
    expiries = [today + timedelta(days=rng.randrange(400, 2900)), today - timedelta(days=rng.randrange(20, 300)),
                None]
    found = {}
    for n, (person, expires) in enumerate(zip(people, expiries, strict=True)):
        born = date(today.year - rng.randrange(24, 62), rng.randrange(1, 13), rng.randrange(1, 29))
        found[app.new_id("trv")] = {
            "first_name": person["first"], "last_name": person["last"], "date_of_birth": born.isoformat(),
            "nationality": person["country"],
            "passport_number": f"{rng.choice('PXKLM')}{rng.randrange(10**7, 10**8)}" if expires else None,
            "passport_expires": expires.isoformat() if expires else None, "is_primary": n == 0,
        }
    return found


def _hotels(rng: random.Random, cities: list[str]) -> dict[str, Any]:
    hotels: dict[str, Any] = {}
    for city in cities:
        listed = [r for r in kb.load("hotels") if r["city"] == city]
        for record in rng.sample(listed, min(HOTELS_PER_CITY, len(listed))):
            rate = money(record["nightly_rate"] * rng.uniform(0.85, 1.25))
            hotels[f"htl_{len(hotels) + 1:03d}"] = {**{k: v for k, v in record.items() if k != "nightly_rate"},
                                                     "nightly_rate": rate}
    return hotels


def _existing_trip(app: SandboxApp, rng: random.Random, state: dict[str, Any], home: list[str]) -> None:
    """A booked trip from home for the user, no seat chosen, and an overbooked hotel where it lands."""
    primary = next(t for t, v in state["travellers"].items() if v["is_primary"])
    net = network(app)
    key = rng.choice(sorted(k for k, r in net["routes"].items() if r["origin"] in home))
    route = net["routes"][key]
    day = app.now.date() + timedelta(days=rng.randrange(6, 15))
    flight = build_flight(net, state, key, route["flights"][0]["departs"], day)
    flight_id = flight["flight_id"]
    fare = flight["cabins"]["economy"]["fare"]
    state["sold"][flight_id] = {"economy": 1}
    state["bookings"][app.new_id("bk")] = {
        "kind": "flight", "status": "confirmed", "booked_at": later(app.now, days=-rng.randrange(3, 30)),
        "travellers": [primary], "total": fare, "refund": 0.0, "flight_id": flight_id, "cabin": "economy",
        "seats": {}, "hotel_id": None, "check_in": None, "check_out": None, "rooms": None,
        "starts_at": flight["depart_at"],
    }
    city = airports()[route["destination"]]["city"]
    hotels = net["hotels"]
    crowded = max((h for h, v in hotels.items() if v["city"] == city), key=lambda h: (hotels[h]["rating"], h))
    nights = {(day + timedelta(days=n)).isoformat(): hotels[crowded]["rooms"] + 1 for n in range(3)}
    state["hotel_nights"][crowded] = nights


# --- flights ----------------------------------------------------------------------------------
def find_number(net: dict[str, Any], number: str) -> tuple[str, str] | None:
    """(route key, departure slot) of a flight number, or None."""
    for key, route in net["routes"].items():
        for f in route["flights"]:
            if f["number"] == number:
                return key, f["departs"]
    return None


def flight_on(app: SandboxApp, flight_id: str, since: date | None = None) -> dict[str, Any] | None:
    """The flight `NUMBER-YYYYMMDD` as bookable data, or None when no such flight is scheduled (the schedule
    runs from `since`, today by default, for SCHEDULE_DAYS days)."""
    number, _, day_text = flight_id.strip().upper().partition("-")
    net = network(app)
    found = find_number(net, number)
    try:
        day = datetime.strptime(day_text, "%Y%m%d").date()
    except ValueError:
        return None
    first = since or app.now.date()
    if found is None or not (first <= day <= app.now.date() + timedelta(days=SCHEDULE_DAYS)):
        return None
    key, slot = found
    return build_flight(net, app.state, key, slot, day)


def build_flight(net: dict[str, Any], state: dict[str, Any], key: str, slot: str, day: date) -> dict[str, Any]:
    route = net["routes"][key]
    number = next(f["number"] for f in route["flights"] if f["departs"] == slot)
    flight_id = f"{number}-{day:%Y%m%d}"
    hour, minute = (int(x) for x in slot.split(":"))
    depart = datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)
    cabins = {}
    for cabin in CABINS:
        load = seeded_load(route, flight_id, cabin)
        sold = state["sold"].get(flight_id, {}).get(cabin, 0)
        demand = 0.85 + 0.5 * load / capacity(cabin)
        cabins[cabin] = {"fare": money(route["base_fare"] * FARE_FACTOR[cabin] * demand),
                         "seats_left": max(0, capacity(cabin) - load - sold)}
    return {"flight_id": flight_id, "number": number, "route": key, **{k: route[k] for k in (
        "origin", "destination", "airline", "duration_minutes", "aircraft", "international")},
        "depart_at": iso(depart), "arrive_at": iso(depart + timedelta(minutes=route["duration_minutes"])),
        "cabins": cabins}


def capacity(cabin: str) -> int:
    rows, letters = CABINS[cabin]
    return len(rows) * len(letters)


def seeded_load(route: dict[str, Any], flight_id: str, cabin: str) -> int:
    """Seats other passengers hold: fixed by the route's seed, so the same flight is equally full every call."""
    rng = random.Random(f"{route['seed']}|{flight_id}|{cabin}")
    share = min(1.0, max(0.0, rng.gauss(route["load"], 0.15)))
    return int(share * capacity(cabin))


def occupied_seats(app: SandboxApp, flight: dict[str, Any], cabin: str) -> set[str]:
    rows, letters = CABINS[cabin]
    layout = [f"{r}{c}" for r in rows for c in letters]
    route = network(app)["routes"][flight["route"]]
    taken = set(random.Random(f"{route['seed']}|{flight['flight_id']}|{cabin}|seats").sample(
        layout, seeded_load(route, flight["flight_id"], cabin)))
    bookings = for_reading(app.state["bookings"])
    chosen = {seat for k in app.keys_where("bookings", flight_id=flight["flight_id"], status="confirmed")
              for seat in bookings[k]["seats"].values()}
    return taken | chosen


# --- hotels -----------------------------------------------------------------------------------
def nights(check_in: date, check_out: date) -> list[str]:
    return [(check_in + timedelta(days=n)).isoformat() for n in range((check_out - check_in).days)]


def rooms_left(app: SandboxApp, hotel_id: str, stay: list[str]) -> int:
    booked = app.state["hotel_nights"].get(hotel_id, {})
    rooms = network(app)["hotels"][hotel_id]["rooms"]
    return max(0, min(rooms - booked.get(night, 0) for night in stay))


MAX_NIGHTS = 30


class TravelBase(SandboxApp):
    """The look-ups both travel tool modules need (flights, travellers, hotels, stay dates)."""

    def _flight(self, flight_id: str) -> dict[str, Any]:
        flight = flight_on(self, flight_id)
        if flight is None:
            raise AppError("not_found", f"no scheduled flight '{flight_id}': ids look like AU412-20260514 and "
                                        f"cover the next {SCHEDULE_DAYS} days; search_flights gives them")
        return flight

    def _traveller(self, traveller_id: str) -> dict[str, Any]:
        return lookup(self.state["travellers"], traveller_id, f"no traveller profile '{traveller_id}': "
                      "list_travellers shows ids; add_traveller creates one")

    def _hotel(self, hotel_id: str) -> dict[str, Any]:
        return lookup(network(self)["hotels"], hotel_id, f"no hotel '{hotel_id}': search_hotels gives hotel ids")

    def _stay(self, check_in: str, check_out: str) -> list[str]:
        start, end = parse_day(check_in, "check_in"), parse_day(check_out, "check_out")
        today = self.now.date()
        if start < today:
            raise AppError("invalid", f"check_in {check_in} is in the past (today is {today}): pick a later date")
        if end <= start:
            raise AppError("invalid", "check_out must be after check_in")
        if (end - start).days > MAX_NIGHTS or start > today + timedelta(days=SCHEDULE_DAYS):
            raise AppError("invalid", f"stays are at most {MAX_NIGHTS} nights, starting within "
                                      f"{SCHEDULE_DAYS} days")
        return nights(start, end)
