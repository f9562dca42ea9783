"""The calendar app's tools: people, calendars, events, invitations, free/busy and rooms."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import Field

from cworld.sandbox.apps._shared.people import PeopleQuery, people_page
from cworld.sandbox.apps._shared.records import (
    OpenPage,
    OpenPageSize,
    lookup,
    paginate,
    paginate_counted,
    paginate_in_order,
)
from cworld.sandbox.apps._shared.values import iso, parse_day, parse_iso, parse_moment
from cworld.sandbox.apps.calendar.models import (
    Attendee,
    Busy,
    CalendarInfo,
    CalendarList,
    Event,
    EventPage,
    FreeBusy,
    Invitations,
    Person,
    PersonPage,
    Room,
    RoomList,
    Slots,
)
from cworld.sandbox.apps.calendar.state import working_window
from cworld.sandbox.framework import AppError, SandboxApp, tool
from cworld.sandbox.framework.journal import for_reading

MAX_EVENT_HOURS = 12
MAX_WINDOW_DAYS = 62
Response = Literal["accepted", "declined", "tentative"]

EventId = Annotated[str, Field(description="event id, e.g. evt_0004 (from list_events or search_events)")]
Moment = Annotated[str, Field(description="UTC time, YYYY-MM-DDTHH:MM")]
Day = Annotated[str, Field(description="a UTC date, YYYY-MM-DD")]
PersonIds = Annotated[list[str], Field(max_length=30, description="person ids from find_people")]


def _overlaps(a: tuple[datetime, datetime], b: tuple[datetime, datetime]) -> bool:
    return a[0] < b[1] and b[0] < a[1]



def _shelf(event: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(calendar, status): the groups of one sorted index that every choice of list_events merges (a
    calendar or all, cancelled ones or not), where one index per choice was built on first use."""
    return [(event["calendar_id"], event["status"])]


def _people(event: dict[str, Any]) -> tuple[str, ...]:
    """Who an event concerns (its organizer and attendees): the index busy times and clashes read."""
    return (event["organizer"], *event["attendees"])


#: The day a long event (over `MAX_WINDOW_DAYS`, or ending before it starts) is filed under: every window
#: asks for it too.
_ANY_DAY = "*"


def _presence(event: dict[str, Any]) -> list[tuple[str, str]]:
    """(person, UTC day) for each person an event concerns and each day its times touch: the index busy
    times and clashes read for a window of a day or two (times are uniform UTC text)."""
    days = _days(event["start"][:10], event["end"][:10])
    return [(person, day) for person in _people(event) for day in days]


@lru_cache(maxsize=4096)
def _days(start: str, end: str) -> tuple[str, ...]:
    """The UTC days from `start` to `end` (ISO dates), or `_ANY_DAY` for a long or backwards span: cached,
    since events share their days and an index over 10,000 events reads every event's."""
    first, last = date.fromisoformat(start), date.fromisoformat(end)
    span = (last - first).days
    return (_ANY_DAY,) if not 0 <= span <= MAX_WINDOW_DAYS else tuple((first + timedelta(d)).isoformat()
                                                                     for d in range(span + 1))


def _present(person: str, lo: str, hi: str) -> list[tuple[str, str]]:
    """The `_presence` values of events that may touch the times `lo`..`hi` (UTC text) for `person`."""
    first, last = date.fromisoformat(lo[:10]), date.fromisoformat(hi[:10])
    return [(person, _ANY_DAY)] + [(person, (first + timedelta(d)).isoformat()) for d in range((last - first).days + 1)]


def _unanswered(event: dict[str, Any]) -> list[tuple[str, str]]:
    """(attendee, the event's status) for each invitation still waiting for its answer: the sorted index the
    pending invitations read, soonest first."""
    return [(person, event["status"]) for person, answer in event["attendees"].items() if answer == "needs_action"]

