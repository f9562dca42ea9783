"""Calendar and clock blocks: schedule a meeting (free slots, a room, a namesake to leave out), block a
trip in
the calendar, set a reminder in local time."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from cworld.sandbox.framework import world
from cworld.synth.offline.composer import Block, BlockFailed, Composer
from cworld.synth.offline.people import colleague, exclude_twin, first_name, namesakes
from cworld.synth.offline.phrases import day

CAL, CLOCK = "calendar/", "clock/"
MAX_EVENT_HOURS = 12


def _workday(c: Composer, lo: int, hi: int) -> date:
    when = c.today + timedelta(days=c.rng.randint(lo, hi))
    while when.weekday() >= 5:
        when += timedelta(days=1)
    return when


def meeting(c: Composer) -> None:
    directory = {p["name"]: pid for pid, p in c.state["calendar"]["directory"].items()}
    guests = [colleague(c, list(directory))]
    if c.rng.random() < 0.5:
        guests.append(
            colleague(
                c,
                list(directory),
                avoid=set(guests) | {n for g in guests for n in namesakes(g, list(directory))},
            )
        )
    minutes, video = c.rng.choice([30, 45, 60]), c.rng.random() < 0.5
    try:
        when, slot, room = _day_with_room(c, [directory[g] for g in guests], minutes, video)
    except BlockFailed:
        if len(guests) == 1:
            raise
        guests = guests[:1]  # two colleagues in far-apart time zones may share no working hours
        when, slot, room = _day_with_room(c, [directory[g] for g in guests], minutes, video)
    topic = c.pick(world.cast(c.seed)["topics"])
    title = topic["meeting"]
    c.subgoal("schedule_meeting", f"Schedule '{title}' with {', '.join(guests)}")
    refs = []
    for n, guest in enumerate(guests):
        found = c.step(
            f"find_guest_{n + 1}",
            CAL + "find_people",
            {"query": first_name(guest)},
            f"look up {guest}'s person id to invite them to {title}",
        )
        refs.append(found.ref(f"people[name={guest}].person_id"))
    slots = c.step(
        "free_slots",
        CAL + "find_free_slots",
        {"person_ids": refs, "date": when.isoformat(), "duration_minutes": minutes},
        f"find when {' and '.join(first_name(g) for g in guests)} and I are all free that day",
    )
    index = slots.value["slots"].index(slot)
    rooms = c.step(
        "rooms",
        CAL + "list_rooms",
        {
            "min_capacity": len(guests) + 1,
            "start": slots.ref(f"slots.{index}.0"),
            "end": slots.ref(f"slots.{index}.1"),
        },
        "check which meeting rooms are free for the meeting at that time",
    )
    event = c.step(
        "meeting",
        CAL + "create_event",
        {
            "title": title,
            "start": slots.ref(f"slots.{index}.0"),
            "end": slots.ref(f"slots.{index}.1"),
            "attendee_ids": refs,
            "room_id": rooms.ref(f"rooms[room_id={room['room_id']}].room_id"),
            "description": topic["agenda"],
        },
        f"put {title} in the calendar with the invitations and the room",
    )
    need = "a room with video" if video else "a room"
    c.decide(
        "slot",
        "trade_off",
        f"Take the earliest time that day when everyone is free and {need} for "
        f"{len(guests) + 1} is available, even if a later slot would suit the room better.",
        {"kind": "argument_equals", "tool": CAL + "create_event", "argument": "start", "value": slot[0]},
        ["finish_by"],
    )
    cutoff = f"{when.isoformat()}T{max(int(slot[1][11:13]) + 1, 17):02d}:00:00Z"
    c.decide(
        "finish_by",
        "deadline",
        f"The meeting has to be over by {cutoff[11:16]} UTC on {day(when)}.",
        {"kind": "deadline", "tool": CAL + "create_event", "argument": "end", "value": cutoff},
        ["slot"],
    )
    exclude_twin(c, "guest_twin", guests[0], directory, CAL + "create_event", "attendee_ids")
    c.say(
        f"Set up a {minutes}-minute '{title}' meeting with {' and '.join(guests)} on {day(when)}, with "
        f"{need}.",
        f"I need {minutes} minutes with {' and '.join(guests)} on {day(when)} about "
        f"{topic['agenda'].lower()}; "
        f"book it with {need}.",
    )
    c.hint(f"'{title}' is booked from {event.ref('start')} to {event.ref('end')} in room {room['name']}.")
    c.report("the meeting room", room["name"])
    c.report("the start time", event.ref("start"))
    c.facts.update(
        topic=f"the {title} meeting",
        when=when.isoformat(),
        people=guests,
        window=(event.ref("start"), event.ref("end"), slot[0], slot[1]),
        summary=f"'{title}' is on {day(when)}, {slot[0][11:16]}-{slot[1][11:16]} UTC, in {room['name']}.",
    )


def _day_with_room(c: Composer, person_ids: list[str], minutes: int, video: bool) -> tuple[date, Any, Any]:
    """The first of a few candidate workdays with a common free slot and a fitting room."""
    start = _workday(c, 1, 9)
    for offset in range(0, 7):
        when = start + timedelta(days=offset)
        if when.weekday() < 5:
            try:
                return (when, *_slot_with_room(c, person_ids, when, minutes, video))
            except BlockFailed:
                continue
    raise BlockFailed(f"no common free slot with a room in the week from {start}")


def _slot_with_room(
    c: Composer, person_ids: list[str], when: date, minutes: int, video: bool
) -> tuple[Any, Any]:
    free = (
        c.peek(
            CAL + "find_free_slots", person_ids=person_ids, date=when.isoformat(), duration_minutes=minutes
        )
        or {}
    )
    for slot in free.get("slots", []):
        listed = (
            c.peek(CAL + "list_rooms", min_capacity=len(person_ids) + 1, start=slot[0], end=slot[1]) or {}
        )
        rooms = [r for r in listed.get("rooms", []) if r["available"] and (r["video"] or not video)]
        if rooms:
            return slot, rooms[0]
    raise BlockFailed(f"no common free slot with a room on {when}")


def trip_event(c: Composer) -> None:
    start_ref, end_ref, start, end = c.facts["window"]
    if datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(
        start.replace("Z", "+00:00")
    ) > timedelta(hours=MAX_EVENT_HOURS):
        raise BlockFailed(f"the trip lasts over {MAX_EVENT_HOURS} hours, longer than a calendar event may")
    title = f"Travel: {c.facts['topic']}"
    c.subgoal("block_calendar", "Block the travel time in the calendar")
    event = c.step(
        "travel_event",
        CAL + "create_event",
        {"title": title, "start": start_ref, "end": end_ref, "allow_overlap": True},
        f"block the travel time of {c.facts['topic']} in my calendar",
    )
    c.say(
        "Block the travel time in my calendar so nobody books me then.",
        "Put the flight in my calendar, from take-off to landing.",
    )
    c.hint(f"Calendar blocked from {event.ref('start')} to {event.ref('end')}.")


def reminder(c: Composer) -> None:
    when = date.fromisoformat(c.facts["when"])
    local_now = c.now.astimezone(_zone(c)).replace(tzinfo=None)
    at = datetime.combine(when - timedelta(days=1), datetime.min.time()).replace(hour=18)
    if at <= local_now + timedelta(hours=1):
        at = datetime.combine(when, datetime.min.time()).replace(hour=7)
        if at <= local_now + timedelta(hours=1):
            raise BlockFailed("too late for a reminder")
    c.subgoal("reminder", "Set a reminder")
    c.step(
        "timezone",
        CLOCK + "get_timezone",
        {},
        "check my time zone, since the reminder is set in my local time",
    )
    c.step(
        "remind",
        CLOCK + "schedule_reminder",
        {"text": f"Coming up: {c.facts['topic']}", "at": at.isoformat()},
        f"remind me of {c.facts['topic']} ahead of time",
    )
    c.say(
        f"Remind me at {at:%H:%M} my time on {day(at.date())}.",
        f"Set a reminder for {at:%H:%M} (my local time) on {day(at.date())}.",
    )


def _zone(c: Composer) -> Any:
    from zoneinfo import ZoneInfo

    return ZoneInfo(c.state["clock"]["timezone"])


BLOCKS = [
    Block(
        "meeting",
        True,
        frozenset(CAL + n for n in ("find_people", "find_free_slots", "list_rooms", "create_event")),
        meeting,
        gives=frozenset({"topic", "summary", "when", "window", "people", "future"}),
    ),
    Block(
        "trip_event",
        False,
        frozenset({CAL + "create_event"}),
        trip_event,
        needs=frozenset({"window", "city"}),
    ),
    Block(
        "reminder",
        False,
        frozenset(CLOCK + n for n in ("get_timezone", "schedule_reminder")),
        reminder,
        needs=frozenset({"when", "future"}),
    ),
]
