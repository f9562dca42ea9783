"""Travel blocks: book a flight (with a fare trade-off, a budget, maybe a companion and a seat), book a
hotel."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from cworld.sandbox.framework import kb, world
from cworld.synth.offline.composer import BlockFailed, Composer, anchor, follow_up, on_argument, tools
from cworld.synth.offline.people import involve, usable
from cworld.synth.offline.phrases import clock_time, day, money, round_up

APP = "travel"
T = "travel/"


def _routes(c: Composer, home_city: str, when: date) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(origin, destination, flights by price) for every direct route from home on `when` (peeked)."""
    homes = [a["code"] for a in (c.peek(T + "find_airports", query=home_city) or {}).get("airports", [])]
    found = []
    for origin in homes:
        for port in kb.load("airports"):
            if port["city"] == home_city:
                continue
            page = (
                c.peek(
                    T + "search_flights",
                    origin=origin,
                    destination=port["iata"],
                    date=when.isoformat(),
                    sort="price",
                )
                or {}
            )
            flights = [f for f in page.get("flights", []) if f["seats_left"] >= 2]
            if flights:
                found.append((origin, port["iata"], flights))
    return found


def _free_day(c: Composer) -> date:
    """A travel day 4-30 days ahead, at least two days away from any trip already booked."""
    booked = {
        b["starts_at"][:10] for b in c.state["travel"]["bookings"].values() if b["status"] == "confirmed"
    }
    for _ in range(20):
        when = c.today + timedelta(days=c.rng.randint(4, 30))
        if all(abs((when - date.fromisoformat(d)).days) > 2 for d in booked):
            return when
    raise BlockFailed("no free travel day")


def _fare_rule(c: Composer, flights: list[dict[str, Any]]) -> tuple[dict[str, Any], str, str]:
    """The flight a stated preference selects, the preference's rule template and its departure floor."""
    cheapest = flights[0]
    later = [f for f in flights if clock_time(f["depart_at"]) > clock_time(cheapest["depart_at"])]
    if later and c.rng.random() < 0.7:
        floor = clock_time(min(later, key=lambda f: f["depart_at"])["depart_at"])
        chosen = min((f for f in flights if clock_time(f["depart_at"]) >= floor), key=lambda f: f["fare"])
        return chosen, "later_fare", floor
    return cheapest, "cheapest_fare", ""


def flight(c: Composer) -> None:
    me = world.cast(c.seed)["me"]
    when = _free_day(c)
    routes = _routes(c, me["city"], when)
    if not routes:
        raise BlockFailed(f"no direct flights from {me['city']} on {when}")
    multi = [r for r in routes if len(r[2]) > 1]
    origin, dest, flights = c.pick(multi or routes)
    city = next(p["city"] for p in kb.load("airports") if p["iata"] == dest)
    chosen, rule, floor = _fare_rule(c, flights)
    companion = _companion(c) if c.wants(T + "update_traveller_passport") else None
    c.subgoal("book_flight", city=city)
    c.step("home_airports", T + "find_airports", {"query": me["city"]}, city=me["city"])
    c.step("destination_airports", T + "find_airports", {"query": city}, city=city)
    asked = {"origin": origin, "destination": dest, "date": when.isoformat(), "sort": "price"}
    found = c.step("flights", T + "search_flights", asked, city=city)
    if c.wants(T + "get_fare_rules"):
        fare = {"flight_id": chosen["flight_id"], "cabin": "economy"}
        rules = c.step("fare_rules", T + "get_fare_rules", fare, city=city)
        c.hint(c.text("flight.fare_hint", city=city, fee=rules.ref("cancel_fee_percent")))
    people = c.step("travellers", T + "list_travellers", {})
    travellers = [people.ref("travellers[is_primary=true].traveller_id")]
    if companion:
        travellers.append(_renew_passport(c, people, companion))
    booked = {"flight_id": chosen["flight_id"], "cabin": "economy", "traveller_ids": travellers}
    book = c.step("book", T + "book_flight", booked, city=city)
    seats = _seat(c, book, people, chosen) if c.wants(T + "get_seat_map", T + "select_seat") else ""
    cap = round_up(book.value["total"] * 1.08, 50)
    fare = on_argument("argument_equals", T + "book_flight", "flight_id", chosen["flight_id"])
    c.decide("fare", "trade_off", fare, ["flight_budget"], rule=rule, floor=floor)
    total = {"kind": "budget", "tool": T + "book_flight", "field": "total", "value": cap}
    c.decide("flight_budget", "budget", total, ["fare"], cap=money(cap))
    mate = f"{companion['first_name']} {companion['last_name']}" if companion else ""
    party = {
        k: v.format(mate=mate) for k, v in c.book.mapping("flight.with" if mate else "flight.alone").items()
    }
    c.say(*c.variants("flight.say", home=me["city"], city=city, day=day(when), **party))
    if companion:
        renewed = {"number": companion["number"], "expires": companion["expires"]}
        c.say(c.text("flight.passport_say", first=companion["first_name"], **renewed))
    if seats:
        c.say(seats)
    departs, fare_total = book.ref("starts_at"), book.ref("total")
    c.hint(c.text("flight.hint", flight=book.ref("flight_id"), departs=departs, total=fare_total))
    c.report(c.text("flight.reports.flight"), chosen["flight_number"])
    c.report(c.text("flight.reports.total"), fare_total)
    c.facts.update(
        topic=c.text("flight.topic", city=city),
        city=city,
        when=when.isoformat(),
        traveller=travellers[0],
        arrive_day=chosen["arrive_at"][:10],
        window=(
            departs,
            found.ref(f"flights[flight_id={chosen['flight_id']}].arrive_at"),
            chosen["depart_at"],
            chosen["arrive_at"],
        ),
        amount=(fare_total, book.value["total"], c.text("flight.fact")),
        summary=c.text(
            "flight.summary",
            day=day(when),
            number=chosen["flight_number"],
            city=city,
            departs=departs,
            lands=chosen["arrive_at"],
        ),
    )