class CalendarTools(SandboxApp):
    """Tools of the calendar app (a mixin of `CalendarApp`)."""

    # --- helpers -------------------------------------------------------------------------
    def _event_rec(self, event_id: str) -> dict[str, Any]:
        return lookup(self.state["events"], event_id,
                      f"no event '{event_id}'; list_events or search_events give event ids")

    def _person(self, person_id: str) -> dict[str, Any]:
        return lookup(self.state["directory"], person_id,
                      f"no person '{person_id}'; use find_people to get person ids from names")

    def _event(self, rec: dict[str, Any], warnings: list[str] | None = None) -> Event:
        names = self.state["directory"]
        attendees = [Attendee(person_id=pid, name=names[pid]["name"], response=resp)
                     for pid, resp in sorted(rec["attendees"].items())]
        return Event(event_id=rec["id"], calendar_id=rec["calendar_id"], title=rec["title"], start=rec["start"],
                     end=rec["end"], organizer=rec["organizer"], attendees=attendees, room_id=rec["room_id"],
                     description=rec["description"], status=rec["status"], warnings=warnings or [])

    def _span(self, start: str, end: str) -> tuple[datetime, datetime]:
        span = parse_moment(start, "start"), parse_moment(end, "end")
        if span[1] <= span[0]:
            raise AppError("invalid", f"end {end} is not after start {start}")
        if span[1] - span[0] > timedelta(hours=MAX_EVENT_HOURS):
            raise AppError("limit", f"an event may last at most {MAX_EVENT_HOURS} hours")
        return span

    def _busy_of(self, person_id: str, skip: str | None = None,
                 within: tuple[datetime, datetime] | None = None) -> list[tuple[datetime, datetime]]:
        """Blocks from free/busy plus confirmed events the person attends or organizes (not declined); with
        `within`, only those touching it (times are uniform UTC text, so text order is time order)."""
        lo, hi = (iso(within[0]), iso(within[1])) if within else ("", "~")
        spans = [(parse_iso(a), parse_iso(b)) for a, b in self.state["busy"].get(person_id, []) if b >= lo and a <= hi]
        events = for_reading(self.state["events"])
        near = self.keys_having("events", _presence, *_present(person_id, lo, hi)) if within else \
            self.keys_having("events", _people, person_id)
        for ev in (events[k] for k in near):
            if ev["end"] < lo or ev["start"] > hi:
                continue
            going = ev["organizer"] == person_id or ev["attendees"].get(person_id) in ("accepted", "tentative")
            if going and ev["status"] == "confirmed" and ev["id"] != skip and ev["calendar_id"] != "cal_holidays":
                spans.append((parse_iso(ev["start"]), parse_iso(ev["end"])))
        return spans

    def _my_clash(self, span: tuple[datetime, datetime], skip: str | None = None) -> dict[str, Any] | None:
        """The earliest of my confirmed events overlapping `span` (compared as UTC text before parsing)."""
        me, lo, hi = self.state["me"], iso(span[0]), iso(span[1])
        events = for_reading(self.state["events"])
        clashes = [ev for ev in (events[k] for k in self.keys_having("events", _presence, *_present(me, lo, hi)))
                   if ev["start"] < hi and lo < ev["end"] and ev["status"] == "confirmed" and ev["id"] != skip
                   and (ev["organizer"] == me or ev["attendees"].get(me) in ("accepted", "tentative"))
                   and ev["calendar_id"] != "cal_holidays"]
        return min(clashes, key=lambda e: e["start"]) if clashes else None

    def _room_clash(self, room_id: str, span: tuple[datetime, datetime], skip: str | None = None) -> dict[str, Any] | None:
        lo, hi = iso(span[0]), iso(span[1])
        events = for_reading(self.state["events"])
        for ev in (events[k] for k in self.keys_where("events", room_id=room_id)):
            if ev["start"] < hi and lo < ev["end"] and ev["status"] == "confirmed" \
                    and ev["id"] != skip:
                return ev
        return None

    def _check_room(self, room_id: str, span: tuple[datetime, datetime], people: int, skip: str | None = None) -> None:
        room = self.state["rooms"].get(room_id)
        if room is None:
            raise AppError("not_found", f"no room '{room_id}'; list_rooms gives room ids")
        if room["capacity"] < people:
            raise AppError("limit", f"room {room['name']} seats {room['capacity']}, the meeting has {people} people; "
                           "list_rooms with min_capacity finds a bigger one")
        clash = self._room_clash(room_id, span, skip)
        if clash is not None:
            raise AppError("conflict", f"room {room['name']} is booked {clash['start']}-{clash['end']} "
                           f"('{clash['title']}'); list_rooms with start and end shows free rooms")

    def _check_mine(self, span: tuple[datetime, datetime], allow_overlap: bool, skip: str | None = None) -> None:
        clash = None if allow_overlap else self._my_clash(span, skip)
        if clash is not None:
            raise AppError("conflict", f"you are already in '{clash['title']}' ({clash['id']}) "
                           f"{clash['start']}-{clash['end']}; pick a free time (find_free_slots) or pass allow_overlap=true")

    def _busy_warnings(self, person_ids: list[str], span: tuple[datetime, datetime], skip: str | None) -> list[str]:
        return [f"{self.state['directory'][p]['name']} is busy then" for p in person_ids
                if any(_overlaps(span, b) for b in self._busy_of(p, skip, span))]

    def _organized(self, event_id: str) -> dict[str, Any]:
        rec = self._event_rec(event_id)
        if rec["organizer"] != self.state["me"]:
            who = self.state["directory"].get(rec["organizer"], {"name": rec["organizer"]})["name"]
            raise AppError("permission_denied", f"only the organizer ({who}) can change '{rec['title']}'; "
                           "use respond_to_invitation to answer it")
        if rec["status"] == "cancelled":
            raise AppError("conflict", f"'{rec['title']}' is cancelled; create a new event instead")
        return rec

    # --- reading -------------------------------------------------------------------------
    @tool(read_only=True)
    def list_calendars(self, page: OpenPage = 1, page_size: OpenPageSize = 20) -> CalendarList:
        """Calendars you can see and whether you can add events to them (20 a page by default)."""
        chunk, meta = paginate_in_order(self.state["calendars"].values(), page, page_size)
        return CalendarList(calendars=[CalendarInfo(calendar_id=c["id"], name=c["name"], writable=c["writable"])
                                       for c in chunk], **meta)

    @tool(read_only=True)
    def find_people(self, query: PeopleQuery = "", page: OpenPage = 1, page_size: OpenPageSize = 10) -> PersonPage:
        """Look people up in the directory to get their person ids (needed to invite them)."""
        return people_page(self, "directory", query, page, page_size, Person, PersonPage)

    @tool(read_only=True)
    def list_events(
        self,
        start_date: Day,
        end_date: Day,
        calendar_id: Annotated[str | None, Field(description="one calendar; default: all")] = None,
        include_cancelled: Annotated[bool, Field(description="also show cancelled events")] = False,
        page: OpenPage = 1,
        page_size: OpenPageSize = 20,
    ) -> EventPage:
        """Events between two UTC dates (inclusive, at most 62 days), in time order."""
        first, last = parse_day(start_date, "start_date"), parse_day(end_date, "end_date")
        if not 0 <= (last - first).days <= MAX_WINDOW_DAYS:
            raise AppError("invalid", f"end_date must be on or after start_date and within {MAX_WINDOW_DAYS} days")
        if calendar_id is not None and calendar_id not in self.state["calendars"]:
            raise AppError("not_found", f"no calendar '{calendar_id}'; list_calendars gives ids")
        shelves = [(cal, status) for cal, status in self.held("events", _shelf)
                   if (calendar_id is None or cal == calendar_id) and (include_cancelled or status == "confirmed")]
        # starts on the days first..last (uniform UTC text: a day's times sort below the day + "~")
        found = self.ordered("events", ("start", "id"), within=(first.isoformat(), last.isoformat() + "~"),
                             having=(_shelf, shelves))
        chunk, meta = paginate(found, page, page_size)
        return EventPage(events=[self._event(e) for e in chunk], **meta)

    @tool(read_only=True)
    def search_events(
        self,
        query: Annotated[str, Field(min_length=1, description="words from the title or description")],
        page: OpenPage = 1,
        page_size: OpenPageSize = 10,
    ) -> EventPage:
        """Find events (any date, cancelled ones included) by words in their title or description."""
        found = self.matched("events", query, ("title", "description"))
        chunk, meta = paginate(sorted(found, key=lambda e: (e["start"], e["id"])), page, page_size)
        return EventPage(events=[self._event(e) for e in chunk], **meta)

    @tool(read_only=True)
    def get_event(self, event_id: EventId) -> Event:
        """One event with attendees and their responses."""
        return self._event(self._event_rec(event_id))

    @tool(read_only=True)
    def list_invitations(self, page: OpenPage = 1, page_size: OpenPageSize = 20) -> Invitations:
        """Upcoming meetings others invited you to that still wait for your answer, soonest first (20 a page
        by default)."""
        me, now = self.state["me"], iso(self.now)
        events = self.state["events"]
        unanswered = (_unanswered, (me, "confirmed"))
        waiting = self.ordered("events", ("start",), having=unanswered, keys=True)
        ahead = self.ordered("events", ("end",), having=unanswered, keys=True, within=(now + "\x00", None))
        found = (k for k in waiting if events[k]["end"] > now)  # read up to the page's end, counted by `ahead`
        chunk, meta = paginate_counted(found, len(ahead), page, page_size)  # (now + NUL: the first text above now)
        return Invitations(events=[self._event(events[k]) for k in chunk], **meta)

    @tool(read_only=True)
    def get_free_busy(self, person_ids: PersonIds, date: Day) -> FreeBusy:
        """When people are busy on a UTC date, and their working hours in UTC (you cannot see their meetings)."""
        day = datetime.combine(parse_day(date, "date"), datetime.min.time()).replace(tzinfo=self.now.tzinfo)
        out = []
        for pid in person_ids:
            window = working_window(self._person(pid), day)
            touching = self._busy_of(pid, within=(day, day + timedelta(days=1)))
            busy = sorted((iso(a), iso(b)) for a, b in touching if a.date() == day.date() or b.date() == day.date())
            out.append(Busy(person_id=pid, working_hours_utc=[iso(w) for w in window] if window else [],
                            busy=[list(b) for b in busy]))
        return FreeBusy(date=date, people=out)

    @tool(read_only=True)
    def find_free_slots(
        self,
        person_ids: PersonIds,
        date: Day,
        duration_minutes: Annotated[int, Field(ge=15, le=480, description="meeting length in minutes")] = 30,
    ) -> Slots:
        """Start times on a UTC date (every 30 min) when you and all the people are free and within working hours."""
        people = [self._person(p) for p in [self.state["me"], *person_ids]]
        day = datetime.combine(parse_day(date, "date"), datetime.min.time()).replace(tzinfo=self.now.tzinfo)
        windows = [working_window(p, day) for p in people]
        busy = [b for p in people for b in self._busy_of(p["id"], within=(day, day + timedelta(days=2)))]
        slots, length = [], timedelta(minutes=duration_minutes)
        for step in range(48):
            span = (day + timedelta(minutes=30 * step), day + timedelta(minutes=30 * step) + length)
            inside = all(w is not None and w[0] <= span[0] and span[1] <= w[1] for w in windows)
            if inside and span[0] > self.now and not any(_overlaps(span, b) for b in busy):
                slots.append([iso(span[0]), iso(span[1])])
        return Slots(slots=slots)

    @tool(read_only=True)
    def list_rooms(
        self,
        min_capacity: Annotated[int, Field(ge=1, le=100, description="seats needed")] = 1,
        start: Annotated[str | None, Field(description="UTC start, to check availability")] = None,
        end: Annotated[str | None, Field(description="UTC end, to check availability")] = None,
        page: OpenPage = 1,
        page_size: OpenPageSize = 20,
    ) -> RoomList:
        """Meeting rooms with at least `min_capacity` seats, smallest first (20 a page by default); with start
        and end, whether each is free then."""
        span = self._span(start, end) if start and end else None
        fitting = self.ordered("rooms", ("capacity", "name"), within=(min_capacity, None))
        chunk, meta = paginate(fitting, page, page_size)
        rooms = [Room(room_id=r["id"], name=r["name"], capacity=r["capacity"], floor=r["floor"], video=r["video"],
                      available=None if span is None else self._room_clash(r["id"], span) is None)
                 for r in chunk]
        return RoomList(rooms=rooms, **meta)

    # --- writing -------------------------------------------------------------------------
    @tool(read_only=False)
    def create_event(
        self,
        title: Annotated[str, Field(min_length=1, max_length=200, description="event title")],
        start: Moment,
        end: Moment,
        attendee_ids: Annotated[list[str], Field(max_length=30, description="person ids to invite")] = [],  # noqa: B006
        room_id: Annotated[str | None, Field(description="room id from list_rooms")] = None,
        calendar_id: Annotated[str, Field(description="calendar to add it to")] = "cal_mine",
        description: Annotated[str, Field(max_length=5000, description="agenda or notes")] = "",
        allow_overlap: Annotated[bool, Field(description="book even if you already have a meeting then")] = False,
    ) -> Event:
        """Schedule a meeting you organize and invite people (they start as 'needs_action')."""
        cal = self.state["calendars"].get(calendar_id)
        if cal is None:
            raise AppError("not_found", f"no calendar '{calendar_id}'; list_calendars gives ids")
        if not cal["writable"]:
            raise AppError("permission_denied", f"calendar '{cal['name']}' is read-only; use cal_mine or cal_team")
        span = self._span(start, end)
        if span[0] <= self.now:
            raise AppError("invalid", f"start {start} is in the past (now is {iso(self.now)}); clock/now gives the time")
        invited = list(dict.fromkeys(p for p in attendee_ids if p != self.state["me"]))
        for pid in invited:
            self._person(pid)
        self._check_mine(span, allow_overlap)
        if room_id is not None:
            self._check_room(room_id, span, len(invited) + 1)
        rec = {"id": self.new_id("evt"), "calendar_id": calendar_id, "title": title, "start": iso(span[0]),
               "end": iso(span[1]), "organizer": self.state["me"], "attendees": dict.fromkeys(invited, "needs_action"),
               "room_id": room_id, "description": description, "status": "confirmed"}
        self.state["events"][rec["id"]] = rec
        return self._event(rec, self._busy_warnings(invited, span, rec["id"]))

    @tool(read_only=False, idempotent=True)
    def update_event(
        self,
        event_id: EventId,
        title: Annotated[str | None, Field(max_length=200, description="new title; omit to keep")] = None,
        start: Annotated[str | None, Field(description="new UTC start; give end too")] = None,
        end: Annotated[str | None, Field(description="new UTC end; give start too")] = None,
        room_id: Annotated[str | None, Field(description="new room id; omit to keep")] = None,
        description: Annotated[str | None, Field(max_length=5000, description="new description")] = None,
        allow_overlap: Annotated[bool, Field(description="move even onto one of your other meetings")] = False,
    ) -> Event:
        """Change a meeting you organize: title, time (start and end together), room or description."""
        rec = self._organized(event_id)
        if (start is None) != (end is None):
            raise AppError("invalid", "give both start and end to move an event")
        span = self._span(start, end) if start and end else (parse_iso(rec["start"]), parse_iso(rec["end"]))
        if start:
            self._check_mine(span, allow_overlap, skip=event_id)
        room = room_id or rec["room_id"]
        if room is not None:
            self._check_room(room, span, len(rec["attendees"]) + 1, skip=event_id)
        rec.update(start=iso(span[0]), end=iso(span[1]), room_id=room)
        rec["title"] = title if title is not None else rec["title"]
        rec["description"] = description if description is not None else rec["description"]
        return self._event(rec, self._busy_warnings(list(rec["attendees"]), span, event_id))

    @tool(read_only=False, destructive=True, idempotent=True)
    def cancel_event(self, event_id: EventId) -> Event:
        """Cancel a meeting you organize (it stays visible as cancelled; its room is freed)."""
        rec = self._organized(event_id)
        rec["status"] = "cancelled"
        return self._event(rec)

    @tool(read_only=False, idempotent=True)
    def respond_to_invitation(
        self,
        event_id: EventId,
        response: Annotated[Response, Field(description="your answer")],
    ) -> Event:
        """Accept, decline or tentatively accept a meeting someone else organizes."""
        rec = self._event_rec(event_id)
        me = self.state["me"]
        if rec["organizer"] == me:
            raise AppError("invalid", f"you organize '{rec['title']}'; use update_event or cancel_event")
        if me not in rec["attendees"]:
            raise AppError("permission_denied", f"you are not invited to '{rec['title']}'")
        rec["attendees"][me] = response
        return self._event(rec)

    @tool(read_only=False, idempotent=True)
    def add_attendees(self, event_id: EventId, person_ids: PersonIds) -> Event:
        """Invite more people to a meeting you organize (the room must still fit everyone)."""
        rec = self._organized(event_id)
        new = [p for p in dict.fromkeys(person_ids) if p not in rec["attendees"] and p != self.state["me"]]
        for pid in new:
            self._person(pid)
        if rec["room_id"] is not None:
            room = self.state["rooms"][rec["room_id"]]
            if room["capacity"] < len(rec["attendees"]) + len(new) + 1:
                raise AppError("limit", f"room {room['name']} seats {room['capacity']}; move to a bigger room first")
        rec["attendees"].update(dict.fromkeys(new, "needs_action"))
        span = (parse_iso(rec["start"]), parse_iso(rec["end"]))
        return self._event(rec, self._busy_warnings(new, span, event_id))

    @tool(read_only=False, destructive=True, idempotent=True)
    def remove_attendee(self, event_id: EventId, person_id: Annotated[str, Field(description="person id")]) -> Event:
        """Take someone off a meeting you organize."""
        rec = self._organized(event_id)
        if person_id not in rec["attendees"]:
            raise AppError("not_found", f"{person_id} is not on '{rec['title']}'; get_event lists attendees")
        del rec["attendees"][person_id]
        return self._event(rec)
