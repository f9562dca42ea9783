"""Calendar blocks: schedule a meeting (free slots, a room, a namesake to leave out), block a trip in the
calendar."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from cworld.sandbox.framework import world
from cworld.synth.offline.blocks.dictated import dictated
from cworld.synth.offline.composer import BlockFailed, Composer, anchor, follow_up, tools
from cworld.synth.offline.people import colleague, exclude_twin, first_name, namesakes
from cworld.synth.offline.phrases import day

APP = "calendar"
CAL = "calendar/"
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
    title, agenda = dictated(topic["meeting"]), dictated(topic["agenda"])
    c.subgoal("schedule_meeting", title=title, guests=", ".join(guests))
    refs = []
    for n, guest in enumerate(guests):
        query = {"query": first_name(guest)}
        found = c.step(
            f"find_guest_{n + 1}", CAL + "find_people", query, why="find_guest", guest=guest, title=title
        )
        refs.append(found.ref(f"people[name={guest}].person_id"))
    asked = {"person_ids": refs, "date": when.isoformat(), "duration_minutes": minutes}
    slots = c.step(
        "free_slots", CAL + "find_free_slots", asked, guests=" and ".join(first_name(g) for g in guests)
    )
    index = slots.value["slots"].index(slot)
    start, end = slots.ref(f"slots.{index}.0"), slots.ref(f"slots.{index}.1")
    rooms = c.step("rooms", CAL + "list_rooms", {"min_capacity": len(guests) + 1, "start": start, "end": end})
    event = c.step(
        "meeting",
        CAL + "create_event",
        {
            "title": title,
            "start": start,
            "end": end,
            "attendee_ids": refs,
            "room_id": rooms.ref(f"rooms[room_id={room['room_id']}].room_id"),
            "description": agenda,
        },
        title=title,
    )
    need = c.text("meeting.video_room" if video else "meeting.room")
    earliest = {
        "kind": "argument_equals",
        "tool": CAL + "create_event",
        "argument": "start",
        "value": slot[0],
    }
    c.decide("slot", "trade_off", earliest, ["finish_by"], need=need, people=len(guests) + 1)
    cutoff = f"{when.isoformat()}T{max(int(slot[1][11:13]) + 1, 17):02d}:00:00Z"
    over = {"kind": "deadline", "tool": CAL + "create_event", "argument": "end", "value": cutoff}
    c.decide("finish_by", "deadline", over, ["slot"], cutoff=cutoff[11:16], day=day(when))
    exclude_twin(c, "guest_twin", guests[0], directory, CAL + "create_event", "attendee_ids")
    asked_for = {"minutes": minutes, "title": title, "guests": " and ".join(guests), "day": day(when)}
    c.say(*c.variants("meeting.say", need=need, agenda=agenda, **asked_for))
    start_ref, end_ref = event.ref("start"), event.ref("end")
    c.hint(c.text("meeting.hint", title=title, start=start_ref, end=end_ref, room=room["name"]))
    c.report(c.text("meeting.reports.room"), room["name"])
    c.report(c.text("meeting.reports.start"), start_ref)
    c.facts.update(
        topic=c.text("meeting.topic", title=title),
        when=when.isoformat(),
        people=guests,
        window=(start_ref, end_ref, slot[0], slot[1]),
        summary=c.text(
            "meeting.summary",
            title=title,
            day=day(when),
            start=slot[0][11:16],
            end=slot[1][11:16],
            room=room["name"],
        ),
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
    topic = c.facts["topic"]
    c.subgoal("block_calendar")
    blocked = {
        "title": dictated(c.text("trip_event.title", topic=topic)),
        "start": start_ref,
        "end": end_ref,
        "allow_overlap": True,
    }
    event = c.step("travel_event", CAL + "create_event", blocked, topic=topic)
    c.say(*c.variants("trip_event.say", title=blocked["title"]))
    c.hint(c.text("trip_event.hint", start=event.ref("start"), end=event.ref("end")))


SCHEDULING = tools(CAL, "find_people", "find_free_slots", "list_rooms", "create_event")
BLOCKS = [
    anchor("meeting", APP, SCHEDULING, meeting, gives="topic summary when window people future"),
    follow_up("trip_event", APP, tools(CAL, "create_event"), trip_event, needs="window city"),
]