def _companion(c: Composer) -> dict[str, Any] | None:
    """A colleague's traveller profile whose passport expired: the request gives the renewed one."""
    for tid, profile in c.state["travel"]["travellers"].items():
        expires = profile.get("passport_expires")
        name = f"{profile['first_name']} {profile['last_name']}"
        if not profile["is_primary"] and expires and expires < c.today.isoformat() and usable(c, name):
            involve(c, name)
            number = f"{c.rng.choice('PXKLM')}{c.rng.randrange(10**7, 10**8)}"
            renewed = (c.today + timedelta(days=365 * c.rng.randint(5, 10))).isoformat()
            return {
                "id": tid,
                "first_name": profile["first_name"],
                "last_name": profile["last_name"],
                "number": number,
                "expires": renewed,
            }
    return None


def _renew_passport(c: Composer, people: Any, companion: dict[str, Any]) -> str:
    ref = people.ref(f"travellers[first_name={companion['first_name']}].traveller_id")
    renewed = {
        "traveller_id": ref,
        "passport_number": companion["number"],
        "passport_expires": companion["expires"],
    }
    c.step("renew_passport", T + "update_traveller_passport", renewed, first=companion["first_name"])
    return ref


def _seat(c: Composer, book: Any, people: Any, chosen: dict[str, Any]) -> str:
    seatmap = c.step("seat_map", T + "get_seat_map", {"flight_id": chosen["flight_id"], "cabin": "economy"})
    seat = next(
        (
            f"{row.split(':')[0]}{letter}"
            for row in seatmap.value["rows"]
            for letter in row.split(":")[1].split()
            if letter in "AF"
        ),
        None,
    )
    if seat is None:
        raise BlockFailed("no free window seat")
    reserved = {
        "booking_id": book.ref("booking_id"),
        "seat": seat,
        "traveller_id": people.ref("travellers[is_primary=true].traveller_id"),
    }
    c.step("seat", T + "select_seat", reserved)
    window = {"kind": "argument_equals", "tool": T + "select_seat", "argument": "seat", "value": seat}
    c.decide("seat", "trade_off", window, ["fare"])
    return c.rng.choice(c.variants("flight.seat_say"))


