"""The datetime server: pure date and time arithmetic — parsing, formatting, durations, differences, time
zones (IANA, via zoneinfo), Unix time, business days, calendars and cron schedules.

It never reads the sandbox's virtual clock: every tool takes the moments it works on as arguments, so a call
means the same thing in every session (the stateful `clock` app is where "now" lives).

It holds no state (no `state.py`): every answer is a function of the call's arguments alone.
"""

from __future__ import annotations

from cworld.sandbox.stateless.dates.tools import DateTimeTools
from cworld.sandbox.stateless.dates.tools_calendar import CalendarTools
from cworld.sandbox.stateless.shared import StatelessApp


class DateTimeServer(DateTimeTools, CalendarTools, StatelessApp):
    name = "datetime"
    title = "Date and time"
    description = (
        "Date/time arithmetic: parse and format, add durations, differences, time zones, "
        "Unix time, ISO weeks, business days, ages, calendars and cron schedules. "
        "Pure functions: pass every date explicitly."
    )
    category = "time"
