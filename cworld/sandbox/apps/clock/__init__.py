"""Clock: the one virtual time every app sees, time zones, and reminders.

The time is the session's clock: it starts at a seeded moment and moves 20 s per tool call (and when
`sleep` is called). Other apps store and take times in UTC; this app is where an agent converts a
person's local time ("3 pm in Tokyo") to UTC and back, and where it learns the user's own time zone.
"""

from __future__ import annotations

from cworld.sandbox.apps.clock.state import seed_state
from cworld.sandbox.apps.clock.tools import ClockTools
from cworld.sandbox.framework import Prerequisite


class ClockApp(ClockTools):
    name = "clock"
    title = "Clock"
    description = "The system clock every app shares: current time, time zones, conversions, sleep and reminders."
    category = "time"
    entity_kinds = {"reminders": "reminder"}
    prerequisites = (
        Prerequisite("list_timezones", "set_timezone", "produces", via="timezone", note="zone names are IANA ids"),
        Prerequisite("list_timezones", "convert_time", "produces", via="timezone"),
        Prerequisite("get_timezone", "schedule_reminder", "produces", via="timezone",
                     note="reminder times are wall-clock times in your zone"),
        Prerequisite("schedule_reminder", "cancel_reminder", "produces", via="reminder_id"),
        Prerequisite("list_reminders", "dismiss_reminder", "produces", via="reminder_id",
                     note="only a reminder whose time has come can be dismissed"),
    )

    initial_state = seed_state