def hotel(c: Composer) -> None:
    city, arrival = c.facts.get("city"), c.facts.get("arrive_day") or c.facts.get("when")
    if city is None or arrival is None:
        city, arrival = _hotel_city(c)
    check_in = date.fromisoformat(arrival)
    check_out = check_in + timedelta(days=c.rng.randint(2, 4))
    page = (
        c.peek(T + "search_hotels", city=city, check_in=check_in.isoformat(), check_out=check_out.isoformat())
        or {}
    )
    open_ = [h for h in page.get("hotels", []) if h["rooms_left"] > 0]
    if not open_:
        raise BlockFailed(f"no hotel rooms in {city}")
    rates = sorted({h["nightly_rate"] for h in open_})
    cap = round((rates[-2] + rates[-1]) / 2, 2) if len(rates) > 1 else round_up(rates[0] + 1, 10)
    affordable = [h for h in open_ if h["nightly_rate"] <= cap]
    chosen = max(affordable, key=lambda h: (h["stars"], -h["nightly_rate"]))
    c.subgoal("book_hotel", city=city)
    stay = {"check_in": check_in.isoformat(), "check_out": check_out.isoformat()}
    search = c.step("hotels", T + "search_hotels", {"city": city, **stay}, city=city)
    if c.wants(T + "get_hotel"):
        c.step("hotel_details", T + "get_hotel", {"hotel_id": chosen["hotel_id"]}, city=city)
    traveller = c.facts.get("traveller") or c.step("travellers_for_hotel", T + "list_travellers", {}).ref(
        "travellers[is_primary=true].traveller_id"
    )
    hotel_ref = search.ref(f"hotels[hotel_id={chosen['hotel_id']}].hotel_id")
    book = c.step(
        "book_hotel", T + "book_hotel", {"hotel_id": hotel_ref, **stay, "traveller_id": traveller}, city=city
    )
    total_cap = round_up(book.value["total"] * 1.05, 25)
    picked = on_argument("argument_equals", T + "book_hotel", "hotel_id", chosen["hotel_id"])
    c.decide("hotel_pick", "trade_off", picked, ["hotel_budget"], cap=money(cap))
    total = {"kind": "budget", "tool": T + "book_hotel", "field": "total", "value": total_cap}
    c.decide("hotel_budget", "budget", total, ["hotel_pick"], cap=money(total_cap))
    nights = (check_out - check_in).days
    also = c.text("hotel.also") if "city" in c.facts else ""
    c.say(
        *c.variants("hotel.say", also=also, city=city, day=day(check_in), nights=nights, out=day(check_out))
    )
    booking, stay_total = book.ref("booking_id"), book.ref("total")
    c.hint(c.text("hotel.hint", hotel=chosen["name"], booking=booking, total=stay_total))
    c.report(c.text("hotel.reports.name"), chosen["name"])
    c.report(c.text("hotel.reports.total"), stay_total)
    c.facts.setdefault("topic", c.text("hotel.topic", city=city))
    c.facts.setdefault("when", check_in.isoformat())
    c.facts.setdefault("city", city)
    c.facts.setdefault("amount", (stay_total, book.value["total"], c.text("hotel.fact")))
    c.quote_in_summary(c.text("hotel.summary", hotel=chosen["name"], city=city, **stay))


def _hotel_city(c: Composer) -> tuple[str, str]:
    when = c.today + timedelta(days=c.rng.randint(4, 30))
    cities = sorted({p["city"] for p in kb.load("airports")})
    c.rng.shuffle(cities)
    for city in cities:
        page = (
            c.peek(
                T + "search_hotels",
                city=city,
                check_in=when.isoformat(),
                check_out=(when + timedelta(days=2)).isoformat(),
            )
            or {}
        )
        if any(h["rooms_left"] > 0 for h in page.get("hotels", [])):
            return city, when.isoformat()
    raise BlockFailed("no city with hotel rooms")


FLYING = tools(
    T,
    "find_airports",
    "search_flights",
    "get_fare_rules",
    "list_travellers",
    "book_flight",
    "get_seat_map",
    "select_seat",
    "update_traveller_passport",
)
STAYING = tools(T, "search_hotels", "get_hotel", "list_travellers", "book_hotel")
BLOCKS = [
    anchor("flight", APP, FLYING, flight, gives="topic summary when window amount city traveller future"),
    anchor("hotel", APP, STAYING, hotel, gives="topic summary when amount city future"),
    # The hotel again, as a follow-up: a stay in the city an anchor's trip goes to.
    follow_up("hotel_after", APP, STAYING, hotel, needs="city future"),
]
