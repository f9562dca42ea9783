"""Calendar: your meetings, invitations, colleagues' free/busy and meeting rooms.

Times are UTC (`YYYY-MM-DDTHH:MM`); the clock app converts local times. People are invited by person
id (`find_people`), rooms by room id (`list_rooms`). Double-booking yourself or a room is a conflict;
only the organizer may change or cancel a meeting; the holidays calendar is read-only.
"""

from __future__ import annotations

from cworld.sandbox.apps._shared.records import edges
from cworld.sandbox.apps.calendar.state import seed_state
from cworld.sandbox.apps.calendar.tools import CalendarTools


class CalendarApp(CalendarTools):
    name = "calendar"
    title = "Calendar"
    description = "Your calendar: meetings, invitations, free/busy of colleagues, free slots and meeting rooms."
    category = "calendar"
    prerequisites = edges([
        ("find_people", "create_event", "produces", "person_id", "attendees are person ids"),
        ("find_people", "find_free_slots", "produces", "person_id"),
        ("find_free_slots", "create_event", "produces", "start",
         "pick a slot that is free for everyone to avoid conflicts"),
        ("list_rooms", "create_event", "produces", "room_id"),
        ("list_calendars", "create_event", "produces", "calendar_id"),
        ("list_invitations", "respond_to_invitation", "produces", "event_id"),
        ("list_events", "update_event", "produces", "event_id"),
        ("create_event", "add_attendees", "produces", "event_id"),
        ("clock/convert_time", "create_event", "produces", "start",
         "times are UTC; convert local times first"),
    ])

    initial_state = seed_state
