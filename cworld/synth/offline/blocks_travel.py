"""Travel blocks: book a flight (with a fare trade-off, a budget, maybe a companion and a seat), book a
hotel.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from cworld.sandbox.framework import kb, world
from cworld.synth.offline.composer import Block, BlockFailed, Composer
from cworld.synth.offline.people import involve, usable
from cworld.synth.offline.phrases import clock_time, day, money, round_up

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


def _fare_rule(c: Composer, flights: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """The flight a stated preference selects, and the preference in words."""
    cheapest = flights[0]
    later = [f for f in flights if clock_time(f["depart_at"]) > clock_time(cheapest["depart_at"])]
    if later and c.rng.random() < 0.7:
        floor = clock_time(min(later, key=lambda f: f["depart_at"])["depart_at"])
        chosen = min((f for f in flights if clock_time(f["depart_at"]) >= floor), key=lambda f: f["fare"])
        return (
            chosen,
            f"Take the cheapest economy fare that leaves at {floor} UTC or later, even if an earlier one "
            "costs less.",
        )
    return cheapest, "Go for the cheapest economy fare on that day; the departure time doesn't matter."


def flight(c: Composer) -> None:
    me = world.cast(c.seed)["me"]
    when = _free_day(c)
    routes = _routes(c, me["city"], when)
    if not routes:
        raise BlockFailed(f"no direct flights from {me['city']} on {when}")
    multi = [r for r in routes if len(r[2]) > 1]
    origin, dest, flights = c.pick(multi or routes)
    city = next(p["city"] for p in kb.load("airports") if p["iata"] == dest)
    chosen, rule = _fare_rule(c, flights)
    companion = _companion(c) if c.wants(T + "update_traveller_passport") else None
    c.subgoal("book_flight", f"Book the {city} flight")
    c.step(
        "home_airports", T + "find_airports", {"query": me["city"]}, f"resolve {me['city']} to its airports"
    )
    c.step("destination_airports", T + "find_airports", {"query": city}, f"resolve {city} to its airports")
    found = c.step(
        "flights",
        T + "search_flights",
        {"origin": origin, "destination": dest, "date": when.isoformat(), "sort": "price"},
        f"list the flights to {city} on that day",
    )
    if c.wants(T + "get_fare_rules"):
        rules = c.step(
            "fare_rules",
            T + "get_fare_rules",
            {"flight_id": chosen["flight_id"], "cabin": "economy"},
            f"check the cancellation terms of the {city} fare before booking",
        )
        c.hint(
            f"Cancelling the {city} flight costs {rules.ref('cancel_fee_percent')}% after the free period."
        )
    people = c.step(
        "travellers", T + "list_travellers", {}, "get the traveller profile ids the flight booking needs"
    )
    travellers = [people.ref("travellers[is_primary=true].traveller_id")]
    if companion:
        travellers.append(_renew_passport(c, people, companion))
    book = c.step(
        "book",
        T + "book_flight",
        {"flight_id": chosen["flight_id"], "cabin": "economy", "traveller_ids": travellers},
        f"book the chosen flight to {city}",
    )
    seats = _seat(c, book, people, chosen) if c.wants(T + "get_seat_map", T + "select_seat") else ""
    cap = round_up(book.value["total"] * 1.08, 50)
    c.decide(
        "fare",
        "trade_off",
        rule,
        {
            "kind": "argument_equals",
            "tool": T + "book_flight",
            "argument": "flight_id",
            "value": chosen["flight_id"],
        },
        ["flight_budget"],
    )
    c.decide(
        "flight_budget",
        "budget",
        f"Keep the flight under {money(cap)} in total.",
        {"kind": "budget", "tool": T + "book_flight", "field": "total", "value": cap},
        ["fare"],
    )
    mate = f"{companion['first_name']} {companion['last_name']}" if companion else ""
    c.say(
        f"I need to fly from {me['city']} to {city} on {day(when)}; please book "
        f"it{' for ' + mate + ' and me' if mate else ''}.",
        f"Book a flight from {me['city']} to {city} on {day(when)} for {'me and ' + mate if mate else 'me'}.",
        f"I'm travelling to {city} on {day(when)}{' with ' + mate if mate else ''}: get the flight booked "
        f"from {me['city']}.",
    )
    if companion:
        c.say(
            f"{companion['first_name']}'s passport was renewed: the new number is {companion['number']}, "
            "valid "
            f"until {companion['expires']}, so update the traveller profile before booking."
        )
    if seats:
        c.say(seats)
    c.hint(
        f"Booked flight {book.ref('flight_id')} departing {book.ref('starts_at')}, total {book.ref('total')}."
    )
    c.report("the flight number", chosen["flight_number"])
    c.report("the total fare", book.ref("total"))
    c.facts.update(
        topic=f"the {city} trip",
        city=city,
        when=when.isoformat(),
        traveller=travellers[0],
        arrive_day=chosen["arrive_at"][:10],
        window=(
            book.ref("starts_at"),
            found.ref(f"flights[flight_id={chosen['flight_id']}].arrive_at"),
            chosen["depart_at"],
            chosen["arrive_at"],
        ),
        amount=(book.ref("total"), book.value["total"], "the flight"),
        summary=f"I'm booked on flight {chosen['flight_number']} to {city}, leaving {book.ref('starts_at')} "
        f"(UTC) and landing {chosen['arrive_at']}.",
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
    c.step(
        "renew_passport",
        T + "update_traveller_passport",
        {
            "traveller_id": ref,
            "passport_number": companion["number"],
            "passport_expires": companion["expires"],
        },
        f"record {companion['first_name']}'s renewed passport so the flight can be booked for both",
    )
    return ref


def _seat(c: Composer, book: Any, people: Any, chosen: dict[str, Any]) -> str:
    seatmap = c.step(
        "seat_map",
        T + "get_seat_map",
        {"flight_id": chosen["flight_id"], "cabin": "economy"},
        "see which window seats are still free on the flight",
    )
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
    c.step(
        "seat",
        T + "select_seat",
        {
            "booking_id": book.ref("booking_id"),
            "seat": seat,
            "traveller_id": people.ref("travellers[is_primary=true].traveller_id"),
        },
        "reserve my window seat on the booked flight",
    )
    c.decide(
        "seat",
        "trade_off",
        "I want a window seat, as close to the front as possible; an aisle seat further "
        "forward doesn't count.",
        {"kind": "argument_equals", "tool": T + "select_seat", "argument": "seat", "value": seat},
        ["fare"],
    )
    return c.rng.choice(
        ["Pick a window seat for me near the front.", "Get me a window seat, as far forward as possible."]
    )


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
    c.subgoal("book_hotel", f"Book a hotel in {city}")
    search = c.step(
        "hotels",
        T + "search_hotels",
        {"city": city, "check_in": check_in.isoformat(), "check_out": check_out.isoformat()},
        f"find hotels with free rooms in {city} for those nights",
    )
    if c.wants(T + "get_hotel"):
        c.step(
            "hotel_details",
            T + "get_hotel",
            {"hotel_id": chosen["hotel_id"]},
            f"read the {city} hotel's details",
        )
    traveller = c.facts.get("traveller") or c.step(
        "travellers_for_hotel", T + "list_travellers", {}, "get my traveller id for booking the hotel stay"
    ).ref("travellers[is_primary=true].traveller_id")
    book = c.step(
        "book_hotel",
        T + "book_hotel",
        {
            "hotel_id": search.ref(f"hotels[hotel_id={chosen['hotel_id']}].hotel_id"),
            "check_in": check_in.isoformat(),
            "check_out": check_out.isoformat(),
            "traveller_id": traveller,
        },
        f"book the chosen {city} hotel",
    )
    total_cap = round_up(book.value["total"] * 1.05, 25)
    c.decide(
        "hotel_pick",
        "trade_off",
        f"For the hotel, get the most stars you can without paying more than {money(cap)} a night.",
        {
            "kind": "argument_equals",
            "tool": T + "book_hotel",
            "argument": "hotel_id",
            "value": chosen["hotel_id"],
        },
        ["hotel_budget"],
    )
    c.decide(
        "hotel_budget",
        "budget",
        f"The whole hotel stay must stay under {money(total_cap)}.",
        {"kind": "budget", "tool": T + "book_hotel", "field": "total", "value": total_cap},
        ["hotel_pick"],
    )
    nights = (check_out - check_in).days
    also = "also " if "city" in c.facts else ""
    c.say(
        f"I {also}need a hotel in {city} from {day(check_in)} for {nights} nights.",
        f"Find me somewhere to stay in {city}, checking in {day(check_in)} and out {day(check_out)}.",
    )
    c.hint(f"Hotel {chosen['name']} booked ({book.ref('booking_id')}), total {book.ref('total')}.")
    c.report("the hotel's name", chosen["name"])
    c.report("what the stay costs", book.ref("total"))
    c.facts.setdefault("topic", f"my stay in {city}")
    c.facts.setdefault("when", check_in.isoformat())
    c.facts.setdefault("city", city)
    c.facts.setdefault("amount", (book.ref("total"), book.value["total"], "the hotel"))
    c.quote_in_summary(
        f"I'm staying at {chosen['name']} from {check_in.isoformat()} to {check_out.isoformat()}."
    )


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


BLOCKS = [
    Block(
        "flight",
        True,
        frozenset(
            T + n
            for n in (
                "find_airports",
                "search_flights",
                "get_fare_rules",
                "list_travellers",
                "book_flight",
                "get_seat_map",
                "select_seat",
                "update_traveller_passport",
            )
        ),
        flight,
        gives=frozenset({"topic", "summary", "when", "window", "amount", "city", "traveller", "future"}),
    ),
    Block(
        "hotel",
        True,
        frozenset(T + n for n in ("search_hotels", "get_hotel", "list_travellers", "book_hotel")),
        hotel,
        gives=frozenset({"topic", "summary", "when", "amount", "city", "future"}),
    ),
]
