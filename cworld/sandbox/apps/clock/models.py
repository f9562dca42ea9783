"""The clock app's answer models (pydantic: every tool has an output schema)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from cworld.sandbox.apps._shared.records import Paged


class Reading(BaseModel):
    utc: str = Field(description="the moment in UTC, ISO-8601 with Z")
    local: str = Field(description="the same moment as local wall-clock time, YYYY-MM-DDTHH:MM:SS")
    timezone: str = Field(description="the IANA zone the local time is in")
    utc_offset: str = Field(description="offset of the local time from UTC, e.g. +05:30")
    weekday: str = Field(description="local day of the week")


class Zone(BaseModel):
    zone: str = Field(description="IANA name to pass to other tools")
    city: str = Field(description="a well-known city in the zone")
    country: str
    utc_offset: str = Field(description="offset from UTC right now")


class ZonePage(Paged):
    timezones: list[Zone]


class Reminder(BaseModel):
    reminder_id: str
    text: str
    due_utc: str = Field(description="when the reminder fires, UTC")
    status: Literal["pending", "due", "dismissed"] = Field(description="'due' once its time has passed")


class ReminderList(Paged):
    reminders: list[Reminder]
    now_utc: str


class Duration(BaseModel):
    seconds: int = Field(description="seconds from now until the time (negative if it is in the past)")
    human: str = Field(description="the same as text, e.g. '2h 15m from now'")
