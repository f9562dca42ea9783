"""Calendar: your meetings, invitations, colleagues' free/busy and meeting rooms.

Times are UTC (`YYYY-MM-DDTHH:MM`); the clock app converts local times. People are invited by person
id (`find_people`), rooms by room id (`list_rooms`). Double-booking yourself or a room is a conflict;
only the organizer may change or cancel a meeting; the holidays calendar is read-only.
"""

from __future__ import annotations

from cworld.sandbox.apps.calendar.state import seed_state
from cworld.sandbox.apps.calendar.tools import CalendarTools
from cworld.sandbox.framework import Prerequisite


class CalendarApp(CalendarTools):
    name = "calendar"
    title = "Calendar"
    description = "Your calendar: meetings, invitations, free/busy of colleagues, free slots and meeting rooms."
    category = "calendar"
    entity_kinds = {"calendars": "calendar", "rooms": "room", "directory": "person", "events": "event"}
    prerequisites = (
        Prerequisite("find_people", "create_event", "produces", via="person_id", note="attendees are person ids"),
        Prerequisite("find_people", "find_free_slots", "produces", via="person_id"),
        Prerequisite("find_free_slots", "create_event", "produces", via="start",
                     note="pick a slot that is free for everyone to avoid conflicts"),
        Prerequisite("list_rooms", "create_event", "produces", via="room_id"),
        Prerequisite("list_calendars", "create_event", "produces", via="calendar_id"),
        Prerequisite("list_invitations", "respond_to_invitation", "produces", via="event_id"),
        Prerequisite("list_events", "update_event", "produces", via="event_id"),
        Prerequisite("create_event", "add_attendees", "produces", via="event_id"),
        Prerequisite("clock/convert_time", "create_event", "produces", via="start",
                     note="times are UTC; convert local times first"),
    )

    initial_state = seed_state
